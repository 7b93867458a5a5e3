"""A station without a board: random legal play through the real session, store and feed.

Tests, the tournament benchmark and ``tikiboard referee demo`` need many stations on one
machine. Each :class:`SimStation` stores its games in its own SQLite file with
:class:`~pi_app.referee.session.Session`, and tells its :class:`~pi_app.referee.feed.StationFeed`
exactly what the daemon would: every stored event, then a status snapshot (schema in
``pi_app/referee/feed.py``). Whatever publishes or serves the feed cannot tell it from a table.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from pi_app.games import GAME_NAMES, get_game
from pi_app.json_types import JSON
from pi_app.referee.feed import FeedSnapshot, StationFeed, StationStatus
from pi_app.referee.session import Session
from pi_app.referee.store import Event, EventStore

NAMES = ("Ana", "Ben", "Chloé", "Dai", "Emeka", "Fatima", "Gus", "Hina", "Ivo", "Jun")


class SimStation:
    """One simulated station; :meth:`step` plays one decision (or deals, ends, starts a game)."""

    def __init__(self, directory: str | Path, board: str, *, seed: int = 0,
                 game: str | None = None, players: list[str] | None = None) -> None:
        self.board = board
        self.store = EventStore(Path(directory) / f"{board}.sqlite")
        self.feed = StationFeed(board)
        self.rng = random.Random(seed)
        self.game_name = game or GAME_NAMES[seed % len(GAME_NAMES)]
        self.fixed_players = players
        self.session: Session | None = None
        self.players: list[str] = []
        self.seq = 0
        self.games_finished = 0

    def new_game(self) -> None:
        engine = get_game(self.game_name)
        state = engine.new_machine_game(self.rng)
        count = len(engine.scores(state))
        self.players = list(self.fixed_players or self.rng.sample(NAMES, count))[:count]
        self.session = Session.new(self.store, self.game_name, state=state, board=self.board,
                                   players=self.players)
        self.show()

    def show(self, status: StationStatus | None = None) -> None:
        assert self.session is not None
        self.feed.update(FeedSnapshot.of(self.session, self.players, status))

    def _stored(self, event: Event) -> Event:
        self.seq = event.id
        self.feed.event(event)
        return event

    def step(self) -> Event | None:
        """One thing happens at the table; returns the stored event (None: a game started)."""
        if self.session is None:
            self.new_game()
            return None
        session, engine = self.session, self.session.game
        state = session.state
        if engine.is_over(state):
            finished = session.finish_if_over()
            self.session = None
            self.games_finished += 1
            if finished is not None:
                self._stored(finished)
            return finished
        if engine.to_move(state) is None:
            dealt = engine.deal(state, self.rng)
            event = self._stored(session.dealt(dealt, engine.round_record(dealt)))
        else:
            move = engine.random_move(state, self.rng)
            text = engine.move_text(state, move)
            player = engine.to_move(state)
            event = self._stored(session.moved(text, player, engine.apply(state, move)))
        self.show()
        return event

    def events(self) -> list[Event]:
        """Every event this station stored, in ``events.id`` order."""
        out: list[Event] = []
        for row in self.store.games():
            out.extend(self.store.events(row.id))
        return sorted(out, key=lambda e: e.id)

    def export(self) -> list[JSON]:
        """Every game's record, as the station would export it."""
        return [Session.resume(self.store, row).export() for row in self.store.games()]

    def close(self) -> None:
        self.store.close()


def run_station(station: SimStation, steps: int, delay: float = 0.0) -> list[Any]:
    """Play ``steps`` steps (tests); returns the events stored."""
    out: list[Any] = []
    for _ in range(steps):
        event = station.step()
        if event is not None:
            out.append(event)
        if delay:
            time.sleep(delay)
    return out
