"""Traces: timestamped sensor readings as JSON lines, and running them through the pipeline.

A trace is what a board said, in order, so a session can be replayed exactly: for a bug report,
a regression test, or to show the tracker at work. Format (one JSON object per line)::

    {"trace": 1, "game": "topple", "record": {...}, "registry": {"04A1...": "Nani", ...},
     "geometry": "topple"}                               # header: first line
    {"t": 0.00, "type": "tags", "reader": 3, "tags": ["04A1..."]}
    {"t": 0.02, "type": "presence", "sensor": 3, "present": true}
    {"t": 0.50, "type": "snapshot", "tags": [["04A1..."], []], "presence": [true, false]}
    {"t": 1.20, "type": "button", "button": "ok"}
    {"t": 1.30, "type": "link", "up": false, "detail": "unplugged"}
    {"t": 1.50, "type": "scan", "period": 0.384, "reader": 0.059}  # the board's measured cycle

``record`` is a game record (``docs/records.md``) whose set-up the board starts from; its moves, if
any, are played first (the trace then starts from that position). ``geometry`` is a game name
(``hardware/boards/GAME.json``) or a path; it defaults to the game's board. ``t`` is seconds,
non-decreasing. Lines starting with ``#`` and blank lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_app.board.follower import (
    Follower,
    Guidance,
    MoveAccepted,
    MoveRevised,
    Outcome,
    Prompt,
    TakenBack,
)
from pi_app.board.geometry import GeometryError, load_geometry
from pi_app.board.registry import RegistryError, TagRegistry
from pi_app.errors import UnreadableInput
from pi_app.games import GameError, get_game
from pi_app.json_types import JSON
from pi_app.readings import (
    ButtonPressed,
    LinkState,
    LinkStatus,
    PresenceChanged,
    ScanCycle,
    SensorEvent,
    Snapshot,
    TagsSeen,
)
from pi_app.records import replay

TRACE_VERSION = 1


class TraceError(UnreadableInput, ValueError):
    """A trace that cannot be used; the message names the line."""


def event_to_json(event: SensorEvent) -> JSON:
    """One event as a trace line's object."""
    if isinstance(event, TagsSeen):
        return {"t": event.t, "type": "tags", "reader": event.reader,
                "tags": sorted(event.tags)}
    if isinstance(event, PresenceChanged):
        return {"t": event.t, "type": "presence", "sensor": event.sensor,
                "present": event.present}
    if isinstance(event, Snapshot):
        return {"t": event.t, "type": "snapshot", "tags": [sorted(t) for t in event.tags],
                "presence": list(event.presence)}
    if isinstance(event, ButtonPressed):
        return {"t": event.t, "type": "button", "button": event.button}
    if isinstance(event, ScanCycle):
        return {"t": event.t, "type": "scan", "period": event.period, "reader": event.reader}
    return {"t": event.t, "type": "link", "up": event.up, "detail": event.detail}


def event_from_json(data: Any, where: str = "event") -> SensorEvent:
    """Read one trace line's object; :class:`TraceError` naming ``where`` when it is wrong."""
    try:
        if not isinstance(data, dict):
            raise TypeError("not an object")
        t = data["t"]
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t < 1e9:
            raise ValueError(f"time {t!r} is not a number of seconds")
        kind = data["type"]
        if kind == "tags":
            return TagsSeen(float(t), _index(data["reader"]), _tags(data["tags"]))
        if kind == "presence":
            return PresenceChanged(float(t), _index(data["sensor"]), _flag(data["present"]))
        if kind == "snapshot":
            return Snapshot(float(t), tuple(_tags(x) for x in _list(data["tags"])),
                            tuple(_flag(x) for x in _list(data["presence"])))
        if kind == "button":
            if not isinstance(data["button"], str):
                raise TypeError("button must be a name")
            return ButtonPressed(float(t), data["button"])
        if kind == "scan":
            reader = data.get("reader")
            return ScanCycle(float(t), _seconds(data["period"]),
                             None if reader is None else _seconds(reader))
        if kind == "link":
            return LinkStatus(float(t), LinkState.UP if _flag(data["up"]) else LinkState.DOWN,
                              str(data.get("detail", "")))
        raise ValueError(f"unknown type {kind!r}")
    except KeyError as exc:
        raise TraceError(f"{where}: missing field {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise TraceError(f"{where}: {exc}") from exc


def _index(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 4096:
        raise ValueError(f"{value!r} is not a channel number")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e4:
        raise ValueError(f"{value!r} is not a number of seconds")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{value!r} is not true or false")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{value!r} is not a list")
    return value


def _tags(value: Any) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(u, str) for u in value):
        raise TypeError("tags must be a list of UIDs")
    return frozenset(u.upper() for u in value)


@dataclass
class Trace:
    """A parsed trace: its header and its events."""

    header: JSON
    events: list[SensorEvent] = field(default_factory=list)

    def lines(self) -> Iterator[str]:
        yield json.dumps(self.header)
        for event in self.events:
            yield json.dumps(event_to_json(event))

    def save(self, path: Path) -> None:
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")


