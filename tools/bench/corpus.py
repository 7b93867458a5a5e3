"""A corpus of follower calls: record every call a bench makes, replay it on today's code.

The follower is refactored (issue 30) without changing what it does, and "without changing"
must be shown, not believed: every call the accuracy bench and the long soak make into a
:class:`~pi_app.board.follower.Follower` (and into its tracker from outside) is written down
with what it returned, and the same calls made on a fresh follower of the code under test must
return exactly the same. A difference names the session, the call and both answers.

Run ``python -m tools.bench.corpus record OUT [--moves N] [--soak-games N]`` to write one
gzipped JSON-lines file per game (``OUT/GAME.jsonl.gz``), and ``python -m tools.bench.corpus
replay FILE...`` to replay them; replay prints one JSON object (the calls, the differences and
the CPU time per call, p50 and p99: the decision latency on today's code).

Format: one session (one follower, from its construction) is a header line ``{"session": {...}}``
(game, board, tag registry, the constructor's arguments) and then one line per call
``{"m": name, "a": [arguments], "r": result}``; a call on the tracker from outside is named
``tracker.feed`` or ``tracker.poll``. Game states are written with the engine's own
``state_to_json``; sensor events with the trace format's (:mod:`pi_app.board.trace`).
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import gzip
import inspect
import json
import logging
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pi_app.board.follower import Acceptance, Follower
from pi_app.board.geometry import load_geometry
from pi_app.board.registry import TagRegistry
from pi_app.board.trace import event_from_json, event_to_json
from pi_app.board.tracker import Tracker
from pi_app.games import GAME_NAMES, get_game
from pi_app.readings import (
    ButtonPressed,
    LinkStatus,
    PresenceChanged,
    ScanCycle,
    Snapshot,
    TagsSeen,
)

#: The follower's public calls that are recorded (the outermost only: one calling another
#: inside the follower is part of the first).
METHODS = (
    "feed",
    "tick",
    "prepare",
    "start",
    "handle",
    "press",
    "choose",
    "reset",
    "next_deadline",
    "expect_only",
    "resume_last_move",
    "resume_takeback",
    "follow_up_done",
    "sees_put_back",
    "decide",
)
#: The tracker's calls recorded when made from outside the follower (the station, the table).
TRACKER_METHODS = ("feed", "poll")
_EVENTS = (TagsSeen, PresenceChanged, Snapshot, ButtonPressed, ScanCycle, LinkStatus)


class CorpusError(ValueError):
    """A recording that cannot be written or read as it stands."""


class Session:
    """The calls into one follower, from its construction."""

    def __init__(self, header: dict[str, Any], game: Any) -> None:
        self.header = header
        self.game = game
        self.state_type = type(game.new_game(random.Random(0)))
        self.calls: list[dict[str, Any]] = []
        self.depth = 0
        self.registry: dict[str, str] = dict(header["registry"])

    def encode(self, value: Any) -> Any:
        """``value`` as JSON: states by the engine, events as in a trace, dataclasses field by
        field, enums by value."""
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, self.state_type):
            return {"$state": self.game.state_to_json(value)}
        if isinstance(value, _EVENTS):
            return {"$event": event_to_json(value)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {
                "$type": type(value).__name__,
                **{f.name: self.encode(getattr(value, f.name)) for f in dataclasses.fields(value)},
            }
        if isinstance(value, dict):
            return {"$dict": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        if isinstance(value, list | tuple):
            return [self.encode(v) for v in value]
        if isinstance(value, TagRegistry):
            return dict(value)
        raise CorpusError(f"cannot record a {type(value).__name__}")

    def decode(self, value: Any) -> Any:
        """The inverse of :meth:`encode` for arguments (states, events, lists as tuples)."""
        if isinstance(value, list):
            return tuple(self.decode(v) for v in value)
        if isinstance(value, dict):
            if "$state" in value:
                return self.game.state_from_json(value["$state"])
            if "$event" in value:
                return event_from_json(value["$event"])
            if "$dict" in value:
                return {self.decode(k): self.decode(v) for k, v in value["$dict"]}
            raise CorpusError(f"cannot replay an argument {value!r}")
        return value

    def log(self, name: str, args: list[Any], result: Any) -> None:
        self.calls.append({"m": name, "a": args, "r": self.encode(result)})

    def registry_changed(self, registry: TagRegistry) -> None:
        """A tag registered while the follower runs is recorded as a call of its own."""
        now = dict(registry)
        if now != self.registry:
            self.calls.append({"m": "registry", "a": [now], "r": None})
            self.registry = now


def _record(
    name: str, original: Callable[..., Any], *, tracker: bool = False
) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        session: Session | None = getattr(self, "_corpus", None)
        if session is None or session.depth:
            return original(self, *args, **kwargs)
        bound = inspect.signature(original).bind(self, *args, **kwargs)
        session.registry_changed(self.registry)
        encoded = [session.encode(v) for k, v in bound.arguments.items() if k != "self"]
        session.depth += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            session.depth -= 1
        session.log(f"tracker.{name}" if tracker else name, encoded, result)
        return result

    method.__name__ = name
    return method


@contextmanager
def recording(sessions: list[Session]) -> Iterator[list[Session]]:
    """Record every follower built while this is open into ``sessions``."""
    saved: dict[tuple[type, str], Any] = {}
    original_init = Follower.__init__

    def init(self: Follower[Any, Any], *args: Any, **kwargs: Any) -> None:
        bound = inspect.signature(original_init).bind(self, *args, **kwargs)
        original_init(self, *args, **kwargs)
        values = dict(bound.arguments)
        game, geometry, registry = (
            values.pop("game"),
            values.pop("geometry"),
            values.pop("registry"),
        )
        values.pop("self")
        if geometry != load_geometry(geometry.game):
            raise CorpusError("only the board files' own geometries are recorded")
        session = Session(
            {"game": game.name, "board": geometry.game, "registry": dict(registry)}, game
        )
        state = values.pop("state")
        history = values.pop("history", [])
        session.header.update(
            state=session.encode(state), history=session.encode(history), waits=values
        )
        sessions.append(session)
        self._corpus = session  # type: ignore[attr-defined]
        self.tracker._corpus = session  # type: ignore[attr-defined]

    classes: tuple[tuple[type, tuple[str, ...], bool], ...] = (
        (Follower, METHODS, False),
        (Tracker, TRACKER_METHODS, True),
    )
    try:
        for cls, names, is_tracker in classes:
            for name in names:
                saved[cls, name] = cls.__dict__[name]
                setattr(cls, name, _record(name, saved[cls, name], tracker=is_tracker))
        Follower.__init__ = init  # type: ignore[method-assign]
        yield sessions
    finally:
        Follower.__init__ = original_init  # type: ignore[method-assign]
        for (cls, name), value in saved.items():
            setattr(cls, name, value)


def write(sessions: Sequence[Session], path: Path) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for session in sessions:
            out.write(json.dumps({"session": session.header}, separators=(",", ":")) + "\n")
            for call in session.calls:
                out.write(json.dumps(call, separators=(",", ":")) + "\n")


def read(path: Path) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each session of a corpus file: its header and its calls."""
    header: dict[str, Any] | None = None
    calls: list[dict[str, Any]] = []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if "session" in item:
                if header is not None:
                    yield header, calls
                header, calls = item["session"], []
            elif header is None:
                raise CorpusError(f"{path}: a call before any session")
            else:
                calls.append(item)
    if header is not None:
        yield header, calls


