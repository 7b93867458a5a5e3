"""A sensor model: what the firmware reports while simulated hands move pieces.

It follows the firmware's documented behaviour (``firmware/PROTOCOL.md``): readers are scanned
round-robin, one every ``scan_period / readers`` seconds; a new tag is reported at the first
scan that reads it; a tag is reported gone only after ``absent_after`` scans in a row miss it;
presence sensors are debounced for ``presence_debounce`` seconds, and a cell whose contact
changes has its reader scanned next, ahead of the round-robin (the firmware's
``presence_readers``: a piece set down on a 25-reader board is read within one reader's scan,
not a whole cycle). Noise on top: each tag of a stack may be missed by a scan (``miss``, more
likely the higher the stack), and a presence contact may chatter (``flicker``) when a piece
lands or leaves. A piece carried above a cell (``Action.hover``) is read there but leaves its
presence sensor open. Rougher sensors: an empty cell's contact may close on its own for 10-40
ms, past the firmware's debounce (``chatter``, per scan of a reader), and a contact may close a
few millimetres early, 20-60 ms before a piece set down slowly lands or while one is carried
just above it (``early``, per piece landing or carried over). At a short pitch a reader also
reads a tag lying on an adjacent cell now and then (``neighbour``, per scan of a reader: one tag
of a neighbouring cell's stack joins what it read; the firmware then reports it until
``absent_after`` scans miss it, as for any tag).

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

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from pi_app.board.geometry import Cell, Geometry
from pi_app.readings import PresenceChanged, SensorEvent, TagsSeen
from pi_app.sim.hands import Action, apply_action, resting


@dataclass
class SensorModel:
    geometry: Geometry
    rng: random.Random
    scan_period: float = 0.05
    miss: float = 0.0
    flicker: float = 0.0
    absent_after: int = 3
    presence_debounce: float = 0.02
    chatter: float = 0.0
    early: float = 0.0
    neighbour: float = 0.0
    quiet_after: float = 0.6
    cells: dict[str, list[str]] = field(default_factory=dict)
    _reported: dict[int, frozenset[str]] = field(default_factory=dict)
    _misses: dict[tuple[int, str], int] = field(default_factory=dict)
    _present: dict[int, bool] = field(default_factory=dict)
    """Per presence sensor, what the firmware reported last (changes only are reported)."""
    _hovering: set[str] = field(default_factory=set)
    _urgent: list[tuple[float, Cell]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for cell in self.geometry.cells:
            self.cells.setdefault(cell.name, [])
        self._readers = [c for c in self.geometry.cells if c.reader is not None]
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
        step = self.scan_period / max(len(self._readers), 1)
        t = pending[0].t
        end = pending[-1].t + self.quiet_after
        index = 0
        slot = 0
        limit = end + 5.0
        while t <= end or (t <= limit and not self._converged()):
            while index < len(pending) and pending[index].t <= t:
                self._act(pending[index], events)
                index += 1
            due = next((u for u in self._urgent if u[0] <= t), None)
            if due is not None:  # as the firmware does: a presence change is read at once
                self._urgent.remove(due)
                self._scan(due[1], t, events)
            elif self._readers:
                self._scan(self._readers[slot % len(self._readers)], t, events)
                slot += 1
            if self.chatter and self.rng.random() < self.chatter:
                self._chatter(t, events)
            t += step
        events.sort(key=lambda e: e.t)
        return self._changes_only(events)

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
        reading its neighbour's tag would)."""
        for cell in self._readers:
            assert cell.reader is not None
            actual = frozenset(u for u in self.cells[cell.name] if u != cell.presence_piece)
            reported = self._reported.get(cell.reader, frozenset())
            if reported == actual:
                continue
            if not self.neighbour or not actual <= reported or not reported - actual <= {
                    u for c in self._adjacent[cell.name] for u in self.cells[c.name]}:
                return False
        return True

    def _act(self, action: Action, events: list[SensorEvent]) -> None:
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
            read |= self._neighbours_tag(cell)
        reported = set(self._reported.get(cell.reader, frozenset()))
        for uid in read:
            self._misses.pop((cell.reader, uid), None)
        for uid in list(reported - read):
            count = self._misses.get((cell.reader, uid), 0) + 1
            self._misses[(cell.reader, uid)] = count
            if count >= self.absent_after:
                reported.discard(uid)
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
    """The reader cells of ``cell``'s kind whose centres are within 1.5 cell widths: those
    whose tags a reader at a short pitch can pick up."""
    reach = 1.5 * max(cell.size_mm)
    x, y = cell.center_mm
    return [c for c in geometry.cells
            if c.kind == cell.kind and c.name != cell.name and c.reader is not None
            and ((c.center_mm[0] - x) ** 2 + (c.center_mm[1] - y) ** 2) ** 0.5 <= reach]
