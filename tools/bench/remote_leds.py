"""Remote play end to end (issue 36): a move at rest on one board to its LEDs lit on the other.

Run ``python -m tools.bench.remote_leds [--games N] [--turns N] [--seed S]``; prints JSON.

Everything but the hands is the product: two station daemons (``serve``, each with its
simulated firmware behind a pty, its serial link, tracker, follower, SQLite store and LED
strip), a mosquitto of their own on 127.0.0.1 with the event's ACL and credentials
(:func:`tools.bench.remote.event_broker`), the authority on the referee's user and each
board's table link on the board's user, woken into the daemon's loop by ``Station.wake``.
The demo's simulated hands (:class:`pi_app.demo.DemoPlayers`, the quickest pace the follower
is tuned for) play random Manami moves at each board and carry out the other board's moves
as the LEDs show them.

For each move it takes these moments on one clock (``time.perf_counter``):

* ``rest``: the mover's hands put the last piece of the move down (the simulated firmware
  sees it from then on);
* ``shown``: the other board's daemon first writes an LED frame whose scene gives the move's
  cells the station's "lift" or "put" signal;
* ``lit``: the first such frame in which one of those LEDs is on (the signals blink on the
  absolute time, so this can be up to a blink's dark phase after ``shown``).

``rest_to_lit_ms`` is the issue's figure (target p95 at most 500 ms), also split by how the
mover's follower accepted the move. Where the time goes: ``rest_to_accept_ms`` (the mover's own
board: the sensors reporting the move, then the follower's settle wait),
``last_change_seen_to_accept_ms`` (the follower's part alone: its ``since_rest``, from the last
change the sensors reported) and ``accept_to_shown_ms`` (the network, the authority's fsync'd
store and the other daemon's wake-up). A move the mover's player decided with a button (a
question, or OK for a move no sensor sees) is counted apart, not timed: that is the player's
time. Manami only: TacTiki and Topple are not played between two stations yet
(docs/remote-play.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pi_app.board.equipment import registry_for
from pi_app.board.follower import MoveAccepted
from pi_app.demo import FASTEST_HANDS, DemoPlayers
from pi_app.games import get_game
from pi_app.net.remote import Authority, Table
from pi_app.net.remote_link import AuthorityLink, TableLink
from pi_app.net.remote_station import RemoteSeat
from pi_app.referee import feedback as fb
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.opponent import REMOTE
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore
from pi_app.station_main import serve
from tools.bench.remote import BOARDS, EVENT, TARGET_P95_MS, _percentile, event_broker, options

GAME = "manami"
ROOT = Path(__file__).resolve().parents[2]
SHOWN_KEYS = ("station_lift", "station_put")
#: Seconds a player looks at the board before a move: past the confirmation's fade, so the
#: other board's loop is idle when a move arrives, as between people (the demo's own pace).
THINK = (1.0, 2.0)


@dataclass
class Board:
    """One board's daemon as the bench watches it: ply -> the moment of each step."""
    name: str
    seat: int
    rest: dict[int, float] = field(default_factory=dict)
    accepted: dict[int, float] = field(default_factory=dict)
    shown: dict[int, float] = field(default_factory=dict)
    lit: dict[int, float] = field(default_factory=dict)
    pressed: dict[int, float] = field(default_factory=dict)
    how: dict[int, str] = field(default_factory=dict)
    """How the mover's follower accepted each of its player's moves (``Acceptance``)."""
    settled: dict[int, float] = field(default_factory=dict)
    """The follower's own ``since_rest``: from the board's last change it saw to acceptance."""

    def write(self, path: Path) -> None:
        path.write_text(json.dumps({"rest": self.rest, "accepted": self.accepted,
                                    "shown": self.shown, "lit": self.lit,
                                    "pressed": self.pressed, "how": self.how,
                                    "settled": self.settled}),
                        encoding="utf-8")

    @classmethod
    def read(cls, name: str, seat: int, path: Path) -> Board:
        data = json.loads(path.read_text(encoding="utf-8"))
        moments = {key: {int(ply): float(t) for ply, t in data[key].items()}
                   for key in ("rest", "accepted", "shown", "lit", "pressed", "settled")}
        return cls(name, seat, **moments,
                   how={int(ply): str(how) for ply, how in data["how"].items()})

    def watch(self, station: Station, hardware: Hardware) -> None:
        """Time this daemon's LED frames: the first to signal the other board's move, and the
        first with one of its LEDs on."""
        show = hardware.leds.show

        def timed_show(frame: Any) -> bool:
            wrote: bool = show(frame)
            self._frame(station, frame, time.perf_counter())
            return wrote

        hardware.leds.show = timed_show
        station.leds = hardware.leds

    def _frame(self, station: Station, frame: list[tuple[int, int, int]], at: float) -> None:
        shown = station.opponent.shown
        state = station.session.state
        if shown is None or shown.kind != "station" or shown.state != state or \
                shown.seat == self.seat:
            return
        ply = len(station.session.history)
        now = station.clock()
        lamps = fb.cell_signals(station.scene(now), now)
        cells = [c for c in shown.lift + shown.put
                 if c in lamps and lamps[c].signal.key in SHOWN_KEYS]
        if not cells:
            return
        self.shown.setdefault(ply, at)
        leds = [led for c in cells for led in station.geometry.cell(c).leds]
        if any(frame[led] != fb.OFF for led in leds if led < len(frame)):
            self.lit.setdefault(ply, at)


