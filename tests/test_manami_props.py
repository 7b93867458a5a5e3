"""Tiki on Manami island: properties over random legal play (hypothesis chooses the games).

Small ``tokens`` options are drawn on purpose: with one or two tokens a player is often stuck
under the opponent's tokens, which exercises ``pass`` (R11) and the quiet limit (R12).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from pi_app.games import IllegalMove, RecordError
from pi_app.games.manami import (
    EDGES,
    GAME,
    MAX_HEIGHT,
    NAMES,
    PATH_EDGES,
    ManamiState,
    Move,
)
from pi_app.records import replay

OPTIONS = st.fixed_dictionaries({}, optional={
    "shaman": st.booleans(),
    "tokens": st.integers(1, 9),
    "fruit": st.integers(1, 9),
    "quiet_limit": st.integers(2, 120),
    "tiles": st.lists(st.sampled_from([-1, 0, 1, 2]), min_size=9, max_size=9),
})
SEEDS = st.integers(0, 2**32 - 1)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12)

#: Every move shape apply may be handed: all places, every well-formed path and some that are
#: not, all resolve pairs, all shaman edges and stay, pass.
CANDIDATES: list[Move] = [
    *(Move("place", (v,)) for v in range(9)),
    *(Move("move", p) for p in PATH_EDGES),
    *(Move("move", (a, b)) for a in range(9) for b in range(9)),
    *(Move("move", (a, b, c)) for a in range(0, 9, 4) for b in range(9) for c in range(9)),
    *(Move("resolve", (a, b)) for a in range(9) for b in range(9)),
    *(Move("shaman", e) for e in EDGES), Move("shaman"), Move("pass"),
]


def random_play(seed: int, options: dict[str, Any]) -> list[tuple[ManamiState, Move]]:
    """A complete random game: each position with the move played from it, then the end
    (a machine's game: R12's limit ends what random play would shuffle on for ever)."""
    rng = random.Random(seed)
    state = GAME.new_machine_game(rng, options)
    history: list[tuple[ManamiState, Move]] = []
    while not GAME.is_over(state):
        move = GAME.random_move(state, rng)
        history.append((state, move))
        state = GAME.apply(state, move)
    history.append((state, Move("pass")))  # the final position; its move is never played
    return history


def check_invariants(state: ManamiState) -> None:
    opts = state.options
    for p in (0, 1):  # tokens are conserved
        assert state.reserve[p] + sum(s.count(p) for s in state.stacks) == opts.tokens
    # fruit is conserved, counting the fresh fruit R10 may add
    assert sum(state.fruit) + state.supply + state.spoiled == opts.fruit + state.added
    assert min(state.fruit) >= 0 and state.supply >= 0 and state.spoiled >= 0
    for v, stack in enumerate(state.stacks):  # R5: never above three; three only while waiting
        assert len(stack) <= MAX_HEIGHT
        assert len(stack) < MAX_HEIGHT or v in state.pending or state.over
    assert state.supply > 0 or state.over
    if opts.quiet_limit is not None:
        assert state.quiet <= opts.quiet_limit
    assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(state)))) == state
    view = GAME.expected_view(state)
    assert list(view)[:9] == list(NAMES)
    assert all(set(view[v]) <= {"p0", "p1"} for v in NAMES)
    assert sum(len(view[e]) for e in list(view)[9:]) == (1 if state.shaman >= 0 else 0)
    hash(state)


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, options=OPTIONS)
def test_random_play_keeps_every_invariant(seed: int, options: dict[str, Any]) -> None:
    history = random_play(seed, options)
    previous: Move | None = None
    for state, move in history[:-1]:
        check_invariants(state)
        player = GAME.to_move(state)
        legal = GAME.legal_moves(state)
        assert player is not None and legal and GAME.winners(state) is None
        if move.kind == "move":  # a totem is only ever moved by the owner of its top token
            assert state.stacks[move.cells[0]][-1] == player
        if move.kind == "pass":  # R11: pass alone, and never twice in a row
            assert legal == [Move("pass")] and previous != Move("pass")
        previous = move
    end = history[-1][0]
    check_invariants(end)
    assert GAME.is_over(end) and GAME.to_move(end) is None and GAME.legal_moves(end) == []
    winners = GAME.winners(end)
    assert winners is not None and GAME.scores(end) == end.fruit
    best = max(end.fruit)
    assert winners == tuple(p for p in (0, 1) if end.fruit[p] == best)  # R13


@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, options=OPTIONS, data=st.data())
def test_apply_accepts_exactly_the_legal_moves(seed: int, options: dict[str, Any],
                                               data: st.DataObject) -> None:
    history = random_play(seed, options)
    for state, _ in data.draw(st.lists(st.sampled_from(history), min_size=1, max_size=4)):
        legal = set(GAME.legal_moves(state))
        for move in CANDIDATES:
            try:
                GAME.apply(state, move)
            except IllegalMove:
                assert move not in legal, GAME.move_text(state, move)
            else:
                assert move in legal, GAME.move_text(state, move)


@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, options=OPTIONS)
def test_placement_views_only_rearrange_and_follow_ups_only_clear(
        seed: int, options: dict[str, Any]) -> None:
    """The pictures the board layer matches: a move's placement holds the same tokens as the
    board before it, and the engine's next view only takes tokens off (clearing villages)."""
    for state, _ in random_play(seed, options)[:-1:3]:
        here = GAME.expected_view(state)
        for move in GAME.legal_moves(state):
            placed = GAME.placement_view(state, move)
            after = GAME.expected_view(GAME.apply(state, move))
            if move.kind == "place":
                assert placed == after
                continue
            assert Counter(t for n in NAMES for t in placed[n]) == Counter(
                t for n in NAMES for t in here[n])
            for name in NAMES:
                assert after[name] in (placed[name], ())
            assert list(placed) == list(here)  # villages, then the shaman's twelve edges
            for view in GAME.transit_views(state, move):
                assert view != placed and list(view) == list(here)


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, options=OPTIONS, data=st.data())
def test_record_round_trip(seed: int, options: dict[str, Any], data: st.DataObject) -> None:
    history = random_play(seed, options)
    cut = data.draw(st.integers(1, len(history)), label="positions kept")
    start, final = history[0][0], history[cut - 1][0]
    texts = [GAME.move_text(state, move) for state, move in history[:cut - 1]]
    if data.draw(st.booleans(), label="upper case"):
        texts = [text.upper() for text in texts]
    record = {"game": "manami", "options": {**GAME.machine_defaults, **options},
              "first": start.turn,
              "villages": dict(zip(NAMES, start.values, strict=True)), "moves": texts}
    result = replay(json.loads(json.dumps(record)))
    assert result.ok and result.moves_applied == len(texts)
    assert result.state == final


