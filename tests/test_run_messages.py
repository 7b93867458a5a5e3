"""What a started station says about itself (issue 16): ``tikiboard run`` names its game, its
sensor source, its drivers, its database, where its page is (or why it is off) and its broker;
and the MQTT link says when the broker refused its login (log, screen, snapshot) and when it
connected. Through the real command as a subprocess and the real daemon on a real mosquitto.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import EVENT, Broker, broker, password_of

from pi_app.demo import DemoPlayers
from pi_app.net.broker import free_port
from pi_app.referee.config import Config, Mqtt
from pi_app.referee.config import Station as StationSection
from pi_app.referee.daemon import Hardware
from pi_app.referee.station import Station
from pi_app.station_main import serve

pytestmark = pytest.mark.realtime

__all__ = ["broker"]  # the fixture, imported for pytest
ROOT = Path(__file__).resolve().parents[1]


class Daemon:
    """``tikiboard run ARGS`` as a subprocess, HOME in ``tmp_path``; its output read by a
    thread, so every wait has a deadline even when the daemon says nothing more."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        env = {**os.environ, "HOME": str(tmp_path), "PYTHONUNBUFFERED": "1",
               "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen([sys.executable, "-m", "pi_app", "run", *args],
                                     cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def block(self, timeout: float = 30.0) -> list[str]:
        """The daemon's own lines (log prefix cut) up to the start-up block's last, "  MQTT:"."""
        said: list[str] = []
        deadline = time.monotonic() + timeout
        with contextlib.suppress(queue.Empty):
            while True:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
                said.append(line)
                if "pi_app.referee.daemon:   MQTT:" in line:
                    break
        return [line.split(": ", 1)[-1] for line in said if "pi_app.referee.daemon" in line]

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(15)
        finally:
            self.proc.kill()


def start_lines(tmp_path: Path, *args: str) -> list[str]:
    """The start-up block of ``tikiboard run ARGS``; then SIGTERM, which must stop it cleanly."""
    daemon = Daemon(tmp_path, *args)
    try:
        said = daemon.block()
    finally:
        rc = daemon.stop()
    assert rc == 0, said
    return said


def test_run_with_the_defaults_says_what_it_does(tmp_path: Path) -> None:
    said = start_lines(tmp_path)
    text = "\n".join(said)
    assert said[0] == "station ready: board 'table-1', configuration: (embedded defaults)"
    assert "  game: Tiki Topple, game 1, 0 moves so far" in said
    assert "simulated sensor board" in text and "tikiboard-sensors" in text
    assert "  LEDs: mock, display: mock, buttons: mock" in text
    assert f"  database: {tmp_path}/.local/state/tikiboard/tikiboard.db" in said
    assert "  page: off ([web] enabled = false in the defaults" in text
    assert said[-1] == "  MQTT: off"


def test_run_with_the_page_names_its_address_and_the_page_answers(tmp_path: Path) -> None:
    port = free_port()
    conf = tmp_path / "station.toml"
    conf.write_text(f'[station]\nboard = "t9"\ngame = "manami"\n'
                    f'[web]\nenabled = true\nhost = "127.0.0.1"\nport = {port}\n'
                    f'[mqtt]\nenabled = true\nport = {free_port()}\nevent = "cup"\n')
    daemon = Daemon(tmp_path, "--config", str(conf))
    try:
        lines = daemon.block()
        assert f"  page: http://127.0.0.1:{port}/" in lines, lines
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=10) as r:
            assert r.status == 200
    finally:
        assert daemon.stop() == 0
    assert f"station ready: board 't9', configuration: {conf}" in lines
    assert "  game: Tiki (Manami island), game 1, 0 moves so far" in lines
    assert lines[-1].startswith("  MQTT: broker 127.0.0.1:") and "board 't9'" in lines[-1]


def test_run_with_its_port_taken_says_the_page_is_off_and_why(tmp_path: Path) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    conf = tmp_path / "station.toml"
    conf.write_text(f'[web]\nenabled = true\nhost = "127.0.0.1"\nport = {port}\n')
    try:
        said = start_lines(tmp_path, "--config", str(conf))
    finally:
        holder.close()
    assert f"  page: page off: port {port} in use (tried again every few seconds)" in said


# -- MQTT: the broker's answer to the login, on the real daemon ----------------------------------
def run_station(tmp_path: Path, board: str, password: str, port: int,
                until: Any) -> dict[str, Any]:
    """The real daemon with MQTT on the real broker; plays one move, waits for ``until``."""
    config = Config(station=replace(StationSection(), board=board, game="manami", seed=5,
                                    data_dir=str(tmp_path)),
                    mqtt=Mqtt(enabled=True, port=port, event=EVENT, password=password))
    seen: dict[str, Any] = {}

    async def main() -> None:
        stop = asyncio.Event()
        done: list[asyncio.Future[None]] = []

        def ready(station: Station, hardware: Hardware) -> None:
            async def watch() -> None:
                try:
                    hands = DemoPlayers(station, hardware, random.Random(1), pace=(0.05, 0.1))
                    seen["held"] = await hands.wait_for(lambda: until(station), 15)
                    seen["notice"] = station.status.notice
                    seen["screen"] = station.scene(time.monotonic()).message
                    seen["feed"] = station.feed.snapshot.get("notice")
                finally:
                    stop.set()

            done.append(asyncio.ensure_future(watch()))

        await asyncio.wait_for(serve(config, stop=stop, on_ready=ready), timeout=60)
        for task in done:
            task.result()

    asyncio.run(main())
    return seen


def test_a_wrong_mqtt_password_is_logged_and_shown_on_the_screen(
        broker: Broker, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    seen = run_station(tmp_path, "t33", "not-the-password", broker.port,
                       lambda station: station.status.notice != "")
    assert seen["held"], "the refusal never reached the station"
    assert seen["notice"] == "MQTT: wrong password"
    assert seen["screen"] == "MQTT: wrong password"   # the OLED's message line
    assert seen["feed"] == "MQTT: wrong password"     # the page and the dashboard's snapshot
    refusals = [r.getMessage() for r in caplog.records if "refused board t33" in r.getMessage()]
    assert len(refusals) == 1 and f"127.0.0.1:{broker.port}" in refusals[0]
    assert not any("MQTT: connected" in r.getMessage() for r in caplog.records)


def test_the_right_mqtt_password_logs_connected_and_clears_nothing_else(
        broker: Broker, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    wanted = f"MQTT: connected to 127.0.0.1:{broker.port} as t34"
    seen = run_station(tmp_path, "t34", password_of("t34"), broker.port,
                       lambda _station: any(r.getMessage() == wanted for r in caplog.records))
    assert seen["held"], [r.getMessage() for r in caplog.records]
    assert seen["notice"] == "" and seen["feed"] == ""