def _config(directory: Path, board: str, seed: int) -> Config:
    return Config(station=replace(StationConfig(), game=GAME, seed=seed, board=board,
                                  data_dir=str(directory / board)), source="bench")


def _start(directory: Path, seed: int) -> Any:
    """The position both stations start from (a station with this configuration, not run)."""
    config = _config(directory, "start", seed)
    Path(config.station.data_dir).mkdir(parents=True)
    store = EventStore(Path(config.station.data_dir) / "tikiboard.db")
    try:
        return Station(config, store, registry_for(GAME)).session.state
    finally:
        store.close()


async def _board(board: Board, port: int, directory: Path, seed: int, index: int,
                 turns: int, wake: bool = True) -> None:
    """One board's daemon and hands for one game (at most ``turns`` turns: its own moves and
    the other board's, carried out); the timings are in ``board``."""
    stop = asyncio.Event()
    links: list[TableLink] = []

    def ready(station: Station, hardware: Hardware) -> None:
        stations.append(station)
        board.watch(station, hardware)
        link = TableLink(Table(f"leds-{index}", board.name), options(port, board.name), EVENT,
                         on_change=None if not wake else lambda _t: station.wake()).start()
        links.append(link)
        _time_acceptance(board, link)
        station.opponent.levels = {1 - board.seat: REMOTE}
        station.opponent.remote = RemoteSeat(link)
        demo = DemoPlayers(station, hardware, random.Random(seed * 100 + index + board.seat),
                           pace=FASTEST_HANDS, think=THINK)
        _time_rest(board, station, demo)

        async def play() -> None:
            try:
                await demo.play(turns)
                await asyncio.sleep(1.0)  # the other board's hands may still be reading ours
            finally:
                stop.set()

        tasks.append(asyncio.ensure_future(play()))

    def probe(_event: Any, _arrived: float, _done: float, outcomes: list[Any]) -> None:
        for outcome in outcomes:
            if isinstance(outcome, MoveAccepted) and outcome.player == board.seat and stations:
                history = stations[0].session.history
                if history and history[-1][1] == outcome.text:
                    board.how[len(history) - 1] = str(outcome.how)
                    board.settled[len(history) - 1] = outcome.since_rest

    stations: list[Station] = []
    tasks: list[asyncio.Future[None]] = []
    try:
        await serve(_config(directory, board.name, seed), stop=stop, on_ready=ready,
                    probe=probe)
    finally:
        for link in links:
            link.stop()


def _time_acceptance(board: Board, link: TableLink) -> None:
    """The moment the mover's station accepted its player's move (and handed it to its table)."""
    propose = link.propose

    def timed(move: str) -> None:
        board.accepted.setdefault(len(link.table.record), time.perf_counter())
        propose(move)

    link.propose = timed  # type: ignore[method-assign]


def _time_rest(board: Board, station: Station, demo: DemoPlayers) -> None:
    """The moment the hands put the last piece of their own player's move down, and whether
    they pressed a button before the station took it (a question answered, or OK for a
    decision no sensor sees: the player's time, not the system's)."""
    change, press = demo.players.change, demo.players.press

    def own() -> bool:
        return station.session.game.to_move(station.session.state) == board.seat

    async def timed(target: Any, waypoints: Any = None) -> None:
        ply, mine = len(station.session.history), own()
        await change(target, waypoints)
        if mine:
            board.rest.setdefault(ply, time.perf_counter())

    async def timed_press(button: str) -> None:
        if own():
            board.pressed.setdefault(len(station.session.history), time.perf_counter())
        await press(button)

    demo.players.change = timed  # type: ignore[method-assign]
    demo.players.press = timed_press  # type: ignore[method-assign]


def _figures(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": round(statistics.median(values), 1),
            "p95": round(_percentile(values, 0.95), 1), "max": round(max(values), 1)}


