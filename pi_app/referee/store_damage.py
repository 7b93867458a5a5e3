"""A game database that cannot be used as it is: what the players are told, and setting it aside.

:class:`~pi_app.referee.store.EventStore` refuses such a file (:class:`StoreDamaged`) without
writing to it. The daemon then shows :func:`explain` on the OLED (and logs it), and only when
the players confirm with OK pressed twice (:class:`Confirm`: the first press asks "sure?", so a
stray press or a leaning elbow never does it) it calls :func:`replace`: the file moves aside
under a timestamped name, unchanged, and a new database takes its place. The unfinished game
goes on in the new database with every event that still reads, up to the first that does not
(:func:`salvage`); the screen said beforehand how many moves that keeps, and the log says what
stays only in the file set aside (``tikiboard export --db`` reads its sound games).

A database a newer tikiboard wrote is not damaged, and the screen says so: updating the
station is the better cure, and nothing is carried over from a schema this version does not
know (its numbering is still continued).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from pi_app.json_types import JSON
from pi_app.referee.store import (
    EventStore,
    GameRow,
    StoreDamaged,
    StoreError,
    read_event,
    read_game_row,
)

#: Seconds within which the second OK press must follow the first.
CONFIRM_S = 10.0


@dataclass
class Salvage:
    """What still reads in a damaged database."""

    last_game: int = 0
    """The highest game and event numbers it used (0: unknown), to number on after them."""
    last_event: int = 0
    game: GameRow | None = None
    """Its unfinished game, when that game's row reads."""
    events: list[tuple[str, JSON]] = field(default_factory=list)
    """That game's events, in order, up to the first that does not read."""
    moves: int = 0
    """How many of ``events`` are moves."""
    lost: int | None = 0
    """How many of that game's events come after the first that does not read (None: the
    file would not say): they stay only in the file set aside."""


def salvage(path: Path, kind: str) -> Salvage:
    """Read what can be read of ``path``, read-only (the file is not changed)."""
    out = Salvage()
    uri = "file:" + path.absolute().as_posix().replace("?", "%3f").replace("#", "%23")
    try:
        db = sqlite3.connect(uri + "?mode=ro", uri=True)
    except sqlite3.Error:
        return out
    with contextlib.closing(db):
        for table in ("games", "events"):
            last = 0
            for query in (f"SELECT MAX(id) FROM {table}",
                          "SELECT seq FROM sqlite_sequence WHERE name = ?"):
                with contextlib.suppress(sqlite3.Error, TypeError, IndexError):
                    value = db.execute(query, (table,) if "?" in query else ()).fetchone()[0]
                    last = max(last, int(value))
            if table == "games":
                out.last_game = last
            else:
                out.last_event = last
        if kind == "newer":  # a schema this version does not know: carry nothing over
            return out
        try:
            row = db.execute("SELECT * FROM games WHERE finished = 0 ORDER BY id DESC "
                             "LIMIT 1").fetchone()
            out.game = None if row is None else read_game_row(row)
        except (sqlite3.Error, StoreError):
            return out
        if out.game is None:
            return out
        try:
            for number, event_row in enumerate(db.execute(
                    "SELECT id, game_id, seq, t, kind, data FROM events WHERE game_id = ? "
                    "ORDER BY seq", (out.game.id,))):
                try:
                    event = read_event(event_row)
                except StoreError:
                    total = db.execute("SELECT COUNT(*) FROM events WHERE game_id = ?",
                                       (out.game.id,)).fetchone()[0]
                    out.lost = int(total) - number
                    break
                out.events.append((event.kind, event.data))
        except sqlite3.Error:
            out.lost = None
        out.moves = sum(1 for kind_, _ in out.events if kind_ == "move")
    return out


def explain(damage: StoreDamaged, kept: Salvage) -> str:
    """The screen's words: what is wrong, and what setting the file aside keeps."""
    if damage.kind == "newer":
        return "Written by a newer tikiboard version: update it, or set the file aside"
    what = {"corrupt": "The file is damaged.", "schema": "Not a tikiboard file.",
            "rows": "Some rows are unreadable."}.get(damage.kind, "It cannot be read.")
    if kept.game is None:
        return f"{what} No game to go on with."
    return f"{what} Game {kept.game.id} goes on with {kept.moves} moves."


def kept_words(kept: Salvage) -> str:
    """What the log says the new database got, and what stays only in the file set aside."""
    if kept.game is None:
        return "no unfinished game could be read"
    rest = ("the rest of it could not be read" if kept.lost is None
            else f"{kept.lost} later event(s) of it did not read")
    return (f"game {kept.game.id} ({kept.game.game}) goes on with {len(kept.events)} "
            f"event(s), {kept.moves} move(s); {rest}"
            if kept.lost != 0 else
            f"game {kept.game.id} ({kept.game.game}) goes on whole: {len(kept.events)} "
            f"event(s), {kept.moves} move(s)")


@dataclass
class Confirm:
    """OK twice within :data:`CONFIRM_S` confirms; BACK (or waiting) cancels the first."""

    armed_at: float | None = None

    def press(self, button: str, now: float) -> bool:
        """Take one press; True when it confirms."""
        if self.armed_at is not None and now - self.armed_at > CONFIRM_S:
            self.armed_at = None
        if button == "ok":
            if self.armed_at is not None:
                self.armed_at = None
                return True
            self.armed_at = now
        elif button == "back":
            self.armed_at = None
        return False

    def armed(self, now: float) -> bool:
        return self.armed_at is not None and now - self.armed_at <= CONFIRM_S


def set_aside(path: Path, now: float | None = None) -> Path:
    """Move ``path`` (with its -wal and -shm) to ``NAME-set-aside-YYYYmmdd-HHMMSS.db`` next to
    it, unchanged; returns the new name. The -wal goes first: left behind, SQLite would
    replay it into the new database."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    target = path.with_name(f"{path.stem}-set-aside-{stamp}{path.suffix}")
    number = 1
    while any(Path(f"{target}{s}").exists() for s in ("", "-wal", "-shm")):
        number += 1
        target = path.with_name(f"{path.stem}-set-aside-{stamp}-{number}{path.suffix}")
    for suffix in ("-wal", "-shm", ""):
        if Path(f"{path}{suffix}").exists():
            os.replace(f"{path}{suffix}", f"{target}{suffix}")
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)  # the renames survive a power cut before the new database is used
    finally:
        os.close(fd)
    return target


def replace(path: Path, damage: StoreDamaged) -> tuple[EventStore, Path, Salvage]:
    """Set the damaged database aside and open a new one in its place, numbered on after it,
    with the unfinished game as far as it reads. :class:`StoreError` when that fails."""
    kept = salvage(path, damage.kind)
    try:
        aside = set_aside(path)
    except OSError as exc:
        raise StoreError(f"cannot set {path} aside: {exc}") from exc
    store = EventStore(path)
    try:
        # No number known (the file would not say): the time in seconds is above any count a
        # station reaches, and grows, so the dashboard takes the new events for new ones.
        floor = 0 if kept.last_event else int(time.time())
        store.continue_numbering(max(kept.last_game, floor), max(kept.last_event, floor))
        if kept.game is not None:
            store.import_game(kept.game, kept.events)
    except StoreError:
        store.close()
        raise
    return store, aside, kept
