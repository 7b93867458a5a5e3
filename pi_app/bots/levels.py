"""The strengths, each one class for every game (the game's :class:`Model` differs).

The three methods:

* ``random``: a legal move uniformly at random: the floor every other level must clear.
* ``greedy``: the move whose result the game's evaluation likes best, looking one move ahead
  and no further; where facts are hidden, averaged over a few full states drawn from the view.
* ``search``: information-set Monte Carlo tree search (:mod:`pi_app.bots.mcts`) within the budget.

The named levels people choose (:data:`NAMED`), each a fixed configuration of those methods
with its own playout budget, so that a level plays the same on every machine (a time budget
would make a Pi weaker than a laptop, and a hint change between two asks):

* ``beginner``: the greedy move, but a uniformly random one on two turns in five.
* ``casual``: the greedy move.
* ``club``: the search at the budget the station has always used (TacTiki: the flat look).
* ``strongest``: the search at a larger budget; for TacTiki the information-set tree over the
  hidden ranks (:class:`pi_app.bots.models.TacTikiTreeModel`).

A caller's time limit (``Budget.seconds``) still caps a named level's search, as a safety net.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from pi_app.bots import ALL_LEVELS
from pi_app.bots.base import Bot, Budget
from pi_app.bots.mcts import search
from pi_app.bots.models import MODELS, TREE_MODELS, model_for
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


@dataclass(frozen=True)
class LevelSpec:
    """A named level's configuration: ``method`` one of ``greedy`` and ``search``;
    ``random_share`` the share of turns a ``greedy`` level plays at random; ``playouts`` the
    search's budget per decision, per game (records' ``"game"``); ``tree`` the games whose
    search keeps the whole information-set tree (:data:`pi_app.bots.models.TREE_MODELS`)."""

    name: str
    method: str
    words: str
    random_share: float = 0.0
    playouts: tuple[tuple[str, int], ...] = ()
    tree: tuple[str, ...] = ()

    def playouts_for(self, game_name: str) -> int:
        return dict(self.playouts)[game_name]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "method": self.method, "words": self.words,
                "random_share": self.random_share, "playouts": dict(self.playouts),
                "tree": list(self.tree)}


#: The named levels, weakest first. The search budgets: ``club`` is what the station has
#: always spent (300 playouts; TacTiki's 15, what a Pi 4 affords in a second at p95);
#: ``strongest`` four times that (TacTiki's tree: 60).
NAMED: dict[str, LevelSpec] = {spec.name: spec for spec in (
    LevelSpec("beginner", "greedy", "looks one move ahead, and plays at random on two turns in"
              " five", random_share=0.4),
    LevelSpec("casual", "greedy", "the move that looks best one move ahead"),
    LevelSpec("club", "search", "a short search of the moves and replies",
              playouts=(("topple", 300), ("manami", 300), ("tactiki", 15))),
    LevelSpec("strongest", "search", "a longer search; TacTiki's searches a tree of both"
              " players' turns over every guess of the hidden ranks",
              playouts=(("topple", 1200), ("manami", 1200), ("tactiki", 60)),
              tree=("tactiki",)),
)}


@dataclass(frozen=True)
class NamedBot:
    """A bot at a named level (:data:`NAMED`)."""

    game_name: str
    level: str

    def choose(self, view: SeatView, rng: random.Random, budget: Budget) -> Any:
        spec = NAMED[self.level]
        if spec.method == "greedy":
            # One draw every turn, whichever way it goes, so a game repeats by its seed.
            if rng.random() < spec.random_share:
                return RandomBot(self.game_name).choose(view, rng, budget)
            return GreedyBot(self.game_name).choose(view, rng, budget)
        model = TREE_MODELS[self.game_name] if self.game_name in spec.tree else model_for(view)
        own = Budget(playouts=spec.playouts_for(self.game_name), seconds=budget.seconds,
                     clock=budget.clock)
        return search(model, view, rng, own)


_CLASSES: dict[str, type[RandomBot | GreedyBot | SearchBot]] = {
    "random": RandomBot, "greedy": GreedyBot, "search": SearchBot}


def make_bot(game_name: str, level: str) -> Bot:
    """The bot for ``game_name`` (a record's ``"game"``) at ``level`` (one of
    :data:`pi_app.bots.ALL_LEVELS`)."""
    if game_name not in MODELS:
        raise ValueError(f"no bots for game {game_name!r} (known: {', '.join(MODELS)})")
    if level in NAMED:
        return NamedBot(game_name, level)
    if level not in _CLASSES:
        raise ValueError(f"no bot level {level!r} (known: {', '.join(ALL_LEVELS)})")
    bot: Bot = _CLASSES[level](game_name)
    return bot
