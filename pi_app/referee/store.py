"""The event store: every game as an append-only list of events in SQLite.

Every accepted move is committed here before any LED confirms it, so a power cut loses nothing
that a player was shown as accepted. The database runs in WAL mode with ``synchronous=FULL``:
a commit returns only when the event is on disk (the figure is in the benchmark).

Tables::

    games(id, game, board, created, setup, players, finished, result)
    events(id, game_id, seq, t, kind, data, published)

``events.id`` is the station's own sequence number, increasing across games: the tournament
feed publishes in that order and the broker side drops duplicates by it. ``seq`` counts the
events of one game from 1. ``published`` marks what the MQTT publisher has handed to the broker
(store-and-forward). Kinds and their data:

* ``move``      ``{"text": "up1 Nani", "player": 0, "how": "at once"}``: ``how`` as in
  ``MoveAccepted`` (``at once``, ``rested``, ``settled``: the board alone decided; ``asked``,
  ``forced``), and ``"lifts_only": true`` when it was taken from a picture with pieces gone
  (a restarted station keeps such a move undoable when a piece comes back)
* ``revise``    ``{"replaced": "toast", "text": "topple Nani"}``: the last move was the middle
  of this one
* ``takeback``  ``{"plies": 2, "left": {"s1": ["Kapu"], ...}}``: ``left``, for BACK, is what
  the board showed then (the moves still on it): a restarted station does not take that
  picture for the move again until the board has shown the position
* ``deal``      ``{"round": {...}}`` a new Topple round as its record object (no moves)
* ``cards``     ``{"cards": [[9, 5, 2 tikis], ...]}`` the Secret Tiki cards the players tapped,
  in seat order, before the round's first card
* ``result``    ``{"scores": [...], "winners": [...]}`` (the game is over)
* anything else (``prompt``, ``mismatch``, ``in_sync``, ``note``) is kept for the feed and logs,
  and ignored when a game is rebuilt.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_app.games.base import JSON

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    game      TEXT NOT NULL,
    board     TEXT NOT NULL DEFAULT '',
    created   REAL NOT NULL,
    setup     TEXT NOT NULL,
    players   TEXT NOT NULL DEFAULT '[]',
    finished  INTEGER NOT NULL DEFAULT 0,
    result    TEXT
);
CREATE TABLE IF NOT EXISTS events (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id   INTEGER NOT NULL REFERENCES games(id),
    seq       INTEGER NOT NULL,
    t         REAL NOT NULL,
    kind      TEXT NOT NULL,
    data      TEXT NOT NULL,
    published INTEGER NOT NULL DEFAULT 0,
    UNIQUE (game_id, seq)
);
CREATE INDEX IF NOT EXISTS events_unpublished ON events(published, id);
"""

#: Event kinds that change the position (the rest are kept for the feed and logs).
PLAY_KINDS = ("move", "revise", "takeback", "deal", "cards", "result")


class StoreError(RuntimeError):
    """The database cannot take an event (disk full, read-only, corrupt): say so, never
    confirm a move that was not stored."""


@dataclass(frozen=True)
class Event:
    id: int
    game_id: int
    seq: int
    t: float
    kind: str
    data: JSON

    def to_json(self) -> JSON:
        return {"id": self.id, "game_id": self.game_id, "seq": self.seq, "t": self.t,
                "kind": self.kind, "data": self.data}


@dataclass(frozen=True)
class GameRow:
    id: int
    game: str
    board: str
    created: float
    setup: JSON
    players: list[str]
    finished: bool
    result: JSON | None


