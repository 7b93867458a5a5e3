"""A seat's turn played by a bot, and whole games of bots against each other.

This is the referee's side: it holds the full state, hands each bot only its seat's view, and
for a TacTiki first step that starts a fight the seat cannot foresee, makes the step, shows the
seat the ranks the fight revealed and asks again for the rest of the turn, as a person at the
table would learn them. The move it returns is always legal in the full state.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pi_app.bots.base import Bot, Budget
from pi_app.bots.views import seat_view
from pi_app.games.base import Game

#: A game that runs longer than this many decisions is a bug in an engine or a bot, not a result.
MAX_DECISIONS = 20_000


def decide(game: Game[Any, Any], state: Any, bot: Bot, rng: random.Random,
           budget: Budget) -> Any:
    """The move ``bot`` makes for the player to move in ``state``."""
    seat = game.to_move(state)
    if seat is None:
        raise ValueError("nobody is to move")
    view = seat_view(game, state, seat)
    move = bot.choose(view, rng, budget)
    step = view.unforeseen_step(move)
    if step is not None:  # the rest depends on what its first part shows (a TacTiki fight)
        move = bot.choose(view.after_step(state, step), rng, budget)
    return move


@dataclass
class GameResult:
    """One finished game: the winners (empty: a draw), final scores, and the seconds each
    decision took per seat."""

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    seconds: list[list[float]]
    decisions: int


def play_game(game: Game[Any, Any], bots: Sequence[Bot], rng: random.Random, budget: Budget,
              options: dict[str, Any] | None = None,
              clock: Callable[[], float] = time.perf_counter) -> GameResult:
    """A whole game, bot ``i`` in seat ``i``; the deal and the bots draw from ``rng``."""
    state = game.new_machine_game(rng, options)
    seconds: list[list[float]] = [[] for _ in bots]
    decisions = 0
    while not game.is_over(state):
        seat = game.to_move(state)
        if seat is None:
            state = game.deal(state, rng)
            continue
        start = clock()
        move = decide(game, state, bots[seat], rng, budget)
        seconds[seat].append(clock() - start)
        state = game.apply(state, move)
        decisions += 1
        if decisions > MAX_DECISIONS:
            raise RuntimeError(f"{game.name}: a bot game ran past {MAX_DECISIONS} decisions")
    winners = game.winners(state) or ()
    return GameResult(tuple(winners), tuple(game.scores(state)), seconds, decisions)
