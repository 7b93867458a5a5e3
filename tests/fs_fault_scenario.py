"""The station on a real filesystem that fills up and goes read-only (issue #9), as a script.

Run by ``tests/test_store_filesystem.py`` as ``unshare -rm python tests/fs_fault_scenario.py
WORKDIR``: inside a private mount namespace (nothing leaks to the host, and ``-r`` makes it work
for an unprivileged user too) it mounts a small tmpfs as the station's ``data_dir`` and runs the
real daemon (:func:`pi_app.referee.daemon.serve`) with the simulated sensor board; clean
simulated hands make the moves. It prints one JSON object: what the station showed (status,
OLED screen, LEDs), what it confirmed and what the database held, at each step. It asserts
nothing itself, so the test can say which promise broke.

The steps, on one game of Tiki Topple:

1. ``normal``: two moves, confirmed and stored.
2. ``disk_full``: a filler file takes every free block (until ENOSPC). A move is made, refused
   and taken back by the players; another is made and left on the board; the filler is deleted
   and that move must be confirmed by itself (the station retries); then one more move.
3. ``remount_busy``: ``mount -o remount,ro`` under the running station. Linux refuses it (EBUSY)
   while SQLite holds the database open for writing, so an administrator cannot make the
   directory read-only under a running station; the station must go on storing moves.
4. ``readonly_clean``: the station stopped cleanly (SQLite removed its -wal and -shm files), the
   tmpfs is remounted read-only and the daemon started: the database cannot open, so the daemon
   shows the store error and tries again; the tmpfs is remounted read-write and the station
   must then start by itself and confirm a move.
5. ``readonly_powercut``: a station process died with the database open (a power cut: the -wal
   and -shm files stay), the tmpfs is remounted read-only, the daemon started: it resumes the
   game; a move is refused (SQLite: "attempt to write a readonly database"); the tmpfs is
   remounted read-write and the move must then be confirmed; then one more move.
6. ``export``: ``tikiboard export`` of the database, for the test to replay.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pi_app.games import Game
from pi_app.json_types import JSON
from pi_app.referee import daemon
from pi_app.referee import feedback as fb
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.feed import Phase
from pi_app.referee.session import Session
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore, StoreError
from pi_app.sim.players_live import LivePlayers
from pi_app.station_main import serve

#: The tmpfs: room for the game with its WAL (SQLite checkpoints at 1,000 pages, 4 MB), small
#: enough to fill in a blink.
TMPFS_SIZE = "6m"
#: How long a refused move is left on the board before the station is looked at: many retries.
REFUSED_FOR = 1.2
#: ... and, on a machine too busy to retry twice in that time, at most this long for the two
#: refused attempts the tests ask for: the scenario waits for what it checks, not for a time.
REFUSED_WITHIN = 30.0
#: The longest a move may take to be confirmed once it can be stored.
CONFIRM_WITHIN = 4.0


async def refused_twice(mark: int) -> None:
    """Let the station go on refusing: ``REFUSED_FOR`` seconds and two refused attempts."""
    await asyncio.sleep(REFUSED_FOR)
    deadline = time.monotonic() + REFUSED_WITHIN
    while STORAGE.since(mark)["attempts"] < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


class StorageLog(logging.Handler):
    """Counts the station's "storage: ..." errors (each is one refused attempt to store)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text.startswith("storage: "):
            self.messages.append(text.removeprefix("storage: ").rsplit(" (at ", 1)[0])

    def since(self, mark: int) -> JSON:
        seen = self.messages[mark:]
        return {"attempts": len(seen), "errors": sorted(set(seen))}


STORAGE = StorageLog()


