"""The tournament in one SQLite file on the referee's machine: saved whole, loaded whole.

Tables (schema version 2 in ``PRAGMA user_version``; a version 1 file gains the columns
marked ``+`` when opened, with defaults that say what version 1 meant)::

    event(id = 1, name, game, seed, +planned, +half_byes)     the one tournament of this file
    players(id, position, name, rating, withdrawn)            entry order = position
    rounds(number, +minutes, +started)                        the round clock, if set
    pairings(round, table_no, seats, board, +half)            seats: JSON list of ids, move order
    results(round, table_no, scores, winners, board, game_id, confirmed_by, corrected, +forfeit)
    confirmations(id, round, table_no, referee, scores, winners, corrected, t, action)
                                                               every ruling: the audit trail

:meth:`TournamentStore.save` replaces the tournament in one transaction, so a crash leaves the
previous or the new state, never a mix; each confirmation that is new or changed since the last
save is also appended to ``confirmations`` (``action`` "confirm"), and so is each confirmed
result that is no longer confirmed (``action`` "unconfirm", by the referee ``save`` is given as
``actor``, with what was taken back). That table is never rewritten: who ruled what, and when,
survives later corrections, and the dashboard shows it. WAL with ``synchronous=FULL`` (a
confirmed result is on disk when ``save`` returns). The file is created readable by its owner
only (0600): it holds the players' names and the referees' rulings.

A file that cannot be read as a tournament (damaged, edited by hand, from a newer version)
raises :class:`UnreadableTournament` with what is wrong; the file is left as it is.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from pi_app.tournament.model import (
    Game,
    Pairing,
    Player,
    Result,
    Round,
    Tournament,
    TournamentError,
)

VERSION = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS event (
    id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, game TEXT NOT NULL,
    seed INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS players (
    id TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE, name TEXT NOT NULL, rating INTEGER,
    withdrawn INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rounds (number INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS pairings (
    round INTEGER NOT NULL, table_no INTEGER NOT NULL, seats TEXT NOT NULL, board TEXT,
    PRIMARY KEY (round, table_no));
CREATE TABLE IF NOT EXISTS results (
    round INTEGER NOT NULL, table_no INTEGER NOT NULL, scores TEXT NOT NULL,
    winners TEXT NOT NULL, board TEXT, game_id INTEGER, confirmed_by TEXT,
    corrected INTEGER NOT NULL, PRIMARY KEY (round, table_no));
CREATE TABLE IF NOT EXISTS confirmations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, round INTEGER NOT NULL, table_no INTEGER NOT NULL,
    referee TEXT NOT NULL, scores TEXT NOT NULL, winners TEXT NOT NULL,
    corrected INTEGER NOT NULL, t REAL NOT NULL);
"""

ADDED = (("confirmations", "action", "TEXT NOT NULL DEFAULT 'confirm'"),
         ("event", "planned", "INTEGER"),
         ("event", "half_byes", "TEXT NOT NULL DEFAULT '[]'"),
         ("pairings", "half", "INTEGER NOT NULL DEFAULT 0"),
         ("results", "forfeit", "INTEGER NOT NULL DEFAULT 0"),
         ("rounds", "minutes", "INTEGER"),
         ("rounds", "started", "REAL"))
"""Columns of schema 2, added to a version 1 file (and to a new one) when it is opened."""


class UnreadableTournament(TournamentError):
    """The file does not hold a tournament this version can read; the message says why."""


@dataclass(frozen=True)
class Confirmation:
    """One ruling, as logged when it was saved."""

    round: int
    table: int
    referee: str
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    corrected: bool
    t: float
    action: str = "confirm"
    """"confirm" (a result counted, first or corrected), "forfeit" (a forfeit ruled) or
    "unconfirm" (taken back)."""


def _private(path: Path) -> None:
    """Create ``path`` as 0600 (or narrow it) before SQLite writes anything to it."""
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)


def _ints(text: str) -> tuple[int, ...]:
    value = json.loads(text)
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise ValueError(f"not a list of whole numbers: {text!r}")
    return tuple(value)


def _ids(text: str) -> tuple[str, ...]:
    value = json.loads(text)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(f"not a list of player ids: {text!r}")
    return tuple(value)


