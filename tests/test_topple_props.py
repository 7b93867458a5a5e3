"""Tiki Topple invariants over random legal play (hypothesis chooses the games)."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_app.games.topple import CARDS, GAME, TIKIS, Move, ToppleState
from pi_app.records import replay

ALL_MOVES = [Move(card, tiki) for card in CARDS[:4] for tiki in TIKIS] + [Move("toast")]


def brute_force_score(line: tuple[str, ...], card: tuple[str, str, str]) -> int:
    """An independent scorer: walk the places one by one."""
    total = 0
    for place, tiki in enumerate(line, start=1):
        if tiki == card[0] and place == 1:
            total += 9
        if tiki == card[1] and place <= 2:
            total += 5
        if tiki == card[2] and place <= 3:
            total += 2
    return total


def play_game(seed: int, players: int) -> tuple[dict[str, Any], list[ToppleState]]:
    """A random complete game, as a record and the list of every state passed through."""
    rng = random.Random(seed)
    state = GAME.new_game(rng, {"players": players})
    states = [state]
    rounds: list[dict[str, Any]] = []
    while not GAME.is_over(state):
        if state.turn is None:
            state = GAME.deal(state, rng)
            states.append(state)
        if not rounds or len(rounds) == state.table.round:
            table = state.table
            rounds.append({"line": list(state.line), "first": table.first, "moves": [],
                           "cards": [list(table.cards[s] or ()) for s in table.seats]})
            if len(table.seats) < table.players:
                rounds[-1]["players"] = list(table.seats)
        move = GAME.random_move(state, rng)
        rounds[-1]["moves"].append(GAME.move_text(state, move))
        state = GAME.apply(state, move)
        states.append(state)
    return {"game": "topple", "options": {"players": players}, "rounds": rounds}, states


games = st.tuples(st.integers(0, 2**32), st.integers(2, 4))


@settings(max_examples=60, deadline=None)
@given(games)
def test_invariants_over_random_games(game: tuple[int, int]) -> None:
    seed, players = game
    _, states = play_game(seed, players)
    for before, after in itertools.pairwise(states):
        if before.turn is None:  # a deal
            assert sorted(after.line) == sorted(TIKIS)
            continue
        # The line is always an ordering of the tikis left.
        assert len(set(after.line)) == len(after.line) and set(after.line) <= set(TIKIS)
        mover = before.turn
        spent = [b - a for b, a in zip(before.hands[mover], after.hands[mover], strict=True)]
        assert sorted(spent) == [0, 0, 0, 0, 1]  # exactly one card left the mover's hand
        others = [p for p in range(players) if p != mover]
        assert all(before.hands[p] == after.hands[p] for p in others)
        # The round ends exactly when the sixth tiki is gone or every card has been played.
        should_end = len(after.line) == 3 or not any(any(after.hands[p]) for p in range(players))
        assert (after.turn is None) == should_end
        assert len(after.line) >= 3
        if should_end:
            table = after.table
            expected = tuple(0 if c is None else brute_force_score(after.line, c)
                             for c in table.cards)
            assert table.round_scores[-1] == expected
            assert table.totals == tuple(map(sum, zip(*table.round_scores, strict=True)))
        else:
            # R12: whoever is to move always has a legal card.
            assert GAME.legal_moves(after)


@settings(max_examples=40, deadline=None)
@given(games)
def test_legal_moves_are_exactly_the_moves_apply_accepts(game: tuple[int, int]) -> None:
    seed, players = game
    _, states = play_game(seed, players)
    for state in states[:: max(1, len(states) // 12)]:
        legal = set(GAME.legal_moves(state))
        assert len(legal) == len(GAME.legal_moves(state))  # no duplicates
        assert legal == {m for m in ALL_MOVES if GAME.is_legal(state, m)}


@settings(max_examples=40, deadline=None)
@given(games)
def test_state_and_record_round_trip_through_json(game: tuple[int, int]) -> None:
    seed, players = game
    record, states = play_game(seed, players)
    for state in [*states[::max(1, len(states) // 10)], states[-1]]:
        data = json.loads(json.dumps(GAME.state_to_json(state)))
        assert GAME.state_from_json(data) == state
    text = json.dumps(record)
    result = replay(json.loads(text))
    assert result.ok
    assert GAME.state_to_json(result.state)["line"] == list(states[-1].line)
    assert result.state.table.totals == states[-1].table.totals
    assert GAME.winners(result.state) == GAME.winners(states[-1])
    assert GAME.is_over(result.state)


@settings(max_examples=40, deadline=None)
@given(games, st.data())
def test_move_text_parses_back_to_the_same_move(game: tuple[int, int], data: Any) -> None:
    seed, players = game
    _, states = play_game(seed, players)
    state = data.draw(st.sampled_from([s for s in states if s.turn is not None]))
    for move in GAME.legal_moves(state):
        text = GAME.move_text(state, move)
        assert GAME.parse_move(state, text) == move
        assert GAME.parse_move(state, text.upper()) == move


@settings(max_examples=20, deadline=None)
@given(games)
def test_random_move_draws_every_legal_move_and_nothing_else(game: tuple[int, int]) -> None:
    seed, players = game
    _, states = play_game(seed, players)
    rng = random.Random(seed)
    for state in [s for s in states if s.turn is not None][::7]:
        legal = GAME.legal_moves(state)
        drawn = {GAME.random_move(state, rng) for _ in range(40 * len(legal))}
        assert drawn == set(legal)
