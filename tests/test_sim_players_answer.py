"""Simulated players at real pace stop for a question on the station's screen and answer it,
as players at a table do (issue 18: at TacTiki's 1.04 s scan a fight onto a stack is asked
about a cycle after it rests; the players went on for seconds before answering)."""

from __future__ import annotations

import random

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Prompt, PromptKind
from pi_app.board.geometry import load_geometry
from pi_app.games import get_game
from pi_app.sim.hands import Noise
from pi_app.sim.table import Pace, SimTable


def table() -> SimTable:
    game = get_game("tactiki")
    return SimTable(game, load_geometry("tactiki"), registry_for("tactiki"), random.Random(3),
                    noise=Noise.clean(), pace=Pace())


def test_players_at_pace_stop_when_the_station_asks() -> None:
    """The wait before the next move ends when a question is open: the players answer it
    then, not once their pause is over."""
    sim = table()
    start = sim.now
    sim.outcomes.append(Prompt(start, PromptKind.AMBIGUOUS, ("a1-b1 c1-b1", "c1-b1 a1-b1"), 0))
    sim._tick_until(start + 4.0, asked=True)
    assert sim.now == start


def test_players_stopped_by_a_question_answer_it_first() -> None:
    """A fight made at pace and asked about: end_row answers the question before the board
    has sat still for seconds (each press 0.3-1 s after the last)."""
    sim = table()
    game = sim.game
    state = sim.referee.state
    move = next(m for m in game.legal_moves(state) if game.move_text(state, m) == "a1-b1 c1-b1")
    intended = game.apply(state, move)
    sim._chain.append((intended, state, len(sim.accepted), sim.now))
    options = ("c1-b1 a1-b1", "a1-b1 c1-b1")
    asked: list[tuple[str, float]] = []
    sim.outcomes.append(Prompt(sim.now, PromptKind.AMBIGUOUS, options, 0))
    start = sim.now
    real_press = sim.press

    def press(button: str) -> None:
        real_press(button)
        asked.append((button, sim.now))

    sim.press = press  # type: ignore[method-assign]
    sim.end_row()
    assert [b for b, _ in asked[:2]] == ["menu", "ok"]
    assert asked[0][1] - start <= 1.0  # one press's delay, not the station's settling first
