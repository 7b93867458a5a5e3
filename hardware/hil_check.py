"""Hardware-in-the-loop check of a built sensor board: walks the maker through BRINGUP.md's
steps on the real Pi and Pico and prints PASS/FAIL for each, with what to look at.

Why a script and not only a checklist: the failures that matter on a new board (a reader that
also reads its neighbour's tag, a presence sensor that closes under a piece held over the
board, a stack that loses its top tag) only show while someone moves pieces, and are easy to
miss by eye in `tikiboard diag`'s live view. The script says what to do ("put one tagged piece
on b2"), waits until the board reports it (no keypresses: just do it), and judges the readings.

Run it on the Pi, from the checkout, with the board powered and the Pico plugged in::

    .venv/bin/python hardware/hil_check.py --game manami
    .venv/bin/python hardware/hil_check.py --game tactiki --cells a1,c3 --steps cells,height
    .venv/bin/python hardware/hil_check.py --game topple --json report.json

Steps: ``selftest`` (every reader answers, presence chain intact), ``cells`` (one tag per cell:
seen by its own reader only, presence closes and opens), ``height`` (a piece lying on 4 mm of
card leaves presence open), ``stacks`` (Manami 3 high, TacTiki 5: every tag listed and held),
``cycle`` (the scan cycle the Pico reports in SCAN_TIMES, with whatever lies on the board, against
the board file's ``scan_period_s``: the board files carry a modelled figure, issue 35, and a real
Pico is the authority; a cycle more than a quarter over the file's fails, with the figure to
write into the file).
Exit status 0 when every step passed, 1 when one failed, 2 for bad arguments or no board.
``tests/test_hil_check.py`` runs it against the simulated firmware with a robot "maker".
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the checkout's package first
    sys.path.insert(0, str(ROOT))

from pi_app.board.geometry import (  # noqa: E402
    Cell,
    Geometry,
    GeometryError,
    board_names,
    load_geometry,
)
from pi_app.hw.pinmap import PinMapError, load_pinmap  # noqa: E402
from pi_app.readings import ScanCycle, apply_reading  # noqa: E402

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
STEPS = ("selftest", "cells", "height", "stacks", "cycle")
#: How far the measured cycle may exceed the board file's before the step fails.
CYCLE_TOLERANCE = 1.25
#: The highest stack each game builds (README, "Layout and mechanics").
STACK_HEIGHT = {"manami": 3, "tactiki": 5}
CARD_MM = 4


@dataclass(frozen=True, slots=True)
class Instruction:
    """What the maker is asked to do; ``action`` is for a robot, ``text`` for a person."""

    action: str  # place, lift, hover, stack, unstack
    cell: str
    text: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class StepResult:
    step: str
    cell: str | None
    ok: bool
    detail: str


Operator = Callable[[Instruction], None]


class BoardWatch:
    """The latest tags per reader and presence per sensor, from the link's events.

    The link calls :meth:`sink` from its own thread; the checker drains the queue in its own,
    so the state is only ever touched by one thread."""

    def __init__(self) -> None:
        self.events: queue.Queue[object] = queue.Queue()
        self.tags: dict[int, frozenset[str]] = {}
        self.presence: dict[int, bool] = {}
        self.cycles: list[float] = []  # every SCAN_TIMES period, in seconds

    def sink(self, event: object) -> None:
        self.events.put(event)

    def pump(self, timeout: float) -> None:
        """Apply every queued event, waiting up to ``timeout`` for the first."""
        try:
            event = self.events.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return
        while True:
            if isinstance(event, ScanCycle):
                self.cycles.append(event.period)
            apply_reading(event, self.tags, self.presence)
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return

    def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not condition():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.pump(min(left, 0.05))
        return True

    def holds(self, condition: Callable[[], bool], seconds: float) -> bool:
        """``condition`` true at every reading for ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not condition():
                return False
            self.pump(min(deadline - time.monotonic(), 0.05))
        return condition()


