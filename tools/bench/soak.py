"""Soak: whole games through the real daemon, with messy hands and a misbehaving link.

Run ``python -m tools.bench.soak [--games N] [--game NAME] [--turns T]``; it prints one JSON
object. Simulated players play on the simulated sensor board (the firmware's own scanner
behind a pty) against the real daemon loop: slides, hesitations, knocked pieces, deliberate
illegal moves and takebacks; meanwhile the link misbehaves: bursts of garbage bytes on the
wire, and the USB cable unplugged and plugged back in. Reported per game type: moves made and
followed (the station held exactly the position the players meant), moves lost (the target is
zero), illegal moves and takebacks made, the link's counters (good, bad and missing frames,
reconnects), and the longest time from a replug to the link being up again.

The daemon runs on real clocks, so a game takes minutes; the engines' and inference's long
runs (10,000 moves a game) are ``tools.bench.accuracy``, which needs no real time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import tempfile
import time
from dataclasses import replace
from typing import Any

from pi_app.demo import DemoPlayers
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.station import Station
from pi_app.sim.hands import Noise
from pi_app.station_main import serve


async def _faults(hardware: Hardware, rng: random.Random, stop: asyncio.Event,
                  report: dict[str, Any], every: float) -> None:
    """Garbage on the wire and unplugged cables, now and then, until ``stop``."""
    sim = hardware.sim
    while not stop.is_set():
        await asyncio.sleep(rng.uniform(0.5, 2.0) * every)
        if stop.is_set():
            return
        if rng.random() < 0.6:
            sim.inject(bytes(rng.randrange(256) for _ in range(rng.randrange(5, 200))))
            report["garbage_bursts"] += 1
            continue
        sim.unplug()
        report["unplugs"] += 1
        await asyncio.sleep(rng.uniform(0.3, 1.5))
        sim.replug()
        started = time.monotonic()
        while not hardware.link.up and time.monotonic() - started < 15:
            await asyncio.sleep(0.05)
        report["longest_reconnect_s"] = max(report["longest_reconnect_s"],
                                            round(time.monotonic() - started, 3))


def soak(game: str, games: int, turns: int, seed: int, *, faults: bool = True,
         fault_every: float = 8.0) -> dict[str, Any]:
    report: dict[str, Any] = {"games": 0, "finished": 0, "moves_made": 0, "followed": 0,
                              "lost": 0, "illegal_made": 0, "takebacks_made": 0,
                              "garbage_bursts": 0, "unplugs": 0, "longest_reconnect_s": 0.0,
                              "link": {}, "seconds": 0.0}
    rng = random.Random(seed)
    started = time.monotonic()
    for number in range(games):
        with tempfile.TemporaryDirectory() as tmp:
            config = Config(station=replace(StationConfig(), game=game, seed=seed + number,
                                            data_dir=tmp))

            async def main(config: Config) -> None:
                stop = asyncio.Event()
                tasks: list[asyncio.Future[None]] = []

                def ready(station: Station, hardware: Hardware) -> None:
                    players = DemoPlayers(station, hardware, random.Random(rng.random()),
                                          illegal=0.05, takeback=0.03,
                                          noise=Noise.table(carried=game != "topple"),
                                          pace=(0.05, 0.15))

                    async def play() -> None:
                        try:
                            await players.play(turns)
                        finally:
                            stats = players.players.stats
                            report["moves_made"] += stats.moves
                            report["followed"] += stats.followed
                            report["lost"] += stats.lost
                            report["illegal_made"] += stats.illegal
                            report["takebacks_made"] += stats.takebacks
                            report["finished"] += int(station.session.game.is_over(
                                station.session.state))
                            for key, value in hardware.link.counters.as_dict().items():
                                if isinstance(value, int | float):
                                    report["link"][key] = report["link"].get(key, 0) + value
                            stop.set()

                    tasks.append(asyncio.ensure_future(play()))
                    if faults:
                        tasks.append(asyncio.ensure_future(
                            _faults(hardware, rng, stop, report, fault_every)))

                await serve(config, stop=stop, on_ready=ready)
                for task in tasks:
                    task.cancel()

            asyncio.run(main(config))
            report["games"] += 1
    report["seconds"] = round(time.monotonic() - started, 1)
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1, help="games per game type")
    parser.add_argument("--game", action="append", choices=("topple", "manami", "tactiki"))
    parser.add_argument("--turns", type=int, default=400, help="turn limit per game")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-faults", action="store_true", help="a well-behaved link")
    args = parser.parse_args(argv)
    figures = {game: soak(game, args.games, args.turns, args.seed, faults=not args.no_faults)
               for game in args.game or ("topple", "manami", "tactiki")}
    print(json.dumps({"benchmark": "soak", "machine": {
        "cpu": platform.processor() or platform.machine(), "python": platform.python_version()},
        "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
