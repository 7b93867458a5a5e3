"""The serial link over real ptys: handshake, events, time mapping, and every kind of bad input
(garbage, truncated, duplicated, reordered and malformed frames, a wrong protocol version, a
silent board, a reader that stops answering, an unplugged and re-plugged cable).

Real ptys and the link's reader thread run on wall-clock time, so these tests are ``realtime``
and wait with generous deadlines for what must happen; the timers themselves are checked to
the tick on a virtual clock in ``tests/test_link_timers.py``."""

from __future__ import annotations

import asyncio
import os
import queue
import select
import time
from collections.abc import Callable, Iterator

import pytest

from pi_app.hw import messages as m
from pi_app.hw.frames import Frame, FrameDecoder, encode_frame
from pi_app.hw.link import LinkDown, SerialLink, asyncio_sink
from pi_app.hw.simfirmware import SimFirmware
from pi_app.hw.timebase import SensorClock
from pi_app.readings import HardwareFault, HwEvent, LinkStatus, PresenceChanged, Snapshot, TagsSeen

pytestmark = pytest.mark.realtime

UID = "04A1B2C3D4E5F6"
#: How long a test waits for something that must happen. Generous: these tests assert what
#: happens, not how fast (a loaded machine may take seconds); the timers themselves are
#: checked exactly on a virtual clock (``tests/test_link_timers.py``).
WAIT = 10.0
STACK = ("E004010000001001", "E004010000001011", "E004010000001021")


class Events:
    """What the link handed to its sink, with waiting."""

    def __init__(self) -> None:
        self.q: queue.Queue[HwEvent] = queue.Queue()
        self.seen: list[HwEvent] = []

    def __call__(self, event: HwEvent) -> None:
        self.q.put(event)

    def wait_for(self, match: Callable[[HwEvent], bool], timeout: float = WAIT) -> HwEvent:
        for event in self.seen:
            if match(event):
                self.seen.remove(event)
                return event
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                event = self.q.get(timeout=left)
            except queue.Empty:
                break
            if match(event):
                return event
            self.seen.append(event)
        raise AssertionError(f"no matching event in {timeout} s; saw {self.seen}")

    def drain(self, wait: float = 0.1) -> list[HwEvent]:
        time.sleep(wait)
        while True:
            try:
                self.seen.append(self.q.get_nowait())
            except queue.Empty:
                return self.seen


def until(done: Callable[[], bool], timeout: float = WAIT) -> None:
    """Poll ``done`` until it holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"not done in {timeout} s")
        time.sleep(0.01)


def link_up(e: HwEvent) -> bool:
    return isinstance(e, LinkStatus) and e.up


def link_down(e: HwEvent) -> bool:
    return isinstance(e, LinkStatus) and not e.up


class RawDevice:
    """The test plays the sensor board on the pty master, frame by frame."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.decoder = FrameDecoder()
        self.seq = 0

    def send(self, msg: m.Message, seq: int | None = None) -> bytes:
        """Send ``msg`` with the next sequence number, or with ``seq`` (which then sets it)."""
        seq = self.seq if seq is None else seq
        self.seq = (seq + 1) & 0xFF
        frame = encode_frame(msg.TYPE, seq, msg.encode())
        os.write(self.master, frame)
        return frame

    def raw(self, data: bytes) -> None:
        os.write(self.master, data)

    def commands(self, timeout: float = 0.3) -> list[Frame]:
        out: list[Frame] = []
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                break
            out += [f for f in self.decoder.feed(os.read(self.master, 4096))
                    if isinstance(f, Frame)]
        return out

    def wait_command(self, mtype: int, timeout: float = WAIT) -> Frame:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for frame in self.commands(0.05):
                if frame.type == mtype:
                    return frame
        raise AssertionError(f"the link sent no command 0x{mtype:02X}")


HELLO = m.Hello(1, 1, 4, 4, 1000, "tikifw test", "topple")


