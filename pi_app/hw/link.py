"""The serial link to the sensor board: frames in, ``pi_app.readings`` out, and back again.

One reader thread owns the port; it hands events to a ``sink`` callable (``asyncio_sink`` puts
them on an asyncio queue from the thread, ``queue.Queue.put`` suits threads). Why a thread and
not asyncio serial I/O: pyserial is blocking, a dedicated thread with a short read timeout is
the simplest thing that survives a vanished device, and the event loop never blocks on USB.

What the link does by itself:

- resynchronises after garbage (COBS: the next 0x00 ends it) and counts every bad frame with
  its reason;
- handshakes: sends CMD_HELLO until a HELLO arrives; a HELLO with another protocol version
  puts the link in "version mismatch" (LinkStatus down, frames ignored) until a matching one;
- follows sequence numbers: a gap counts the missing frames and asks for a snapshot (lost
  changes heal); a duplicate or a late frame is counted and dropped;
- keeps asking: a snapshot request stays pending until a SNAPSHOT arrives and is sent again
  every ``snapshot_retry`` seconds, because the request or its answer may be lost too (until
  it heals, the station works from a stale picture of the board);
- liveness: no frame for ``heartbeat_timeout`` seconds means the board is silent (LinkStatus
  down) and the handshake starts again;
- reconnects: when the port fails or vanishes (USB unplugged) it reopens the same path with
  exponential backoff, then handshakes and asks for a snapshot;
- maps sensor time to host time (timebase.SensorClock);
- passes on the scan cycle the board measures (SCAN_TIMES, once a whole cycle has run) as
  ``ScanCycle``, so the station times its settling on the board's real pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import serial

from pi_app.errors import TikiError
from pi_app.hw import messages as m
from pi_app.hw.frames import PROTOCOL_VERSION, Frame, FrameDecoder, FrameError, encode_frame
from pi_app.hw.timebase import SensorClock
from pi_app.readings import (
    ButtonPressed,
    HardwareFault,
    HwEvent,
    LinkState,
    LinkStatus,
    PresenceChanged,
    ScanCycle,
    Snapshot,
    TagsSeen,
)

log = logging.getLogger(__name__)

Sink = Callable[[HwEvent], None]


class Port(Protocol):
    """What the link needs of a pyserial ``Serial`` (tests may hand in anything like it)."""

    @property
    def in_waiting(self) -> int: ...
    def read(self, size: int = 1) -> bytes: ...
    def write(self, data: bytes, /) -> int | None: ...
    def reset_input_buffer(self) -> None: ...
    def close(self) -> None: ...


class LinkPhase(StrEnum):
    """Where the link's own state machine is (``SerialLink.state``)."""

    CLOSED = "closed"
    HANDSHAKE = "handshake"
    UP = "up"
    MISMATCH = "mismatch"


class LinkDown(TikiError, RuntimeError):
    """A command could not be sent: the sensor board is not connected."""


@dataclass
class LinkCounters:
    """Everything the link counts; ``tikiboard diag`` prints it, tests assert on it."""

    frames_good: int = 0
    frames_bad: int = 0
    bad_reasons: Counter[str] = field(default_factory=Counter)
    malformed: int = 0
    missing: int = 0
    duplicates: int = 0
    reordered: int = 0
    ignored: int = 0
    bytes_rx: int = 0
    bytes_tx: int = 0
    connects: int = 0
    disconnects: int = 0
    open_failures: int = 0
    liveness_timeouts: int = 0
    version_mismatches: int = 0
    snapshots_requested: int = 0
    snapshot_retries: int = 0
    heartbeats: int = 0
    faults: int = 0
    device: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = dict(vars(self))
        out["bad_reasons"] = dict(self.bad_reasons)
        out["device"] = dict(self.device)
        return out


class _Waiter:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.ack: m.Ack | None = None


def asyncio_sink(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[HwEvent]) -> Sink:
    """A sink that hands events from the link thread to ``queue`` on ``loop``."""
    def put(event: HwEvent) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)
    return put


