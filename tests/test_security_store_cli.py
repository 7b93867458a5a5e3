"""Issue 15's store, command-line, configuration and tracker items, each against the real thing.

* A game database that cannot be used as it is (garbage, damaged pages, a newer schema, bad
  JSON or wrong types in a row): the real daemon stays up (systemd would otherwise restart it
  in a loop with a blank screen), the screen says what is wrong and what would be kept, one OK
  press does not replace the file, a second does: the file is set aside unchanged and play
  goes on in a new database (with the unfinished game as far as it reads).
* ``tikiboard export`` opens the database read-only and survives a closed pipe.
* Every broken configuration is one line naming the file and the key, exit 2, no traceback;
  ``--write-config`` writes the documented file 0640.
* A flood of unknown tag ids does not grow the tracker.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_app.board.equipment import registry_for
from pi_app.board.geometry import load_geometry
from pi_app.board.tracker import RECENT_UNKNOWN, Tracker
from pi_app.games import get_game
from pi_app.hw.pinmap import load_pinmap
from pi_app.readings import TagsSeen
from pi_app.referee import daemon
from pi_app.referee import feedback as fb
from pi_app.referee.config import parse_config
from pi_app.referee.feed import Phase
from pi_app.referee.session import Session
from pi_app.referee.store import SCHEMA_VERSION, EventStore

pytestmark = pytest.mark.realtime

ROOT = Path(__file__).resolve().parent.parent


def tikiboard() -> list[str]:
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "pi_app"]


# -- broken databases ----------------------------------------------------------------------------
def sound_db(path: Path, moves: int = 3, games: int = 1) -> list[str]:
    """A station database with ``games`` Tiki Topple games, the last unfinished with ``moves``
    moves; returns the last game's moves."""
    store = EventStore(path)
    game = get_game("topple")
    rng = random.Random(5)
    texts: list[str] = []
    for _ in range(games):
        session = Session.new(store, "topple", rng=rng, options={"players": 2}, board="t1")
        texts = []
        for _ in range(moves):
            move = game.random_move(session.state, rng)
            text = game.move_text(session.state, move)
            session.moved(text, game.to_move(session.state), game.apply(session.state, move))
            texts.append(text)
    store.close()
    return texts


def _edit(path: Path, *sql: str) -> None:
    db = sqlite3.connect(path)
    for statement in sql:
        db.execute(statement)
    db.commit()
    db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, as a test compares it
    db.close()


def garbage(path: Path) -> None:
    path.write_bytes(b"not a database at all\n" * 200)


def damaged_pages(path: Path) -> None:
    sound_db(path, moves=3, games=6)
    _edit(path)
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(page, len(data), page):  # every page but the header's, scribbled on
        data[start + 8:start + 40] = b"\xff" * 32
    path.write_bytes(bytes(data))


def newer_schema(path: Path) -> None:
    sound_db(path)
    _edit(path, f"PRAGMA user_version = {SCHEMA_VERSION + 1}")


def bad_json_row(path: Path) -> None:
    sound_db(path, moves=4)
    _edit(path, "UPDATE events SET data = '{\"text\": ' WHERE seq = 3")


def wrong_types(path: Path) -> None:
    sound_db(path)
    _edit(path, "UPDATE games SET players = '5'", "UPDATE events SET seq = 'x' WHERE seq = 2")


BROKEN: dict[str, tuple[Callable[[Path], None], str, int | None]] = {
    # kind -> (how to break the file, words the screen must say, moves the new database keeps)
    "garbage": (garbage, "damaged", None),
    "damaged pages": (damaged_pages, "damaged", None),
    "newer schema": (newer_schema, "newer tikiboard version", None),
    "bad JSON": (bad_json_row, "unreadable", 2),
    "wrong types": (wrong_types, "unreadable", None),
}


def station_config(data: Path) -> str:
    return f"""
[station]
board = "t1"
game = "topple"
seed = 3
topple_cards = "deal"
data_dir = "{data}"
"""