class Checker:
    """Runs the steps against one board; ``operator`` tells the maker what to do."""

    def __init__(self, geo: Geometry, watch: BoardWatch, operator: Operator,
                 selftest: Callable[[], Any], timeout: float = 60.0,
                 hold: float = 2.0) -> None:
        self.geo = geo
        self.watch = watch
        self.operator = operator
        self.selftest_call = selftest
        self.timeout = timeout
        self.hold = hold

    def where(self, cell: Cell) -> str:
        return f"{cell.name} (R{cell.reader})" if cell.reader is not None else cell.name

    def tags_of(self, cell: Cell) -> frozenset[str]:
        return self.watch.tags.get(cell.reader, frozenset()) if cell.reader is not None \
            else frozenset()

    def present(self, cell: Cell) -> bool | None:
        return None if cell.presence is None else self.watch.presence.get(cell.presence, False)

    def others_reading(self, cell: Cell, uid: str) -> list[str]:
        return [f"R{r}" + (f" ({c.name})" if (c := self.geo.cell_of_reader(r)) else "")
                for r, tags in sorted(self.watch.tags.items())
                if r != cell.reader and uid in tags]

    # --- steps ----------------------------------------------------------------------------
    def selftest(self) -> StepResult:
        try:
            result = self.selftest_call()
        except Exception as exc:  # no board, a timeout: the report says so, the run goes on
            return StepResult("selftest", None, False, f"no answer ({exc})")
        bad = [f"R{i}: {s}" for i, s in enumerate(result.readers) if s]
        ok = not bad and bool(result.presence_ok)
        detail = (f"{len(result.readers) - len(bad)}/{len(result.readers)} readers answer"
                  + (f"; not answering: {'; '.join(bad)}" if bad else "")
                  + f"; presence chain {'ok' if result.presence_ok else 'BROKEN'}")
        return StepResult("selftest", None, ok, detail)

    def cell(self, cell: Cell) -> StepResult:
        """One tag on the cell: its own reader only, presence closes; then it leaves."""
        self.operator(Instruction("place", cell.name,
                                  f"put one tagged piece on {cell.name}, flat, centred"))
        if cell.reader is None:
            if not self.watch.wait_for(lambda: self.present(cell) is True, self.timeout):
                return StepResult("cells", cell.name, False, "presence never closed")
            self.operator(Instruction("lift", cell.name, f"take the piece off {cell.name}"))
            if not self.watch.wait_for(lambda: self.present(cell) is False, self.timeout):
                return StepResult("cells", cell.name, False, "presence stays closed")
            return StepResult("cells", cell.name, True, "presence closes and opens")
        seen = self.watch.wait_for(lambda: len(self.tags_of(cell)) == 1
                                   and self.present(cell) is not False, self.timeout)
        if not seen:
            tags, pres = self.tags_of(cell), self.present(cell)
            why = ("no tag read" if not tags else f"{len(tags)} tags read" if len(tags) > 1
                   else "presence did not close" if pres is False else "")
            return StepResult("cells", cell.name, False, f"{why} on {self.where(cell)}")
        (uid,) = self.tags_of(cell)
        neighbours: list[str] = []

        def alone() -> bool:
            neighbours[:] = self.others_reading(cell, uid)
            return not neighbours and uid in self.tags_of(cell)

        steady = self.watch.holds(alone, self.hold)
        self.operator(Instruction("lift", cell.name, f"take the piece off {cell.name}"))
        gone = self.watch.wait_for(lambda: not self.tags_of(cell) and
                                   self.present(cell) is not True, self.timeout)
        if neighbours:
            return StepResult("cells", cell.name, False,
                              f"tag {uid} also read by {', '.join(neighbours)}: fields overlap "
                              "(antenna position, README 'Layout and mechanics')")
        if not steady:
            return StepResult("cells", cell.name, False, f"tag {uid} dropped out while resting")
        if not gone:
            return StepResult("cells", cell.name, False, "the board still reports the piece")
        return StepResult("cells", cell.name, True, f"tag {uid} on {self.where(cell)} only")

    def height(self, cell: Cell) -> StepResult:
        """A piece lying on CARD_MM of card must leave presence open; set down, it closes."""
        self.operator(Instruction("hover", cell.name,
                                  f"lay a piece on {CARD_MM} mm of card on {cell.name}"))
        if cell.reader is not None and not self.watch.wait_for(
                lambda: bool(self.tags_of(cell)), self.timeout):
            return StepResult("height", cell.name, False, "the piece on the card is not read")
        stays_open = self.watch.holds(lambda: self.present(cell) is False, self.hold)
        self.operator(Instruction("place", cell.name,
                                  f"take the card away and set the piece down on {cell.name}"))
        closes = self.watch.wait_for(lambda: self.present(cell) is True, self.timeout)
        self.operator(Instruction("lift", cell.name, f"take the piece off {cell.name}"))
        self.watch.wait_for(lambda: not self.tags_of(cell) and self.present(cell) is False,
                            self.timeout)
        if not stays_open:
            return StepResult("height", cell.name, False,
                              f"closes {CARD_MM} mm above the surface: add 0.5 mm to the spacer")
        if not closes:
            return StepResult("height", cell.name, False,
                              "stays open at rest: remove 0.5 mm of spacer, or the switch sits "
                              "off centre")
        return StepResult("height", cell.name, True, f"open {CARD_MM} mm up, closed at rest")

    def stack(self, cell: Cell, count: int) -> StepResult:
        self.operator(Instruction("stack", cell.name,
                                  f"build a stack of {count} tagged pieces on {cell.name}",
                                  count))
        full = self.watch.wait_for(lambda: len(self.tags_of(cell)) == count, self.timeout)
        best = len(self.tags_of(cell))
        held = full and self.watch.holds(lambda: len(self.tags_of(cell)) == count, self.hold)
        self.operator(Instruction("unstack", cell.name, f"take the stack off {cell.name}",
                                  count))
        self.watch.wait_for(lambda: not self.tags_of(cell), self.timeout)
        if not full:
            return StepResult("stacks", cell.name, False,
                              f"{best} of {count} tags read: space the tags apart (>= 8 mm)")
        if not held:
            return StepResult("stacks", cell.name, False, "a tag drops in and out")
        return StepResult("stacks", cell.name, True, f"all {count} tags read and held")

    def cycle(self) -> StepResult:
        """The Pico's own scan cycle (SCAN_TIMES) against the board file's scan_period_s."""
        start = len(self.watch.cycles)
        self.watch.wait_for(lambda: len(self.watch.cycles) >= start + 3, self.timeout)
        seen = self.watch.cycles[start:]
        if not seen:
            return StepResult("cycle", None, False, "no SCAN_TIMES from the board")
        worst, configured = max(seen), self.geo.scan_period
        ok = worst <= CYCLE_TOLERANCE * configured
        detail = (f"reported cycle up to {worst:.3f} s over {len(seen)} reports; board file "
                  f"{configured:.3f} s")
        if not ok:
            detail += (f": set scan_period_s to {worst:.2f} in boards/{self.geo.game}.json "
                       "(with the board's fullest position on it)")
        return StepResult("cycle", None, ok, detail)

    def run(self, cells: Sequence[Cell], steps: Sequence[str]) -> list[StepResult]:
        results = []
        if "selftest" in steps:
            results.append(self.selftest())
        if "cells" in steps:
            results += [self.cell(c) for c in cells if c.reader is not None
                        or c.presence is not None]
        if "height" in steps:
            results += [self.height(c) for c in cells if c.presence is not None]
        count = STACK_HEIGHT.get(self.geo.game, 1)
        if "stacks" in steps and count > 1:
            results += [self.stack(c, count) for c in cells if c.reader is not None]
        if "cycle" in steps:
            results.append(self.cycle())
        return results


