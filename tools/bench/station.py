"""The station's own figures, as JSON: latency to the LEDs, commit time, idle CPU, memory, start.

Run ``python -m tools.bench.station [--moves N] [--idle-seconds S]``.

* ``frame_to_led_ms``: from the moment the serial link's reader thread hands a decoded frame's
  event to the event loop, to the moment the station has written the LED frame for it (p50,
  p99; all events, and the events that confirmed a move). Target: p99 at most 5 ms. The settle
  time the follower waits on purpose is not in it and is reported apart (``settle_s``).
* ``commit_ms``: one accepted move committed to SQLite (WAL, synchronous=FULL) on this disk.
* ``idle``: ``tikiboard run`` on the simulated board with nothing happening, for
  ``--idle-seconds``: CPU (percent of one core) and resident memory, and the time from start
  to "ready". Targets: under 1 % CPU, under 60 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pi_app.board.follower import MoveAccepted
from pi_app.demo import DemoPlayers
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore
from pi_app.station_main import serve


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else -1.0


def latency(moves: int, game: str = "topple") -> dict[str, Any]:
    """Play ``moves`` moves by simulated hands through the real daemon loop; time each step."""
    all_steps: list[float] = []
    confirming: list[float] = []
    settle: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(station=replace(StationConfig(), game=game, seed=5, data_dir=tmp))

        async def main() -> None:
            stop = asyncio.Event()
            written: dict[str, float] = {"t": 0.0}
            tasks: list[asyncio.Future[None]] = []

            def probe(event: Any, arrived: float, done: float, outcomes: list[Any]) -> None:
                if event is None:
                    return
                led = written["t"] if written["t"] >= arrived else done
                all_steps.append((led - arrived) * 1000)
                for outcome in outcomes:
                    if isinstance(outcome, MoveAccepted):
                        confirming.append((led - arrived) * 1000)
                        settle.append(outcome.since_rest)

            def ready(station: Station, hardware: Hardware) -> None:
                show = hardware.leds.show

                def timed_show(frame: Any) -> bool:
                    wrote: bool = show(frame)
                    written["t"] = time.perf_counter()
                    return wrote

                hardware.leds.show = timed_show
                station.leds = hardware.leds
                players = DemoPlayers(station, hardware, random.Random(3), pace=(0.05, 0.12))

                async def play() -> None:
                    try:
                        await players.play(moves)
                    finally:
                        stop.set()

                tasks.append(asyncio.ensure_future(play()))

            await serve(config, stop=stop, on_ready=ready, probe=probe)

        asyncio.run(main())
    return {
        "events": len(all_steps),
        "frame_to_led_ms": {"p50": round(percentile(all_steps, 50), 3),
                            "p99": round(percentile(all_steps, 99), 3),
                            "max": round(max(all_steps, default=-1), 3)},
        "confirming_frame_to_led_ms": {"p50": round(percentile(confirming, 50), 3),
                                       "p99": round(percentile(confirming, 99), 3),
                                       "moves": len(confirming)},
        "settle_s": {"p50": round(percentile(settle, 50), 3),
                     "p99": round(percentile(settle, 99), 3)},
    }


def commit(n: int = 200) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store = EventStore(Path(tmp) / "bench.db")
        game_id = store.new_game("topple", {"game": "topple"})
        times = []
        for i in range(n):
            t0 = time.perf_counter()
            store.append(game_id, "move", {"text": f"up1 Nani {i}", "player": i % 2})
            times.append((time.perf_counter() - t0) * 1000)
        store.close()
    return {"p50": round(percentile(times, 50), 3), "p99": round(percentile(times, 99), 3)}


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    match = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) / 1024 if match else -1.0


def idle(seconds: float) -> dict[str, Any]:
    """``tikiboard run`` idle, as on a Pi: the sensor board (simulated firmware over a pty)
    runs in this process, like the Pico runs beside the Pi; the daemon is measured alone."""
    from pi_app.board.geometry import load_geometry
    from pi_app.hw.simfirmware import SimFirmware

    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    geometry = load_geometry("topple")
    with tempfile.TemporaryDirectory() as tmp:
        sim = SimFirmware(geometry.reader_count, geometry.presence_count, link_dir=tmp).start()
        config = Path(tmp) / "idle.toml"
        config.write_text(f'[station]\ndata_dir = "{tmp}"\n[sensors]\nsource = "serial"\n'
                          f'device = "{sim.path}"\n')
        start = time.perf_counter()
        proc = subprocess.Popen([*cmd, "run", "--config", str(config)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stderr is not None
            ready = -1.0
            for line in proc.stderr:
                if "station ready" in line:
                    ready = time.perf_counter() - start
                    break
            time.sleep(2.0)  # let start-up work finish
            cpu0, t0 = _cpu_seconds(proc.pid), time.perf_counter()
            time.sleep(seconds)
            cpu1, t1 = _cpu_seconds(proc.pid), time.perf_counter()
            rss = _rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)
            sim.stop()
    return {"cpu_percent": round(100 * (cpu1 - cpu0) / (t1 - t0), 2), "rss_mb": round(rss, 1),
            "start_to_ready_s": round(ready, 3), "seconds": seconds}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    figures = {"latency": latency(args.moves), "commit_ms": commit(),
               "idle": idle(args.idle_seconds)}
    print(json.dumps({"benchmark": "station",
                      "machine": {"cpu": platform.processor() or platform.machine(),
                                  "python": platform.python_version()},
                      "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
