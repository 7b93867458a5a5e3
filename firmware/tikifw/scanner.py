"""Round-robin scanning with debounce: raw reader and sensor reads in, change events out.

- Readers are scanned one at a time (each driver switches its own field on and off), so two
  fields are never on together and neighbouring antennas cannot disturb each other.
- A tag is reported present after ``appear_scans`` consecutive sightings and absent only after
  ``absent_misses`` consecutive *clean* misses: stacked tags are sometimes missed, and an
  incomplete scan (collision, garbled answer) never counts as a miss.
- A reader that raises ReaderError ``fault_after`` times in a row is reported once as faulty,
  keeps its last known tags (unknown is not empty), and is retried with a growing gap (up to
  ``retry_max_cycles`` board cycles) so a dead reader does not slow the others; the first good
  scan reports it recovered.
- A presence sensor changes state only when its new reading has lasted ``presence_debounce_ms``;
  the event carries the time the change was first seen.
- A reader whose cell has a presence sensor that reads empty (debounced, not changing), and
  which reports no tag, has none pending and no error, is idle (``idle``): the board cycle
  leaves it out, except on every ``reread_cycles``-th cycle (staggered by reader, so each cycle
  re-reads a few idle readers, not all of them at once). An empty PN5180 cell costs a whole
  16-slot round (23 ms) and finds nothing; most of a TacTiki board is empty (issue 19). The
  re-read still finds a tag whose presence switch does not close (a lost magnet, a piece held
  just above the cell) and notices a reader that stops answering, within ``reread_cycles``
  cycles. A cell whose contact just opened keeps being scanned until its tags are reported
  gone (``absent_misses`` clean scans): the Pi hears a lifted tag go at the same pace as
  before. A contact that closes puts its reader ahead of the round-robin (Device), so a piece
  set down on an idle cell is read at once. Readers of cells without a presence sensor are
  never idle.

The scanner knows nothing about frames or the link: it calls ``sink.on_tags``,
``sink.on_presence`` and ``sink.on_fault``.
"""

from tikifw import proto
from tikifw.readers import ReaderError
from tikifw.shiftin import PresenceError


class Config:
    """Scan settings; the host may change the first five with CMD_CONFIG."""

    # Accepted ranges of the host-settable fields.
    LIMITS = {  # noqa: RUF012 - read-only; no typing.ClassVar on MicroPython
        "scan_period_ms": (5, 10000),
        "absent_misses": (1, 50),
        "presence_debounce_ms": (0, 5000),
        "snapshot_ms": (100, 60000),
        "heartbeat_ms": (50, 10000),
    }

    def __init__(self):
        self.scan_period_ms = 100
        self.absent_misses = 3
        self.presence_debounce_ms = 30
        self.snapshot_ms = 2000
        self.heartbeat_ms = 500
        self.appear_scans = 1
        self.fault_after = 2
        self.retry_max_cycles = 16
        # An idle reader (empty cell, nothing reported) is still scanned every this many board
        # cycles. 8: on a TacTiki board in play (0.3-0.6 s cycles) a tag whose presence switch
        # fails is found within 2.5-5 s, and the re-reads add about an eighth of the empty
        # cells' cost to each cycle. 1 scans every reader every cycle (the old behaviour).
        self.reread_cycles = 8

    def update(self, changes):
        """Apply a dict from CMD_CONFIG; ValueError (nothing changed) if a value is out of range."""
        for name, value in changes.items():
            low, high = self.LIMITS[name]
            if not low <= value <= high:
                raise ValueError(f"{name} must be {low}..{high}, not {value}")
        for name, value in changes.items():
            setattr(self, name, value)


class Cell:
    """What one reader has reported, and the counters behind its debounce."""

    def __init__(self):
        self.reported = set()
        self.misses = {}
        self.pending = {}
        self.errors = 0
        self.faulted = False
        self.needs_init = True
        self.skip = 0