@settings(max_examples=30, deadline=None)
@given(seed=SEEDS, options=OPTIONS)
def test_move_text_parses_back_to_the_same_move(seed: int, options: dict[str, Any]) -> None:
    for state, _ in random_play(seed, options)[::5]:
        for move in GAME.legal_moves(state):
            text = GAME.move_text(state, move)
            assert text == text.lower() and GAME.parse_move(state, text) == move
            assert GAME.parse_move(state, f"  {text.upper()} ") == move


def readable(exc: Exception) -> bool:
    """An error a person can act on: one non-empty line, not a Python repr or a traceback."""
    text = str(exc)
    return bool(text.strip()) and "\n" not in text and "Traceback" not in text


@settings(max_examples=200, deadline=None)
@given(seed=SEEDS, options=OPTIONS, data=st.data())
def test_any_text_parses_or_is_an_illegal_move(seed: int, options: dict[str, Any],
                                               data: st.DataObject) -> None:
    """In a position from random play: a legal move's text, however typed, parses back to that
    move; any other text parses to a move whose text reads back the same, or is refused with
    one readable line. Every example reaches an assertion (the ``event`` says which)."""
    history = random_play(seed, options)
    state = data.draw(st.sampled_from([here for here, _ in history[:-1]]), label="position")
    if data.draw(st.booleans(), label="a legal move's text"):
        move = data.draw(st.sampled_from(GAME.legal_moves(state)), label="move")
        text = GAME.move_text(state, move)
        typed = data.draw(st.sampled_from([text, text.upper(), f"  {text} ", f"{text.upper()}\t"]))
        event("a legal text: parsed back")
        assert GAME.parse_move(state, typed) == move
        return
    text = data.draw(st.text(alphabet="abcdz0123-/ plaefsrothvmy", max_size=16), label="text")
    try:
        move = GAME.parse_move(state, text)
    except IllegalMove as exc:
        event("any text: refused")
        assert readable(exc), repr(exc)
        return
    event("any text: parsed")
    assert GAME.parse_move(state, GAME.move_text(state, move)) == move


@settings(max_examples=200, deadline=None)
@given(seed=SEEDS, key=st.sampled_from(sorted(GAME.state_to_json(
    GAME.new_game(random.Random(0))))), value=JSON_VALUES)
def test_corrupt_json_states_raise_record_error(seed: int, key: str, value: Any) -> None:
    """A position with one field spoilt is refused with one readable line naming a field (that
    one, or another it no longer agrees with), or (when the value happens to be acceptable)
    makes a state that round-trips."""
    history = random_play(seed % 1000, {"shaman": bool(seed % 2)})
    data = GAME.state_to_json(history[seed % len(history)][0])
    data[key] = value
    try:
        state = GAME.state_from_json(data)
    except RecordError as exc:
        event(f"refused ({key})")
        names = [f"'{name}'" for name in data] + ["manami option"]  # or one of its options
        assert readable(exc) and any(name in str(exc) for name in names), repr(exc)
        return
    event(f"accepted ({key})")
    assert GAME.state_from_json(GAME.state_to_json(state)) == state


@settings(max_examples=150, deadline=None)
@given(key=st.sampled_from(["villages", "first", "moves", "options"]), value=JSON_VALUES)
def test_corrupt_records_raise_record_error_or_replay(key: str, value: Any) -> None:
    """A record with one field spoilt is refused with one readable line, or replays to a state
    that round-trips, stopping (if at all) at a move with a readable reason."""
    record = {"game": "manami", "villages": dict.fromkeys(NAMES, 1), "first": 0,
              "moves": ["place b2"], key: value}
    try:
        result = replay(record)
    except RecordError as exc:
        event(f"refused ({key})")
        assert readable(exc), repr(exc)
        return
    event(f"replayed ({key}): {'ok' if result.ok else 'stopped at a move'}")
    moves = record["moves"]
    assert isinstance(moves, list) and 0 <= result.moves_applied <= len(moves)
    assert result.ok == (result.moves_applied == len(moves))
    if result.error is not None:
        assert result.error.reason.strip() and "\n" not in result.error.reason
    assert GAME.state_from_json(GAME.state_to_json(result.state)) == result.state
