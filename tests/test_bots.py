"""The bots: only legal moves, only their seat's knowledge, seeded, and in the right order of
strength (greedy beats random, search beats greedy) on small fixed samples."""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_app.bots import LEVELS
from pi_app.bots.base import Budget
from pi_app.bots.levels import make_bot
from pi_app.bots.models import MODELS
from pi_app.bots.play import decide
from pi_app.bots.selfplay import outcome, play_pair, wilson
from pi_app.bots.views import (
    TacTikiView,
    ToppleView,
    after_first_step,
    determinize,
    hides_fight,
    seat_view,
)
from pi_app.cli import main as cli_main
from pi_app.games import get_game, tactiki, topple
from pi_app.games.topple_deck import deck
from tools.bench.bots import main as bench_main

QUICK = Budget(playouts=25)
TABLES = [("topple", 2), ("topple", 3), ("topple", 4), ("manami", 2), ("tactiki", 2)]


def _position(game_name: str, players: int, seed: int, plies: int) -> tuple[Any, Any]:
    """The position after up to ``plies`` random decisions from a deal (a finished round is
    dealt on; play stops before the game ends, so somebody is always to move)."""
    game = get_game(game_name)
    rng = random.Random(seed)
    state = game.new_game(rng, {"players": players} if game_name == "topple" else None)
    for _ in range(plies):
        after = game.apply(state, game.random_move(state, rng))
        if game.is_over(after):
            break
        state = game.deal(after, rng) if game.to_move(after) is None else after
    return game, state


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=st.sampled_from(TABLES), seed=st.integers(0, 10**6), plies=st.integers(0, 120),
       level=st.sampled_from(LEVELS), bot_seed=st.integers(0, 1000))
def test_every_bot_plays_only_legal_moves(table: tuple[str, int], seed: int, plies: int,
                                          level: str, bot_seed: int) -> None:
    game, state = _position(*table, seed, plies)
    bot = make_bot(game.name, level)
    move = decide(game, state, bot, random.Random(bot_seed), QUICK)
    assert game.is_legal(state, move), (game.describe(state), move)
    # choose() itself, on the plain view: legal outright, except that a TacTiki turn whose
    # first step starts a fight with unseen ranks is only sure of its first step.
    view = seat_view(game, state, game.to_move(state))
    chosen = bot.choose(view, random.Random(bot_seed), QUICK)
    if isinstance(view, TacTikiView) and hides_fight(view, chosen):
        assert any(isinstance(w, tactiki.Steps) and w.steps[0] == chosen.steps[0]
                   for w in game.ways(state))
    else:
        assert game.is_legal(state, chosen)


def test_a_tactiki_turn_after_a_hidden_fight_is_decided_on_what_the_fight_showed() -> None:
    """Find a first step that attacks an unseen piece; the second look knows its rank and
    every bot's answer there starts with that step and is legal."""
    game, state = _position("tactiki", 2, 5, 0)
    rng = random.Random(3)
    for _ in range(400):
        seat = game.to_move(state)
        view = seat_view(game, state, seat)
        assert isinstance(view, TacTikiView)
        attacks = [w for w in game.ways(state) if hides_fight(view, w)]
        if attacks:
            break
        state = game.apply(state, game.random_move(state, rng))
    else:
        pytest.fail("no hidden fight in 400 random turns")
    first = attacks[0].steps[0]
    after = after_first_step(state, seat, first)
    unseen_before = sum(p.rank is None for col in view.seen.board for p in col)
    unseen_after = sum(p.rank is None for col in after.seen.board for p in col)
    assert unseen_after < unseen_before
    for level in LEVELS:
        move = make_bot("tactiki", level).choose(after, random.Random(1), QUICK)
        assert move.steps[0] == first and game.is_legal(state, move)