def report(geo: Geometry, results: Sequence[StepResult]) -> str:
    lines = [f"tikiboard hardware check: {geo.title}"]
    for r in results:
        lines.append(f"  {'PASS' if r.ok else 'FAIL'}  {r.step:8} {r.cell or '-':6} {r.detail}")
    failed = sum(not r.ok for r in results)
    lines.append(f"{len(results) - failed} passed, {failed} failed")
    return "\n".join(lines)


def say(instruction: Instruction) -> None:
    print(f"-> {instruction.text}", flush=True)


def main(argv: list[str] | None = None, operator: Operator = say) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=board_names(), required=True)
    parser.add_argument("--port", help="sensor board device (default: the pin map's)")
    parser.add_argument("--cells", help="comma-separated cell names (default: every cell)")
    parser.add_argument("--steps", default=",".join(STEPS),
                        help=f"comma-separated, from {', '.join(STEPS)}")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for each thing you are asked to do")
    parser.add_argument("--hold", type=float, default=2.0,
                        help="seconds a reading must stay right")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    try:
        geo = load_geometry(args.game)
        port = args.port or load_pinmap().serial.device
    except (GeometryError, PinMapError) as exc:
        print(f"hil_check: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    steps = [s for s in args.steps.split(",") if s]
    names = [n for n in (args.cells or "").split(",") if n]
    unknown = [s for s in steps if s not in STEPS] + [n for n in names if n not in
                                                      {c.name for c in geo.cells}]
    if unknown:
        print(f"hil_check: unknown step or cell: {', '.join(unknown)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    cells = [geo.cell(n) for n in names] if names else list(geo.cells)
    from pi_app.hw.link import SerialLink

    watch = BoardWatch()
    link = SerialLink(port, watch.sink).start()
    try:
        if not watch.wait_for(lambda: link.state == "up", min(args.timeout, 10.0)):
            print(f"hil_check: no sensor board on {port} ({link.detail})", file=sys.stderr)
            return EXIT_BAD_INPUT
        checker = Checker(geo, watch, operator, lambda: link.self_test(timeout=5.0),
                          timeout=args.timeout, hold=args.hold)
        results = checker.run(cells, steps)
    finally:
        link.stop()
    print(report(geo, results))
    if args.json is not None:
        args.json.write_text(json.dumps({"game": geo.game,
                                         "results": [asdict(r) for r in results]}, indent=1),
                             encoding="utf-8")
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
