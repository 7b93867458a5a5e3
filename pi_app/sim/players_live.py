"""Simulated players at a live station: hands on the simulated firmware, fingers on the buttons.

The offline :class:`pi_app.sim.table.SimTable` feeds a follower directly. Here the players act
on a running station through its real inputs: they lay tags on the simulated readers of a
:class:`pi_app.hw.simfirmware.SimFirmware` (the firmware then scans, frames and sends them over
a pty to the daemon's serial link), and they press the gpiozero buttons. They watch what the
station shows (its status: the open question, the guidance) the way people watch the LEDs and
the screen, and they answer the way people do. Used by ``tikiboard demo`` and the end-to-end
tests.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_app.board.geometry import Geometry
from pi_app.board.registry import TagRegistry
from pi_app.sim.hands import Hands, Noise, PhysicalBoard

View = Mapping[str, tuple[str, ...]]


@dataclass
class LiveStats:
    moves: int = 0
    illegal: int = 0
    takebacks: int = 0
    answers: int = 0
    presses: int = 0
    fixes: int = 0
    followed: int = 0
    """Moves after which the station held exactly the position the players meant."""
    lost: int = 0
    """Moves after which it did not (missed, or a phantom in its place); the soak's target: 0."""
    made: list[str] = field(default_factory=list)


class LivePlayers:
    """Players who move pieces on a simulated sensor board and press the station's buttons."""

    def __init__(self, sim: Any, geometry: Geometry, registry: TagRegistry,
                 rng: random.Random, *, noise: Noise | None = None,
                 pace: tuple[float, float] = (0.12, 0.3),
                 press: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.sim = sim
        self.geometry = geometry
        self.board = PhysicalBoard(geometry, registry)
        self.hands = Hands(rng, noise, pace=pace)
        self.rng = rng
        self.press_button = press
        self.stats = LiveStats()

    # -- the physical board ----------------------------------------------------------------------
    def lay_out(self, view: View) -> None:
        """Put the pieces of ``view`` down at once (before the station starts watching)."""
        self.board.set_view(view)
        for cell in self.geometry.cells:
            self._sync(cell.name)

    def _sync(self, cell_name: str) -> None:
        cell = self.geometry.cell(cell_name)
        uids = self.board.cells[cell_name]
        if cell.reader is not None:
            self.sim.set_tags(cell.reader, [u for u in uids if u != cell.presence_piece])
        if cell.presence is not None:
            self.sim.set_presence(cell.presence, self.board.resting(cell_name))

    async def change(self, target: View, waypoints: list[View] | None = None) -> None:
        """Bring the board to ``target`` by hand, in real time, action by action."""
        before = {c: list(u) for c, u in self.board.cells.items()}
        actions, _ = self.hands.change(self.board, target, 0.0, waypoints or [])
        self.board.cells = before  # planned on a copy; now made for real, one by one
        loop = asyncio.get_running_loop()
        start = loop.time()
        for action in actions:
            delay = start + action.t - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self.board.apply(action)
            if action.cell is not None:
                self._sync(action.cell)

    async def press(self, button: str) -> None:
        if self.press_button is not None:
            await asyncio.sleep(self.rng.uniform(0.2, 0.5))
            await self.press_button(button)
            self.stats.presses += 1
