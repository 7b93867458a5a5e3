"""TacTiki engine properties over random legal play (hypothesis draws seeds and options)."""

from __future__ import annotations

import contextlib
import json
import random
from collections import Counter
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pi_app.games import IllegalMove, RecordError
from pi_app.games.tactiki import (
    FIELD_NAMES,
    GAME,
    Move,
    Options,
    Reincarnate,
    Steps,
    TacState,
    player_view,
)
from pi_app.json_types import JSON
from pi_app.records import replay

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: A quiet limit under 30 mostly ends random play before the first fight (with 1 to 5 no game
#: ever saw a capture, with 10 one in six), so every example here plays a game with fights in
#: it; the short limits have their own test, ``test_the_quiet_limit_ends_in_a_draw``.
options_strategy = st.fixed_dictionaries({}, optional={
    "strict_statue": st.booleans(),
    "attack_frozen": st.booleans(),
    "quiet_turns": st.integers(30, 60),
})
seeds = st.integers(0, 2**32 - 1)

Turn = tuple[TacState, Move, TacState]


def random_game(seed: int, options: JSON, limit: int = 10_000) -> list[Turn]:
    """A random game (to its end, or ``limit`` turns) as (before, move, after) triples."""
    rng = random.Random(seed)
    state = GAME.new_game(rng, options)
    turns: list[Turn] = []
    while not GAME.is_over(state) and len(turns) < limit:
        move = GAME.random_move(state, rng)
        after = GAME.apply(state, move)
        turns.append((state, move, after))
        state = after
    return turns


def owner(piece: str) -> int:
    return "TC".index(piece[0])


def rank(piece: str) -> int:
    return int(piece[1])


def where(state: TacState) -> tuple[dict[str, list[str]], list[list[str]]]:
    data = GAME.state_to_json(state)
    return data["board"], data["graveyards"]


def positions(turn: Turn) -> list[TacState]:
    """The position before the turn, then after each of its steps."""
    before, move, _ = turn
    return [before, *GAME.trace(before, move)]


@SETTINGS
@given(seeds, options_strategy)
def test_every_piece_is_once_on_the_board_or_in_a_graveyard(seed: int, options: JSON) -> None:
    for turn in random_game(seed, options):
        for state in positions(turn):
            board, graves = where(state)
            pieces = [p for col in board.values() for p in col] + graves[0] + graves[1]
            assert sorted(pieces) == sorted(state.options.tables.ids)
            assert all(owner(p) == q for q in (0, 1) for p in graves[q])


@SETTINGS
@given(seeds, st.integers(1, 40))
def test_the_quiet_limit_ends_in_a_draw(seed: int, limit: int) -> None:
    """With ``quiet_turns`` k: the quiet count stays under k while play goes on, and a game
    that is not won ends in a draw (nobody wins) the turn the count reaches k, or when neither
    player can do anything but pass (R8)."""
    turns = random_game(seed, {"quiet_turns": limit})
    assert turns and all(after.quiet < limit for _, _, after in turns[:-1])
    end = turns[-1][2]
    assert GAME.is_over(end) and GAME.to_move(end) is None
    if end.winner is not None:
        assert GAME.winners(end) == (end.winner,)
        return
    assert GAME.winners(end) == () and GAME.scores(end) == (0, 0)
    stuck = all(
        [GAME.move_text(s, m) for m in GAME.legal_moves(s)] == ["pass"]
        for s in (end._replace(draw=False, player=p) for p in (0, 1)))
    assert end.quiet == limit or stuck


@SETTINGS
@given(seeds, options_strategy)
def test_columns_only_grow_on_top(seed: int, options: JSON) -> None:
    """Step by step: a column keeps its lower part in order, gains at most the moving piece on
    top, and loses only the moving piece (from its start field) or pieces sent to a graveyard."""
    for turn in random_game(seed, options):
        states = positions(turn)
        move = turn[1]
        steps = move.steps if isinstance(move, Steps) else ()
        for index, (old, new) in enumerate(pairwise(states)):
            old_board, _ = where(old)
            new_board, new_graves = where(new)
            dead = set(new_graves[0] + new_graves[1])
            mover = (old_board[FIELD_NAMES[steps[index][0]]][-1] if steps else None)
            for name in FIELD_NAMES:
                before, after = old_board[name], new_board[name]
                kept = [p for p in before if p in after]
                assert after[:len(kept)] == kept
                assert all(p == mover or isinstance(move, Reincarnate) for p in after[len(kept):])
                assert all(p == mover or p in dead for p in before if p not in after)


@SETTINGS
@given(seeds, options_strategy)
def test_a_view_never_shows_an_unrevealed_enemy_rank_r9(seed: int, options: JSON) -> None:
    """Knowledge is tracked here independently of the engine's mask, from the boards alone:
    each comparison of a column combat shows both ranks; a reincarnation hides that player's
    whole graveyard (R9). The view must show exactly that, and never an enemy id."""
    known: list[set[str]] = [set(), set()]  # known[q]: enemy ids whose rank q has seen
    for turn in random_game(seed, options):
        before, move, _ = turn
        states = positions(turn)
        steps = move.steps if isinstance(move, Steps) else ((-1, -1),)
        for (src, dst), (old, new) in zip(steps, pairwise(states), strict=True):
            if isinstance(move, Reincarnate):
                q = before.player
                known[1 - q] -= set(where(before)[1][q])
            if isinstance(move, Steps):
                _learn(known, old, new, src, dst)
            _check_views(known, new)


def _learn(known: list[set[str]], old: TacState, new: TacState, src: int, dst: int) -> None:
    """What the step src-dst showed: every comparison of its combat shows both ranks."""
    old_board, _ = where(old)
    _, new_graves = where(new)
    dead = set(new_graves[0] + new_graves[1])
    mover = old_board[FIELD_NAMES[src]][-1]
    me = owner(mover)
    target = old_board[FIELD_NAMES[dst]]
    if not target or owner(target[-1]) == me:
        return
    for defender in reversed(target):
        if owner(defender) == me:
            break
        known[me].add(defender)
        known[1 - me].add(mover)
        if defender not in dead:
            break


def _check_views(known: list[set[str]], state: TacState) -> None:
    board, graves = where(state)
    for q in (0, 1):
        view = player_view(state, q)
        text = json.dumps(view.to_json())
        enemy_prefix = "C" if q == 0 else "T"
        assert f'"{enemy_prefix}' not in text
        for f, name in enumerate(FIELD_NAMES):
            for seen, piece in zip(view.board[f], board[name], strict=True):
                assert seen.owner == owner(piece)
                if seen.owner == q:
                    assert (seen.rank, seen.piece) == (rank(piece), piece)
                else:
                    assert seen.piece is None
                    assert seen.rank == (rank(piece) if piece in known[q] else None)
        enemy_grave = graves[1 - q]
        shown = Counter(s.rank for s in view.graveyards[1 - q] if s.rank is not None)
        assert shown == Counter(rank(p) for p in enemy_grave if p in known[q])
        assert len(view.graveyards[1 - q]) == len(enemy_grave)


@SETTINGS
@given(seeds, options_strategy)
def test_state_json_round_trip(seed: int, options: JSON) -> None:
    for _, _, state in random_game(seed, options):
        data = json.loads(json.dumps(GAME.state_to_json(state)))
        again = GAME.state_from_json(data)
        assert again == state
        assert GAME.state_to_json(again) == data


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seeds, options_strategy)
def test_record_round_trip(seed: int, options: JSON) -> None:
    """A record written from random play in canonical text replays to the same final state."""
    turns = random_game(seed, options, limit=120)
    start = turns[0][0]
    texts = []
    for before, move, after in turns:
        text = GAME.move_text(before, move)
        assert GAME.apply_text(before, text) == after
        texts.append(text)
    record: JSON = {"game": "tactiki", "options": options, "setup": GAME.setup_of(start),
                    "moves": texts, "players": ["someone", "someone else"]}
    result = replay(json.loads(json.dumps(record)))
    assert result.ok and result.moves_applied == len(texts)
    assert result.state == turns[-1][2]


