"""The firmware's main loop: scanner, link, commands, heartbeat and periodic snapshot.

``Device.poll`` does one small step and returns, so the same object runs on the Pico (a plain
``while True`` in main.py), in the host self-test under MicroPython's unix port, and in a thread
of the Pi's simulator. Everything physical is injected:

- ``scanner``: a Scanner over the readers and the presence chain;
- ``transport``: ``write(bytes)`` and ``read()`` returning the bytes waiting (or b"");
- ``now_ms``: a non-decreasing millisecond clock (main.py builds one over ``time.ticks_ms``
  that does not wrap at 2**30).

Per poll: read commands, sample presence, scan the next reader of the round-robin (one reader
per poll, so presence is sampled between every two NFC reads), then heartbeat and snapshot when
due. A new board cycle starts ``scan_period_ms`` after the previous one started. The device
measures what scanning really costs: ``cycle_ms``, the last full board cycle from its start to
its last reader, and each reader's last scan; HEARTBEAT carries the first, SCAN_TIMES (sent
after every heartbeat) both, so the Pi can time its settling on the board's real pace rather
than on a figure in a board file. A debounced
presence change puts its cell's reader (``presence_readers``) ahead of the round-robin, so a
piece put down on a 25-reader board is identified after one reader scan, not a board cycle.
"""

from tikifw import VERSION, proto


