"""The serial link's timers, exactly, on a virtual clock: the snapshot retry, the liveness
timeout and the handshake interval, and sensor time mapped to the link's clock.

No pty and no thread: ``VirtualBoard`` calls the reader thread's own steps (``attach``,
``receive``) at times it chooses, as ``tools.bench.longsoak`` does, so a timer is checked to
the tick whatever the machine's load. ``tests/test_link.py`` runs the same link over real ptys
(marked ``realtime``)."""

from __future__ import annotations

import pytest

from pi_app.hw import messages as m
from pi_app.hw.frames import Frame, FrameDecoder, encode_frame
from pi_app.hw.link import SerialLink
from pi_app.readings import HwEvent, LinkStatus, PresenceChanged, Snapshot, TagsSeen

UID = "04A1B2C3D4E5F6"
HELLO = m.Hello(1, 1, 4, 4, 1000, "tikifw test", "topple")


class MemoryPort:
    """A port that keeps what the link writes (the board's bytes are handed to ``receive``)."""

    def __init__(self) -> None:
        self.written = bytearray()

    @property
    def in_waiting(self) -> int:
        return 0

    def read(self, size: int = 1) -> bytes:
        return b""

    def write(self, data: bytes, /) -> int:
        self.written += data
        return len(data)

    def reset_input_buffer(self) -> None:
        pass

    def close(self) -> None:
        pass


class VirtualBoard:
    """The link without its reader thread, on a virtual clock: the test calls the thread's own
    steps (``attach``, ``receive``) at the times it chooses, so a timer is checked to the
    tick, whatever the machine's load."""

    def __init__(self, **options: float) -> None:
        self.now = 100.0
        self.events: list[HwEvent] = []
        self.port = MemoryPort()
        self.decoder = FrameDecoder()
        self.seq = 0
        self.link = SerialLink("virtual", self.events.append, clock=lambda: self.now,
                               **options)  # type: ignore[arg-type]
        self.link.attach(self.port)

    def send(self, msg: m.Message, seq: int | None = None) -> None:
        """The board sends ``msg`` now (with the next sequence number, or ``seq``)."""
        seq = self.seq if seq is None else seq
        self.seq = (seq + 1) & 0xFF
        self.link.receive(encode_frame(msg.TYPE, seq, msg.encode()), self.now)

    def commands(self) -> list[Frame]:
        """The commands the link wrote since the last call."""
        frames = [f for f in self.decoder.feed(bytes(self.port.written)) if isinstance(f, Frame)]
        self.port.written.clear()
        return frames

    def run(self, seconds: float, *, talk: bool = False, until: int | None = None) -> float:
        """Let ``seconds`` pass in 10 ms reads (a HEARTBEAT every 100 ms if the board
        ``talk``s), or stop when the link sends a command of type ``until``: the time then."""
        end = self.now + seconds
        tick = 0
        while self.now < end - 1e-9:
            self.now = round(self.now + 0.01, 6)
            tick += 1
            if talk and tick % 10 == 0:
                self.send(m.Heartbeat(int(self.now * 1000), 0, 0, 0, 0, 0))
            else:
                self.link.receive(b"", self.now)
            if until is not None and any(f.type == until for f in self.commands()):
                return self.now
        return self.now

    def handshake(self) -> None:
        """HELLO (sensor time 1000 ms) and the snapshot the link asks for."""
        assert [f.type for f in self.commands()] == [m.CMD_HELLO]
        self.send(HELLO, 0)
        assert self.link.up and [f.type for f in self.commands()] == [m.CMD_SNAPSHOT]
        self.send(m.Snapshot(1000, 0, tuple(m.ReaderState(0, ()) for _ in range(4)),
                             (False,) * 4))


def test_lost_snapshot_answer_is_asked_for_again() -> None:
    board = VirtualBoard(snapshot_retry=0.5)
    board.handshake()
    s = board.seq
    board.send(m.Presence(1100, 1, True), s + 1)  # frame s is lost: a gap, a snapshot request
    first = board.commands()
    assert [f.type for f in first] == [m.CMD_SNAPSHOT]
    asked = board.now
    board.send(m.Ack(first[0].seq, m.CMD_SNAPSHOT, m.ACK_OK))
    board.seq += 1  # ... whose SNAPSHOT answer is lost too: the next frame shows a new gap,
    # within the burst that one request covers, so only a retry can heal it now (the periodic
    # snapshot would come seconds later; the link would work from a stale picture until then).
    again = board.run(3.0, talk=True, until=m.CMD_SNAPSHOT)
    assert again == pytest.approx(asked + 0.5)  # after the retry time, not at once nor later
    readers = tuple(m.ReaderState(0, (bytes.fromhex(UID),) if i == 2 else ()) for i in range(4))
    board.send(m.Snapshot(3000, 0, readers, (False, True, False, False)))
    snap = board.events[-1]
    assert isinstance(snap, Snapshot) and snap.tags[2] == frozenset({UID})  # healed
    # Answered: nothing is pending any more, so the link stops asking.
    board.run(3.0, talk=True)
    assert not [f for f in board.commands() if f.type == m.CMD_SNAPSHOT]
    c = board.link.counters
    assert c.missing == 2 and c.snapshots_requested == 3 and c.snapshot_retries == 1
    assert board.link.up


def test_silent_board_goes_down_after_the_timeout_and_handshakes_again() -> None:
    # A hair under 0.1 s: the 10 ms ticks are decimal fractions, which floats add inexactly.
    board = VirtualBoard(heartbeat_timeout=0.5, handshake_interval=0.099)
    board.handshake()
    board.run(0.5)  # silent for exactly the timeout: still up
    assert board.link.up and board.commands() == []
    board.run(0.01)
    down = board.events[-1]
    assert isinstance(down, LinkStatus) and not down.up and "silent for 0.5 s" in down.detail
    assert down.t == board.now and board.link.counters.liveness_timeouts == 1
    board.run(1.0)  # asks for HELLO at once, then every handshake_interval
    assert [f.type for f in board.commands()] == [m.CMD_HELLO] * (1 + 10)
    board.send(HELLO, 0)
    assert board.link.up and isinstance(board.events[-1], LinkStatus) and board.events[-1].up


def test_sensor_times_map_to_the_link_clock() -> None:
    """HELLO (sensor 1000 ms) arrives at host 100.0 s: later frames keep their sensor-side
    spacing whatever USB's delays, and none is mapped after it arrived."""
    board = VirtualBoard()
    board.handshake()
    board.now = 100.200  # 120 ms late
    board.send(m.Presence(1080, 3, True))
    board.now = 100.210  # the same USB burst
    board.send(m.Tags(1100, 2, (bytes.fromhex(UID),)))
    presence, tags = board.events[-2:]
    assert isinstance(presence, PresenceChanged) and presence.t == pytest.approx(100.080)
    assert isinstance(tags, TagsSeen) and tags.t == pytest.approx(100.100)
    board.now = 100.300  # sensor 1400 ms "arrived" 100 ms before it was taken (the two
    board.send(m.Tags(1400, 2, ()))  # clocks drifted): mapped to its arrival, not later
    assert board.events[-1].t == pytest.approx(100.300)