@dataclasses.dataclass
class Replayed:
    """What a replay found: the calls made, the first differences, the time per call."""

    calls: int = 0
    sessions: int = 0
    differences: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    seconds: list[float] = dataclasses.field(default_factory=list)
    """CPU seconds per call (this thread's: on a shared machine wall-clock time measures the
    neighbours as much as the follower)."""
    methods: list[str] = dataclasses.field(default_factory=list)
    """The method of each call timed in :attr:`seconds`."""


def replay_session(
    header: dict[str, Any],
    calls: Sequence[dict[str, Any]],
    found: Replayed,
    *,
    factory: Callable[..., Any] = Follower,
    limit: int = 20,
) -> None:
    """Make ``calls`` on a fresh follower built by ``factory`` as the header says; every
    result that differs from the recorded one goes into ``found``, until ``limit`` of them
    (then the session stops: later answers follow from the first)."""
    game = get_game(header["game"])
    session = Session(header, game)
    registry = TagRegistry(header["registry"])
    history = [tuple(item) for item in session.decode(header["history"])]
    follower = factory(
        game,
        session.decode(header["state"]),
        load_geometry(header["board"]),
        registry,
        history=history,
        **header["waits"],
    )
    found.sessions += 1
    for index, call in enumerate(calls):
        name, args = call["m"], [session.decode(a) for a in call["a"]]
        if name == "registry":
            for uid, piece in call["a"][0].items():
                if registry.lookup(uid) != piece:
                    registry.register(uid, piece, replace=True)
            continue
        if name == "reset":
            args = [args[0], [tuple(item) for item in (args[1] if len(args) > 1 else ())]]
        elif name == "resume_last_move":
            args[0] = None if args[0] is None else Acceptance(args[0])
        elif name == "resume_takeback":
            args[0] = {cell: list(pieces) for cell, pieces in args[0].items()}
        target = follower.tracker if name.startswith("tracker.") else follower
        started = time.thread_time()
        result = getattr(target, name.removeprefix("tracker."))(*args)
        found.seconds.append(time.thread_time() - started)
        found.methods.append(name)
        found.calls += 1
        got = session.encode(result)
        if got != call["r"]:
            found.differences.append(
                {
                    "session": found.sessions,
                    "call": index,
                    "method": name,
                    "recorded": call["r"],
                    "replayed": got,
                }
            )
            if len(found.differences) >= limit:
                return


