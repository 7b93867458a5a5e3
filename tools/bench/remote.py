"""Remote play's latency over a real mosquitto on loopback (issue 36), as JSON.

Run ``python -m tools.bench.remote [--games N] [--game NAME] [--seed S]``.

It starts its own mosquitto (127.0.0.1, a port the OS picked, the event's real ACL and
credentials; stopped by its pid), the authority (the referee's user) and two tables (each
board's own user), and plays ``--games`` whole games with random legal moves. For every move it
times from the moment the mover's station hands the move to its table (the move at rest and
accepted by the board) to the moment the other table has it confirmed (when the station lights
its LEDs for its player): the proposal up, the authority's validation and its store (fsync)
before the confirmation, and the confirmation down. Target: p95 at most 500 ms.

Not in the figure: the board's own rest-to-acceptance (the follower, ``tools.bench.latency``)
and the station drawing the LEDs once it has the move (the display, ``tools.bench.station``);
the two stations are not yet wired to these tables (docs/remote-play.md).
"""

from __future__ import annotations

import argparse
import getpass
import json
import platform
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pi_app.games import get_game
from pi_app.net.broker import BrokerProcess, free_port, write_broker_config
from pi_app.net.mqtt import BrokerOptions
from pi_app.net.remote import Authority, Table
from pi_app.net.remote_link import AuthorityLink, TableLink, wait_for

EVENT = "bench"
BOARDS = ("alpha", "beta")
TARGET_P95_MS = 500.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _play(port: int, store: Path, game: str, seed: int, index: int) -> list[float]:
    engine = get_game(game)
    rng = random.Random(seed * 1000 + index)
    authority = Authority(engine, f"bench-{game}-{index}", {"alpha": (0,), "beta": (1,)},
                          engine.new_game(rng))
    arrived: dict[str, dict[int, float]] = {b: {} for b in BOARDS}
    got = threading.Condition()

    def seen(table: Table) -> None:
        with got:
            for n in range(1, len(table.record) + 1):
                arrived[table.station].setdefault(n, time.perf_counter())
            got.notify_all()

    auth = AuthorityLink(authority, options(port, "referee"), EVENT, store).start()
    links = {b: TableLink(Table(authority.game, b), options(port, b), EVENT,
                          on_change=seen).start()
             for b in BOARDS}
    figures: list[float] = []
    try:
        wait_for(lambda: authority.missing == (), 10, "both boards online")
        while not engine.is_over(authority.state):
            n = len(authority.record) + 1
            mover = BOARDS[0] if engine.to_move(authority.state) == 0 else BOARDS[1]
            other = BOARDS[1] if mover == BOARDS[0] else BOARDS[0]
            moves = engine.legal_moves(authority.state)
            text = engine.move_text(authority.state, moves[rng.randrange(len(moves))])
            sent = time.perf_counter()
            links[mover].propose(text)
            with got:
                if not got.wait_for(lambda: n in arrived[other] and n in arrived[mover]  # noqa: B023
                                    , 10):
                    raise TimeoutError(f"move {n} did not arrive")
            figures.append((arrived[other][n] - sent) * 1000)
    finally:
        for link in links.values():
            link.stop()
        auth.stop()
    return figures


@contextmanager
def event_broker() -> Iterator[tuple[int, Path]]:
    """A mosquitto of its own on 127.0.0.1 with the event's ACL and every board's and the
    referee's credentials (``pw-USER``): its port and a scratch directory, both gone after."""
    directory = Path(tempfile.mkdtemp(prefix="tiki-remote-bench-"))
    port = free_port()
    files = write_broker_config(directory, event=EVENT,
                                boards={b: f"pw-{b}" for b in BOARDS},
                                referee_user="referee", referee_password="pw-referee",
                                port=port, user=getpass.getuser())
    process = BrokerProcess(files.conf, "127.0.0.1", port, log=directory / "mosquitto.out")
    process.start()
    try:
        yield port, directory
    finally:
        process.stop()
        shutil.rmtree(directory, ignore_errors=True)


def options(port: int, user: str) -> BrokerOptions:
    """``user``'s login on :func:`event_broker`."""
    return BrokerOptions(port=port, username=user, password=f"pw-{user}")


def run(game: str, games: int, seed: int) -> dict[str, Any]:
    figures: list[float] = []
    with event_broker() as (port, directory):
        for index in range(games):
            figures += _play(port, directory / f"authority-{index}.json", game, seed, index)
    p95 = _percentile(figures, 0.95)
    return {"moves": len(figures),
            "confirm_on_other_board_ms": {
                "p50": round(statistics.median(figures), 2), "p95": round(p95, 2),
                "max": round(max(figures), 2)},
            "target_p95_ms": TARGET_P95_MS, "met": p95 <= TARGET_P95_MS}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="whole games per game")
    parser.add_argument("--game", choices=["manami", "tactiki"], action="append")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    names = args.game or ["manami", "tactiki"]
    figures = {name: run(name, args.games, args.seed) for name in names}
    print(json.dumps({"benchmark": "remote", "seed": args.seed, "games": args.games,
                      "machine": {"cpu": platform.machine(),
                                  "python": platform.python_version()},
                      "broker": "mosquitto on 127.0.0.1, the event's ACL and credentials",
                      "met": all(f["met"] for f in figures.values()),
                      "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