class EventStore:
    """One station's games and events."""

    def __init__(self, path: str | Path, *, clock: Any = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        try:
            if str(path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = self._connect()
            self.db.executescript(SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the game database {path}: {exc}") from exc

    #: SQLite found the database read-only: open it again before the next write.
    _reopen = False

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        return db

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        try:
            if self._reopen:
                # A connection that opened the database on a read-only filesystem keeps its
                # files read-only after the filesystem is made writable again, and SQLite
                # shares them with any new connection of this process: close it first.
                self.db.close()
                self.db = self._connect()
                self._reopen = False
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            code = getattr(exc, "sqlite_errorcode", None) or 0
            if code & 0xFF == sqlite3.SQLITE_READONLY and str(self.path) != ":memory:":
                self._reopen = True
            raise StoreError(f"could not store to {self.path}: {exc}") from exc

    # -- games -----------------------------------------------------------------------------------
    def new_game(self, game: str, setup: JSON, *, board: str = "",
                 players: Sequence[str] = ()) -> int:
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO games (game, board, created, setup, players) VALUES (?, ?, ?, ?, ?)",
                (game, board, self.clock(), json.dumps(setup), json.dumps(list(players))))
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    def game(self, game_id: int) -> GameRow:
        row = self.db.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise StoreError(f"no game {game_id} in {self.path}")
        return _game_row(row)

    def games(self) -> list[GameRow]:
        return [_game_row(r) for r in self.db.execute("SELECT * FROM games ORDER BY id")]

    def unfinished(self) -> GameRow | None:
        """The most recent game that has not ended (the one to resume after a restart)."""
        row = self.db.execute(
            "SELECT * FROM games WHERE finished = 0 ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else _game_row(row)

    def finish(self, game_id: int, result: JSON) -> Event:
        """Record the result and close the game, in one transaction."""
        with self._write() as db:
            event = self._append(db, game_id, "result", result)
            db.execute("UPDATE games SET finished = 1, result = ? WHERE id = ?",
                       (json.dumps(result), game_id))
            return event

    def abandon(self, game_id: int) -> None:
        """Close a game without a result (a new game was started instead)."""
        with self._write() as db:
            db.execute("UPDATE games SET finished = 1 WHERE id = ?", (game_id,))

    # -- events ----------------------------------------------------------------------------------
    def append(self, game_id: int, kind: str, data: JSON) -> Event:
        """Commit one event; it is on disk when this returns (or :class:`StoreError`)."""
        with self._write() as db:
            return self._append(db, game_id, kind, data)

    def _append(self, db: sqlite3.Connection, game_id: int, kind: str, data: JSON) -> Event:
        seq = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE game_id = ?",
                         (game_id,)).fetchone()[0]
        t = self.clock()
        cursor = db.execute(
            "INSERT INTO events (game_id, seq, t, kind, data) VALUES (?, ?, ?, ?, ?)",
            (game_id, seq, t, kind, json.dumps(data)))
        assert cursor.lastrowid is not None
        return Event(cursor.lastrowid, game_id, seq, t, kind, data)

    def events(self, game_id: int, kinds: Sequence[str] | None = None) -> list[Event]:
        rows = self.db.execute(
            "SELECT id, game_id, seq, t, kind, data FROM events WHERE game_id = ? ORDER BY seq",
            (game_id,)).fetchall()
        events = [_event(r) for r in rows]
        return events if kinds is None else [e for e in events if e.kind in kinds]

    # -- store and forward -----------------------------------------------------------------------
    def unpublished(self, limit: int = 500) -> list[Event]:
        rows = self.db.execute(
            "SELECT id, game_id, seq, t, kind, data FROM events WHERE published = 0 "
            "ORDER BY id LIMIT ?", (limit,)).fetchall()
        return [_event(r) for r in rows]

    def mark_published(self, ids: Sequence[int]) -> None:
        if not ids:
            return
        with self._write() as db:
            db.executemany("UPDATE events SET published = 1 WHERE id = ?", [(i,) for i in ids])


def _game_row(row: Sequence[Any]) -> GameRow:
    return GameRow(row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]),
                   bool(row[6]), None if row[7] is None else json.loads(row[7]))


def _event(row: Sequence[Any]) -> Event:
    return Event(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]))
