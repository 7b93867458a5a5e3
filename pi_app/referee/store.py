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

* ``move``      ``{"text": "up1 Nani", "player": 0, "how": "at once"}``: ``how`` is an
  ``Acceptance`` value (``at once``, ``rested``, ``settled``: the board alone decided; ``asked``,
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

The schema's version is SQLite's ``PRAGMA user_version`` (:data:`SCHEMA_VERSION`; 0 is a
database from before versions, adopted when its tables are right). Opening checks the file
before anything writes to it: a file SQLite calls corrupt, a schema written by a newer
tikiboard, tables that are not this schema, or a row that does not read back (bad JSON, wrong
types, an unknown game) raise :class:`StoreDamaged`, never a crash. Nothing then touches the
file: the daemon shows why and sets it aside only when the players confirm
(:func:`set_aside`); :func:`salvage` reads what can still be read of its unfinished game, to go
on with it in the new database.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_app.errors import TikiError
from pi_app.games import GAME_NAMES
from pi_app.json_types import JSON
from pi_app.records import PlayKind

#: The schema below, as ``PRAGMA user_version``. Raise it with every change of the tables; a
#: station never opens a database of a higher version (a newer tikiboard wrote it).
SCHEMA_VERSION = 1

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
#: The columns each table must have (a database from another program, or a mangled one, does
#: not get rows added to it).
COLUMNS = {
    "games": ("id", "game", "board", "created", "setup", "players", "finished", "result"),
    "events": ("id", "game_id", "seq", "t", "kind", "data", "published"),
}
#: SQLite's result codes for a file that is not a sound database (SQLITE_CORRUPT,
#: SQLITE_NOTADB): no retry helps, unlike a full or read-only disk.
_CORRUPT_CODES = (11, 26)

#: Event kinds that change the position (the rest are kept for the feed and logs).
PLAY_KINDS = tuple(str(kind) for kind in PlayKind)


class StoreError(TikiError, RuntimeError):
    """The database cannot take an event (disk full, read-only, corrupt): say so, never
    confirm a move that was not stored."""


class StoreDamaged(StoreError):
    """The database file is there but cannot be used as it is, and waiting will not help.

    ``kind``: ``corrupt`` (SQLite says the file is not a sound database), ``newer`` (a newer
    tikiboard wrote it: updating this station reads it), ``schema`` (its tables are not this
    schema) or ``rows`` (a row does not read back). The file is left exactly as it is."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


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

    def __init__(self, path: str | Path, *, clock: Any = time.time,
                 readonly: bool = False) -> None:
        """Open (or create) the database. ``readonly``: only read an existing one (``tikiboard
        export``): a missing file is an error, not a new empty database."""
        self.path = Path(path)
        self.clock = clock
        self.readonly = readonly
        try:
            if str(path) != ":memory:" and not readonly:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileExistsError):
                    # Created by hand so it is never world-readable: it holds the hidden
                    # information of games in play (ranks, Secret Tiki cards).
                    os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640))
            self.db = self._connect(pragmas=False)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the game database {path}: {exc}") from exc
        try:
            self._check()
            if not readonly:
                self._pragmas(self.db)
        except StoreError:
            self.db.close()
            raise
        except sqlite3.Error as exc:
            self.db.close()
            raise _error(f"cannot open the game database {path}", exc) from exc

    #: SQLite found the database read-only: open it again before the next write.
    _reopen = False

    def _connect(self, pragmas: bool = True) -> sqlite3.Connection:
        if self.readonly:
            uri = "file:" + self.path.absolute().as_posix().replace("?", "%3f").replace(
                "#", "%23") + "?mode=ro"
            return sqlite3.connect(uri, uri=True, isolation_level=None,
                                   check_same_thread=False)
        db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        if pragmas:
            self._pragmas(db)
        return db

    @staticmethod
    def _pragmas(db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")

    def _check(self) -> None:
        """Check the file before anything writes to it (a damaged one stays as it was): the
        schema version, SQLite's own quick check, the tables, and that every row reads back."""
        db, where = self.db, self.path
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreDamaged(f"{where} was written by a newer tikiboard version (schema "
                               f"{version}; this one reads up to {SCHEMA_VERSION})", "newer")
        check = [row[0] for row in db.execute("PRAGMA quick_check(5)")]
        if check != ["ok"]:
            raise StoreDamaged(f"{where} is damaged: " + "; ".join(map(str, check)), "corrupt")
        tables = {row[0] for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        if not tables and version == 0:
            if self.readonly:
                raise StoreError(f"{where} is not a tikiboard game database (it is empty)")
            db.executescript(SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};")
            return
        for table, wanted in COLUMNS.items():
            have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            missing = [c for c in wanted if c not in have]
            if missing:
                raise StoreDamaged(f"{where} is not a tikiboard game database: table {table} "
                                   + ("is missing" if not have else
                                      "lacks " + ", ".join(missing)), "schema")
        bad = [] if self.readonly else unreadable_rows(db)  # export skips such games itself
        if bad:
            raise StoreDamaged(f"{where} has {len(bad)} unreadable row(s), the first: {bad[0]}",
                               "rows")
        if version == 0 and not self.readonly:  # from before versions: the same tables
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

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
        return read_game_row(row)

    def games(self) -> list[GameRow]:
        return [read_game_row(r) for r in self.db.execute("SELECT * FROM games ORDER BY id")]

    def unfinished(self) -> GameRow | None:
        """The most recent game that has not ended (the one to resume after a restart)."""
        row = self.db.execute(
            "SELECT * FROM games WHERE finished = 0 ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else read_game_row(row)

    def finish(self, game_id: int, result: JSON) -> Event:
        """Record the result and close the game, in one transaction."""
        with self._write() as db:
            event = self._append(db, game_id, "result", result)
            db.execute("UPDATE games SET finished = 1, result = ? WHERE id = ?",
                       (json.dumps(result), game_id))
            return event

    def replace_setup(self, game_id: int, setup: JSON) -> None:
        """Store ``setup`` as the set-up of game ``game_id``, which has no move yet: the
        TacTiki stacks the players built replace the position the station dealt. The game
        keeps its number, so no closed game is left behind holding a set-up of pieces that
        are still on the board (its ranks would be public as a closed game's record)."""
        with self._write() as db:
            moved = db.execute("SELECT COUNT(*) FROM events WHERE game_id = ? AND kind IN "
                               "('move', 'deal', 'cards')", (game_id,)).fetchone()[0]
            if moved:
                raise StoreError(f"game {game_id} has begun: its set-up stays as played")
            db.execute("UPDATE games SET setup = ? WHERE id = ?", (json.dumps(setup), game_id))

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
        events = [read_event(r) for r in rows]
        return events if kinds is None else [e for e in events if e.kind in kinds]

    # -- store and forward -----------------------------------------------------------------------
    def unpublished(self, limit: int = 500) -> list[Event]:
        rows = self.db.execute(
            "SELECT id, game_id, seq, t, kind, data FROM events WHERE published = 0 "
            "ORDER BY id LIMIT ?", (limit,)).fetchall()
        return [read_event(r) for r in rows]

    def mark_published(self, ids: Sequence[int]) -> None:
        if not ids:
            return
        with self._write() as db:
            db.executemany("UPDATE events SET published = 1 WHERE id = ?", [(i,) for i in ids])


    def import_game(self, row: GameRow, events: Sequence[tuple[str, JSON]]) -> int:
        """Copy a game with its events (from a database set aside), in one transaction; the
        game keeps its set-up, board, players and start time and gets a new number."""
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO games (game, board, created, setup, players) VALUES (?, ?, ?, ?, ?)",
                (row.game, row.board, row.created, json.dumps(row.setup),
                 json.dumps(row.players)))
            assert cursor.lastrowid is not None
            for kind, data in events:
                self._append(db, cursor.lastrowid, kind, data)
            return cursor.lastrowid

    def continue_numbering(self, games: int, events: int) -> None:
        """Number the next game and event after ``games`` and ``events`` (a database that
        replaces one set aside): the tournament dashboard drops an event whose number it has
        seen from this board as a duplicate."""
        with self._write() as db:
            for name, last in (("games", games), ("events", events)):
                db.execute("DELETE FROM sqlite_sequence WHERE name = ?", (name,))
                db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
                           (name, last))


class _RowError(StoreError):
    """A row that does not read back as the station wrote it."""


def _json(text: Any, kind: type, what: str) -> Any:
    if not isinstance(text, str):
        raise _RowError(f"{what} is not text")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _RowError(f"{what} is not JSON") from exc
    if not isinstance(value, kind):
        raise _RowError(f"{what} is not a JSON {kind.__name__}")
    return value


def _check_int(value: Any, what: str) -> int:
    if type(value) is not int:
        raise _RowError(f"{what} is not a whole number")
    return value


def _check_number(value: Any, what: str) -> float:
    if type(value) not in (int, float):
        raise _RowError(f"{what} is not a number")
    return float(value)


def read_game_row(row: Sequence[Any]) -> GameRow:
    game_id = _check_int(row[0], "games.id")
    where = f"game {game_id}"
    if row[1] not in GAME_NAMES:
        raise _RowError(f"{where}: game is {row[1]!r}, not one of {', '.join(GAME_NAMES)}")
    if not isinstance(row[2], str):
        raise _RowError(f"{where}: board is not text")
    players = _json(row[5], list, f"{where}: players")
    if not all(isinstance(p, str) for p in players):
        raise _RowError(f"{where}: players are not all text")
    if row[6] not in (0, 1):
        raise _RowError(f"{where}: finished is not 0 or 1")
    return GameRow(game_id, row[1], row[2], _check_number(row[3], f"{where}: created"),
                   _json(row[4], dict, f"{where}: setup"), players, bool(row[6]),
                   None if row[7] is None else _json(row[7], dict, f"{where}: result"))


def read_event(row: Sequence[Any]) -> Event:
    event_id = _check_int(row[0], "events.id")
    where = f"event {event_id}"
    if not isinstance(row[4], str):
        raise _RowError(f"{where}: kind is not text")
    return Event(event_id, _check_int(row[1], f"{where}: game_id"),
                 _check_int(row[2], f"{where}: seq"), _check_number(row[3], f"{where}: t"),
                 row[4], _json(row[5], dict, f"{where}: data"))


def unreadable_rows(db: sqlite3.Connection) -> list[str]:
    """What is wrong with each row that does not read back (empty: every row is sound)."""
    bad = []
    for game in db.execute("SELECT * FROM games ORDER BY id"):
        try:
            read_game_row(game)
        except _RowError as exc:
            bad.append(str(exc))
    for event in db.execute("SELECT id, game_id, seq, t, kind, data, published FROM events "
                            "ORDER BY id"):
        try:
            read_event(event)
            if event[6] not in (0, 1):
                raise _RowError(f"event {event[0]}: published is not 0 or 1")
        except _RowError as exc:
            bad.append(f"game {event[1]}: {exc}")
    return bad


def _error(message: str, exc: sqlite3.Error) -> StoreError:
    """A :class:`StoreDamaged` when SQLite says the file itself is unsound, else a
    :class:`StoreError` (full, read-only, locked: worth trying again)."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in _CORRUPT_CODES:
        return StoreDamaged(f"{message}: {exc}", "corrupt")
    return StoreError(f"{message}: {exc}")