@pytest.fixture
def raw(pty_pair: tuple[int, str]) -> Iterator[tuple[RawDevice, SerialLink, Events]]:
    master, path = pty_pair
    device = RawDevice(master)
    events = Events()
    # The liveness timeout stays at its default: these devices only talk when a test says so,
    # and a test paused by a loaded machine must not see its board go silent.
    link = SerialLink(path, events, handshake_interval=0.1)
    link.start()
    try:
        device.wait_command(m.CMD_HELLO)
        device.send(HELLO, 0)
        events.wait_for(link_up)
        device.wait_command(m.CMD_SNAPSHOT)
        device.send(m.Snapshot(1000, 0, tuple(m.ReaderState(0, ()) for _ in range(4)),
                               (False,) * 4))
        events.wait_for(lambda e: isinstance(e, Snapshot))
        yield device, link, events
    finally:
        link.stop()


def test_handshake_events_and_time_mapping(raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    assert link.hello == HELLO and link.up
    # Sensor time 1080 is 80 ms after HELLO's 1000: sent at least that much later, the frames
    # below arrive no less delayed than HELLO did, so HELLO's offset maps them all.
    time.sleep(0.1)
    device.send(m.Presence(1080, 3, True))  # seen 20 ms before the tags
    device.send(m.Tags(1100, 2, (bytes.fromhex(UID),)))
    device.send(m.Snapshot(1100, 0, tuple(m.ReaderState(0, ()) for _ in range(4)),
                           (False, False, False, True)))
    presence = events.wait_for(lambda e: isinstance(e, PresenceChanged))
    tags = events.wait_for(lambda e: isinstance(e, TagsSeen))
    snap = events.wait_for(lambda e: isinstance(e, Snapshot))
    assert isinstance(tags, TagsSeen) and tags.reader == 2 and tags.tags == frozenset({UID})
    assert isinstance(presence, PresenceChanged) and presence.sensor == 3 and presence.present
    assert isinstance(snap, Snapshot) and snap.presence[3]
    # Sensor-side spacing is kept, and nothing is mapped into the future.
    assert tags.t - presence.t == pytest.approx(0.020, abs=0.001)
    assert snap.t == tags.t
    assert tags.t <= time.monotonic()
    assert link.counters.frames_good == 5 and link.counters.frames_bad == 0


def test_garbage_is_counted_and_the_link_recovers(
        raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    device.raw(b"MicroPython v1.23 \xff\xfe\x01\x02 REPL garbage\x00\x00\x13\x37")
    device.raw(b"\x00")
    device.send(m.Tags(1, 0, ()))
    events.wait_for(lambda e: isinstance(e, TagsSeen))
    assert link.counters.frames_bad == 2
    assert sum(link.counters.bad_reasons.values()) == 2
    assert link.counters.missing == 0


def test_truncated_frame_counts_a_gap_and_asks_for_a_snapshot(
        raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    s = device.seq
    frame = encode_frame(m.TAGS, s, m.Tags(1, 0, (bytes.fromhex(UID),)).encode())
    device.raw(frame[:-5] + b"\x00")  # cut short, then the delimiter
    device.send(m.Presence(2, 1, True), s + 1)
    events.wait_for(lambda e: isinstance(e, PresenceChanged))
    c = link.counters
    assert c.frames_bad == 1 and c.missing == 1
    device.wait_command(m.CMD_SNAPSHOT)
    assert c.snapshots_requested == 2  # the one after hello, and the one after the gap


def test_duplicate_frame_is_dropped(raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    frame = device.send(m.Tags(1, 0, (bytes.fromhex(UID),)))
    device.raw(frame)
    device.send(m.Tags(2, 1, ()))
    events.wait_for(lambda e: isinstance(e, TagsSeen) and e.reader == 1)
    assert [e.reader for e in events.drain(0.05) if isinstance(e, TagsSeen)] == [0]
    assert link.counters.duplicates == 1


def test_reordered_frames(raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    s = device.seq
    device.send(m.Tags(1, 1, ()), s)
    device.send(m.Tags(3, 3, ()), s + 2)
    device.send(m.Tags(2, 2, ()), s + 1)  # late: dropped, the snapshot heals
    device.send(m.Tags(4, 0, ()), s + 3)
    events.wait_for(lambda e: isinstance(e, TagsSeen) and e.reader == 0)
    readers = [e.reader for e in events.drain(0.05) if isinstance(e, TagsSeen)]
    assert readers == [1, 3]
    assert link.counters.missing == 1 and link.counters.reordered == 1
    device.wait_command(m.CMD_SNAPSHOT)


def test_malformed_payload_with_good_crc(raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    s = device.seq
    device.raw(encode_frame(m.TAGS, s, b"\x01\x02\x03"))
    device.raw(encode_frame(0x66, s + 1, b""))
    device.send(m.Tags(3, 0, ()), s + 2)
    events.wait_for(lambda e: isinstance(e, TagsSeen))
    assert link.counters.malformed == 2 and link.up


def test_silent_board_goes_down_and_handshakes_again(
        raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    down = events.wait_for(link_down)
    assert isinstance(down, LinkStatus) and "silent" in down.detail
    assert link.counters.liveness_timeouts == 1
    device.wait_command(m.CMD_HELLO)
    device.send(HELLO, 0)
    events.wait_for(link_up)


def test_device_errors_become_faults(raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    device.send(m.Error(10, m.ERR_READER_FAULT, 2, "reader 2: no answer"))
    fault = events.wait_for(lambda e: isinstance(e, HardwareFault))
    assert fault == HardwareFault(fault.t, "reader", 2, False, "reader 2: no answer")
    # The next snapshot still says "faulty": nothing new. Then it heals.
    readers = tuple(m.ReaderState(1 if i == 2 else 0, ()) for i in range(4))
    device.send(m.Snapshot(20, 0, readers, (False,) * 4))
    events.wait_for(lambda e: isinstance(e, Snapshot))
    device.send(m.Error(30, m.ERR_READER_RECOVERED, 2, "reader 2 answers again"))
    healed = events.wait_for(lambda e: isinstance(e, HardwareFault))
    assert isinstance(healed, HardwareFault) and healed.ok and healed.index == 2
    assert link.counters.faults == 1


def test_commands_wait_for_their_ack(raw: tuple[RawDevice, SerialLink, Events]) -> None:
    device, link, events = raw
    with pytest.raises(TimeoutError):
        link.request(m.CmdSelftest(), timeout=0.1)
    cmd = device.wait_command(m.CMD_SELFTEST)
    # A late ACK for a command nobody waits for any more is harmless.
    device.send(m.Ack(cmd.seq, m.CMD_SELFTEST, m.ACK_OK))
    device.send(m.Tags(1, 0, ()))  # handled after the ACK: the link went on
    events.wait_for(lambda e: isinstance(e, TagsSeen))
    assert link.up


def test_wrong_protocol_version(pty_pair: tuple[int, str]) -> None:
    master, path = pty_pair
    device = RawDevice(master)
    events = Events()
    with SerialLink(path, events, handshake_interval=0.05) as link:
        device.wait_command(m.CMD_HELLO)
        device.send(m.Hello(2, 1, 4, 4, 0, "tikifw 9", "topple"), 0)
        down = events.wait_for(link_down)
        assert isinstance(down, LinkStatus)
        assert "version mismatch" in down.detail and "protocol 2" in down.detail
        device.send(m.Tags(1, 0, ()), 1)
        until(lambda: link.counters.ignored >= 1)
        assert link.state == "mismatch"
        assert link.counters.version_mismatches == 1
        device.send(HELLO, 0)  # flashed the right firmware
        events.wait_for(link_up)


def test_board_set_up_for_another_game(pty_pair: tuple[int, str]) -> None:
    master, path = pty_pair
    device = RawDevice(master)
    events = Events()
    with SerialLink(path, events, expect_board="tactiki"):
        device.wait_command(m.CMD_HELLO)
        device.send(HELLO, 0)
        down = events.wait_for(link_down)
        assert isinstance(down, LinkStatus) and "'topple'" in down.detail


def test_missing_device_reports_once_and_keeps_trying(tmp_path: os.PathLike[str]) -> None:
    events = Events()
    path = os.path.join(tmp_path, "nothing-here")
    with SerialLink(path, events, backoff=(0.01, 0.04)) as link:
        until(lambda: link.counters.open_failures >= 4)
        with pytest.raises(LinkDown, match="not connected"):
            link.send(m.CmdSnapshot())
    statuses = [e for e in events.drain(0) if isinstance(e, LinkStatus)]
    assert len(statuses) == 1 and "cannot open" in statuses[0].detail
    assert link.counters.open_failures >= 4


# --- against the simulated firmware (the firmware's own code over a pty) ----------------------

@pytest.fixture
def board() -> Iterator[tuple[SimFirmware, SerialLink, Events]]:
    events = Events()
    with SimFirmware(4, 4, board="topple", scan_period_ms=20, heartbeat_ms=100) as sim:
        link = SerialLink(sim.path, events, heartbeat_timeout=0.5, backoff=(0.02, 0.1))
        with link:
            events.wait_for(link_up)
            events.wait_for(lambda e: isinstance(e, Snapshot))
            yield sim, link, events


def test_sim_tags_presence_and_selftest(board: tuple[SimFirmware, SerialLink, Events]) -> None:
    sim, link, events = board
    sim.set_tags(1, STACK)
    sim.set_presence(2, True)
    tags = events.wait_for(lambda e: isinstance(e, TagsSeen))
    assert isinstance(tags, TagsSeen) and tags.reader == 1 and tags.tags == frozenset(STACK)
    events.wait_for(lambda e: isinstance(e, PresenceChanged) and e.sensor == 2)
    result = link.self_test()
    assert result.readers == (0, 0, 0, 0) and result.presence_ok
    ack = link.configure(m.CmdConfig(scan_period_ms=1))
    assert ack.status == m.ACK_BAD_ARGUMENT and b"scan_period_ms" in ack.data
    assert link.configure(m.CmdConfig(absent_misses=4)).status == m.ACK_OK


def test_sim_flaky_stack_does_not_flicker(board: tuple[SimFirmware, SerialLink, Events]) -> None:
    sim, _link, events = board
    sim.set_tags(0, STACK)
    events.wait_for(lambda e: isinstance(e, TagsSeen))
    sim.set_flaky(0, 2)  # every other scan misses one of the three
    later = [e for e in events.drain(0.4) if isinstance(e, TagsSeen)]
    assert later == []


def test_sim_reader_stops_answering(board: tuple[SimFirmware, SerialLink, Events]) -> None:
    sim, link, events = board
    sim.set_tags(3, [UID])
    events.wait_for(lambda e: isinstance(e, TagsSeen))
    sim.fail_reader(3)
    fault = events.wait_for(lambda e: isinstance(e, HardwareFault))
    assert isinstance(fault, HardwareFault) and fault.index == 3 and not fault.ok
    assert "does not answer" in fault.detail
    sim.fail_reader(3, False)
    healed = events.wait_for(lambda e: isinstance(e, HardwareFault))
    assert isinstance(healed, HardwareFault) and healed.ok
    assert not [e for e in events.seen if isinstance(e, TagsSeen) and e.reader == 3]
    assert link.counters.faults == 1


def test_sim_presence_chain_breaks(board: tuple[SimFirmware, SerialLink, Events]) -> None:
    sim, _link, events = board
    sim.break_chain()
    fault = events.wait_for(lambda e: isinstance(e, HardwareFault))
    assert isinstance(fault, HardwareFault) and fault.source == "presence" and not fault.ok
    sim.break_chain(False)
    events.wait_for(lambda e: isinstance(e, HardwareFault) and e.ok)


def test_sim_unplug_and_replug(board: tuple[SimFirmware, SerialLink, Events]) -> None:
    sim, link, events = board
    sim.set_tags(0, [UID])
    events.wait_for(lambda e: isinstance(e, TagsSeen))
    sim.unplug()
    down = events.wait_for(link_down)
    assert isinstance(down, LinkStatus) and "reconnecting" in down.detail
    assert not os.path.exists(sim.path)
    until(lambda: link.counters.open_failures >= 1)  # it tried the vanished path
    sim.replug()  # the firmware boots again; the pieces are still on the board
    events.wait_for(link_up)
    # The board's picture comes back with the piece: in the first snapshot, or (when that
    # snapshot answered before the first scan reached reader 0) in the TAGS that follow.
    events.wait_for(lambda e: (isinstance(e, Snapshot) and e.tags[0] == frozenset({UID}))
                    or (isinstance(e, TagsSeen) and e.reader == 0 and bool(e.tags)))
    c = link.counters
    assert c.connects == 2 and c.disconnects == 1 and c.open_failures >= 1
    assert c.snapshots_requested >= 2


def test_sim_garbage_in_the_stream(board: tuple[SimFirmware, SerialLink, Events]) -> None:
    sim, link, events = board
    sim.inject(b"\x00Traceback (most recent call last):\r\n  garbage\x01\x02")
    sim.set_tags(2, [UID])  # its TAGS frame is spoilt by the garbage glued in front ...
    snap = events.wait_for(lambda e: isinstance(e, Snapshot) and bool(e.tags[2]))
    assert isinstance(snap, Snapshot) and snap.tags[2] == frozenset({UID})  # ... and healed
    c = link.counters
    assert c.frames_bad >= 1 and c.missing >= 1 and link.up


def test_asyncio_sink_delivers_on_the_loop() -> None:
    async def main() -> HwEvent:
        q: asyncio.Queue[HwEvent] = asyncio.Queue()
        with SimFirmware(2, 0) as sim, \
                SerialLink(sim.path, asyncio_sink(asyncio.get_running_loop(), q)):
            return await asyncio.wait_for(q.get(), timeout=WAIT)

    first = asyncio.run(main())
    assert isinstance(first, LinkStatus) and first.up


# --- time mapping -----------------------------------------------------------------------------

def test_sensor_clock_keeps_spacing_and_never_maps_into_the_future() -> None:
    clock = SensorClock()
    assert clock.to_host(1000, 50.010) == pytest.approx(50.010)
    # A frame delayed by USB batching: mapped by the best (least delayed) offset seen.
    assert clock.to_host(1100, 50.200) == pytest.approx(50.110)
    assert clock.to_host(1200, 50.205) == pytest.approx(50.205)  # a faster frame: new offset
    assert clock.to_host(1100, 50.206) == pytest.approx(50.105)


def test_sensor_clock_unwraps_32_bits() -> None:
    clock = SensorClock()
    clock.to_host(0xFFFFFF00, 100.0)
    t = clock.to_host(0x00000010, 100.272)
    assert t == pytest.approx(100.272)
    clock.reset()
    assert clock.to_host(5, 7.0) == 7.0


def test_second_program_on_the_port_is_refused(
        board: tuple[SimFirmware, SerialLink, Events]) -> None:
    sim, link, _events = board
    other = Events()
    with SerialLink(sim.path, other, backoff=(0.05, 0.1)):
        down = other.wait_for(link_down)
    assert isinstance(down, LinkStatus) and "lock" in down.detail
    assert link.up  # the first program keeps its board
