"""Power cuts: the daemon is killed with SIGKILL at random points of a game and restarted; no
move it ever confirmed is lost, and the game goes on from the stored position.

The sensor board (the firmware's own scanner with simulated readers, behind a pty) and the
players' hands live in this test process, as they would live on the table: killing the daemon
leaves the pieces where they are. The daemon is the real ``tikiboard run`` in a subprocess.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pi_app.board.equipment import registry_for
from pi_app.board.geometry import load_geometry
from pi_app.hw.simfirmware import SimFirmware
from pi_app.referee.session import Session
from pi_app.referee.store import EventStore
from pi_app.sim.players_live import LivePlayers

pytestmark = [pytest.mark.slow, pytest.mark.realtime]

KILLS = 50
CONFIRMED = re.compile(r"confirmed move (\d+): (.+)$")


class Daemon:
    """``tikiboard run`` in a subprocess; its log lines are collected by a thread."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[str] = []
        self.confirmed: list[tuple[int, str]] = []  # (move number, text), every incarnation
        self._ready = threading.Event()

    def start(self) -> None:
        exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
        cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
        self._ready.clear()
        self.proc = subprocess.Popen([*cmd, "run", "--config", str(self.config)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        assert self._ready.wait(30), "the daemon did not get ready:\n" + "\n".join(
            self.lines[-20:])

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.rstrip()
            self.lines.append(line)
            if "station ready" in line:
                self._ready.set()
            match = CONFIRMED.search(line)
            if match:
                self.confirmed.append((int(match.group(1)), match.group(2)))

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def stored(db: Path) -> tuple[Any, list[str]]:
    """The game as the database has it: its position and all its moves."""
    store = EventStore(db)
    try:
        row = store.games()[-1]
        session = Session.resume(store, row)
        moves = [e.data["text"] for e in store.events(row.id, ("move", "revise", "takeback"))
                 if e.kind == "move"]
        return session.state, moves
    finally:
        store.close()


def unambiguous_move(game: Any, state: Any, rng: random.Random) -> Any:
    """A random move no other legal move looks like (those need a button: not this test's
    subject)."""
    while True:
        move = game.random_move(state, rng)
        placement = game.placement_view(state, move)
        after = game.apply(state, move)
        if all(game.apply(state, m) == after or game.placement_view(state, m) != placement
               for m in game.legal_moves(state)):
            return move


def test_no_confirmed_move_is_lost_across_fifty_kills(tmp_path: Path) -> None:
    geometry = load_geometry("topple")
    registry = registry_for("topple")
    data = tmp_path / "data"
    data.mkdir()
    (data / "tags.json").write_text(json.dumps({"version": 1, "tags": dict(registry)}))
    sim = SimFirmware(geometry.reader_count, geometry.presence_count, board="kill",
                      scan_period_ms=50, link_dir=tmp_path).start()
    config = tmp_path / "station.toml"
    config.write_text(f"""
[station]
board = "kill"
game = "topple"
seed = 3
topple_cards = "deal"
data_dir = "{data}"
[sensors]
source = "serial"
device = "{sim.path}"
""")
    daemon = Daemon(config)
    rng = random.Random(2026)
    hands = LivePlayers(sim, geometry, registry, rng, pace=(0.05, 0.1))
    db = data / "tikiboard.db"
    try:
        daemon.start()
        state, _ = stored(db)
        from pi_app.games import get_game

        game = get_game("topple")
        hands.lay_out(game.expected_view(state))
        kills = 0
        deadline = time.monotonic() + 400
        while kills < KILLS and time.monotonic() < deadline:
            state, moves = stored(db)
            if game.is_over(state):
                break
            if game.to_move(state) is None:  # a round ended; the daemon deals the next one
                time.sleep(0.2)
                continue
            want = game.expected_view(state)
            have = hands.board.view()
            if any(tuple(sorted(want[c])) != have[c] for c in want):  # a new round was dealt
                asyncio.run(hands.change(game.expected_view(state)))
                time.sleep(0.3)
                continue
            move = unambiguous_move(game, state, rng)
            placement = game.placement_view(state, move)
            # Kill the daemon at a random moment of this move: before, during, or after it.
            kill_at = rng.uniform(0.0, 1.2)
            timer = threading.Timer(kill_at, daemon.kill)
            timer.start()
            asyncio.run(hands.change(placement))
            timer.join()
            kills += 1
            daemon.start()
            # Restarted: the move on the board is accepted now if it was not before the kill.
            wait_until = time.monotonic() + 8
            while time.monotonic() < wait_until and len(stored(db)[1]) < len(moves) + 1:
                time.sleep(0.1)
            _, after = stored(db)
            assert after[:len(moves)] == moves, "a stored move changed"
            assert len(after) == len(moves) + 1, "\n".join(daemon.lines[-40:])
            # Nothing any incarnation confirmed is missing from the database.
            for number, text in daemon.confirmed:
                assert after[number - 1] == text
        assert kills >= KILLS, f"only {kills} kill points in time"
        _, final_moves = stored(db)
        assert daemon.confirmed and all(final_moves[n - 1] == t for n, t in daemon.confirmed)
    finally:
        daemon.stop()
        sim.stop()
