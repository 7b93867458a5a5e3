"""A test rig: one game on one simulated board, driven step by step by a test.

The test says what the hands do (``lift``, ``put``, or ``show`` a whole view); the rig turns it
into the events the firmware would send, feeds the real follower in time order, runs its timers,
and keeps every outcome for the test to inspect.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from pi_app.board.equipment import registry_for
from pi_app.board.follower import (
    Follower,
    Guidance,
    MoveAccepted,
    Outcome,
    Prompt,
)
from pi_app.board.geometry import load_geometry
from pi_app.games import get_game
from pi_app.readings import ButtonPressed, SensorEvent
from pi_app.sim.hands import Action, Hands, PhysicalBoard
from pi_app.sim.sensors import SensorModel


class Rig:
    def __init__(self, game_name: str, state: Any, *, miss: float = 0.0, seed: int = 0,
                 absent_after: int = 3) -> None:
        self.game = get_game(game_name)
        self.geometry = load_geometry(game_name)
        self.registry = registry_for(game_name)
        self.rng = random.Random(seed)
        self.board = PhysicalBoard(self.geometry, self.registry)
        self.sensors = SensorModel(self.geometry, self.rng, miss=miss, absent_after=absent_after)
        self.follower = Follower(self.game, state, self.geometry, self.registry)
        self.hands = Hands(self.rng, pace=(0.2, 0.2))
        self.now = 0.0
        self.outcomes: list[Outcome] = []
        self.board.set_view(self.game.expected_view(state))
        cells = {c: list(u) for c, u in self.board.cells.items()}
        for event in self.sensors.lay_out(cells, 0.0):
            self.follower.tracker.feed(event)
        self.follower.tracker.poll(0.5)
        self.now = 1.0
        self.outcomes += self.follower.prepare(self.now)

    # -- time and events -------------------------------------------------------------------------
    def deliver(self, events: Sequence[SensorEvent], linger: float = 3.0) -> list[Outcome]:
        start = len(self.outcomes)
        for event in events:
            self.wait_until(event.t)
            self.now = max(self.now, event.t)
            self.outcomes += self.follower.handle(event, self.now)
        self.wait_until(self.now + linger)
        return self.outcomes[start:]

    def wait_until(self, until: float) -> list[Outcome]:
        start = len(self.outcomes)
        while (deadline := self.follower.next_deadline(self.now)) is not None \
                and deadline <= until:
            self.now = deadline
            self.outcomes += self.follower.handle(None, self.now)
        self.now = max(self.now, until)
        return self.outcomes[start:]

    # -- hands -----------------------------------------------------------------------------------
    def show(self, view: Mapping[str, tuple[str, ...]], linger: float = 3.0) -> list[Outcome]:
        """Hands change the board to ``view`` (clean, 0.2 s between actions)."""
        actions, _ = self.hands.change(self.board, view, self.now + 0.2)
        return self.deliver(self.sensors.run(actions), linger)

    def act(self, *steps: tuple[str, str, str | None], gap: float = 0.2,
            linger: float = 3.0) -> list[Outcome]:
        """Explicit steps: ("lift", piece, cell), ("put", piece, cell or None) or ("hover",
        piece, cell): held above the cell, read by its reader but off its presence sensor (a
        later "lift" takes it away again)."""
        actions: list[Action] = []
        t = self.now
        for verb, piece, cell in steps:
            t += gap
            if verb == "lift":
                assert cell is not None
                uid = next(u for u in reversed(self.board.cells[cell])
                           if self.board.name(u) == piece)
                action = Action(t, uid, cell, put=False)
            else:
                uid = self._in_hand(piece, actions)
                action = Action(t, uid, cell, put=True, hover=verb == "hover")
            self.board.apply(action)
            actions.append(action)
        return self.deliver(self.sensors.run(actions), linger)

    def _in_hand(self, piece: str, actions: list[Action]) -> str:
        last: dict[str, bool] = {}  # uid -> put by its latest action
        for action in actions:
            last[action.uid] = action.put
        for uid, put in last.items():
            if not put and self.board.name(uid) == piece:
                return uid
        return self.board.off_board(piece)[0]

    def press(self, button: str) -> list[Outcome]:
        self.now += 0.5
        out = self.follower.handle(ButtonPressed(self.now, button), self.now)
        self.outcomes += out
        return out

    def play(self, text: str, linger: float = 3.0) -> list[Outcome]:
        """Make the move ``text`` by hand (its placement, then any follow-up)."""
        state = self.follower.state
        move = self.game.parse_move(state, text)
        out = self.show(self.game.placement_view(state, move), linger)
        after = self.game.apply(state, move)
        if self.game.expected_view(after) != self.game.placement_view(state, move):
            out += self.show(self.game.expected_view(after), linger)
        return out

    # -- what happened ---------------------------------------------------------------------------
    @staticmethod
    def accepted(outcomes: Sequence[Outcome]) -> list[str]:
        return [o.text for o in outcomes if isinstance(o, MoveAccepted)]

    @staticmethod
    def prompts(outcomes: Sequence[Outcome]) -> list[Prompt]:
        return [o for o in outcomes if isinstance(o, Prompt)]

    @staticmethod
    def guidance(outcomes: Sequence[Outcome], kind: str = "mismatch") -> list[Guidance]:
        return [o for o in outcomes if isinstance(o, Guidance) and o.kind == kind]