def parse_trace(lines: Iterable[str]) -> Trace:
    """Parse trace lines; :class:`TraceError` with the line number for the first problem."""
    header: JSON | None = None
    events: list[SensorEvent] = []
    last = 0.0
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise TraceError(f"line {number}: not JSON ({exc})") from exc
        if header is None:
            if not isinstance(data, dict) or data.get("trace") != TRACE_VERSION:
                raise TraceError(f"line {number}: the first line must be a header "
                                 f'{{"trace": {TRACE_VERSION}, "game": ..., ...}}')
            header = data
            continue
        event = event_from_json(data, f"line {number}")
        if event.t < last:
            raise TraceError(f"line {number}: time goes backwards ({event.t} < {last})")
        last = event.t
        events.append(event)
    if header is None:
        raise TraceError("empty trace: no header line")
    return Trace(header, events)


def load_trace(path: str | Path) -> Trace:
    try:
        with Path(path).open(encoding="utf-8") as handle:
            return parse_trace(handle)
    except OSError as exc:
        raise TraceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not text: {exc}") from exc


@dataclass
class TraceResult:
    """What running a trace produced."""

    game: str
    moves: list[str]
    outcomes: list[Outcome]
    state: Any

    def to_json(self) -> JSON:
        game = get_game(self.game)
        return {
            "moves": self.moves,
            "accepted": self.accepted(),
            "prompts": [_prompt(o) for o in self.outcomes if isinstance(o, Prompt)],
            "guidance": [_guidance(o) for o in self.outcomes if isinstance(o, Guidance)],
            "revisions": [{"t": o.t, "replaced": o.replaced, "by": o.text}
                          for o in self.outcomes if isinstance(o, MoveRevised)],
            "takebacks": [{"t": o.t, "plies": o.plies}
                          for o in self.outcomes if isinstance(o, TakenBack)],
            "finished": game.is_over(self.state),
            "scores": list(game.scores(self.state)),
            "state": game.state_to_json(self.state),
        }


    def accepted(self) -> list[JSON]:
        """Every move as the station accepted it, in order (a move later revised or taken back
        too: ``revisions`` and ``takebacks`` say which): ``t`` when it was accepted, in trace
        seconds, so that whoever knows when the piece came to rest can measure the latency;
        ``rested`` when the board last changed before it (``t`` minus the settle the station
        waited); how it was taken; and the prompts shown and guidance given on the way to it
        (since the move before)."""
        out: list[JSON] = []
        prompts: list[JSON] = []
        guides: list[JSON] = []
        for o in self.outcomes:
            if isinstance(o, Prompt):
                prompts.append(_prompt(o))
            elif isinstance(o, Guidance):
                guides.append(_guidance(o))
            elif isinstance(o, MoveAccepted):
                out.append({"t": o.t, "move": o.text, "player": o.player, "how": str(o.how),
                            "rested": o.t - o.since_rest, "prompts": prompts,
                            "guidance": guides})
                prompts, guides = [], []
        return out


def _prompt(o: Prompt) -> JSON:
    return {"t": o.t, "kind": o.kind, "options": list(o.options)}


def _guidance(o: Guidance) -> JSON:
    return {"t": o.t, "kind": o.kind, "fixes": [str(f) for f in o.fixes]}


def run_trace(trace: Trace, *, linger: float = 5.0) -> TraceResult:
    """Feed every event to a fresh follower, ticking its timers, and collect what it said."""
    header = trace.header
    try:
        name = header["game"]
        game = get_game(name)
        record = header.get("record") or {"game": name}
        start = replay({**record, "game": name})
        if not start.ok:
            raise TraceError(f"header: the record's moves are not legal: {start.error}")
        geometry = load_geometry(header.get("geometry") or name)
        registry = TagRegistry(header.get("registry") or {})
    except KeyError as exc:
        raise TraceError(f"header: missing field {exc}") from exc
    except (GameError, GeometryError, RegistryError, TypeError, AttributeError) as exc:
        raise TraceError(f"header: {exc}") from exc
    follower = Follower(game, start.state, geometry, registry)
    outcomes: list[Outcome] = []
    now = 0.0

    def run_timers(until: float) -> None:
        nonlocal now
        while (deadline := follower.next_deadline(now)) is not None and deadline <= until:
            now = deadline
            outcomes.extend(follower.handle(None, now))

    outcomes += follower.start(now)
    for event in trace.events:
        run_timers(event.t)
        now = max(now, event.t)
        outcomes.extend(follower.handle(event, now))
    run_timers(now + linger)
    moves = [text for _, text in follower.history]
    return TraceResult(name, moves, outcomes, follower.state)


__all__ = ["Trace", "TraceError", "TraceResult", "event_from_json", "event_to_json",
           "load_trace", "parse_trace", "run_trace"]
