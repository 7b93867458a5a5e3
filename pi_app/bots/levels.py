"""The three strengths, each one class for every game (the game's :class:`Model` differs).

* ``random``: a legal move uniformly at random: the floor every other level must clear.
* ``greedy``: the move whose result the game's evaluation likes best, looking one move ahead
  and no further; where facts are hidden, averaged over a few full states drawn from the view.
* ``search``: information-set Monte Carlo tree search (:mod:`pi_app.bots.mcts`) within the budget.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from pi_app.bots.base import LEVELS, Bot, Budget
from pi_app.bots.mcts import search
from pi_app.bots.models import MODELS, model_for
from pi_app.bots.views import SeatView, determinize
from pi_app.games.base import IllegalMove


@dataclass(frozen=True)
class RandomBot:
    game_name: str
    level: str = "random"

    def choose(self, view: SeatView, rng: random.Random, budget: Budget) -> Any:
        model = model_for(view)
        moves = model.root_moves(view, determinize(view, rng))
        return moves[rng.randrange(len(moves))]


@dataclass(frozen=True)
class GreedyBot:
    game_name: str
    level: str = "greedy"

    def choose(self, view: SeatView, rng: random.Random, budget: Budget) -> Any:
        model = model_for(view)
        game = model.game
        states = [determinize(view, rng) for _ in range(model.greedy_samples)]
        moves = model.root_moves(view, states[0])
        best: list[Any] = []
        best_score = float("-inf")
        for move in moves:
            total, n = 0.0, 0
            for state in states:
                try:  # a second step may exist only after the fight went one way
                    after = game.apply(state, move)
                except IllegalMove:
                    continue
                total += model.evaluate(after, view.seat)
                n += 1
            score = total / n
            if score > best_score + 1e-9:
                best, best_score = [move], score
            elif score > best_score - 1e-9:
                best.append(move)
        return best[rng.randrange(len(best))]


@dataclass(frozen=True)
class SearchBot:
    game_name: str
    level: str = "search"

    def choose(self, view: SeatView, rng: random.Random, budget: Budget) -> Any:
        return search(model_for(view), view, rng, budget)


_CLASSES: dict[str, type[RandomBot | GreedyBot | SearchBot]] = {
    "random": RandomBot, "greedy": GreedyBot, "search": SearchBot}


def make_bot(game_name: str, level: str) -> Bot:
    """The bot for ``game_name`` (a record's ``"game"``) at ``level`` (one of :data:`LEVELS`)."""
    if game_name not in MODELS:
        raise ValueError(f"no bots for game {game_name!r} (known: {', '.join(MODELS)})")
    if level not in _CLASSES:
        raise ValueError(f"no bot level {level!r} (known: {', '.join(LEVELS)})")
    bot: Bot = _CLASSES[level](game_name)
    return bot
