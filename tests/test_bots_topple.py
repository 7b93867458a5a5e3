"""Topple's search plays its rounds out on plain lists (``pi_app/bots/topple_rollout.py``):
the same rules as the engine, the same playout policy as before, and no engine state per
playout move, which is what brought a decision's CPU down (README, *Time on a Pi 4*)."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_app.bots import topple_rollout as fast
from pi_app.bots.base import Budget
from pi_app.bots.levels import make_bot
from pi_app.bots.models import MODELS, Model
from pi_app.bots.play import decide
from pi_app.bots.views import determinize, seat_view
from pi_app.games import topple
from pi_app.games.topple import CARDS, GAME, ToppleState

MODEL = MODELS["topple"]


def _round_start(seed: int, players: int, plies: int, bottom: bool) -> ToppleState:
    """A position some random cards into a round (dealt on past finished rounds)."""
    rng = random.Random(seed)
    state = GAME.new_game(rng, {"players": players, "topple_bottom": bottom})
    for _ in range(plies):
        after = GAME.apply(state, GAME.random_move(state, rng))
        if GAME.is_over(after):
            break
        state = GAME.deal(after, rng) if after.turn is None else after
    return state


def _engine_move(line: list[str], move: fast.FastMove) -> topple.Move:
    index, pos = move
    return topple.TOAST if CARDS[index] == "toast" else topple.Move(CARDS[index], line[pos])


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.sampled_from([2, 3, 4]),
       plies=st.integers(0, 60), bottom=st.booleans(), pick=st.integers(0, 10**6))
def test_the_list_rules_are_the_engines(seed: int, players: int, plies: int, bottom: bool,
                                        pick: int) -> None:
    """Move for move to the round's end: the same legal moves in the same order, the same
    random draw, the same line and hands after each, the same end and the same points; and
    the greedy choice on lists is the engine-state greedy choice (``Model.playout_move``)."""
    state = _round_start(seed, players, plies, bottom)
    rng = random.Random(pick)
    while state.turn is not None:
        turn = state.turn
        line = list(state.line)
        hand, opened = state.hands[turn], state.opened[turn]
        listed = fast.moves(line, hand, opened, bottom)
        assert [_engine_move(line, m) for m in listed] == GAME.legal_moves(state)
        seed_now = rng.random()
        drawn = fast.random_move(line, hand, opened, bottom, random.Random(seed_now))
        assert _engine_move(line, drawn) == GAME.random_move(state, random.Random(seed_now))
        card = state.table.cards[turn]
        assert card is not None
        greedy = fast.greedy_move(line, hand, opened, bottom, card)
        engine_greedy = MODEL.playout_move(state, _AlwaysGreedy())
        assert _engine_move(line, greedy) == engine_greedy
        for move in listed:
            after = GAME.apply(state, _engine_move(line, move))
            assert fast.after(line, move) == list(after.line)
            assert fast.line_value(after.line, card) == MODEL.evaluate(after, turn)
        move = listed[rng.randrange(len(listed))]
        state = GAME.apply(state, _engine_move(line, move))
    assert tuple(fast.playout(state, random.Random(1), 0.3)) == state.table.round_scores[-1]


class _AlwaysGreedy(random.Random):
    """An rng whose ``random()`` is 0.99: ``playout_move`` then takes its greedy branch."""

    def random(self) -> float:
        return 0.99


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_list_playout_is_the_engine_playout(players: int) -> None:
    """Same state and seed: the list playout values the round exactly as the engine playout
    (``Model.rollout``, 30 % random moves, the rest greedy) would, draw for draw, so the
    search's strength measured before the change is the strength after it."""
    for seed in range(40):
        state = _round_start(seed, players, seed % 12, False)
        assert state.turn is not None
        view = seat_view(GAME, state, state.turn)
        full = determinize(view, random.Random(seed))
        assert MODEL.rollout(full, random.Random(seed)) == \
            Model.rollout(MODEL, full, random.Random(seed))


def test_a_search_decision_builds_no_engine_state_in_its_playouts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost the profile found: the engine's ``apply`` is called only on the tree's path
    (a few per playout), not for every candidate of every playout move (60,029 calls for this
    decision before, at 300 playouts with 4 players)."""
    calls = 0
    real = type(GAME).apply

    def counting(self: Any, state: ToppleState, move: topple.Move) -> ToppleState:
        nonlocal calls
        calls += 1
        return real(self, state, move)

    monkeypatch.setattr(type(GAME), "apply", counting)
    state = _round_start(3, 4, 0, False)
    decide(GAME, state, make_bot("topple", "search"), random.Random(2), Budget(playouts=300))
    assert calls < 300 * 4, calls


def test_a_drawn_state_is_the_view_with_the_others_cards_filled_in() -> None:
    """``determinize`` builds the Topple state field by field (it runs once per playout):
    every field but the hidden cards and the dealt set is the view's own."""
    for players in (2, 3, 4):
        state = _round_start(5, players, 3, False)
        assert state.turn is not None
        view = seat_view(GAME, state, state.turn)
        drawn = determinize(view, random.Random(3))
        public = view.public  # type: ignore[attr-defined]
        assert drawn == dataclasses.replace(public, table=dataclasses.replace(
            public.table, cards=drawn.table.cards, dealt=drawn.table.dealt))
        assert all(c is not None for c in drawn.table.cards)