class DaemonLog(logging.Handler):
    """The daemon's errors (a database that would not open)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


DAEMON = DaemonLog()


def mount(*args: str) -> JSON:
    """Run ``mount``; its exit code and what it said (the scenario goes on either way)."""
    run = subprocess.run(["mount", *args], capture_output=True, text=True, check=False,
                         timeout=30)
    return {"rc": run.returncode, "stderr": run.stderr.strip().splitlines()[:1]}


def read_only(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


def fill(directory: Path) -> JSON:
    """Write a filler file until the filesystem says ENOSPC; what it said and what is left."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    chunk = bytes(65536)
    written, error = 0, ""
    try:
        while True:
            written += os.write(fd, chunk)
    except OSError as exc:
        error = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    finally:
        os.close(fd)
    return {"error": error, "written": written, "free": os.statvfs(directory).f_bavail}


def stored_moves(db: Path) -> list[str]:
    """The moves of the last game as the database has them (a second connection, as
    ``tikiboard export`` would read it), folded like a record: takebacks and revisions
    applied."""
    store = EventStore(db)
    try:
        row = store.games()[-1]
        return Session.resume(store, row).moves()
    finally:
        store.close()


def plain_move(game: Game[Any, Any], state: Any, rng: random.Random) -> Any:
    """A random move the sensors see, that no other legal move looks like (those are asked
    about: not this test's subject), that does not end the round, and whose pieces come to
    rest where the move leaves them (one change of the board makes it)."""
    before = game.expected_view(state)
    for _ in range(500):
        move = game.random_move(state, rng)
        placement = game.placement_view(state, move)
        after = game.apply(state, move)
        if (placement == before or placement != game.expected_view(after)
                or game.is_over(after) or game.to_move(after) is None):
            continue
        if all(game.apply(state, m) == after or game.placement_view(state, m) != placement
               for m in game.legal_moves(state)):
            return move
    raise RuntimeError("no plain move in this position")


class Hands:
    """The players: they move pieces on the simulated board and wait for the station."""

    def __init__(self, station: Station, hardware: Hardware, rng: random.Random) -> None:
        self.station = station
        self.hardware = hardware
        self.rng = rng
        self.live = LivePlayers(hardware.sim, station.geometry, station.registry, rng,
                                pace=(0.03, 0.06))

    async def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if condition():
                return True
            await asyncio.sleep(0.02)
        return condition()

    async def move(self) -> str:
        """Make a move on the board (the station may or may not confirm it); its text."""
        game, state = self.station.session.game, self.station.session.state
        move = plain_move(game, state, self.rng)
        await self.live.change(game.placement_view(state, move))
        return str(game.move_text(state, move))

    async def confirmed(self, text: str, before: int) -> bool:
        """Wait until the station confirmed ``text`` as its next move after ``before``."""
        log = self.station.accepted_log
        return await self.wait_for(lambda: log[before:] == [text], CONFIRM_WITHIN)

    async def confirmed_move(self) -> JSON:
        before = len(self.station.accepted_log)
        text = await self.move()
        return {"text": text, "confirmed": await self.confirmed(text, before)}

    async def put_back(self) -> None:
        """Put the pieces back where the station's position has them."""
        game, state = self.station.session.game, self.station.session.state
        await self.live.change(game.expected_view(state))


#: What the players do while one incarnation of the daemon runs.
Script = Callable[[Station, Hardware, Hands], Awaitable[None]]


def shown(station: Station, hardware: Hardware, db: Path) -> JSON:
    """What the station shows and holds now: its status, the OLED screen, the LEDs, the moves
    it confirmed, and the moves the database has."""
    now = time.monotonic()
    scene = station.scene(now)
    lamps = fb.lamps(scene, station.geometry, now)
    status_leds = [i for leds in station.geometry.status_leds.values() for i in leds]
    image = hardware.display.last_image
    expected = fb.screen(scene)
    return {
        "store_error": station.status.store_error,
        "phase": scene.phase,
        "screen": fb.screen_name(scene),
        "oled_is_scene": image is not None and image.tobytes() == expected.convert(
            image.mode).tobytes(),
        "status_leds": sorted({lamps[i].signal.key if i in lamps else "off"
                               for i in status_leds}),
        "confirm_lamps": sum(1 for lamp in lamps.values() if lamp.signal.key == "confirm"),
        "accepted": list(station.accepted_log),
        "session_moves": station.session.moves(),
        "stored": stored_moves(db),
    }


