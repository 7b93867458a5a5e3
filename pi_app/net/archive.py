"""A station's past games for its page: the list, and each game's record to download.

The page runs on the daemon's event loop, the loop that referees the game. A record is
rebuilt by replaying its moves (tens of milliseconds for a long game on a Pi), so every read
runs in a worker thread on a read-only connection of its own: SQLite's WAL lets it read while
the station writes, and the station's own connection is never shared across threads.

What is offered: every finished game (it has a result) as ``tikiboard export`` writes it
(:meth:`pi_app.referee.session.Session.export`, the same code); any other game only as its
public record (:func:`pi_app.net.redact.public_record`: no Secret Tiki card, no TacTiki rank),
since the page is open to the opponent. That is the game in play, and also a game abandoned for
a new one: nobody revealed its secrets at the table, and its pieces may still be on the board
(the players often start again from the stacks or cards they hold), so its record would tell
the new game's secrets. ``tikiboard export`` on the station still writes it whole.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from pathlib import Path

from pi_app.json_types import JSON
from pi_app.net.redact import public_record
from pi_app.records import PlayKind
from pi_app.referee.store import EventStore, GameRow, StoreError


class GameArchive:
    """Read-only view of a station's game database (``path``), opened on first use."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._store: EventStore | None = None
        self._lock = threading.Lock()  # one worker at a time on the one connection

    def _open(self) -> EventStore:
        if self._store is None:
            self._store = EventStore(self.path, readonly=True)
        return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def games(self) -> list[JSON]:
        """Every game, newest first: id, game, players, state (``finished``, ``abandoned``,
        ``in play``), result, date (UTC), moves (as the record counts them)."""
        with self._lock:
            store = self._open()
            counts = _move_counts(store.db)
            return [_listing(row, counts.get(row.id, 0)) for row in reversed(store.games())]

    def record(self, game_id: int) -> JSON:
        """Game ``game_id``'s record: whole once the game is finished, else public.
        :class:`KeyError` for no such game, :class:`StoreError` for one that does not read."""
        from pi_app.referee.session import Session

        with self._lock:
            store = self._open()
            try:
                row = store.game(game_id)
            except StoreError as exc:
                raise KeyError(game_id) from exc
            record = Session.resume(store, row).export()
        return record if state_of(row) == "finished" else public_record(record)

    async def games_async(self) -> list[JSON]:
        return await asyncio.to_thread(self.games)

    async def record_async(self, game_id: int) -> JSON:
        return await asyncio.to_thread(self.record, game_id)


def state_of(row: GameRow) -> str:
    if not row.finished:
        return "in play"
    return "abandoned" if row.result is None else "finished"


def _listing(row: GameRow, moves: int) -> JSON:
    return {"id": row.id, "game": row.game, "players": list(row.players),
            "state": state_of(row), "result": row.result,
            "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime(row.created)),
            "moves": moves}


def _move_counts(db: sqlite3.Connection) -> dict[int, int]:
    """Moves per game as its record holds them: each move, less the moves taken back (a
    revision replaces a move, it adds none). Counted from the events, without replaying."""
    counts: dict[int, int] = {}
    for game_id, kind, data in db.execute(
            "SELECT game_id, kind, data FROM events WHERE kind IN ('move', 'takeback') "
            "ORDER BY id"):
        change = 1
        if kind == PlayKind.TAKEBACK:
            try:
                plies = json.loads(data).get("plies", 0)
            except (ValueError, AttributeError):
                plies = 0
            change = -plies if isinstance(plies, int) else 0
        counts[game_id] = max(counts.get(game_id, 0) + change, 0)
    return counts