def open_serial(path: str, baudrate: int, timeout: float) -> Port:
    """The default opener: pyserial, with an exclusive lock so a second program (``diag`` while
    the daemon runs) fails with a clear message instead of stealing half the bytes. USB CDC
    ignores the baud rate; a UART does not."""
    port: Port = serial.Serial(path, baudrate=baudrate, timeout=timeout, exclusive=True)
    return port


class SerialLink:
    """The sensor board over one serial device path; see the module text for the behaviour."""

    def __init__(
        self,
        path: str,
        sink: Sink,
        *,
        baudrate: int = 115200,
        heartbeat_timeout: float = 2.0,
        handshake_interval: float = 0.5,
        snapshot_retry: float = 0.5,
        backoff: tuple[float, float] = (0.05, 2.0),
        read_timeout: float = 0.02,
        expect_board: str | None = None,
        opener: Callable[[str, int, float], Port] = open_serial,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.sink = sink
        self.baudrate = baudrate
        self.heartbeat_timeout = heartbeat_timeout
        self.handshake_interval = handshake_interval
        self.snapshot_retry = snapshot_retry
        self.backoff = backoff
        self.read_timeout = read_timeout
        self.expect_board = expect_board
        self.opener = opener
        self.clock = clock
        self.counters = LinkCounters()
        self.hello: m.Hello | None = None
        #: The board's last measured scan cycle (SCAN_TIMES); None until firmware sends one.
        self.scan_times: m.ScanTimes | None = None
        self.state = LinkPhase.CLOSED
        self.detail = "not started"
        self._decoder = FrameDecoder()
        self._timebase = SensorClock()
        self._expect = 0
        self._port: Port | None = None
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._cmd_seq = 0
        self._waiters: dict[int, _Waiter] = {}
        self._last_frame = 0.0
        self._last_hello_sent = 0.0
        self._snapshot_pending: float | None = None  # when the unanswered request was sent
        self._faulty: set[tuple[str, int]] = set()
        self._reported_up: bool | None = None
        self._lock = threading.Lock()

    # --- life cycle -----------------------------------------------------------------------------
    def start(self) -> SerialLink:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="sensor-link", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.state = LinkPhase.CLOSED

    def __enter__(self) -> SerialLink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def up(self) -> bool:
        return self.state is LinkPhase.UP

    # --- commands -------------------------------------------------------------------------------
    def send(self, command: m.Command) -> int:
        """Send a command; returns its sequence number. LinkDown when no device is open."""
        return self._send(command, None)

    def _send(self, command: m.Command, waiter: _Waiter | None) -> int:
        with self._write_lock:
            port = self._port
            if port is None:
                raise LinkDown(f"sensor board not connected ({self.path}: {self.detail})")
            seq = self._cmd_seq
            self._cmd_seq = (seq + 1) & 0xFF
            if waiter is not None:  # registered before the write: the ACK cannot outrun it
                with self._lock:
                    self._waiters[seq] = waiter
            data = encode_frame(command.TYPE, seq, command.encode())
            try:
                port.write(data)
            except (serial.SerialException, OSError) as exc:
                raise LinkDown(f"sensor board write failed: {exc}") from exc
            self.counters.bytes_tx += len(data)
        return seq

    def request(self, command: m.Command, timeout: float = 1.0) -> m.Ack:
        """Send a command and wait for its ACK; TimeoutError if none comes."""
        waiter = _Waiter()
        seq = None
        try:
            seq = self._send(command, waiter)
            if not waiter.done.wait(timeout):
                raise TimeoutError(f"no answer to {type(command).__name__} in {timeout} s")
        finally:
            with self._lock:
                if seq is not None and self._waiters.get(seq) is waiter:
                    del self._waiters[seq]
        assert waiter.ack is not None
        return waiter.ack

    def request_snapshot(self) -> None:
        """Ask for a snapshot; asked again by the link's timer until one arrives.

        Marked pending before the write, so that a request that could not even be sent is
        retried like one whose frame or answer was lost."""
        self._snapshot_pending = self.clock()
        self.send(m.CmdSnapshot())
        self.counters.snapshots_requested += 1

    def configure(self, config: m.CmdConfig, timeout: float = 1.0) -> m.Ack:
        return self.request(config, timeout)

    def self_test(self, timeout: float = 5.0) -> m.SelftestResult:
        ack = self.request(m.CmdSelftest(), timeout)
        return m.SelftestResult.decode(ack.data)

    # --- the thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        delay = self.backoff[0]
        while not self._stop.is_set():
            try:
                port = self.opener(self.path, self.baudrate, self.read_timeout)
            except (serial.SerialException, OSError) as exc:
                self.counters.open_failures += 1
                self._status(LinkState.RETRYING, f"cannot open {self.path}: {_why(exc)}; retrying")
                self._stop.wait(delay)
                delay = min(delay * 2, self.backoff[1])
                continue
            delay = self.backoff[0]
            try:
                self._serve(port)
            except (serial.SerialException, OSError) as exc:
                self.lost(_why(exc))
            finally:
                with self._write_lock:
                    self._port = None
                with contextlib.suppress(serial.SerialException, OSError):
                    port.close()
        self._port = None

    def _serve(self, port: Port) -> None:
        self.attach(port)
        while not self._stop.is_set():
            data = port.read(max(1, port.in_waiting))
            self.receive(data, self.clock())

    # The reader thread's three steps, public so that a caller without the thread (the long
    # soak, which runs the firmware and the link in one thread on a virtual clock) drives
    # exactly the code the thread runs.
    def attach(self, port: Port) -> None:
        """Start serving a freshly opened ``port``: flush it and begin the handshake."""
        self.counters.connects += 1
        self._decoder.reset()
        port.reset_input_buffer()
        with self._write_lock:
            self._port = port
        self.state = LinkPhase.HANDSHAKE
        self._hello()

    def receive(self, data: bytes, now: float) -> None:
        """Handle ``data`` read at ``now`` (may be empty), then run the timers."""
        if data:
            self.counters.bytes_rx += len(data)
            for item in self._decoder.feed(data):
                if isinstance(item, FrameError):
                    self._bad(item)
                else:
                    self._frame(item, now)
        self._timers(now)

    def lost(self, why: str) -> None:
        """The port failed or vanished (USB unplugged): say so and forget it."""
        self.counters.disconnects += 1
        log.warning("sensor link: %s lost: %s; reconnecting", self.path, why)
        self._status(LinkState.DOWN, f"sensor board lost ({why}); reconnecting")
        with self._write_lock:
            self._port = None

    def _timers(self, now: float) -> None:
        if self.state is LinkPhase.UP and now - self._last_frame > self.heartbeat_timeout:
            self.counters.liveness_timeouts += 1
            log.warning("sensor link: no frame for %.1f s", now - self._last_frame)
            self._status(LinkState.DOWN, f"sensor board silent for {now - self._last_frame:.1f} s")
            self.state = LinkPhase.HANDSHAKE
        if self.state in (LinkPhase.HANDSHAKE, LinkPhase.MISMATCH):
            interval = self.handshake_interval * (10 if self.state is LinkPhase.MISMATCH else 1)
            if now - self._last_hello_sent >= interval:
                self._hello()
        self._snapshot_timer(now)

    def _snapshot_timer(self, now: float) -> None:
        """Ask again for a snapshot that has not come ``snapshot_retry`` seconds after it was
        asked for: the CMD_SNAPSHOT, its ACK or the SNAPSHOT itself was lost (a gap seen
        meanwhile is suppressed as part of the same burst, so nothing else would ask again).

        Why 0.5 s by default: the firmware reads commands at the top of every poll and a poll
        scans at most one reader, so its answer is due within tens of milliseconds; half a
        second is a default heartbeat period (PROTOCOL.md's "outstanding for 0.5 s"), enough
        for a slow reader or a USB hiccup, and a quarter of the periodic snapshot's 2 s, which
        is otherwise the only thing that heals. A retry that crosses a late answer costs one
        redundant snapshot, which is harmless. Only while the link is up: a HELLO asks afresh.
        """
        pending = self._snapshot_pending
        if self.state is not LinkPhase.UP or pending is None or now - pending < self.snapshot_retry:
            return
        self.counters.snapshot_retries += 1
        log.info("sensor link: no snapshot %.2f s after asking; asking again", now - pending)
        with contextlib.suppress(LinkDown):
            self.request_snapshot()

    def _hello(self) -> None:
        self._last_hello_sent = self.clock()
        self.send(m.CmdHello())

    # --- frames ---------------------------------------------------------------------------------
    def _bad(self, exc: FrameError) -> None:
        c = self.counters
        c.frames_bad += 1
        c.bad_reasons[exc.reason] += 1
        log.info("sensor link: dropped a bad frame: %s; %d bad so far", exc, c.frames_bad)

    def _frame(self, frame: Frame, now: float) -> None:
        c = self.counters
        c.frames_good += 1
        if frame.type == m.HELLO:
            self._on_hello(frame, now)
            return
        if self.state is not LinkPhase.UP:
            c.ignored += 1
            return
        gap = (frame.seq - self._expect) & 0xFF
        if gap == 0xFF:
            c.duplicates += 1
            log.info("sensor link: duplicate frame %d dropped", frame.seq)
            return
        if gap >= 0x80:
            c.reordered += 1
            log.info("sensor link: late frame %d dropped (expected %d)", frame.seq, self._expect)
            return
        self._expect = (frame.seq + 1) & 0xFF
        self._last_frame = now
        if gap:
            c.missing += gap
            log.info("sensor link: %d frame(s) missing before %d; asking for a snapshot",
                     gap, frame.seq)
            self._snapshot_after_gap()
        try:
            msg = m.decode_message(frame.type, frame.payload)
        except m.MessageError as exc:
            c.malformed += 1
            log.warning("sensor link: malformed message: %s", exc)
            return
        self._dispatch(msg, now)

    def _snapshot_after_gap(self) -> None:
        """Ask for a snapshot unless one is already pending: the firmware answers in order, so a
        snapshot still to come also covers the frames lost before it (a burst of losses needs
        one snapshot, not one per gap). If the lost frame was that very snapshot, or the
        request never got there, ``_snapshot_timer`` asks again when it is overdue."""
        if self._snapshot_pending is None:
            with contextlib.suppress(LinkDown):
                self.request_snapshot()

    def _on_hello(self, frame: Frame, now: float) -> None:
        c = self.counters
        protocol = m.Hello.protocol_of(frame.payload)
        if protocol != PROTOCOL_VERSION:
            c.version_mismatches += 1
            self.state = LinkPhase.MISMATCH
            self._status(LinkState.DOWN,
                         f"version mismatch: the sensor board speaks protocol {protocol}, "
                         f"this station speaks {PROTOCOL_VERSION}; flash firmware/ "
                         "from this release")
            return
        try:
            hello = m.Hello.decode(frame.payload)
        except m.MessageError as exc:
            c.malformed += 1
            log.warning("sensor link: malformed HELLO: %s", exc)
            return
        if self.expect_board and hello.board != self.expect_board:
            self.state = LinkPhase.MISMATCH
            self._status(LinkState.DOWN, f"the sensor board is set up for {hello.board!r}, "
                                         f"this station plays {self.expect_board!r}")
            return
        self.hello = hello
        self._expect = (frame.seq + 1) & 0xFF
        self._last_frame = now
        self._timebase.reset()
        self._timebase.to_host(hello.uptime_ms, now)
        self.state = LinkPhase.UP
        chip = m.CHIPS.get(hello.chip, f"chip {hello.chip}")
        self._status(LinkState.UP, f"{hello.firmware} on board {hello.board!r}: {hello.readers} "
                           f"{chip} readers, {hello.presence} presence sensors")
        with contextlib.suppress(LinkDown):
            self.request_snapshot()

    def _dispatch(self, msg: m.Message, now: float) -> None:
        if isinstance(msg, m.Tags):
            t = self._timebase.to_host(msg.t_ms, now)
            self.sink(TagsSeen(t, msg.reader, frozenset(u.hex().upper() for u in msg.uids)))
        elif isinstance(msg, m.Presence):
            t = self._timebase.to_host(msg.t_ms, now)
            self.sink(PresenceChanged(t, msg.sensor, msg.present))
        elif isinstance(msg, m.Snapshot):
            self._snapshot_pending = None
            t = self._timebase.to_host(msg.t_ms, now)
            self._snapshot_faults(msg, t)
            self.sink(Snapshot(t, tuple(frozenset(u.hex().upper() for u in r.uids)
                                        for r in msg.readers), msg.presence))
        elif isinstance(msg, m.Heartbeat):
            self._timebase.to_host(msg.t_ms, now)
            self.counters.heartbeats += 1
            self.counters.device = {k: getattr(msg, k) for k in
                                    ("cycles", "frames_tx", "rx_bad", "reader_errors",
                                     "cycle_ms")}
        elif isinstance(msg, m.ScanTimes):
            self._timebase.to_host(msg.t_ms, now)
            self.scan_times = msg
            self.counters.device["scan_cycle_ms"] = msg.cycle_ms
            slowest = msg.slowest_reader_ms
            if slowest is not None:
                self.counters.device["slowest_reader_ms"] = slowest
            if self.counters.device.get("cycles", 0) > 0:  # a whole cycle was measured
                # (before the first one ends, ``cycle_ms`` is 0: no figure yet)
                self.sink(ScanCycle(self._timebase.to_host(msg.t_ms, now), msg.cycle_ms / 1000,
                                    None if slowest is None else slowest / 1000))
        elif isinstance(msg, m.Button):
            t = self._timebase.to_host(msg.t_ms, now)
            names = m.BUTTON_NAMES
            self.sink(ButtonPressed(t, names[msg.button] if msg.button < len(names)
                                    else f"button{msg.button}"))
        elif isinstance(msg, m.Ack):
            with self._lock:
                waiter = self._waiters.pop(msg.cmd_seq, None)
            if waiter is not None:
                waiter.ack = msg
                waiter.done.set()
        elif isinstance(msg, m.Error):
            self._on_error(msg, self._timebase.to_host(msg.t_ms, now))

    def _on_error(self, msg: m.Error, t: float) -> None:
        kinds = {
            m.ERR_READER_FAULT: ("reader", False), m.ERR_READER_RECOVERED: ("reader", True),
            m.ERR_PRESENCE_FAULT: ("presence", False),
            m.ERR_PRESENCE_RECOVERED: ("presence", True),
        }
        if msg.code in kinds:
            source, ok = kinds[msg.code]
            self._fault(t, source, msg.arg, ok, msg.text)
            return
        source = "link" if msg.code == m.ERR_BAD_HOST_FRAME else "firmware"
        self.counters.faults += 1
        log.warning("sensor board reports: %s", msg.text)
        self.sink(HardwareFault(t, source, None, False, msg.text))

    def _fault(self, t: float, source: str, index: int, ok: bool, detail: str) -> None:
        key = (source, index)
        if ok == (key not in self._faulty):
            return  # nothing new (a snapshot repeating what an ERROR said)
        if ok:
            self._faulty.discard(key)
        else:
            self._faulty.add(key)
            self.counters.faults += 1
        (log.info if ok else log.warning)("sensor board: %s", detail)
        self.sink(HardwareFault(t, source, index, ok, detail))

    def _snapshot_faults(self, msg: m.Snapshot, t: float) -> None:
        for i, reader in enumerate(msg.readers):
            self._fault(t, "reader", i, not reader.faulty,
                        f"reader {i}: " + ("faulty (from snapshot)" if reader.faulty
                                           else "answers again (from snapshot)"))
        chain_bad = bool(msg.flags & m.SNAP_PRESENCE_FAULT)
        self._fault(t, "presence", 0, not chain_bad,
                    "presence chain " + ("broken" if chain_bad else "reads again")
                    + " (from snapshot)")

    def _status(self, state: LinkState, detail: str) -> None:
        """Emit LinkStatus when up/down or the reason changes, but not on every retry: a port
        that still cannot be opened while the link is down already is no news."""
        up = state is LinkState.UP
        changed = up != self._reported_up or detail != self.detail
        self.detail = detail
        if not up and self.state is LinkPhase.UP:
            self.state = LinkPhase.HANDSHAKE
        if changed and not (state is LinkState.RETRYING and self._reported_up is False):
            self._reported_up = up
            (log.info if up else log.warning)("sensor link %s: %s", "up" if up else "down",
                                              detail)
            self.sink(LinkStatus(self.clock(), state, detail))
        self._reported_up = up


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]