async def incarnation(config: Config, seed: int, script: Script) -> JSON:
    """Run the daemon with ``script`` as the players; stop it when the script ends. The
    daemon's own failure (an exception out of ``serve``) is reported, not raised."""
    stop = asyncio.Event()
    tasks: list[asyncio.Future[None]] = []
    out: JSON = {}

    def ready(station: Station, hardware: Hardware) -> None:
        out["station"] = station
        hands = Hands(station, hardware, random.Random(seed))
        hands.live.lay_out(station.session.game.expected_view(station.session.state))

        async def play() -> None:
            try:
                if not await hands.wait_for(lambda: station.status.phase == "play", 8.0):
                    raise RuntimeError(f"the station is not in play: {station.status}")
                await script(station, hardware, hands)
            except Exception as exc:
                out["script_error"] = f"{type(exc).__name__}: {exc}"
            finally:
                stop.set()

        tasks.append(asyncio.ensure_future(play()))

    try:
        await asyncio.wait_for(serve(config, stop=stop, on_ready=ready), timeout=60)
    except (StoreError, OSError) as exc:
        out["daemon_error"] = f"{type(exc).__name__}: {exc}"
    for task in tasks:
        task.cancel()
    station = out.pop("station", None)
    out["started"] = station is not None
    out["accepted"] = [] if station is None else list(station.accepted_log)
    if station is not None:
        game = station.session.game
        out["state"] = game.state_to_json(station.session.state)
    return out