@pytest.mark.parametrize("kind", list(BROKEN))
def test_the_real_daemon_stays_up_on_a_broken_database(tmp_path: Path, kind: str) -> None:
    """``tikiboard run`` on each broken file: no exit (no restart loop), the log says what is
    wrong and that the file is kept, the file is not touched, and SIGTERM stops it cleanly."""
    data = tmp_path / "data"
    data.mkdir()
    db = data / "tikiboard.db"
    BROKEN[kind][0](db)
    before = db.read_bytes()
    config = tmp_path / "station.toml"
    config.write_text(station_config(data))
    proc = subprocess.Popen([*tikiboard(), "run", "--config", str(config)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    said = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip())
            if "kept as it is" in line:
                said.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert said.wait(20), "\n".join(lines)
        time.sleep(1.5)
        assert proc.poll() is None, "the daemon exited:\n" + "\n".join(lines)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(15)
    assert rc == 0, "\n".join(lines)
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    assert db.read_bytes() == before
    assert "station ready" not in "\n".join(lines)


class InProcess:
    """The daemon's :func:`serve` on a thread (its own event loop), as in fs_fault_scenario.py,
    so the test can look at its screen and press its (gpiozero mock) buttons."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.ready = threading.Event()
        self.station: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop: asyncio.Event | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported by the test
            self.error = exc

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.stop = asyncio.Event()
        await daemon.serve(self.config, stop=self.stop, on_ready=self._on_ready)

    def _on_ready(self, station: Any, hardware: Any) -> None:
        self.station = station
        self.ready.set()

    def close(self) -> None:
        if self.loop is not None and self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(20)


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What the daemon opened to show a store problem (the real screen, LEDs and buttons)."""
    opened: list[Any] = []
    real = daemon._open_feedback

    def spy(*args: Any) -> Any:
        hardware = real(*args)
        opened.append(hardware)
        return hardware

    monkeypatch.setattr(daemon, "_open_feedback", spy)
    return opened


def _wait(what: Callable[[], Any], seconds: float = 10.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def _screen_says(display: Any, words: str, confirming: bool = False) -> bool:
    image = display.last_image
    if image is None:
        return False
    wanted = fb.screen(fb.Scene(phase=Phase.ERROR, store_damaged=words, store_error="x",
                                confirming=confirming))
    return bool(image.tobytes() == wanted.convert(image.mode).tobytes())


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_database_is_set_aside_on_ok_twice(tmp_path: Path, kind: str,
                                                     mock_factory: Any, shown: list[Any]) -> None:
    """The screen says what is wrong; one OK asks again and moves nothing; the second sets
    the file aside unchanged (with a timestamped name) and a new game starts, with the
    unfinished game's readable moves when there are any."""
    data = tmp_path / "data"
    data.mkdir()
    db = data / "tikiboard.db"
    break_it, words, keeps = BROKEN[kind]
    break_it(db)
    before = db.read_bytes()
    moves = []
    if keeps is not None:  # the same game, unbroken (same seed), for its moves
        moves = sound_db(tmp_path / "sound.db", moves=4)[:keeps]
    config = parse_config(tomllib_loads(station_config(data)))
    runner = InProcess(config)
    runner.thread.start()
    try:
        hardware = _wait(lambda: shown[0] if shown else None)
        display = hardware.display
        text = _wait(lambda: display.last_image is not None and _current_words(db, kind))
        assert words in text.lower()
        assert _wait(lambda: _screen_says(display, text))
        ok = load_pinmap().buttons["ok"]
        _press(mock_factory, ok)
        assert _wait(lambda: _screen_says(
            display, "Press OK again to set the file aside and start a new one", True))
        time.sleep(0.3)
        assert db.read_bytes() == before and not runner.ready.is_set()
        _press(mock_factory, ok)
        assert runner.ready.wait(20), runner.error
        aside = [p for p in data.iterdir() if p.name.startswith("tikiboard-set-aside-")
                 and p.suffix == ".db"]
        assert len(aside) == 1 and aside[0].read_bytes() == before
        station = runner.station
        assert station.session.moves() == moves
        if kind == "garbage":
            assert station.session.game_id > 1_000_000  # numbered on from the time
    finally:
        runner.close()
    assert runner.error is None
    assert not runner.thread.is_alive()


def tomllib_loads(text: str) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(text)


def _current_words(db: Path, kind: str) -> str:
    """What the screen should say about ``db`` (the store's own explanation)."""
    from pi_app.referee import store_damage
    from pi_app.referee.store import StoreDamaged

    try:
        EventStore(db).close()
    except StoreDamaged as damage:
        return store_damage.explain(damage, store_damage.salvage(db, damage.kind))
    return ""


def _press(factory: Any, gpio: int) -> None:
    pin = factory.pin(gpio)
    pin.drive_low()
    time.sleep(0.08)
    pin.drive_high()
    time.sleep(0.08)


def test_a_sound_database_from_before_versions_is_adopted(tmp_path: Path) -> None:
    """A database written before the schema had a version (user_version 0) opens as before
    and gets the version; nothing is set aside."""
    db = tmp_path / "old.db"
    moves = sound_db(db)
    _edit(db, "PRAGMA user_version = 0")
    store = EventStore(db)
    row = store.unfinished()
    assert row is not None and Session.resume(store, row).moves() == moves
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    store.close()


def test_a_play_event_without_its_fields_is_a_store_error(tmp_path: Path) -> None:
    """Sound JSON, wrong content (a move without its text): the game does not resume (the
    station then starts a new one and logs why) instead of a KeyError stopping the daemon."""
    from pi_app.referee.store import StoreError

    db = tmp_path / "t.db"
    sound_db(db)
    _edit(db, "UPDATE events SET data = '{}' WHERE seq = 2")
    store = EventStore(db)
    row = store.unfinished()
    assert row is not None
    with pytest.raises(StoreError, match="does not replay"):
        Session.resume(store, row)
    store.close()


# -- export --------------------------------------------------------------------------------------
def test_export_of_a_missing_database_fails_and_creates_nothing(tmp_path: Path) -> None:
    wrong = tmp_path / "nope" / "tikiboard.db"
    run = subprocess.run([*tikiboard(), "export", "--db", str(wrong)], capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode == 2
    assert run.stderr.startswith("tikiboard: ") and str(wrong) in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""
    assert not wrong.exists() and not wrong.parent.exists()
    wrong.parent.mkdir()
    run = subprocess.run([*tikiboard(), "export", "--db", str(wrong)], capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode == 2 and not wrong.exists()


def test_export_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """``tikiboard export | head -1``: more than a pipe holds, the reader leaves after a line."""
    db = tmp_path / "big.db"
    sound_db(db, moves=1, games=300)
    proc = subprocess.Popen([*tikiboard(), "export", "--db", str(db)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"[\n"
    proc.stdout.close()
    err = proc.stderr.read().decode()
    rc = proc.wait(60)
    assert err == ""
    assert rc == 128 + signal.SIGPIPE


def test_export_leaves_out_an_unreadable_game_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    sound_db(db, moves=2, games=3)
    _edit(db, "UPDATE games SET setup = '{' WHERE id = 2")
    run = subprocess.run([*tikiboard(), "export", "--db", str(db)], capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode == 2
    assert [r["station_game_id"] for r in json.loads(run.stdout)] == [1, 3]
    assert "game 2 left out" in run.stderr and "Traceback" not in run.stderr


# -- configuration -------------------------------------------------------------------------------
BAD_CONFIGS: dict[str, tuple[bytes, str]] = {
    # name -> (file content, what the one line must name)
    "bad TOML": (b"[station\n", "not valid TOML"),
    "wrong type": (b'[station]\nplayers = "two"\n', "station.players"),
    "unknown key": (b"[station]\nbogus = 1\n", "station.bogus"),
    "unknown section": (b"[stations]\n", "[stations]"),
    "not a table": (b"station = 5\n", "[station]"),
    "non-UTF-8": (b"\xff\xfe[station]\n", "not text"),
    "nested too deep": (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    "NUL in a path": (b'[station]\ndata_dir = "/tmp/x\\u0000y"\n', "station.data_dir"),
    "missing geometry": (b'[sensors]\ngeometry = "/nonexistent/board.json"\n',
                         "sensors.geometry"),
    "out of range": (b"[leds]\nbrightness = 7.0\n", "leds.brightness"),
}


def _run_config(path: Path, *, as_nobody: bool = False) -> subprocess.CompletedProcess[str]:
    prefix: list[str] = []
    if as_nobody:
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return subprocess.run([*prefix, *tikiboard(), "run", "--config", str(path)],
                          capture_output=True, text=True, timeout=60, check=False)


def _one_clean_line(run: subprocess.CompletedProcess[str], path: Path, names: str) -> None:
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"tikiboard: {path}") and names in lines[0], lines[0]


@pytest.mark.parametrize("name", list(BAD_CONFIGS))
def test_every_bad_config_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    content, names = BAD_CONFIGS[name]
    path = tmp_path / "station.toml"
    path.write_bytes(content)
    _one_clean_line(_run_config(path), path, names)


def test_a_missing_or_unreadable_config_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    _one_clean_line(_run_config(missing), missing, "No such file")
    directory = tmp_path / "dir.toml"
    directory.mkdir()
    _one_clean_line(_run_config(directory), directory, "Is a directory")
    secret = tmp_path / "secret.toml"
    secret.write_text("[station]\n")
    secret.chmod(0o600)
    tmp_path.chmod(0o755)
    as_nobody = os.geteuid() == 0  # root reads anything: ask as nobody
    if as_nobody and shutil.which("setpriv") is None:
        pytest.fail("needs setpriv (util-linux) to read the file as an unprivileged user")
    _one_clean_line(_run_config(secret, as_nobody=as_nobody), secret, "Permission denied")


def test_write_config_creates_the_documented_file_0640(tmp_path: Path) -> None:
    path = tmp_path / "tikiboard.toml"
    run = subprocess.run([*tikiboard(), "run", "--write-config", str(path)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    assert path.stat().st_mode & 0o777 == 0o640
    printed = subprocess.run([*tikiboard(), "run", "--print-config"], capture_output=True,
                             text=True, timeout=60, check=True).stdout
    assert path.read_text() == printed
    again = subprocess.run([*tikiboard(), "run", "--write-config", str(path)],
                           capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode == 2 and "File exists" in again.stderr


def test_a_new_database_is_not_world_readable(tmp_path: Path) -> None:
    """It holds hidden information of games in play (ranks, Secret Tiki cards)."""
    old = os.umask(0o022)
    try:
        EventStore(tmp_path / "new.db").close()
    finally:
        os.umask(old)
    assert (tmp_path / "new.db").stat().st_mode & 0o007 == 0


# -- tracker -------------------------------------------------------------------------------------
@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def test_a_flood_of_unknown_tags_does_not_grow_the_tracker(traced: None) -> None:
    """100,000 random tag ids on random readers: the tracker's memory stays put (it grew by
    13 MB before), and it counts them and keeps only the last few."""
    geometry = load_geometry("topple")
    tracker = Tracker(geometry, registry_for("topple"))
    rng = random.Random(15)
    count = 0

    def flood(n: int, t0: float) -> None:
        nonlocal count
        for i in range(n):
            tags = frozenset(f"{rng.getrandbits(56):014X}" for _ in range(rng.randint(0, 3)))
            tracker.feed(TagsSeen(t0 + i * 0.001, rng.randrange(geometry.reader_count), tags))

    flood(2_000, 0.0)
    base = tracemalloc.get_traced_memory()[0]
    flood(100_000, 10.0)
    grown = tracemalloc.get_traced_memory()[0] - base
    assert grown < 256 * 1024, f"the tracker grew by {grown} bytes"
    assert tracker.unknown_count > 100_000
    assert len(tracker.recent_unknown) == RECENT_UNKNOWN
    observation = tracker.observation(200.0)
    assert not observation.pieces and observation.unknown  # reported as unknown, on cells
