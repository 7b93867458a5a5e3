"""The post-game review (issue 20, :mod:`pi_app.bots.review`): each player's moves where the bot's
evaluation dropped most, bounded in time. The page's side is in tests/test_station_page_play.py.
"""

from __future__ import annotations

import random
from typing import Any

from pi_app.bots.models import MODELS
from pi_app.bots.review import PER_PLAYER, review
from pi_app.games import get_game
from pi_app.records import fold


def blunder_game(seed: int) -> tuple[Any, list[tuple[str, Any]], int, str]:
    """A two-player Tiki Topple game where everyone plays the greedy level's move (the best by
    the evaluation, one move ahead), except once: player 0, whose 9-point tiki stands first in
    the line, topples it to the bottom. Returns the start, the steps (``("move", text)`` or
    ``("deal", state)``), and that move's number (from 1) and text."""
    game = get_game("topple")
    model = MODELS["topple"]
    rng = random.Random(seed)
    start = game.new_game(rng)
    state, steps = start, []
    number, blunder = 0, ""
    while not game.is_over(state):
        seat = game.to_move(state)
        if seat is None:
            state = game.deal(state, rng)
            steps.append(("deal", state))
            continue
        moves = game.legal_moves(state)
        number += 1
        top = state.table.cards[seat][0]
        texts = [game.move_text(state, m) for m in moves]
        if not blunder and seat == 0 and state.line[0] == top and f"topple {top}" in texts:
            blunder = f"topple {top}"
            move = moves[texts.index(blunder)]
            at = number
        else:
            move = max(moves, key=lambda m: model.evaluate(game.apply(state, m), seat))
        steps.append(("move", game.move_text(state, move)))
        state = game.apply(state, move)
    assert blunder, f"seed {seed}: no chance for the blunder"
    return start, steps, at, blunder


def record_of(start: Any, steps: list[tuple[str, Any]]) -> dict[str, Any]:
    game = get_game("topple")
    return fold(game.setup_record(start), [
        ("deal", {"round": game.round_record(v)}) if kind == "deal" else ("move", {"text": v})
        for kind, v in steps])


def test_the_review_names_the_move_that_threw_a_tiki_away() -> None:
    start, steps, at, blunder = blunder_game(0)
    result = review(record_of(start, steps))
    assert not result.partial
    assert result.reviewed == result.total == sum(1 for kind, _ in steps if kind == "move")
    mine = [s for s in result.slips if s.player == 0]
    assert (mine[0].move, mine[0].text) == (at, blunder)
    assert mine[0].better != blunder
    # Everyone else played the evaluation's best: nothing else to name.
    assert [s for s in result.slips if (s.player, s.move) != (0, at)] == []


def test_each_player_gets_at_most_three_moves_worst_first() -> None:
    game = get_game("tactiki")
    rng = random.Random(4)
    state = game.new_game(rng)
    record = game.setup_record(state)
    moves = []
    while not game.is_over(state):
        move = game.random_move(state, rng)
        moves.append(game.move_text(state, move))
        state = game.apply(state, move)
    result = review({**record, "moves": moves})
    for seat in (0, 1):
        mine = [s.drop for s in result.slips if s.player == seat]
        assert 1 <= len(mine) <= PER_PLAYER  # random play makes mistakes
        assert mine == sorted(mine, reverse=True)


def test_the_review_stops_at_its_time_and_says_how_far_it_got() -> None:
    start, steps, _, _ = blunder_game(0)
    ticks = iter(range(1000))
    result = review(record_of(start, steps), seconds=5, clock=lambda: float(next(ticks)))
    assert result.partial and 0 < result.reviewed < result.total
    assert result.to_json()["partial"] is True
