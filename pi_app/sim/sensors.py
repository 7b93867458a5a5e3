"""A sensor model: what the firmware reports while simulated hands move pieces.

It follows the firmware's documented behaviour (``firmware/PROTOCOL.md``): readers are scanned
round-robin, each scan taking what the firmware measures on the emulated chips for that many
tags in the field (:data:`SCAN_MS`, ``firmware/host_selftest.py costs``; scaled by
``scan_period`` over the board file's figure); a reader whose cell's contact reads open and
which reports no tag is left out of the cycle except on its re-read cycle (every
:data:`REREAD_CYCLES`-th, staggered by reader), so the cycle is as long as the occupied cells
make it; a cycle starts no sooner than :data:`MIN_CYCLE` after the last one; a new tag is
reported at the first scan that reads it; a tag is reported gone only after ``absent_after``
scans in a row miss it; presence sensors are debounced for ``presence_debounce`` seconds, and a
cell whose contact changes has its reader scanned next, ahead of the round-robin (the
firmware's ``presence_readers``: a piece set down on a 25-reader board is read within one
reader's scan, not a whole cycle). Noise on top: each tag of a stack may be missed by a scan
(``miss``, more likely the higher the stack), and a presence contact may chatter (``flicker``)
when a piece lands or leaves. A piece carried above a cell (``Action.hover``) is read there but
leaves its presence sensor open. Rougher sensors: an empty cell's contact may close on its own
for 10-40 ms, past the firmware's debounce (``chatter``, per scan of a reader), and a contact
may close a few millimetres early, 20-60 ms before a piece set down slowly lands or while one
is carried just above it (``early``, per piece landing or carried over). At a short pitch a
reader also reads a tag lying on an adjacent cell now and then (``neighbour``, per scan of a
reader: one tag of a neighbouring cell's stack joins what it read; the firmware then reports it
until ``absent_after`` scans miss it, as for any tag).

A contact is one switch: a piece landing on its cell or leaving it decides what it does from
then on. So what the model had planned to report for it later (the end of a blip, the opening
of a piece lifted just before, not reported yet) gives way to the landing or the lift, and the
firmware reports changes only: a contact closed early by a carried piece that another piece
lands on stays closed, and one that a hand re-covers before its opening was reported never
reports the opening.

Scanning only happens while something is going on (from an action until ``quiet_after`` seconds
after it, and on until every reader reports what lies on its cell): the model skips idle
stretches, which keeps long soak runs fast. Misses during idle stretches would be of the same
kind as those simulated while hands move.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from pi_app.board.geometry import Cell, Geometry
from pi_app.readings import PresenceChanged, ScanCycle, SensorEvent, TagsSeen
from pi_app.sim.hands import Action, apply_action, resting

#: Milliseconds one reader scan takes with 0, 1, 2, ... tags in its field: the firmware's own
#: drivers on the emulated chips in air time with the Pico's interpreter time modelled
#: (``chipsim_air.HOST_PICO``: issue 35), the mean over 400 random UID sets for the PN5180
#: (a stack's UIDs decide whether two tags share a slot and a masked round follows), from
#: ``firmware/host_selftest.py costs hardware/boards/GAME.json hardware/pinmap.json``
#: (tests/test_scan_cost.py checks them against a fresh measurement). An MFRC522 reads one tag.
#: Empty and one-tag PN5180 cells cost one 1-slot round (was a 16-slot round: 23.0 / 26.3).
SCAN_MS: dict[str, tuple[float, ...]] = {
    "PN5180": (5.4, 9.2, 40.3, 47.4, 59.4, 66.7),
    "MFRC522": (8.1, 13.4),
}
#: The firmware's ``Config.reread_cycles``: an idle reader is still read every this many cycles.
REREAD_CYCLES = 8
#: The firmware's default ``scan_period_ms``: a board cycle starts no sooner after the last one.
MIN_CYCLE = 0.1
#: The firmware sends SCAN_TIMES after every heartbeat (``heartbeat_ms``, 500 ms).
REPORT_EVERY = 0.5


@dataclass
class SensorModel:
    geometry: Geometry
    rng: random.Random
    scan_period: float = 0.0
    """The board's full scan cycle, every reader read (the board file's ``scan_period_s``,
    which 0 stands for): the measured scan times (:data:`SCAN_MS`) are scaled by this over the
    board file's figure, so a caller can ask for a faster or slower board."""
    miss: float = 0.0
    flicker: float = 0.0
    absent_after: int = 3
    presence_debounce: float = 0.02
    chatter: float = 0.0
    early: float = 0.0
    neighbour: float = 0.0
    quiet_after: float = 0.6
    report_cycle: bool = True
    """Send the firmware's SCAN_TIMES figure as :class:`ScanCycle` every :data:`REPORT_EVERY`
    seconds, as the link hands it on: the longest of the last :data:`REREAD_CYCLES` cycles, or
    the next one projected from what lies on the board if that is longer. On by default, as a
    real board sends them; off, the station times its waits on the board file's slowest cycle
    in play. Runs used to end with the reports sent while the model scanned on, which moved
    the simulated players' clock (:meth:`_trimmed`); without them the accuracy bench (varied
    players) gives the same figures on and off (TacTiki 1,178 moves 1 phantom / 3 missed,
    Topple 344 and Manami 361 moves 0 / 0), and so does the TacTiki neighbour-read game at
    seed 5."""
    cells: dict[str, list[str]] = field(default_factory=dict)
    _reported: dict[int, frozenset[str]] = field(default_factory=dict)
    _misses: dict[tuple[int, str], int] = field(default_factory=dict)
    _present: dict[int, bool] = field(default_factory=dict)
    """Per presence sensor, what the firmware reported last (changes only are reported)."""
    _hovering: set[str] = field(default_factory=set)
    _urgent: list[tuple[float, Cell]] = field(default_factory=list)
    _from_neighbour: set[tuple[int, str]] = field(default_factory=set)
    """(reader, UID) reported because the reader read it on the next cell, not its own."""

    def __post_init__(self) -> None:
        for cell in self.geometry.cells:
            self.cells.setdefault(cell.name, [])
        self._readers = [c for c in self.geometry.cells if c.reader is not None]
        self._readers.sort(key=lambda c: c.reader or 0)  # the firmware's round-robin order
        if self.scan_period <= 0:
            self.scan_period = self.geometry.scan_period
        costs = SCAN_MS.get(self.geometry.reader_chip)
        if costs is None:  # a chip not measured: every scan its share of the period
            share = self.scan_period / max(len(self._readers), 1)
            self._costs: tuple[float, ...] = (share,)
        else:
            scale = self.scan_period / self.geometry.scan_period \
                if self.geometry.scan_period > 0 else 1.0
            self._costs = tuple(ms / 1000 * scale for ms in costs)
        self._cycle = 0
        self._slot = 0
        self._cycle_start = -1.0
        self._whole = False  # the current cycle started inside this run: its length counts
        self._scan_end = 0.0
        self._lengths: list[float] = []
        self._next_report = 0.0
        self._contacts: dict[int, tuple[list[float], list[bool]]] = {}
        self._contacts_of: int = -1
        self._dirty = True  # a presence event was added or dropped since _contacts was built
        self._sensors = [c for c in self.geometry.cells if c.presence is not None]
        self._adjacent = {c.name: _adjacent(self.geometry, c) for c in self._readers}

    def lay_out(self, cells: dict[str, list[str]], t: float) -> list[SensorEvent]:
        """Start from this board (as a snapshot would report it); events for the host."""
        self.cells = {name: list(uids) for name, uids in cells.items()}
        self._hovering.clear()
        events: list[SensorEvent] = []
        for cell in self._readers:
            assert cell.reader is not None
            tags = frozenset(u for u in self.cells[cell.name] if u != cell.presence_piece)
            self._reported[cell.reader] = tags
            events.append(TagsSeen(t, cell.reader, tags))
        for cell in self._sensors:
            assert cell.presence is not None
            present = bool(self.cells[cell.name])
            self._present[cell.presence] = present
            events.append(PresenceChanged(t, cell.presence, present))
        return events

    def run(self, actions: Iterable[Action]) -> list[SensorEvent]:
        """The events the firmware sends while ``actions`` happen (sorted by time)."""
        events: list[SensorEvent] = []
        pending = sorted(actions, key=lambda a: a.t)
        if not pending:
            return events
        t = pending[0].t
        end = pending[-1].t + self.quiet_after
        index = 0
        limit = end + 5.0
        # Idle stretches are skipped: a new cycle starts with the first action.
        self._slot = len(self._readers)
        self._cycle_start = -1.0
        self._whole = False
        while t <= end or (t <= limit and not self._converged()):
            while index < len(pending) and pending[index].t <= t:
                self._act(pending[index], events)
                index += 1
            due = next((u for u in self._urgent if u[0] <= t), None)
            cell: Cell | None = None
            if due is not None:  # as the firmware does: a presence change is read at once
                self._urgent.remove(due)
                cell = due[1]
            else:
                cell = self._next_reader(t, events)
            if self.report_cycle and t >= self._next_report and self._lengths:
                events.append(ScanCycle(t, self._reported_cycle(t, events)))
                self._next_report = t + REPORT_EVERY
            if cell is not None:
                self._scan(cell, t, events)
                if self.chatter and self.rng.random() < self.chatter:
                    self._chatter(t, events)
                t += self._cost(cell)
                self._scan_end = t
            else:  # waiting for the next cycle: presence is still sampled
                t += 0.005
        events.sort(key=lambda e: e.t)
        return self._trimmed(self._changes_only(events))

    @staticmethod
    def _trimmed(events: list[SensorEvent]) -> list[SensorEvent]:
        """Leave out the status reports after a run's last reading. A caller (the simulated
        table, ``tests/rig.py``) feeds a run's events at their times and takes the last one as
        the moment the board went quiet: the players' next move is timed from it. A report
        sent while the model scans on until its readers converge is no sign of a hand, yet it
        moved that clock by as long as the model scanned on (a Topple hand's pause after a
        swap grew from 0.48 to 0.62 s and made an Up 1 out of the first half of a Topple).
        The firmware reports on while the board is idle; the next run's first scan reports
        again."""
        last = max((i for i, e in enumerate(events) if not isinstance(e, ScanCycle)),
                   default=-1)
        return events[:last + 1]

    def _cost(self, cell: Cell) -> float:
        """How long the firmware's scan of ``cell``'s reader takes with what lies on it."""
        height = len([u for u in self.cells[cell.name] if u != cell.presence_piece])
        return self._costs[min(height, len(self._costs) - 1)]

    def _next_reader(self, t: float, events: list[SensorEvent]) -> Cell | None:
        """The reader the firmware's round-robin scans at ``t``, idle readers left out; None
        while the cycle is over and the next one is not due yet."""
        if not self._readers:
            return None
        while True:
            if self._slot >= len(self._readers):
                if t < self._cycle_start + MIN_CYCLE:
                    return None
                if self._whole:
                    self._lengths = [*self._lengths[1 - REREAD_CYCLES:],
                                     max(self._scan_end - self._cycle_start, 0.0)]
                self._whole = True
                self._slot = 0
                self._cycle += 1
                self._cycle_start = t
            cell = self._readers[self._slot]
            self._slot += 1
            if not self._idle(cell, t, events):
                return cell

    def _reported_cycle(self, t: float, events: list[SensorEvent]) -> float:
        """The cycle the firmware reports (its ``Device.safe_cycle_ms``): the longest of the
        recent ones, or the next one if longer: every reader not idle at its scan's cost, plus
        this cycle's share of re-reads of the idle ones."""
        busy = 0.0
        idle = 0
        for cell in self._readers:
            assert cell.reader is not None
            if cell.presence is not None and not self._reported.get(cell.reader) \
                    and not self._contact(cell.presence, t, events):
                idle += 1
            else:
                busy += self._cost(cell)
        share = -(-idle // REREAD_CYCLES)
        return max([*self._lengths, busy + share * self._costs[0]])

    def _idle(self, cell: Cell, t: float, events: list[SensorEvent]) -> bool:
        """As the firmware's ``Scanner.idle``: the cell has a contact that reads open, its
        reader reports nothing, and this is not its re-read cycle."""
        assert cell.reader is not None
        if cell.presence is None or (self._cycle + cell.reader) % REREAD_CYCLES == 0:
            return False
        if self._reported.get(cell.reader):
            return False
        return not self._contact(cell.presence, t, events)

    def _contact(self, sensor: int, t: float, events: list[SensorEvent]) -> bool:
        """Whether the firmware reads ``sensor`` closed at ``t``: its last change reported by
        then in ``events`` (the ones this run plans), else what it reported before the run."""
        if self._contacts_of != id(events) or self._dirty:
            self._contacts = {}
            for event in sorted((e for e in events if isinstance(e, PresenceChanged)),
                                key=lambda e: e.t):
                times, states = self._contacts.setdefault(event.sensor, ([], []))
                times.append(event.t)
                states.append(event.present)
            self._contacts_of = id(events)
            self._dirty = False
        times, states = self._contacts.get(sensor, ([], []))
        i = bisect.bisect_right(times, t)
        return states[i - 1] if i else self._present.get(sensor, False)

    def _changes_only(self, events: list[SensorEvent]) -> list[SensorEvent]:
        """The firmware reports a contact's changes, never the state it already reported."""
        out: list[SensorEvent] = []
        for event in events:
            if isinstance(event, PresenceChanged):
                if self._present.get(event.sensor) == event.present:
                    continue
                self._present[event.sensor] = event.present
            out.append(event)
        return out

    def _chatter(self, t: float, events: list[SensorEvent]) -> None:
        """An empty cell's contact closes for a moment, nothing on it."""
        self._dirty = True
        empty = [c.presence for c in self._sensors
                 if c.presence is not None and not resting(self.cells[c.name], self._hovering)]
        if empty:
            sensor = self.rng.choice(empty)
            events.append(PresenceChanged(t, sensor, True))
            events.append(PresenceChanged(t + self.rng.uniform(0.01, 0.04), sensor, False))

    def _converged(self) -> bool:
        """Every reader reports exactly what lies on its cell (scanning may stop), give or
        take tags of its neighbours (``neighbour``: with many readers some always report
        one; such a read then stays reported until the next action, as a reader that keeps
        reading its neighbour's tag would). A tag that lay on the cell and was moved next
        door is no such read: the reader goes on scanning until its misses clear it."""
        for cell in self._readers:
            assert cell.reader is not None
            actual = frozenset(u for u in self.cells[cell.name] if u != cell.presence_piece)
            reported = self._reported.get(cell.reader, frozenset())
            if reported == actual:
                continue
            if not self.neighbour or not actual <= reported or not reported - actual <= {
                    u for c in self._adjacent[cell.name] for u in self.cells[c.name]
                    if (cell.reader, u) in self._from_neighbour}:
                return False
        return True

    def _act(self, action: Action, events: list[SensorEvent]) -> None:
        self._dirty = True
        if action.cell is None:
            return
        stack = self.cells[action.cell]
        before = resting(stack, self._hovering)
        apply_action(self.cells, self._hovering, action)
        after = resting(stack, self._hovering)
        cell = self.geometry.cell(action.cell)
        if cell.presence is not None and action.hover and action.put and not before and \
                self.early and self.rng.random() < self.early:  # carried above: closes a moment
            t = action.t + self.presence_debounce
            events.append(PresenceChanged(t, cell.presence, True))
            events.append(PresenceChanged(t + self.rng.uniform(0.02, 0.06), cell.presence, False))
        if cell.presence is None or before == after:
            return
        t = action.t + self.presence_debounce
        if after and action.put and self.early and self.rng.random() < self.early:  # slowly
            t = max(action.t - self.rng.uniform(0.02, 0.06), 0.0)
        changes: list[tuple[float, bool]] = []
        if self.rng.random() < self.flicker:  # the contact chatters past the debounce
            changes += [(t, after), (t + 0.01, before)]
            t += self.rng.uniform(0.02, 0.06)
        changes.append((t, after))
        self._switch(cell.presence, changes, events)
        if cell.reader is not None:
            self._urgent.append((t, cell))

    @staticmethod
    def _switch(sensor: int, changes: list[tuple[float, bool]],
                events: list[SensorEvent]) -> None:
        """A piece landed on or left the cell of ``sensor``: its contact goes through
        ``changes`` (time, closed). Whatever was still to be reported for that contact from the
        first of them on (a blip's end, a lift's opening not debounced yet) is superseded: the
        contact follows the piece from then on."""
        start = changes[0][0]
        events[:] = [e for e in events if not (
            isinstance(e, PresenceChanged) and e.sensor == sensor and e.t >= start)]
        events += [PresenceChanged(t, sensor, closed) for t, closed in changes]

    def _scan(self, cell: Cell, t: float, events: list[SensorEvent]) -> None:
        assert cell.reader is not None
        stack = [u for u in self.cells[cell.name] if u != cell.presence_piece]
        height = len(stack)
        chance = self.miss * (1 + height) / 2 if height > 1 else self.miss / 2
        read = {u for u in stack if self.rng.random() >= chance}
        if self.neighbour and self.rng.random() < self.neighbour:
            near = self._neighbours_tag(cell) - set(stack)
            read |= near
            self._from_neighbour.update((cell.reader, u) for u in near)
        reported = set(self._reported.get(cell.reader, frozenset()))
        for uid in read:
            self._misses.pop((cell.reader, uid), None)
        for uid in list(reported - read):
            count = self._misses.get((cell.reader, uid), 0) + 1
            self._misses[(cell.reader, uid)] = count
            if count >= self.absent_after:
                reported.discard(uid)
                self._from_neighbour.discard((cell.reader, uid))
                self._misses.pop((cell.reader, uid), None)
        reported |= read
        tags = frozenset(reported)
        if tags != self._reported.get(cell.reader):
            self._reported[cell.reader] = tags
            events.append(TagsSeen(t, cell.reader, tags))

    def _neighbours_tag(self, cell: Cell) -> set[str]:
        """One tag lying on a cell next to ``cell``, as its reader picks it up too."""
        near = [(c, [u for u in self.cells[c.name] if u != c.presence_piece])
                for c in self._adjacent[cell.name]]
        near = [(c, uids) for c, uids in near if uids]
        if not near:
            return set()
        _, uids = self.rng.choice(near)
        return {self.rng.choice(uids)}


def _adjacent(geometry: Geometry, cell: Cell) -> list[Cell]:
    """The reader cells of ``cell``'s kind near enough to read its tags (:meth:`Geometry.near`)."""
    return [c for c in geometry.cells
            if c.kind == cell.kind and c.name != cell.name and c.reader is not None
            and geometry.near(cell.name, c.name)]