def replay(paths: Sequence[Path], *, factory: Callable[..., Any] = Follower) -> Replayed:
    found = Replayed()
    for path in paths:
        for header, calls in read(path):
            replay_session(header, calls, found, factory=factory)
    return found


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def record_game(name: str, out: Path, *, moves: int, soak_games: int, seed: int) -> int:
    """Record the accuracy bench's varied players (zero, low and default noise, about
    ``moves`` moves each) and ``soak_games`` games of the long soak, for game ``name``."""
    from tools.bench import accuracy, longsoak

    sessions: list[Session] = []
    with recording(sessions):
        for noisy, scale in ((False, 1.0), (True, accuracy.LOW), (True, 1.0)):
            made = 0
            table = seed * 1_000_003
            while made < moves:
                made += accuracy.play_table(
                    name, table, noisy=noisy, players="varied", scale=scale
                ).moves_made
                table += 1
        for number in range(soak_games):
            longsoak.play_one(name, seed * 1_000_003 + number, longsoak.Faults())
    write(sessions, out)
    return sum(len(s.calls) for s in sessions)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record the benches' follower calls")
    rec.add_argument("out", type=Path, help="folder for GAME.jsonl.gz")
    rec.add_argument("--game", choices=GAME_NAMES, action="append")
    rec.add_argument("--moves", type=int, default=150, help="moves per noise level")
    rec.add_argument("--soak-games", type=int, default=2)
    rec.add_argument("--seed", type=int, default=30)
    rep = sub.add_parser("replay", help="replay corpus files on today's follower")
    rep.add_argument("files", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "record":
        logging.disable(logging.WARNING)  # the soak's station logs every fault it survives
        args.out.mkdir(parents=True, exist_ok=True)
        for name in args.game or GAME_NAMES:
            calls = record_game(
                name,
                args.out / f"{name}.jsonl.gz",
                moves=args.moves,
                soak_games=args.soak_games,
                seed=args.seed,
            )
            print(json.dumps({"game": name, "calls": calls}), file=sys.stderr)
        return
    found = replay(args.files)

    def timing(names: Sequence[str]) -> dict[str, float]:
        ms = [t * 1000 for t, m in zip(found.seconds, found.methods, strict=True) if m in names]
        return {
            "calls": len(ms),
            "p50": round(_percentile(ms, 0.5), 4),
            "p99": round(_percentile(ms, 0.99), 4),
            "max": round(max(ms, default=0.0), 4),
        }

    print(
        json.dumps(
            {
                "benchmark": "corpus-replay",
                "files": [str(p) for p in args.files],
                "sessions": found.sessions,
                "calls": found.calls,
                "differences": len(found.differences),
                "first": found.differences[:3],
                # CPU ms per event the station feeds (the decision) and per prepare() (the position
                # built once per move, after the LEDs confirmed it, while the players reach).
                "decision_ms": timing(("feed", "tick", "handle", "tracker.feed", "tracker.poll")),
                "prepare_ms": timing(("prepare", "start")),
            },
            indent=2,
        )
    )
    if found.differences:
        sys.exit(1)


__all__ = [
    "CorpusError",
    "Replayed",
    "Session",
    "read",
    "recording",
    "replay",
    "replay_session",
    "write",
]


if __name__ == "__main__":
    main()