def _topple_twins() -> tuple[Any, Any]:
    """Two Topple positions, seat 0 to move, that differ only in seat 1's Secret Tiki card."""
    game, state = _position("topple", 2, 11, 4)
    if state.turn != 0:
        state = game.apply(state, game.random_move(state, random.Random(1)))
    cards = state.table.cards
    other = next(c for c in deck() if c not in state.table.dealt)
    twin_cards = (cards[0], other)
    twin = dataclasses.replace(state, table=dataclasses.replace(
        state.table, cards=twin_cards, dealt=state.table.dealt - {cards[1]} | {other}))
    return state, twin


def _tactiki_twins() -> tuple[Any, Any]:
    """Two TacTiki positions after the same opening turns that differ only in the ranks of
    TAC's (player 1's) pieces, which TIKI (player 0, to move) has not seen."""
    mine = {f: [r, r] for f, r in zip(tactiki.START_FIELDS[0], (1, 2, 3, 4, 5), strict=True)}
    theirs_a = {f: [r, 6 - r] for f, r in zip(tactiki.START_FIELDS[1], (1, 2, 3, 4, 5),
                                               strict=True)}
    theirs_b = {f: [r, r] for f, r in zip(tactiki.START_FIELDS[1], (5, 4, 3, 2, 1), strict=True)}
    a = tactiki.setup_state({**mine, **theirs_a})
    b = tactiki.setup_state({**mine, **theirs_b})
    game = tactiki.GAME
    for text in ("a1-a2 a2-a3", "a5-a4 b5-b4", "c1-c2 c2-c3", "e5-e4 d5-d4"):
        a, b = game.apply_text(a, text), game.apply_text(b, text)
    return a, b


@pytest.mark.parametrize("twins", [_topple_twins, _tactiki_twins])
@pytest.mark.parametrize("level", LEVELS)
def test_a_bot_sees_only_its_seat(twins: Any, level: str) -> None:
    """Same view, different hidden facts -> the same view object and the same move for a fixed
    seed (the issue's hidden-information test)."""
    a, b = twins()
    assert a != b  # the hidden facts do differ
    game = get_game("topple" if isinstance(a, topple.ToppleState) else "tactiki")
    seat = game.to_move(a)
    assert seat == game.to_move(b) == 0
    view_a, view_b = seat_view(game, a, seat), seat_view(game, b, seat)
    assert view_a == view_b
    bot = make_bot(game.name, level)
    budget = Budget(playouts=200)
    assert (bot.choose(view_a, random.Random(7), budget)
            == bot.choose(view_b, random.Random(7), budget))
    assert (decide(game, a, bot, random.Random(7), budget)
            == decide(game, b, bot, random.Random(7), budget))


def test_a_view_holds_no_hidden_fact() -> None:
    """The Topple view names no card of another seat; a TacTiki view names no enemy rank the
    seat has not seen, and a drawn full state agrees with the view."""
    state, _ = _topple_twins()
    view = seat_view(topple.GAME, state, 0)
    assert isinstance(view, ToppleView)
    assert repr(state.table.cards[1]) not in repr(view.public)
    assert state.table.cards[1] in view.unseen and state.table.cards[0] not in view.unseen
    assert view.public.table.cards[0] == state.table.cards[0]
    drawn = determinize(view, random.Random(1))
    assert drawn.table.cards[0] == state.table.cards[0] and drawn.table.cards[1] is not None
    a, _ = _tactiki_twins()
    tview = seat_view(tactiki.GAME, a, 0)
    assert isinstance(tview, TacTikiView)
    for col in tview.seen.board:
        for piece in col:
            assert piece.owner == 0 or (piece.rank is None and piece.piece is None)
    full = determinize(tview, random.Random(2))
    assert tactiki.player_view(full, 0) == tview.seen


def test_same_view_and_seed_give_the_same_move() -> None:
    for name, players in TABLES:
        game, state = _position(name, players, 3, 7)
        view = seat_view(game, state, game.to_move(state))
        bot = make_bot(name, "search")
        moves = {repr(bot.choose(view, random.Random(5), Budget(playouts=60))) for _ in range(2)}
        assert len(moves) == 1


