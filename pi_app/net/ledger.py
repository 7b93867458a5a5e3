"""The referee's ledger: everything the dashboard received, and the results referees confirmed.

One SQLite file (WAL, ``synchronous=FULL``) on the referee's machine. The dashboard writes what
a batch of MQTT messages brought in one transaction and acknowledges those messages to the
broker only after the commit (manual PUBACK), so a dashboard crash loses nothing: the broker
sends again whatever was not acknowledged, and the primary key ``(board, seq)`` drops repeats.

Tables::

    events(board, seq, game_id, n, t, kind, data, received)   one row per station event
    games(board, game_id, header)                             game headers (set-up, players)
    records(board, game_id, record)                           the latest record each station sent
    latest(board, leaf, payload, received)                    last status / state per board
    confirmations(id, board, game_id, result, referee, note, t)   every ruling, newest wins
                                                  (a result {"taken_back": true}: none)
    gaps(board, first, last, t)                               event numbers that never came
    logouts(session, expires)                                 referee sessions ended by log-out

An event's record is rebuilt from its header and its play events (``pi_app.records.fold``), so
the export does not depend on the last retained record a station happened to send. While a game
is on, stations send only its public form (no hidden set-up facts, :mod:`pi_app.net.redact`);
when it ends the header comes again with the station's whole record, which is then exported.

A stored row that does not fit the payload schema (:mod:`pi_app.net.schema`; a ledger from
before the check, or edited by hand) is left out of its record, which then says so in
``"problems"``: one bad row never stops the export of the event.

The file and its WAL are created readable by their owner only (0600): they hold every hidden
fact of every finished game and the referees' rulings.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from pi_app.json_types import JSON
from pi_app.net.eventlog import standing_moves
from pi_app.net.schema import PayloadError, check, check_event_data
from pi_app.records import fold
from pi_app.referee.store import PLAY_KINDS

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    board TEXT NOT NULL, seq INTEGER NOT NULL, game_id INTEGER NOT NULL, n INTEGER NOT NULL,
    t REAL NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, received REAL NOT NULL,
    PRIMARY KEY (board, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_game ON events(board, game_id, n);
CREATE TABLE IF NOT EXISTS games (
    board TEXT NOT NULL, game_id INTEGER NOT NULL, header TEXT NOT NULL,
    PRIMARY KEY (board, game_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records (
    board TEXT NOT NULL, game_id INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (board, game_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS latest (
    board TEXT NOT NULL, leaf TEXT NOT NULL, payload TEXT NOT NULL, received REAL NOT NULL,
    PRIMARY KEY (board, leaf)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS confirmations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, board TEXT NOT NULL, game_id INTEGER NOT NULL,
    result TEXT NOT NULL, referee TEXT NOT NULL, note TEXT NOT NULL, t REAL NOT NULL);
CREATE TABLE IF NOT EXISTS gaps (
    board TEXT NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL, t REAL NOT NULL);
CREATE TABLE IF NOT EXISTS logouts (
    session TEXT PRIMARY KEY, expires REAL NOT NULL) WITHOUT ROWID;
"""


#: A ``confirmations`` row with this key true in its result takes the game's ruling back.
TAKEN_BACK = "taken_back"