class Device:
    def __init__(self, scanner, transport, now_ms, board="", chip=proto.CHIP_NONE,
                 protocol=proto.PROTOCOL_VERSION, presence_readers=None):
        self.scanner = scanner
        self.config = scanner.config
        self.transport = transport
        self.now_ms = now_ms
        self.board = board
        self.chip = chip
        self.protocol = protocol
        self.deframer = proto.Deframer()
        scanner.sink = self
        self.seq = 0
        self.frames_tx = 0
        self.cycles = 0
        self.cycle_ms = 0
        self.reader_ms = [None] * len(scanner.readers)
        self.pos = len(scanner.readers)
        self.cycle_start = None
        self.last_heartbeat = 0
        self.last_snapshot = 0
        self.reported_bad = 0
        # Presence sensor -> reader of the same cell: a presence change there is read at once,
        # ahead of the round-robin (docs/hardware-notes.md §8: presence first, identity confirms).
        self.presence_readers = presence_readers or {}
        if self.presence_readers and not scanner.reader_presence:
            scanner.reader_presence = {r: s for s, r in self.presence_readers.items()}
        self.urgent = []
        # The last few full cycles' durations: enough to span a whole re-read rotation of the
        # idle readers (Config.reread_cycles), so their longest one is one with re-reads in it.
        self.recent_ms = [0] * max(self.config.reread_cycles, 1)
        self.spi_hz = 0  # the SPI rate the boot ramp settled on (tikifw/board.py)
        self.boot_notes = []  # (code, arg, text) sent as ERROR after HELLO: the SPI ramp's

    # --- output ---------------------------------------------------------------------------------
    def send(self, mtype, payload):
        self.transport.write(proto.frame(mtype, self.seq, payload))
        self.seq = (self.seq + 1) & 0xFF
        self.frames_tx += 1

    def send_hello(self):
        s = self.scanner
        self.send(proto.HELLO, proto.hello(
            "tikifw " + VERSION, self.board, self.chip, len(s.readers), len(s.present),
            self.now_ms(), protocol=self.protocol))

    def send_snapshot(self, now):
        s = self.scanner
        flags = proto.SNAP_PRESENCE_FAULT if s.presence_faulted else 0
        self.send(proto.SNAPSHOT, proto.snapshot(now, flags, s.reader_states(), s.present))
        self.last_snapshot = now

    def send_heartbeat(self, now):
        self.send(proto.HEARTBEAT, proto.heartbeat(
            now, self.cycles, self.frames_tx, self.deframer.bad, self.scanner.reader_errors,
            self.cycle_ms))
        self.send(proto.SCAN_TIMES, proto.scan_times(now, self.safe_cycle_ms(), self.reader_ms))
        self.last_heartbeat = now

    def safe_cycle_ms(self):
        """The cycle SCAN_TIMES reports: the longest of the recent full cycles, or what the
        next one would cost if longer (the readers that will be scanned, at their last
        measured time, plus this cycle's share of re-reads).

        Since idle readers are left out, the cycle depends on how many cells hold pieces, and
        a cycle with more re-reads in it is longer. The Pi stretches its waits to this figure
        (pi_app/board/pacing.py): the last cycle alone could be a short one just before a long
        one, and a board filling up between two reports would make the Pi's waits too short.
        """
        s = self.scanner
        every = max(self.config.reread_cycles, 1)
        busy_ms = 0
        idle_ms = []
        for i, ms in enumerate(self.reader_ms):
            if every > 1 and s.empty(i):
                idle_ms.append(ms or 0)
            else:
                busy_ms += ms or 0
        idle_ms.sort()
        share = (len(idle_ms) + every - 1) // every  # re-reads per cycle, rounded up
        projected = busy_ms + sum(idle_ms[len(idle_ms) - share:]) if share else busy_ms
        return max(self.cycle_ms, projected, *self.recent_ms)

    def scan_reader(self, i):
        """Scan reader ``i`` and time it (a reader waiting out a retry gap is not timed)."""
        start = self.now_ms()
        if self.scanner.scan_reader(i, start):
            self.reader_ms[i] = self.now_ms() - start

    # --- scanner sink ---------------------------------------------------------------------------
    def on_tags(self, reader, uids, t):
        self.send(proto.TAGS, proto.tags(t, reader, uids))

    def on_presence(self, sensor, present, t):
        self.send(proto.PRESENCE, proto.presence(t, sensor, present))
        reader = self.presence_readers.get(sensor)
        if reader is not None and reader not in self.urgent:
            self.urgent.append(reader)

    def on_fault(self, code, index, text, t):
        self.send(proto.ERROR, proto.error(t, code, index, text))

    def on_button(self, index, t):
        self.send(proto.BUTTON, proto.button(t, index))

    # --- loop -----------------------------------------------------------------------------------
    def start(self):
        """Flush any half frame in the host's buffer, say hello, and start scanning."""
        self.transport.write(b"\x00")
        self.send_hello()
        now = self.now_ms()
        for code, arg, text in self.boot_notes:
            self.on_fault(code, arg, text, now)
        self.last_heartbeat = self.last_snapshot = now
        self.cycle_start = now - self.config.scan_period_ms

    def poll(self):
        """One step; False when there was nothing to do until the next board cycle."""
        now = self.now_ms()
        if self.cycle_start is None:
            self.start()
        self.receive(now)
        self.scanner.scan_presence(now)
        busy = False
        n = len(self.scanner.readers)
        if self.urgent:
            self.scan_reader(self.urgent.pop(0))
            busy = True
        elif self.pos < n:
            while self.pos < n and self.scanner.idle(self.pos, self.cycles):
                self.pos += 1  # an idle reader costs nothing: the next one is scanned now
            if self.pos < n:
                self.scan_reader(self.pos)
                self.pos += 1
            busy = True
            if self.pos == n:
                self.cycles += 1
                self.cycle_ms = self.now_ms() - self.cycle_start
                self.recent_ms[self.cycles % len(self.recent_ms)] = self.cycle_ms
        elif now - self.cycle_start >= self.config.scan_period_ms:
            self.cycle_start = now
            self.pos = 0
            busy = True
            if n == 0:
                self.cycles += 1
        now = self.now_ms()
        if now - self.last_heartbeat >= self.config.heartbeat_ms:
            self.send_heartbeat(now)
            if self.deframer.bad != self.reported_bad:
                self.send(proto.ERROR, proto.error(
                    now, proto.ERR_BAD_HOST_FRAME, min(self.deframer.bad, 0xFFFF),
                    f"bad command frames: {self.deframer.bad} "
                    f"(last: {self.deframer.last_error})"))
                self.reported_bad = self.deframer.bad
        if now - self.last_snapshot >= self.config.snapshot_ms:
            self.send_snapshot(now)
        return busy

    # --- commands -------------------------------------------------------------------------------
    def receive(self, now):
        data = self.transport.read()
        if not data:
            return
        for mtype, seq, payload in self.deframer.feed(data):
            self.handle(mtype, seq, payload, now)

    def handle(self, mtype, seq, payload, now):
        if mtype == proto.CMD_HELLO:
            self.send(proto.ACK, proto.ack(seq, mtype, proto.ACK_OK))
            self.send_hello()
        elif mtype == proto.CMD_SNAPSHOT:
            self.send(proto.ACK, proto.ack(seq, mtype, proto.ACK_OK))
            self.send_snapshot(now)
        elif mtype == proto.CMD_CONFIG:
            try:
                self.config.update(proto.parse_config(payload))
            except ValueError as exc:
                self.send(proto.ACK, proto.ack(seq, mtype, proto.ACK_BAD_ARGUMENT,
                                               str(exc).encode()[:200]))
                return
            self.send(proto.ACK, proto.ack(seq, mtype, proto.ACK_OK))
        elif mtype == proto.CMD_SELFTEST:
            status, chain_ok, raw = self.scanner.selftest()
            self.send(proto.ACK, proto.ack(seq, mtype, proto.ACK_OK,
                                           proto.selftest_result(status, chain_ok, raw)))
        else:
            self.send(proto.ACK, proto.ack(seq, mtype, proto.ACK_UNKNOWN_COMMAND))