def main(workdir: Path) -> JSON:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("pi_app.referee.station").addHandler(STORAGE)
    logging.getLogger("pi_app.referee.daemon").addHandler(DAEMON)
    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)
    db = data / "tikiboard.db"
    result: JSON = {"db": str(db),
                    "tmpfs": mount("-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(data))}
    if result["tmpfs"]["rc"] != 0:
        return result
    config = Config(station=replace(StationConfig(), game="topple", seed=5, topple_cards="deal",
                                    board="fs", data_dir=str(data)))

    async def first(station: Station, hardware: Hardware, hands: Hands) -> None:
        result["normal"] = [await hands.confirmed_move() for _ in range(2)]
        result["normal_shown"] = shown(station, hardware, db)

        # -- the disk fills up ---------------------------------------------------------------
        full: JSON = {"fill": fill(data)}
        result["disk_full"] = full
        mark = len(STORAGE.messages)
        full["refused"] = await hands.move()
        await refused_twice(mark)
        full["while_refused"] = shown(station, hardware, db)
        full["log_refused"] = STORAGE.since(mark)
        await hands.put_back()   # the players see "Moves not confirmed" and undo their move
        await asyncio.sleep(0.5)
        full["after_put_back"] = shown(station, hardware, db)
        before = len(station.accepted_log)
        full["pending"] = pending = await hands.move()   # ... then try again, and wait
        await asyncio.sleep(REFUSED_FOR)
        full["while_pending"] = shown(station, hardware, db)
        (data / "filler").unlink()
        full["freed"] = os.statvfs(data).f_bavail
        full["pending_confirmed"] = await hands.confirmed(pending, before)
        full["after_recovery"] = shown(station, hardware, db)
        full["next"] = await hands.confirmed_move()
        full["log_total"] = STORAGE.since(mark)

        # -- an administrator tries to make the directory read-only under the station --------
        busy: JSON = {"remount": mount("-o", "remount,ro", str(data))}
        result["remount_busy"] = busy
        busy["read_only"] = read_only(data)
        busy["next"] = await hands.confirmed_move()
        busy["shown"] = shown(station, hardware, db)
        if read_only(data):   # not on Linux today; never leave the next steps a read-only fs
            busy["remount_rw"] = mount("-o", "remount,rw", str(data))

    result["first"] = run1 = asyncio.run(incarnation(config, 11, first))
    result["files_after_clean_stop"] = sorted(os.listdir(data))

    # -- stopped cleanly, the directory goes read-only, the station starts -----------------------
    clean: JSON = {"remount": mount("-o", "remount,ro", str(data)), "read_only": read_only(data)}
    result["readonly_clean"] = clean

    async def one_move(station: Station, hardware: Hardware, hands: Hands) -> None:
        clean["after_rw"] = await hands.confirmed_move()

    async def start_read_only() -> JSON:
        feedback: list[Hardware] = []
        real = daemon._open_feedback

        def spy(config: Config, geometry: Any) -> Hardware:  # what the screen showed
            opened = real(config, geometry)
            feedback.append(opened)
            return opened

        daemon._open_feedback = spy
        mark = len(DAEMON.messages)
        run = asyncio.ensure_future(incarnation(config, 12, one_move))
        await asyncio.sleep(2.5)
        clean["waiting"] = {"done": run.done(), "log": DAEMON.messages[mark:]}
        if feedback and feedback[0].display.last_image is not None:
            why = DAEMON.messages[mark].split("; ")[0] if DAEMON.messages[mark:] else ""
            expected = fb.screen(fb.Scene(phase=Phase.ERROR, game="topple", board="fs",
                                          store_error=why))
            image = feedback[0].display.last_image
            clean["waiting"]["oled_store_error"] = image.tobytes() == expected.convert(
                image.mode).tobytes()
        clean["remount_rw"] = mount("-o", "remount,rw", str(data))
        daemon._open_feedback = real
        return await run

    clean["run"] = asyncio.run(start_read_only())

    # -- a power cut leaves the WAL; the directory goes read-only; the station starts ----------
    cut: JSON = {}
    result["readonly_powercut"] = cut
    died = subprocess.run(
        [sys.executable, "-c", "import os, sys\nfrom pi_app.referee.store import EventStore\n"
         "EventStore(sys.argv[1])\nos._exit(0)", str(db)],
        capture_output=True, text=True, check=False, timeout=60)
    cut["died"] = {"rc": died.returncode, "stderr": died.stderr[-500:]}
    cut["files"] = sorted(os.listdir(data))
    cut["remount"] = mount("-o", "remount,ro", str(data))
    cut["read_only"] = read_only(data)

    async def third(station: Station, hardware: Hardware, hands: Hands) -> None:
        cut["resumed_moves"] = station.session.moves()
        mark = len(STORAGE.messages)
        before = len(station.accepted_log)
        cut["refused"] = refused = await hands.move()
        await refused_twice(mark)
        cut["while_refused"] = shown(station, hardware, db)
        cut["log_refused"] = STORAGE.since(mark)
        cut["remount_rw"] = mount("-o", "remount,rw", str(data))
        cut["read_only_after"] = read_only(data)
        cut["refused_confirmed_after_rw"] = await hands.confirmed(refused, before)
        cut["after_recovery"] = shown(station, hardware, db)
        cut["next"] = await hands.confirmed_move()

    cut["run"] = run3 = asyncio.run(incarnation(config, 13, third))
    if read_only(data):
        mount("-o", "remount,rw", str(data))

    # -- the record, as the station's export writes it --------------------------------------------
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    export = subprocess.run([*cmd, "export", "--db", str(db)], capture_output=True, text=True,
                            check=False, timeout=60)
    result["export"] = {"rc": export.returncode, "stderr": export.stderr[-500:],
                        "records": json.loads(export.stdout) if export.returncode == 0 else []}
    result["confirmed"] = run1["accepted"] + clean["run"]["accepted"] + run3["accepted"]
    result["final_state"] = run3.get("state")
    return result


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=1))