def run(games: int, turns: int, seed: int, wake: bool = True) -> dict[str, Any]:
    """Each board's daemon in a process of its own (two stations; their gpiozero buttons
    cannot share one process), the authority here; ``perf_counter`` is the system's monotonic
    clock, so the processes' moments compare."""
    rest_to_lit: list[float] = []
    rest_to_shown: list[float] = []
    rest_to_accept: list[float] = []
    accept_to_shown: list[float] = []
    games_over = asked = unlit = 0
    by_how: dict[str, list[float]] = {}
    seen_to_accept: list[float] = []
    with event_broker() as (port, directory):
        for index in range(games):
            start = _start(directory / f"start-{index}", seed)
            authority = Authority(get_game(GAME), f"leds-{index}",
                                  {name: (seat,) for seat, name in enumerate(BOARDS)}, start)
            auth = AuthorityLink(authority, options(port, "referee"), EVENT,
                                 directory / f"authority-{index}.json").start()
            try:
                outs = {name: directory / f"{name}-{index}.json" for name in BOARDS}
                children = [subprocess.Popen(
                    [sys.executable, "-m", "tools.bench.remote_leds", "--board", name,
                     "--port", str(port), "--dir", str(directory / f"game-{index}"),
                     "--seed", str(seed), "--index", str(index), "--turns", str(turns),
                     "--out", str(outs[name]), *([] if wake else ["--no-wake"])], cwd=ROOT)
                    for name in BOARDS]
                for child in children:
                    child.wait(timeout=60 + 30 * turns)
            finally:
                auth.stop()
            games_over += get_game(GAME).is_over(authority.state)
            boards = [Board.read(name, seat, outs[name]) for seat, name in enumerate(BOARDS)]
            for mover in boards:
                other = next(b for b in boards if b is not mover)
                for ply in mover.accepted:
                    rest = mover.rest.get(ply)
                    if rest is None or ply in mover.pressed:
                        asked += 1  # decided by a button: the player's time
                        continue
                    if ply not in other.lit or ply not in other.shown:
                        unlit += 1
                        continue
                    rest_to_lit.append((other.lit[ply] - rest) * 1000)
                    by_how.setdefault(mover.how.get(ply, "?"), []).append(
                        (other.lit[ply] - rest) * 1000)
                    rest_to_shown.append((other.shown[ply] - rest) * 1000)
                    rest_to_accept.append((mover.accepted[ply] - rest) * 1000)
                    if ply in mover.settled:
                        seen_to_accept.append(mover.settled[ply] * 1000)
                    accept_to_shown.append((other.shown[ply] - mover.accepted[ply]) * 1000)
    p95 = _percentile(rest_to_lit, 0.95) if rest_to_lit else float("inf")
    return {"moves": len(rest_to_lit), "games_finished": games_over,
            "moves_decided_by_a_button": asked, "moves_never_lit": unlit,
            "rest_to_lit_ms": _figures(rest_to_lit),
            "rest_to_lit_ms_by_acceptance": {how: _figures(v) for how, v in sorted(by_how.items())},
            "rest_to_shown_ms": _figures(rest_to_shown),
            "rest_to_accept_ms": _figures(rest_to_accept),
            "last_change_seen_to_accept_ms": _figures(seen_to_accept),
            "accept_to_shown_ms": _figures(accept_to_shown),
            "target_p95_ms": TARGET_P95_MS, "met": p95 <= TARGET_P95_MS}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2, help="games played")
    parser.add_argument("--turns", type=int, default=60,
                        help="turns at each board per game, at most (its own and the other's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-wake", action="store_true",
                        help="the link does not wake the daemon's loop (what the wake is worth)")
    for name in ("--board", "--port", "--dir", "--index", "--out"):  # one board's process
        parser.add_argument(name, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.board is not None:
        board = Board(args.board, BOARDS.index(args.board))
        asyncio.run(_board(board, int(args.port), Path(args.dir), args.seed, int(args.index),
                           args.turns, not args.no_wake))
        board.write(Path(args.out))
        return
    figures = run(args.games, args.turns, args.seed, not args.no_wake)
    print(json.dumps({"benchmark": "remote-leds", "game": GAME, "seed": args.seed,
                      "games": args.games, "turns": args.turns, "wake": not args.no_wake,
                      "machine": {"cpu": platform.machine(),
                                  "python": platform.python_version()},
                      "broker": "mosquitto on 127.0.0.1, the event's ACL and credentials",
                      "hands": "pi_app.demo.FASTEST_HANDS, no noise",
                      "think_s": list(THINK),
                      **figures}, indent=2))


if __name__ == "__main__":
    main()