def _all_step_texts() -> list[str]:
    steps = [f"{FIELD_NAMES[a]}-{FIELD_NAMES[b]}" for a in range(25) for b in range(25)
             if abs(a // 5 - b // 5) + abs(a % 5 - b % 5) == 1]
    return steps + [f"{a} {b}" for a in steps for b in steps]


ALL_STEP_TEXTS = _all_step_texts()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seeds, options_strategy, st.integers(0, 60))
def test_legal_moves_are_every_distinct_legal_turn_r12(seed: int, options: JSON,
                                                        at: int) -> None:
    """Brute force: apply every text of one or two neighbouring steps and every reincarnation;
    the distinct positions that come out are exactly those of ``legal_moves``, once each."""
    turns = random_game(seed, options, limit=at + 1)
    state = turns[-1][0]
    results: set[TacState] = set()
    for text in ALL_STEP_TEXTS + [f"reincarnate {r} {f}" for r in range(1, 6)
                                  for f in FIELD_NAMES] + ["pass"]:
        with contextlib.suppress(IllegalMove):
            results.add(GAME.apply_text(state, text))
    listed = [GAME.apply(state, m) for m in GAME.legal_moves(state)]
    assert len(set(listed)) == len(listed)
    assert set(listed) == results
    texts = [GAME.move_text(state, m) for m in GAME.legal_moves(state)]
    assert len(set(texts)) == len(texts)
    for text, after in zip(texts, listed, strict=True):
        assert GAME.apply_text(state, text) == after


def test_random_move_can_produce_every_legal_turn() -> None:
    """On a small position random play reaches every legal turn (it is not uniform)."""
    ids = Options().tables.ids
    board: dict[str, list[str]] = {name: [] for name in FIELD_NAMES}
    board.update({"c3": ["T4a"], "a5": ["T1a", "T1b"], "b5": ["T2a", "T2b"],
                  "d5": ["T3a", "T3b"], "e5": ["T5a"], "b4": ["C2a"], "c5": ["C1a"]})
    placed = {p for col in board.values() for p in col}
    state = GAME.state_from_json({
        "board": board, "player": 0,
        "graveyards": [[p for p in ids[:10] if p not in placed],
                       [p for p in ids[10:] if p not in placed]]})
    wanted = {GAME.apply(state, m) for m in GAME.legal_moves(state)}
    # Six distinct step turns (c3 to b4 by either path, to d4 by either path, a3, e3, onto c5,
    # and the turns that change nothing) and 2 ranks x 5 fields to reincarnate.
    assert len(wanted) == 6 + 10
    rng = random.Random(5)
    got = {GAME.apply(state, GAME.random_move(state, rng)) for _ in range(3000)}
    assert got == wanted


def readable(exc: Exception) -> bool:
    """An error a person can act on: one non-empty line, not a Python repr or a traceback."""
    text = str(exc)
    return bool(text.strip()) and "\n" not in text and "Traceback" not in text


def noisy(text: str, data: st.DataObject) -> str:
    """``text`` as a person might type it: any letter case, spaces around."""
    spaced = data.draw(st.sampled_from(["", " ", "  "])) + text + data.draw(
        st.sampled_from(["", " ", "\t"]))
    return spaced.upper() if data.draw(st.booleans(), label="upper case") else spaced


@settings(max_examples=200, deadline=None)
@given(seeds, st.integers(0, 40), st.data())
def test_parse_reads_every_legal_text_and_refuses_the_rest_readably(
        seed: int, at: int, data: st.DataObject) -> None:
    """In a position reached by random play: a legal turn's text, however it is typed, parses
    back to that turn; any other text parses to something ``apply`` judges, or is refused with
    one readable line. Every example reaches an assertion (the ``event`` says which)."""
    state = random_game(seed, {}, limit=at + 1)[-1][0]
    legal = GAME.legal_moves(state)
    if data.draw(st.booleans(), label="a legal turn's text"):
        move = data.draw(st.sampled_from(legal))
        parsed = GAME.parse_move(state, noisy(GAME.move_text(state, move), data))
        event("a legal text: parsed back")
        assert GAME.apply(state, parsed) == GAME.apply(state, move)
        return
    text = data.draw(st.text(alphabet="abcdefz0123456789- reincarntpsRPA", max_size=30)
                     | st.text(max_size=30), label="text")
    try:
        parsed = GAME.parse_move(state, text)
    except IllegalMove as exc:
        event("any text: refused by parse")
        assert readable(exc), repr(exc)
        return
    try:
        after = GAME.apply(state, parsed)
    except IllegalMove as exc:
        event("any text: parsed, refused by apply")
        assert readable(exc), repr(exc)
        return
    event("any text: a legal turn")
    assert after in {GAME.apply(state, m) for m in legal}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 30) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(seeds, st.integers(0, 40),
       st.sampled_from(["options", "board", "graveyards", "player", "to_move", "revealed",
                        "quiet_turns", "winner", "game"]), json_values)
def test_state_from_json_rejects_bad_data_cleanly(seed: int, at: int, key: str,
                                                  value: Any) -> None:
    """A position from random play with one field spoilt: refused with one readable line, or
    (when the value happens to be acceptable) a state that round-trips."""
    data = GAME.state_to_json(random_game(seed, {}, limit=at + 1)[-1][2])
    data[key] = value
    try:
        state = GAME.state_from_json(data)
    except RecordError as exc:
        event(f"refused ({key})")
        assert readable(exc), repr(exc)
        return
    event(f"accepted ({key})")
    assert GAME.state_from_json(GAME.state_to_json(state)) == state
