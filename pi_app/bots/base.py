"""The one interface every bot has, and the budget a move may spend.

``choose(view, rng, budget) -> move``: the view is what the seat to move may know
(:mod:`pi_app.bots.views`), the ``rng`` is the only source of chance (same view, same seed and a
playout budget: same move), and the budget bounds the thinking. A bot never sees the referee's
state, so it cannot cheat.

A TacTiki turn is two steps, and the first may be a fight whose outcome the seat learns only by
making it; the move a bot returns for a view without a first step then has a first step that
is surely legal, and the second is decided on the view after it (:func:`pi_app.bots.play.decide`
does both).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pi_app.bots import LEVELS
from pi_app.bots.views import SeatView

__all__ = ["LEVELS", "Bot", "Budget"]


@dataclass(frozen=True)
class Budget:
    """How long a search may think: at most ``playouts`` iterations and at most ``seconds`` on
    ``clock`` (either may be None; both None means 1,000 playouts). The search is anytime: when
    the budget runs out it answers with the best move so far. Only a playout budget repeats
    exactly; a time budget depends on the machine's speed."""

    playouts: int | None = None
    seconds: float | None = None
    clock: Callable[[], float] = field(default=time.perf_counter, compare=False)

    def __post_init__(self) -> None:
        if self.playouts is not None and self.playouts < 1:
            raise ValueError("a budget needs at least one playout")
        if self.seconds is not None and self.seconds <= 0:
            raise ValueError("a time budget must be positive")

    def limits(self) -> tuple[int, float | None]:
        """The playout cap and the deadline on ``clock`` (None: no deadline)."""
        cap = self.playouts if self.playouts is not None else (
            10**9 if self.seconds is not None else 1_000)
        deadline = None if self.seconds is None else self.clock() + self.seconds
        return cap, deadline


class Bot(Protocol):
    """A computer player for one game at one strength."""

    @property
    def game_name(self) -> str:
        """The record ``"game"`` it plays."""
        ...

    @property
    def level(self) -> str:
        """One of :data:`pi_app.bots.ALL_LEVELS`."""
        ...

    def choose(self, view: SeatView, rng: random.Random, budget: Budget) -> Any:
        """The move for the seat whose view this is (it must be that seat's turn)."""
        ...