def test_a_time_budget_stops_the_search_and_answers() -> None:
    """Anytime: with a clock that runs 0.1 s per reading and a 1 s budget, the search stops
    after a handful of iterations and still answers a legal move."""
    ticks = iter(range(10**6))
    budget = Budget(seconds=1.0, clock=lambda: next(ticks) * 0.1)
    game, state = _position("topple", 2, 4, 2)
    move = decide(game, state, make_bot("topple", "search"), random.Random(1), budget)
    assert game.is_legal(state, move)
    assert next(ticks) < 20


@pytest.mark.slow
@pytest.mark.parametrize(("game_name", "games", "at_least"),
                         [("topple", 20, 17), ("manami", 20, 15), ("tactiki", 8, 6)])
def test_greedy_beats_random(game_name: str, games: int, at_least: int) -> None:
    result = play_pair(game_name, 2, "greedy", "random", games, QUICK)
    assert result["wins"] >= at_least, result


@pytest.mark.slow
@pytest.mark.parametrize(("game_name", "games", "budget"), [("topple", 4, 200),
                                                            ("manami", 10, 200)])
def test_search_beats_greedy(game_name: str, games: int, budget: int) -> None:
    """A small fixed sample (the bench has the real figures, TacTiki's too: a TacTiki game
    of searches takes seconds)."""
    result = play_pair(game_name, 2, "search", "greedy", games, Budget(playouts=budget))
    assert result["wins"] > result["losses"], result


def test_tactiki_evaluation_adds_worth_advance_and_statue_runs() -> None:
    """The search and greedy levels weigh TacTiki positions by this sum, now read from a
    table per rank list: a TIKI pair of 5s on TAC's start row over a TAC 1 (2 x (5 + 0.15 x 4)
    - 2.5), a TAC 5 two rows up (-(5 + 0.15 x 2)), and the run of two TIKIs toward a statue
    (1.5 x 2 squared)."""
    start = tactiki.setup_state({f: [r, r] for side in (0, 1)
                                 for f, r in zip(tactiki.START_FIELDS[side], (1, 2, 3, 4, 5),
                                                 strict=True)})
    model = MODELS["tactiki"]
    assert model.values(start) == (0.5, 0.5)
    columns: list[tuple[int, ...]] = [()] * 25
    columns[22] = (10, 9, 8)  # row 4, bottom first: TAC's 1 under TIKI's two 5s
    columns[12] = (19,)  # row 2: TAC's 5
    position = start._replace(columns=tuple(columns))
    assert model.values(position)[0] == pytest.approx(1 / (1 + math.exp(-0.25 * 9.4)))


def test_a_game_nobody_won_is_a_draw_not_a_loss() -> None:
    """TacTiki's referee draw has no winners; the bench once counted it as a loss."""
    assert outcome((), 0) == "draw"
    assert outcome((0, 1), 1) == "draw"
    assert outcome((1,), 0) == "loss" and outcome((0,), 0) == "win"


def test_wilson_interval() -> None:
    low, high = wilson(70, 100)
    assert 0.60 < low < 0.61 and 0.78 < high < 0.79
    assert wilson(0, 0) == (0.0, 1.0)


def test_bot_command_prints_games_per_second_and_results(capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["bot", "--game", "manami", "--level", "greedy", "--opponent", "random",
                  "--games", "3", "--seed", "4"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "games/s" in out and "greedy won" in out and "ms of CPU per decision" in out
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["bot", "--game", "manami", "--players", "3"])
    assert exit_info.value.code == 2


def test_bench_prints_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    bench_main(["--games", "2", "--search-games", "1", "--budget", "10", "--game", "manami"])
    import json

    data = json.loads(capsys.readouterr().out)
    pairs = {(r["level"], r["opponent"]) for r in data["results"]}
    assert pairs == {("greedy", "random"), ("search", "random"), ("search", "greedy")}
