"""``tikiboard diag``: is every part of the station alive? Readings, counters, LEDs, display,
buttons.

It opens the sensor link (or, with ``--sim``, the simulated firmware over a pty, with mock LEDs,
display and buttons), runs the firmware self-test, shows the LED test pattern and the display
test screen, checks the buttons, then prints every cell's readings and the link counters for
``--seconds``. It always ends on its own, so it works in scripts and tests; exit status 0 when
everything answered, 1 when a part did not (the output says which), 2 for a bad pin map or
board file.

The serial, LED and display modules are imported when diag runs, not when ``register`` adds the
subcommand: the ``tikiboard`` parser is built for every command, and ``tikiboard replay`` must
work where only the engines are installed (no pyserial, Pillow or LED libraries).
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_app.board.geometry import Geometry, GeometryError, board_names, load_geometry
from pi_app.hw import messages as m
from pi_app.hw.pinmap import PinMap, PinMapError, load_pinmap
from pi_app.readings import (
    ButtonPressed,
    HardwareFault,
    HwEvent,
    LinkStatus,
    PresenceChanged,
    ScanCycle,
    Snapshot,
    TagsSeen,
    apply_reading,
)

if TYPE_CHECKING:
    from pi_app.hw.link import SerialLink

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2

#: Demo pieces the simulated board gets while diag watches (UIDs as a tag would report them).
SIM_TAGS = ("04A1B2C3D4E5F6", "04B2C3D4E5F607", "E004010000001001", "E004010000001011")


def register(subparsers: Any) -> None:
    """Add the ``diag`` subcommand to the ``tikiboard`` parser."""
    games = board_names()
    p = subparsers.add_parser("diag", help="check the sensor board, LEDs, display and buttons",
                              description=__doc__)
    p.add_argument("--sim", action="store_true",
                   help="simulated sensor board over a pty, mock LEDs, display and buttons")
    p.add_argument("--game", choices=games, default="topple", help="board geometry to show")
    p.add_argument("--port", help="sensor board device (default: the pin map's)")
    p.add_argument("--pinmap", type=Path, help="pin map file (default: the shipped one)")
    p.add_argument("--seconds", type=float, default=5.0, help="how long to watch the board")
    p.add_argument("--leds", action=argparse.BooleanOptionalAction, default=True,
                   help="run the LED test pattern")
    p.add_argument("--display", action=argparse.BooleanOptionalAction, default=True,
                   help="show the display test screen")
    p.add_argument("--buttons", action=argparse.BooleanOptionalAction, default=True,
                   help="check the buttons")
    p.add_argument("--png", type=Path, help="save the display test screen as this PNG")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.set_defaults(func=run)


class BoardView:
    """The latest reading of every cell, from the link's events, and per cell how often its
    reader newly read a tag that cannot be its own, by the tracker's rule, from the raw
    readings (no debounce: diag shows what the readers do): on a cell whose presence is open
    (a neighbour's), or one another occupied cell reads too ("seen twice"). A few now and then
    are normal at a short pitch; many on one cell mean its reader's power or gain is too high
    (hardware/README.md, "Neighbour reads")."""

    def __init__(self, geo: Geometry) -> None:
        self.geo = geo
        self.tags: dict[int, frozenset[str]] = {}
        self.presence: dict[int, bool] = {}
        self.faults: dict[tuple[str, int | None], str] = {}
        self.neighbour_reads: Counter[str] = Counter()
        self.seen_twice: Counter[str] = Counter()

    def _count_foreign(self, reader: int, tags: frozenset[str]) -> None:
        cell = self.geo.cell_of_reader(reader)
        if cell is None or cell.presence is None:
            return
        for uid in tags - self.tags.get(reader, frozenset()):
            if not self.presence.get(cell.presence, False):
                self.neighbour_reads[cell.name] += 1
            elif any(uid in seen and r != reader and self._occupied(r)
                     for r, seen in self.tags.items()):
                self.seen_twice[cell.name] += 1

    def _occupied(self, reader: int) -> bool:
        cell = self.geo.cell_of_reader(reader)
        return cell is not None and cell.presence is not None and \
            self.presence.get(cell.presence, False)

    def apply(self, event: HwEvent) -> None:
        if isinstance(event, TagsSeen):
            self._count_foreign(event.reader, event.tags)
        apply_reading(event, self.tags, self.presence)
        if isinstance(event, HardwareFault):
            if event.ok:
                self.faults.pop((event.source, event.index), None)
            else:
                self.faults[(event.source, event.index)] = event.detail

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for cell in self.geo.cells:
            fault = self.faults.get(("reader", cell.reader)) if cell.reader is not None else None
            out.append({
                "cell": cell.name, "kind": cell.kind, "reader": cell.reader,
                "tags": sorted(self.tags.get(cell.reader, ())) if cell.reader is not None
                else None,
                "presence": self.presence.get(cell.presence) if cell.presence is not None
                else None,
                "fault": fault,
                "neighbour_reads": self.neighbour_reads[cell.name],
                "seen_twice": self.seen_twice[cell.name],
            })
        return out

    def table(self) -> str:
        lines = [f"  {'cell':6} {'kind':5} {'reader':6} {'presence':9} tags"]
        for r in self.rows():
            reader = "-" if r["reader"] is None else f"R{r['reader']}"
            pres = {None: "-", True: "present", False: "empty"}[r["presence"]]
            tags = "-" if r["tags"] is None else (" ".join(r["tags"]) or "(none)")
            if r["fault"]:
                tags += f"  [FAULT: {r['fault']}]"
            if r["neighbour_reads"] or r["seen_twice"]:
                tags += (f"  [not its own: {r['neighbour_reads']} neighbour reads, "
                         f"{r['seen_twice']} seen twice]")
            lines.append(f"  {r['cell']:6} {r['kind']:5} {reader:6} {pres:9} {tags}")
        return "\n".join(lines)


def _describe(event: HwEvent, geo: Geometry) -> str:
    if isinstance(event, TagsSeen):
        cell = geo.cell_of_reader(event.reader)
        where = f"R{event.reader} ({cell.name})" if cell else f"R{event.reader}"
        return f"tags {where}: {' '.join(sorted(event.tags)) or '(none)'}"
    if isinstance(event, PresenceChanged):
        cell = geo.cell_of_presence(event.sensor)
        where = f"P{event.sensor} ({cell.name})" if cell else f"P{event.sensor}"
        return f"presence {where}: {'present' if event.present else 'empty'}"
    if isinstance(event, Snapshot):
        return (f"snapshot: {sum(len(t) for t in event.tags)} tags, "
                f"{sum(event.presence)} of {len(event.presence)} sensors present")
    if isinstance(event, LinkStatus):
        return f"link {'up' if event.up else 'DOWN'}: {event.detail}"
    if isinstance(event, ButtonPressed):
        return f"button {event.button}"
    if isinstance(event, ScanCycle):
        slowest = "" if event.reader is None else f", slowest reader {event.reader * 1000:.0f} ms"
        return f"scan cycle {event.period * 1000:.0f} ms{slowest}"
    return f"{event.source} {'' if event.index is None else event.index} " \
           f"{'recovered' if event.ok else 'FAULT'}: {event.detail}"


def run(args: argparse.Namespace) -> int:
    try:
        pm = load_pinmap(args.pinmap)
        geo = load_geometry(args.game)
    except (PinMapError, GeometryError) as exc:
        print(f"tikiboard diag: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from pi_app.hw.link import SerialLink

    quiet = args.json
    say = (lambda *_: None) if quiet else print
    report: dict[str, Any] = {"game": geo.game, "sim": args.sim}
    ok = True
    with ExitStack() as stack:
        events: queue.Queue[HwEvent] = queue.Queue()
        sim = None
        port = args.port or pm.serial.device
        if args.sim:
            from pi_app.hw.simfirmware import SimFirmware

            pairs = {c.presence: c.reader for c in geo.cells
                     if c.presence is not None and c.reader is not None}
            sim = stack.enter_context(SimFirmware(geo.reader_count, geo.presence_count,
                                                  board=geo.game, heartbeat_ms=200,
                                                  presence_readers=pairs))
            port = sim.path
        say(f"tikiboard diag: {geo.title}")
        say(f"sensor board: {port}{' (simulated)' if sim else ''}")
        link = SerialLink(port, events.put, heartbeat_timeout=1.0)
        stack.callback(link.stop)
        link.start()
        start = time.monotonic()
        view = BoardView(geo)
        log: list[str] = []

        def drain(wait: float) -> None:
            deadline = time.monotonic() + wait
            while True:
                timeout = deadline - time.monotonic()
                try:
                    event = events.get(timeout=max(0.0, timeout)) if timeout > 0 \
                        else events.get_nowait()
                except queue.Empty:
                    return
                view.apply(event)
                line = f"  +{time.monotonic() - start:5.2f} s  {_describe(event, geo)}"
                log.append(line)
                say(line)

        _wait_up(link, drain, min(3.0, max(1.0, args.seconds)))
        report["link_up"] = link.up
        if link.up:
            report["selftest"] = _selftest(link, say)
            ok &= report["selftest"]["ok"]
        else:
            say(f"sensor board: not answering ({link.detail})")
            ok = False
        if args.leds:
            report["leds"] = _led_test(pm, geo, sim is not None, say)
            ok &= report["leds"]["ok"]
        if args.display:
            report["display"] = _display_test(pm, sim is not None, args.png, say)
            ok &= report["display"]["ok"]
        if args.buttons:
            report["buttons"] = _button_test(pm, sim is not None, args.seconds, events, say)
            ok &= report["buttons"]["ok"]
        script = _sim_script(geo) if sim is not None else []
        say("watching the board (cells, then link counters):")
        while (elapsed := time.monotonic() - start) < args.seconds or script:
            while sim is not None and script and script[0][0] <= elapsed:
                script.pop(0)[1](sim)
            if elapsed > args.seconds + 1.0:
                break
            drain(0.05)
        drain(0.2)
        say(view.table())
        counters = link.counters.as_dict()
        say("link: " + ", ".join(f"{k} {counters[k]}" for k in (
            "frames_good", "frames_bad", "missing", "duplicates", "reordered", "ignored",
            "heartbeats", "connects", "disconnects", "snapshots_requested")))
        if counters["device"]:
            say("sensor board: " + ", ".join(f"{k} {v}" for k, v in counters["device"].items()))
        steps = checklist(report, view)
        say("steps:")
        for step in steps:
            say(f"  {step['result']:4}  {step['step']}" + (f": {step['detail']}"
                                                        if step["detail"] else ""))
        ok &= all(step["result"] != FAIL for step in steps)
        report.update(link_up=link.up, cells=view.rows(), counters=counters, events=len(log),
                      steps=steps, ok=ok)
    if quiet:
        print(json.dumps(report))
    return EXIT_OK if ok else EXIT_FAILED


PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
#: More reads of a tag that is not the cell's own than this, on one cell while diag watches,
#: fail the neighbour step: one now and then is normal at a short pitch; more mean the reader's
#: power or gain is too high (hardware/README.md, "Neighbour reads").
FOREIGN_READS_ALLOWED = 2


def checklist(report: dict[str, Any], view: BoardView) -> list[dict[str, str]]:
    """The bring-up steps diag can judge on its own (hardware/BRINGUP.md), each PASS, FAIL or
    SKIP (not run), so a builder sees at a glance what to fix first. Stacks of five and the
    presence height need a person with pieces: the guide walks them with ``--seconds``."""
    def step(name: str, result: str, detail: str = "") -> dict[str, str]:
        return {"step": name, "result": result, "detail": detail}

    selftest = report.get("selftest")
    steps = [step("sensor board answers", PASS if report.get("link_up") else FAIL)]
    if selftest is None:
        steps += [step("every reader answers", SKIP, "no sensor board"),
                  step("presence chain", SKIP, "no sensor board")]
    else:
        bad = [f"R{i}" for i, status in enumerate(selftest.get("readers", [])) if status]
        steps += [step("every reader answers",
                       FAIL if bad or "error" in selftest else PASS,
                       ", ".join(bad) or selftest.get("error", "")),
                  step("presence chain", PASS if selftest.get("presence_ok") else FAIL)]
    faults = [f"{source} {'' if index is None else index}: {why}".replace(" :", ":")
              for (source, index), why in sorted(view.faults.items(), key=str)]
    steps.append(step("no reader faults while watching", FAIL if faults else PASS,
                      "; ".join(faults)))
    foreign = {row["cell"]: row["neighbour_reads"] + row["seen_twice"] for row in view.rows()}
    loud = [f"{cell} ({n})" for cell, n in foreign.items() if n > FOREIGN_READS_ALLOWED]
    steps.append(step("each cell reads only its own tags", FAIL if loud else PASS,
                      ", ".join(loud)))
    for key, name in (("leds", "LED test"), ("display", "display test"),
                      ("buttons", "button test")):
        part = report.get(key)
        steps.append(step(name, SKIP if part is None else PASS if part["ok"] else FAIL,
                          "" if part is None or part["ok"] else str(part.get("error")
                                                                     or part.get("missing"))))
    return steps


def _wait_up(link: SerialLink, drain: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not link.up and time.monotonic() < deadline:
        drain(0.05)


def _selftest(link: SerialLink, say: Any) -> dict[str, Any]:
    from pi_app.hw.link import LinkDown

    try:
        result = link.self_test(timeout=5.0)
    except (TimeoutError, LinkDown, m.MessageError) as exc:
        say(f"self-test: no answer ({exc})")
        return {"ok": False, "error": str(exc)}
    bad = [i for i, s in enumerate(result.readers) if s]
    say(f"self-test: {len(result.readers) - len(bad)}/{len(result.readers)} readers answer"
        + (f" (not answering: {', '.join(f'R{i}' for i in bad)})" if bad else "")
        + f"; presence chain {'ok' if result.presence_ok else 'BROKEN'}")
    return {"ok": not bad and result.presence_ok, "readers": list(result.readers),
            "presence_ok": result.presence_ok}


def _led_test(pm: PinMap, geo: Geometry, sim: bool, say: Any) -> dict[str, Any]:
    try:
        from pi_app.hw.leds import led_test_pattern, open_strip

        strip = open_strip(geo.led_count, pm.neopixel, "mock" if sim else None)
    except Exception as exc:  # a missing driver or no permission: report it, go on
        say(f"LED test: cannot open the strip ({type(exc).__name__}: {exc})")
        return {"ok": False, "error": str(exc)}
    worst = 0.0
    scale = 1.0
    frames = 0
    try:
        for frame in led_test_pattern(geo.led_count):
            strip.show(frame)
            frames += 1
            worst = max(worst, strip.last_current_ma)
            scale = min(scale, strip.last_scale)
            if not sim:
                time.sleep(0.15)
    finally:
        strip.close()
    say(f"LED test: {frames} frames on {geo.led_count} LEDs; highest current "
        f"{worst:.0f} mA of {pm.neopixel.supply_ma:.0f} mA (lowest scale {scale:.2f})")
    return {"ok": True, "frames": frames, "leds": geo.led_count, "max_ma": round(worst, 1),
            "min_scale": round(scale, 3)}


def _display_test(pm: PinMap, sim: bool, png: Path | None, say: Any) -> dict[str, Any]:
    try:
        from pi_app.hw.display import display_test_screen, open_display

        display = open_display(pm.oled, "mock" if sim else None)
    except Exception as exc:
        say(f"display test: cannot open the display ({type(exc).__name__}: {exc})")
        return {"ok": False, "error": str(exc)}
    try:
        t0 = time.perf_counter()
        display.show(display_test_screen(display.size))
        ms = (time.perf_counter() - t0) * 1000
        if png is not None and display.last_image is not None:
            png.parent.mkdir(parents=True, exist_ok=True)
            display.last_image.save(png)
    finally:
        display.close()
    say(f"display test: {display.size[0]}x{display.size[1]} test screen shown in {ms:.1f} ms"
        + (f", saved {png}" if png else ""))
    return {"ok": True, "ms": round(ms, 2), "png": str(png) if png else None}


def _button_test(pm: PinMap, sim: bool, seconds: float, events: queue.Queue[HwEvent],
                 say: Any) -> dict[str, Any]:
    from pi_app.hw.buttons import Buttons

    factory = None
    if sim:
        from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped]

        factory = MockFactory()
    pressed: list[str] = []
    try:
        buttons = Buttons(pm.buttons, lambda e: pressed.append(e.button), pin_factory=factory)
    except Exception as exc:
        say(f"button test: cannot open the buttons ({type(exc).__name__}: {exc})")
        return {"ok": False, "error": str(exc)}
    try:
        if sim:
            for button in buttons.buttons.values():
                button.pin.drive_low()
                button.pin.drive_high()
        else:
            say(f"button test: press each button ({', '.join(pm.buttons)}) "
                f"within {seconds:g} s")
            deadline = time.monotonic() + seconds
            while set(pm.buttons) - set(pressed) and time.monotonic() < deadline:
                time.sleep(0.02)
    finally:
        buttons.close()
        if factory is not None:
            factory.reset()
            factory.close()
    missing = [b for b in pm.buttons if b not in pressed]
    say(f"button test: pressed {', '.join(dict.fromkeys(pressed)) or 'none'}"
        + (f"; not pressed: {', '.join(missing)}" if missing else ""))
    return {"ok": not missing, "pressed": list(dict.fromkeys(pressed)), "missing": missing}


def _sim_script(geo: Geometry) -> list[tuple[float, Any]]:
    """Pieces the simulated board gets while diag watches, so the view has something to show."""
    readers = [c.reader for c in geo.cells if c.reader is not None]
    sensors = [c.presence for c in geo.cells if c.presence is not None]
    script: list[tuple[float, Any]] = []
    if readers:
        script.append((0.0, lambda s: s.set_tags(readers[0], [SIM_TAGS[0]])))
    if sensors:
        script.append((0.0, lambda s: s.set_presence(sensors[0], True)))
    if len(readers) > 1:  # a stack where the reader can read one (ISO 15693), else one tag
        second = SIM_TAGS[2:4] if geo.reader_chip == "PN5180" else SIM_TAGS[1:2]
        script.append((0.1, lambda s: s.set_tags(readers[1], second)))
    return script


def main(argv: list[str] | None = None) -> None:
    """Run ``diag`` on its own (``python -m pi_app.commands.diag --sim``)."""
    parser = argparse.ArgumentParser(prog="tikiboard")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["diag", *(sys.argv[1:] if argv is None else argv)])
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