def _loads(text: str) -> JSON | None:
    """A stored JSON object, or None for a row that is not one (never an exception)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _result(text: str) -> JSON | None:
    """A stored ``result`` event's data when it fits the schema (a row an older version wrote
    may not), else None."""
    data = _loads(text)
    try:
        check_event_data("result", data or {})
    except PayloadError:
        return None
    return data


def private_file(path: Path) -> None:
    """Create ``path`` as 0600 (or narrow an existing one to it) before anything is written."""
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)


class Ledger:
    """The dashboard's database; used from one thread (the dashboard's event loop)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            private_file(self.path)  # SQLite gives its -wal and -shm files the same mode
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        self._open = False

    def close(self) -> None:
        self.commit()
        self.db.close()

    # -- a batch ---------------------------------------------------------------------------------
    def _begin(self) -> None:
        if not self._open:
            self.db.execute("BEGIN IMMEDIATE")
            self._open = True

    def commit(self) -> None:
        if self._open:
            self.db.execute("COMMIT")
            self._open = False

    def add_event(self, board: str, event: JSON, received: float) -> bool:
        """Store one event; False when ``(board, seq)`` is already there (a repeat)."""
        self._begin()
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO events (board, seq, game_id, n, t, kind, data, received) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (board, int(event["seq"]), int(event["game_id"]), int(event.get("n", 0)),
             float(event.get("t", 0.0)), str(event["kind"]), json.dumps(event.get("data", {})),
             received))
        return cursor.rowcount == 1

    def add_gap(self, board: str, first: int, last: int) -> None:
        self._begin()
        self.db.execute("INSERT INTO gaps (board, first, last, t) VALUES (?, ?, ?, ?)",
                        (board, first, last, time.time()))

    def save_game(self, board: str, header: JSON) -> None:
        self._begin()
        self.db.execute("INSERT OR REPLACE INTO games (board, game_id, header) VALUES (?, ?, ?)",
                        (board, int(header["game_id"]), json.dumps(header)))

    def save_record(self, board: str, game_id: int, record: JSON) -> None:
        self._begin()
        self.db.execute("INSERT OR REPLACE INTO records (board, game_id, record) VALUES (?, ?, ?)",
                        (board, game_id, json.dumps(record)))

    def save_latest(self, board: str, leaf: str, payload: JSON, received: float) -> None:
        self._begin()
        self.db.execute(
            "INSERT OR REPLACE INTO latest (board, leaf, payload, received) VALUES (?, ?, ?, ?)",
            (board, leaf, json.dumps(payload), received))

    # -- reading ---------------------------------------------------------------------------------
    def last_seqs(self) -> dict[str, int]:
        return {b: s for b, s in self.db.execute(
            "SELECT board, MAX(seq) FROM events GROUP BY board")}

    def latest(self) -> dict[str, dict[str, JSON]]:
        """Last status and state per board (a row that is not a JSON object reads as ``{}``,
        which the desk's schema check then refuses and counts)."""
        out: dict[str, dict[str, JSON]] = {}
        for board, leaf, payload in self.db.execute("SELECT board, leaf, payload FROM latest"):
            out.setdefault(board, {})[leaf] = _loads(payload) or {}
        return out

    def events(self, board: str, *, game_id: int | None = None, after: int = 0,
               limit: int = 10_000) -> list[JSON]:
        sql = "SELECT seq, game_id, n, t, kind, data, received FROM events WHERE board = ? "
        args: list[Any] = [board]
        if game_id is not None:
            sql += "AND game_id = ? "
            args.append(game_id)
        sql += "AND seq > ? ORDER BY seq LIMIT ?"
        args += [after, limit]
        return [{"board": board, "seq": s, "game_id": g, "n": n, "t": t, "kind": k,
                 "data": _loads(d), "received": r}
                for s, g, n, t, k, d, r in self.db.execute(sql, args)]

    def recent_events(self, board: str, limit: int = 30) -> list[JSON]:
        rows = self.db.execute(
            "SELECT seq, game_id, n, t, kind, data FROM events WHERE board = ? "
            "ORDER BY seq DESC LIMIT ?", (board, limit)).fetchall()
        return [{"board": board, "seq": s, "game_id": g, "n": n, "t": t, "kind": k,
                 "data": _loads(d) or {}} for s, g, n, t, k, d in reversed(rows)]

    def last_heard(self) -> dict[str, float]:
        """When each board's last message arrived (dashboard clock), from what was stored."""
        out: dict[str, float] = {}
        for board, received in self.db.execute(
                "SELECT board, MAX(received) FROM latest GROUP BY board "
                "UNION ALL SELECT board, MAX(received) FROM events GROUP BY board"):
            if received:  # 0: only retained copies came, the real time is unknown
                out[board] = max(out.get(board, 0.0), float(received))
        return out

    def results(self) -> list[tuple[str, int, JSON]]:
        """Every game's reported result (the last that fits the schema), for a restart."""
        out: dict[tuple[str, int], JSON] = {}
        for board, game_id, text in self.db.execute(
                "SELECT board, game_id, data FROM events WHERE kind = 'result' ORDER BY seq"):
            data = _result(text)
            if data is not None:
                out[(board, game_id)] = data
        return [(b, g, d) for (b, g), d in out.items()]

    def players(self) -> list[tuple[str, int, list[str]]]:
        """Each stored game header's players (a header that does not fit is left out)."""
        out = []
        for board, game_id, text in self.db.execute("SELECT board, game_id, header FROM games"):
            header = _loads(text)
            players = (header or {}).get("players")
            if isinstance(players, list):
                out.append((board, int(game_id), [str(p) for p in players]))
        return out

    def clock_pairs(self, boards: Any, limit: int) -> dict[str, list[tuple[float, float]]]:
        """Each board's last ``limit`` events as (station ``t``, received), oldest first: what
        a restarted desk learns the stations' clock offsets from."""
        out: dict[str, list[tuple[float, float]]] = {}
        for board in boards:
            rows = self.db.execute(
                "SELECT t, received FROM events WHERE board = ? ORDER BY seq DESC LIMIT ?",
                (board, limit)).fetchall()
            if rows:
                out[board] = [(float(t), float(r)) for t, r in reversed(rows)]
        return out

    def moves_standing(self, board: str, game_id: int, before: int) -> int:
        """How many of the game's moves stood before event ``before`` (moves minus takebacks):
        the number the event log's next move line carries."""
        kinds = [(kind, _loads(text) or {}) for kind, text in self.db.execute(
            "SELECT kind, data FROM events WHERE board = ? AND game_id = ? AND seq < ? "
            "AND kind IN ('move', 'takeback') ORDER BY seq", (board, game_id, before))]
        return standing_moves(kinds)

    def gaps(self) -> list[JSON]:
        return [{"board": b, "first": f, "last": la, "t": t}
                for b, f, la, t in self.db.execute("SELECT board, first, last, t FROM gaps")]

    def reported(self, board: str, game_id: int) -> JSON | None:
        """The station's last result event for the game that fits the schema, or None."""
        for (text,) in self.db.execute(
                "SELECT data FROM events WHERE board = ? AND game_id = ? AND kind = 'result' "
                "ORDER BY seq DESC", (board, game_id)):
            data = _result(text)
            if data is not None:
                return data
        return None

    # -- rulings ---------------------------------------------------------------------------------
    def confirm(self, board: str, game_id: int, result: JSON, referee: str,
                note: str = "") -> JSON:
        """A referee's ruling on a game's result (the latest ruling counts)."""
        self.commit()
        t = time.time()
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute(
            "INSERT INTO confirmations (board, game_id, result, referee, note, t) "
            "VALUES (?, ?, ?, ?, ?, ?)", (board, game_id, json.dumps(result), referee, note, t))
        self.db.execute("COMMIT")
        return {"board": board, "game_id": game_id, "result": result, "referee": referee,
                "note": note, "t": t}

    def unconfirm(self, board: str, game_id: int, referee: str, note: str = "") -> None:
        """A ruling taken back: appended (the table is never rewritten) as a row whose result
        is ``{"taken_back": true}``; the game then has no ruling, as before the first one."""
        self.confirm(board, game_id, {TAKEN_BACK: True}, referee, note)

    # -- referee sessions ended by log-out --------------------------------------------------------
    def log_out(self, session: str, expires: float) -> None:
        """Remember an ended session until its cookie would have expired anyway."""
        self.commit()
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("DELETE FROM logouts WHERE expires < ?", (time.time(),))
        self.db.execute("INSERT OR REPLACE INTO logouts (session, expires) VALUES (?, ?)",
                        (session, expires))
        self.db.execute("COMMIT")

    def logouts(self) -> dict[str, float]:
        return {s: e for s, e in self.db.execute(
            "SELECT session, expires FROM logouts WHERE expires >= ?", (time.time(),))}

    def confirmation(self, board: str, game_id: int) -> JSON | None:
        row = self.db.execute(
            "SELECT result, referee, note, t FROM confirmations WHERE board = ? AND game_id = ? "
            "ORDER BY id DESC LIMIT 1", (board, game_id)).fetchone()
        if row is None:
            return None
        result = json.loads(row[0])
        if isinstance(result, dict) and result.get(TAKEN_BACK):
            return None
        return {"result": result, "referee": row[1], "note": row[2], "t": row[3]}

    def confirmations(self) -> dict[tuple[str, int], JSON]:
        out: dict[tuple[str, int], JSON] = {}
        for board, game_id, result, referee, note, t in self.db.execute(
                "SELECT board, game_id, result, referee, note, t FROM confirmations ORDER BY id"):
            ruled = json.loads(result)
            if isinstance(ruled, dict) and ruled.get(TAKEN_BACK):
                out.pop((board, game_id), None)
                continue
            out[(board, game_id)] = {"result": ruled, "referee": referee, "note": note, "t": t}
        return out

    # -- the event's records ---------------------------------------------------------------------
    def game_keys(self) -> list[tuple[str, int]]:
        keys = {(b, g) for b, g in self.db.execute("SELECT board, game_id FROM games")}
        keys |= {(b, g) for b, g in self.db.execute("SELECT DISTINCT board, game_id FROM events")}
        keys |= {(b, g) for b, g in self.db.execute("SELECT board, game_id FROM records")}
        return sorted(keys)

    def record(self, board: str, game_id: int, event: str = "") -> JSON | None:
        """A game's record (``docs/records.md``) with who, where, and the reported and ruled result.

        Rows that do not fit the schema are left out and named in ``"problems"``; a record that
        cannot be rebuilt from its events falls back to the last one the station sent."""
        problems: list[str] = []
        row = self.db.execute("SELECT header FROM games WHERE board = ? AND game_id = ?",
                              (board, game_id)).fetchone()
        header: JSON | None = None if row is None else _loads(row[0])
        if row is not None:
            try:
                check("game", header or {}, board)
            except PayloadError as exc:
                problems.append(f"game header left out: {exc}")
                header = None
        record: JSON | None = None
        if header is not None and isinstance(header.get("record"), dict):
            record = dict(header["record"])  # the station's own, sent whole once it ended
        elif header is not None:
            try:
                record = fold(header["setup"], self._plays(board, game_id, problems))
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                problems.append(f"cannot rebuild the record from its events: {exc!r}")
        if record is None:
            sent = self.db.execute("SELECT record FROM records WHERE board = ? AND game_id = ?",
                                   (board, game_id)).fetchone()
            record = None if sent is None else _loads(sent[0])
            if record is not None:
                for key in ("board", "station_game_id", "players"):
                    record.pop(key, None)
        if record is None:
            if not problems:
                return None
            record = {}
        players = (header or {}).get("players") or []
        out = {**record, "event": event, "board": board, "station_game_id": game_id,
               "players": players, "reported": self.reported(board, game_id),
               "confirmed": self.confirmation(board, game_id)}
        if problems:
            out["problems"] = problems
        return out

    def _plays(self, board: str, game_id: int, problems: list[str]) -> list[tuple[str, JSON]]:
        """The game's play events that fit the schema (the others named in ``problems``).

        An empty ``data`` is what a station sends for a kind it keeps secret while the game is
        on (:mod:`pi_app.net.redact`): left out without a word, the final header has it all."""
        plays = []
        for e in self.events(board, game_id=game_id):
            if e["kind"] not in PLAY_KINDS or e["data"] == {}:
                continue
            try:
                if e["data"] is None:
                    raise PayloadError("data: not a JSON object")
                check_event_data(e["kind"], e["data"])
            except PayloadError as exc:
                problems.append(f"event {e['seq']} ({e['kind']}) left out: {exc}")
                continue
            plays.append((e["kind"], e["data"]))
        return plays

    def export(self, event: str = "") -> list[JSON]:
        """Every game of the event as a record, board by board."""
        out = []
        for board, game_id in self.game_keys():
            record = self.record(board, game_id, event)
            if record is not None:
                out.append(record)
        return out