class Scanner:
    def __init__(self, readers, presence, config, sink, reader_presence=None):
        self.readers = readers
        self.presence = presence
        self.config = config
        self.sink = sink
        # Reader -> the presence sensor of the same cell ({} on a board without them).
        self.reader_presence = reader_presence or {}
        self.cells = [Cell() for _ in readers]
        self.present = [False] * presence.count
        self.since = [None] * presence.count
        self.primed = False
        self.presence_errors = 0
        self.presence_faulted = False
        self.reader_errors = 0

    # --- readers --------------------------------------------------------------------------------
    def scan_reader(self, i, now):
        """Scan reader ``i`` once (or skip it while it waits for a retry); True if it was tried."""
        cell = self.cells[i]
        if cell.skip > 0:
            cell.skip -= 1
            return False
        reader = self.readers[i]
        try:
            if cell.needs_init:
                reader.init()
                cell.needs_init = False
            uids, complete = reader.scan()
        except (ReaderError, OSError) as exc:
            self._reader_failed(i, cell, exc, now)
            return True
        if cell.faulted:
            cell.faulted = False
            self.sink.on_fault(proto.ERR_READER_RECOVERED, i, f"reader {i} answers again", now)
        cell.errors = 0
        if self._update(cell, uids, complete):
            self.sink.on_tags(i, sorted(cell.reported), now)
        return True

    def empty(self, i):
        """True if reader ``i`` has nothing to look for: its cell's presence sensor reads empty
        and is not changing, and the reader reports no tag, has none pending and no error.
        Never while the presence chain is unread or broken: then nothing says the cell is
        empty."""
        sensor = self.reader_presence.get(i)
        if sensor is None or not self.primed or self.presence_faulted or self.presence_errors:
            return False
        if self.present[sensor] or self.since[sensor] is not None:
            return False
        cell = self.cells[i]
        return not (cell.reported or cell.pending or cell.errors or cell.needs_init)

    def idle(self, i, cycle):
        """True if board cycle ``cycle`` may leave reader ``i`` out: it is ``empty`` and this
        is not its re-read cycle (every ``reread_cycles``-th, staggered by reader)."""
        every = self.config.reread_cycles
        return every > 1 and (cycle + i) % every != 0 and self.empty(i)

    def _reader_failed(self, i, cell, exc, now):
        cell.errors += 1
        cell.needs_init = True
        self.reader_errors += 1
        cfg = self.config
        if cell.errors >= cfg.fault_after:
            if not cell.faulted:
                cell.faulted = True
                self.sink.on_fault(proto.ERR_READER_FAULT, i,
                                   f"reader {i}: {exc}", now)
            cell.skip = min(1 << min(cell.errors - cfg.fault_after, 15), cfg.retry_max_cycles)

    def _update(self, cell, uids, complete):
        cfg = self.config
        seen = set(uids)
        changed = False
        for uid in seen:
            if uid in cell.reported:
                cell.misses.pop(uid, None)
                continue
            count = cell.pending.get(uid, 0) + 1
            if count >= cfg.appear_scans:
                cell.pending.pop(uid, None)
                cell.reported.add(uid)
                changed = True
            else:
                cell.pending[uid] = count
        for uid in list(cell.pending):
            if uid not in seen:
                del cell.pending[uid]
        if complete:
            for uid in list(cell.reported):
                if uid in seen:
                    continue
                misses = cell.misses.get(uid, 0) + 1
                if misses >= cfg.absent_misses:
                    cell.reported.discard(uid)
                    cell.misses.pop(uid, None)
                    changed = True
                else:
                    cell.misses[uid] = misses
        return changed

    def reader_states(self):
        """(status, sorted uids) per reader for a snapshot: status 1 while the reader is faulty."""
        return [(1 if c.faulted else 0, sorted(c.reported)) for c in self.cells]

    # --- presence -------------------------------------------------------------------------------
    def scan_presence(self, now):
        if not self.present:
            return
        try:
            raw = self.presence.read()
        except (PresenceError, OSError) as exc:
            self.presence_errors += 1
            if self.presence_errors >= self.config.fault_after and not self.presence_faulted:
                self.presence_faulted = True
                self.sink.on_fault(proto.ERR_PRESENCE_FAULT, 0, str(exc), now)
            return
        self.presence_errors = 0
        if self.presence_faulted:
            self.presence_faulted = False
            self.sink.on_fault(proto.ERR_PRESENCE_RECOVERED, 0, "presence chain reads again", now)
        if not self.primed:
            self.present = list(raw)
            self.primed = True
            return
        debounce = self.config.presence_debounce_ms
        for i, value in enumerate(raw):
            if value == self.present[i]:
                self.since[i] = None
                continue
            first = self.since[i]
            if first is None:
                first = self.since[i] = now
            if now - first >= debounce:
                self.present[i] = value
                self.since[i] = None
                self.sink.on_presence(i, value, first)

    # --- self-test ------------------------------------------------------------------------------
    def selftest(self):
        """Init and scan every reader once, read the chain raw: (statuses, chain ok, raw bits)."""
        status = []
        for i, reader in enumerate(self.readers):
            try:
                reader.init()
                reader.scan()
                self.cells[i].needs_init = False
                status.append(0)
            except (ReaderError, OSError):
                self.cells[i].needs_init = True
                status.append(1)
        try:
            raw = self.presence.read_raw()
        except OSError:
            raw = []
        try:
            self.presence.read()
            chain_ok = True
        except (PresenceError, OSError):
            chain_ok = False
        return status, chain_ok, raw