class TournamentStore:
    """One tournament's file. Used from one thread at a time."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _private(self.path)       # SQLite gives its -wal and -shm files the same mode
        self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version > VERSION:
                raise UnreadableTournament(
                    f"{self.path} is from a newer version (schema {version}); "
                    f"this one reads schema {VERSION}")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(SCHEMA)
            for table, column, declared in ADDED:
                columns = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
                if column not in columns:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declared}")
            self.db.execute(f"PRAGMA user_version={VERSION}")
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise UnreadableTournament(f"{self.path} is not a tournament file: {exc}") from None
        except UnreadableTournament:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> TournamentStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def save(self, tournament: Tournament, *, actor: str | None = None) -> None:
        """Replace the stored tournament with ``tournament``, and log new confirmations and
        the ones taken back (by ``actor``, the referee who made this step)."""
        now = time.time()
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            before = {(r, t): (s, w, c, f) for r, t, s, w, c, f in db.execute(
                "SELECT round, table_no, scores, winners, confirmed_by, forfeit FROM results "
                "WHERE confirmed_by IS NOT NULL")}
            for table in ("event", "players", "rounds", "pairings", "results"):
                db.execute(f"DELETE FROM {table}")
            db.execute("INSERT INTO event (id, name, game, seed, planned, half_byes) "
                       "VALUES (1, ?, ?, ?, ?, ?)",
                       (tournament.event, tournament.game.value, tournament.seed,
                        tournament.planned, json.dumps(list(tournament.half_byes))))
            db.executemany(
                "INSERT INTO players (id, position, name, rating, withdrawn) VALUES (?,?,?,?,?)",
                [(p.id, i, p.name, p.rating, int(p.withdrawn))
                 for i, p in enumerate(tournament.players)])
            for rnd in tournament.rounds:
                db.execute("INSERT INTO rounds (number, minutes, started) VALUES (?, ?, ?)",
                           (rnd.number, rnd.minutes, rnd.started))
                for pairing in rnd.pairings:
                    self._save_pairing(rnd.number, pairing, before, now)
            still = {(r, t) for r, t in db.execute(
                "SELECT round, table_no FROM results WHERE confirmed_by IS NOT NULL")}
            for (number, table), (scores, winners, _by, _f) in sorted(before.items()):
                if (number, table) not in still:
                    db.execute(
                        "INSERT INTO confirmations (round, table_no, referee, scores, winners, "
                        "corrected, t, action) VALUES (?, ?, ?, ?, ?, 0, ?, 'unconfirm')",
                        (number, table, actor or "?", scores, winners, now))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _save_pairing(self, number: int, pairing: Pairing,
                      before: dict[tuple[int, int], tuple[str, str, str, int]],
                      now: float) -> None:
        db = self.db
        db.execute("INSERT INTO pairings (round, table_no, seats, board, half) "
                   "VALUES (?, ?, ?, ?, ?)", (number, pairing.table,
                                              json.dumps(list(pairing.seats)), pairing.board,
                                              int(pairing.half)))
        result = pairing.result
        if result is None:
            return
        scores, winners = json.dumps(list(result.scores)), json.dumps(list(result.winners))
        db.execute(
            "INSERT INTO results (round, table_no, scores, winners, board, game_id, "
            "confirmed_by, corrected, forfeit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (number, pairing.table, scores, winners, result.board, result.game_id,
             result.confirmed_by, int(result.corrected), int(result.forfeit)))
        if result.confirmed_by is not None and before.get((number, pairing.table)) != (
                scores, winners, result.confirmed_by, int(result.forfeit)):
            db.execute(
                "INSERT INTO confirmations (round, table_no, referee, scores, winners, "
                "corrected, t, action) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (number, pairing.table, result.confirmed_by, scores, winners,
                 int(result.corrected), now, "forfeit" if result.forfeit else "confirm"))

    def load(self) -> Tournament | None:
        """The stored tournament, or None in a new file."""
        try:
            return self._load()
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError) as exc:
            if isinstance(exc, UnreadableTournament):
                raise
            raise UnreadableTournament(
                f"{self.path} does not hold a readable tournament: {exc}") from None

    def _load(self) -> Tournament | None:
        db = self.db
        event = db.execute("SELECT name, game, seed, planned, half_byes FROM event "
                           "WHERE id = 1").fetchone()
        if event is None:
            return None
        name, game, seed, planned, half_byes = event
        players = tuple(
            Player(str(pid), str(pname), None if rating is None else int(rating), bool(gone))
            for pid, pname, rating, gone in db.execute(
                "SELECT id, name, rating, withdrawn FROM players ORDER BY position"))
        known = {p.id for p in players}
        results = {
            (r, t): Result(_ints(s), _ints(w), board, None if gid is None else int(gid),
                           confirmed_by, bool(corrected), bool(forfeit))
            for r, t, s, w, board, gid, confirmed_by, corrected, forfeit in db.execute(
                "SELECT round, table_no, scores, winners, board, game_id, confirmed_by, "
                "corrected, forfeit FROM results")}
        rounds = []
        for number, minutes, started in db.execute(
                "SELECT number, minutes, started FROM rounds ORDER BY number").fetchall():
            pairings = []
            for table, seats, board, half in db.execute(
                    "SELECT table_no, seats, board, half FROM pairings WHERE round = ? "
                    "ORDER BY table_no", (number,)):
                ids = _ids(seats)
                if not set(ids) <= known:
                    raise ValueError(f"round {number} table {table} seats an unknown player")
                pairings.append(Pairing(int(table), ids, board, results.get((number, table)),
                                        bool(half)))
            rounds.append(Round(int(number), tuple(pairings),
                                None if minutes is None else int(minutes),
                                None if started is None else float(started)))
        asked = tuple(json.loads(half_byes))
        if not set(asked) <= known:
            raise ValueError("a half-point bye is asked for an unknown player")
        return Tournament(str(name), Game(game), players, tuple(rounds), int(seed),
                          None if planned is None else int(planned), asked)

    def confirmations(self) -> list[Confirmation]:
        """Every ruling ever saved, oldest first."""
        return [Confirmation(r, t, referee, _ints(s), _ints(w), bool(c), when, str(action))
                for r, t, referee, s, w, c, when, action in self.db.execute(
                    "SELECT round, table_no, referee, scores, winners, corrected, t, action "
                    "FROM confirmations ORDER BY id")]
