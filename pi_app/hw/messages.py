"""Link messages, Pi side: one typed class per message type, each with ``encode``/``decode``.

The layouts are in firmware/PROTOCOL.md; firmware/tikifw/proto.py builds the same bytes on the
Pico (firmware/test_vectors.json checks both). All integers are little-endian. ``decode``
raises :class:`MessageError` on any payload that does not fit its layout exactly, so a frame
with a good CRC but a wrong body (a firmware bug, a protocol mix-up) is counted, not trusted.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import ClassVar

from pi_app.errors import UnreadableInput

# Device -> host.
HELLO, TAGS, PRESENCE, SNAPSHOT, HEARTBEAT, BUTTON, ACK, ERROR, SCAN_TIMES = range(0x01, 0x0A)
# Host -> device.
CMD_HELLO, CMD_SNAPSHOT, CMD_CONFIG, CMD_SELFTEST = range(0x41, 0x45)

CHIPS = {0: "none", 1: "MFRC522", 2: "PN5180", 3: "SIM"}
ACK_OK, ACK_BAD_ARGUMENT, ACK_UNKNOWN_COMMAND = 0, 1, 2
ERR_READER_FAULT, ERR_READER_RECOVERED = 1, 2
ERR_PRESENCE_FAULT, ERR_PRESENCE_RECOVERED = 3, 4
ERR_BAD_HOST_FRAME, ERR_INTERNAL = 5, 6
SNAP_PRESENCE_FAULT = 0x01
MAX_TAGS = 32
MAX_UID = 10
#: Firmware button numbers (a board may wire player buttons to the Pico instead of the Pi).
BUTTON_NAMES = ("ok", "back", "menu")


class MessageError(UnreadableInput, ValueError):
    """A payload that does not match its message type's layout."""


class _Reader:
    """A cursor over a payload that fails with MessageError instead of struct.error."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.pos = 0
        self.name = name

    def take(self, fmt: str) -> tuple[int, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise MessageError(f"{self.name}: payload ends early")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values

    def one(self, fmt: str) -> int:
        return self.take(fmt)[0]

    def raw(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise MessageError(f"{self.name}: payload ends early")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def str8(self) -> str:
        try:
            return self.raw(self.one("B")).decode()
        except UnicodeDecodeError:
            raise MessageError(f"{self.name}: text is not UTF-8") from None

    def uids(self) -> tuple[bytes, ...]:
        count = self.one("B")
        if count > MAX_TAGS:
            raise MessageError(f"{self.name}: {count} tags is more than {MAX_TAGS}")
        out = []
        for _ in range(count):
            size = self.one("B")
            if not 1 <= size <= MAX_UID:
                raise MessageError(f"{self.name}: a UID of {size} bytes")
            out.append(self.raw(size))
        return tuple(out)

    def bits(self, count: int) -> tuple[bool, ...]:
        raw = self.raw((count + 7) // 8)
        return tuple(bool(raw[i // 8] >> (i % 8) & 1) for i in range(count))

    def end(self) -> None:
        if self.pos != len(self.data):
            raise MessageError(f"{self.name}: {len(self.data) - self.pos} bytes left over")


def _str8(text: str) -> bytes:
    raw = text.encode()[:255]
    return bytes((len(raw),)) + raw


def _uids(uids: tuple[bytes, ...]) -> bytes:
    out = bytearray((len(uids),))
    for uid in uids:
        out.append(len(uid))
        out += uid
    return bytes(out)


def _bits(states: tuple[bool, ...]) -> bytes:
    out = bytearray((len(states) + 7) // 8)
    for i, on in enumerate(states):
        if on:
            out[i // 8] |= 1 << (i % 8)
    return bytes(out)


@dataclass(frozen=True, slots=True)
class Hello:
    TYPE: ClassVar[int] = HELLO
    protocol: int
    chip: int
    readers: int
    presence: int
    uptime_ms: int
    firmware: str
    board: str

    def encode(self) -> bytes:
        return (struct.pack("<BBBHI", self.protocol, self.chip, self.readers, self.presence,
                            self.uptime_ms) + _str8(self.firmware) + _str8(self.board))

    @classmethod
    def decode(cls, payload: bytes) -> Hello:
        r = _Reader(payload, "HELLO")
        protocol, chip, readers, presence, uptime = r.take("<BBBHI")
        out = cls(protocol, chip, readers, presence, uptime, r.str8(), r.str8())
        r.end()
        return out

    @staticmethod
    def protocol_of(payload: bytes) -> int | None:
        """The protocol byte alone: readable whatever the rest of a future HELLO looks like."""
        return payload[0] if payload else None


@dataclass(frozen=True, slots=True)
class Tags:
    TYPE: ClassVar[int] = TAGS
    t_ms: int
    reader: int
    uids: tuple[bytes, ...]

    def encode(self) -> bytes:
        return struct.pack("<IB", self.t_ms, self.reader) + _uids(self.uids)

    @classmethod
    def decode(cls, payload: bytes) -> Tags:
        r = _Reader(payload, "TAGS")
        t_ms, reader = r.take("<IB")
        out = cls(t_ms, reader, r.uids())
        r.end()
        return out


@dataclass(frozen=True, slots=True)
class Presence:
    TYPE: ClassVar[int] = PRESENCE
    t_ms: int
    sensor: int
    present: bool

    def encode(self) -> bytes:
        return struct.pack("<IHB", self.t_ms, self.sensor, int(self.present))

    @classmethod
    def decode(cls, payload: bytes) -> Presence:
        r = _Reader(payload, "PRESENCE")
        t_ms, sensor, state = r.take("<IHB")
        r.end()
        if state > 1:
            raise MessageError(f"PRESENCE: state {state} is neither 0 nor 1")
        return cls(t_ms, sensor, bool(state))


@dataclass(frozen=True, slots=True)
class ReaderState:
    status: int
    uids: tuple[bytes, ...]

    @property
    def faulty(self) -> bool:
        return self.status != 0


@dataclass(frozen=True, slots=True)
class Snapshot:
    TYPE: ClassVar[int] = SNAPSHOT
    t_ms: int
    flags: int
    readers: tuple[ReaderState, ...]
    presence: tuple[bool, ...]

    def encode(self) -> bytes:
        out = bytearray(struct.pack("<IBB", self.t_ms, self.flags, len(self.readers)))
        for reader in self.readers:
            out.append(reader.status)
            out += _uids(reader.uids)
        out += struct.pack("<H", len(self.presence)) + _bits(self.presence)
        return bytes(out)

    @classmethod
    def decode(cls, payload: bytes) -> Snapshot:
        r = _Reader(payload, "SNAPSHOT")
        t_ms, flags, count = r.take("<IBB")
        readers = tuple(ReaderState(r.one("B"), r.uids()) for _ in range(count))
        presence = r.bits(r.one("<H"))
        r.end()
        return cls(t_ms, flags, readers, presence)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    TYPE: ClassVar[int] = HEARTBEAT
    t_ms: int
    cycles: int
    frames_tx: int
    rx_bad: int
    reader_errors: int
    cycle_ms: int

    FORMAT: ClassVar[str] = "<IIIHHH"

    def encode(self) -> bytes:
        return struct.pack(self.FORMAT, self.t_ms, self.cycles, self.frames_tx, self.rx_bad,
                           self.reader_errors, self.cycle_ms)

    @classmethod
    def decode(cls, payload: bytes) -> Heartbeat:
        r = _Reader(payload, "HEARTBEAT")
        out = cls(*r.take(cls.FORMAT))
        r.end()
        return out


@dataclass(frozen=True, slots=True)
class ScanTimes:
    """The board's measured scan cycle: the last full scan and each reader's last scan, in ms.

    Optional in protocol 1 (older firmware never sends it). ``reader_ms`` holds None for a
    reader not scanned yet (0xFFFF on the wire).
    """

    TYPE: ClassVar[int] = SCAN_TIMES
    t_ms: int
    cycle_ms: int
    reader_ms: tuple[int | None, ...]

    UNMEASURED: ClassVar[int] = 0xFFFF

    def encode(self) -> bytes:
        out = struct.pack("<IHB", self.t_ms, self.cycle_ms, len(self.reader_ms))
        return out + b"".join(struct.pack("<H", self.UNMEASURED if ms is None else ms)
                              for ms in self.reader_ms)

    @classmethod
    def decode(cls, payload: bytes) -> ScanTimes:
        r = _Reader(payload, "SCAN_TIMES")
        t_ms, cycle_ms, n = r.take("<IHB")
        values = r.take(f"<{n}H")
        r.end()
        return cls(t_ms, cycle_ms, tuple(None if v == cls.UNMEASURED else v for v in values))

    @property
    def slowest_reader_ms(self) -> int | None:
        measured = [ms for ms in self.reader_ms if ms is not None]
        return max(measured) if measured else None


@dataclass(frozen=True, slots=True)
class Button:
    TYPE: ClassVar[int] = BUTTON
    t_ms: int
    button: int

    def encode(self) -> bytes:
        return struct.pack("<IB", self.t_ms, self.button)

    @classmethod
    def decode(cls, payload: bytes) -> Button:
        r = _Reader(payload, "BUTTON")
        out = cls(*r.take("<IB"))
        r.end()
        return out


@dataclass(frozen=True, slots=True)
class Ack:
    TYPE: ClassVar[int] = ACK
    cmd_seq: int
    cmd: int
    status: int
    data: bytes = b""

    def encode(self) -> bytes:
        return struct.pack("<BBB", self.cmd_seq, self.cmd, self.status) + self.data

    @classmethod
    def decode(cls, payload: bytes) -> Ack:
        r = _Reader(payload, "ACK")
        cmd_seq, cmd, status = r.take("<BBB")
        return cls(cmd_seq, cmd, status, payload[r.pos:])


@dataclass(frozen=True, slots=True)
class Error:
    TYPE: ClassVar[int] = ERROR
    t_ms: int
    code: int
    arg: int
    text: str

    def encode(self) -> bytes:
        return struct.pack("<IBH", self.t_ms, self.code, self.arg) + _str8(self.text)

    @classmethod
    def decode(cls, payload: bytes) -> Error:
        r = _Reader(payload, "ERROR")
        t_ms, code, arg = r.take("<IBH")
        out = cls(t_ms, code, arg, r.str8())
        r.end()
        return out


@dataclass(frozen=True, slots=True)
class SelftestResult:
    """The data of the ACK to CMD_SELFTEST."""

    readers: tuple[int, ...]
    presence_ok: bool
    raw: tuple[bool, ...]

    def encode(self) -> bytes:
        return (bytes((len(self.readers),)) + bytes(self.readers)
                + bytes((0 if self.presence_ok else 1,))
                + struct.pack("<H", len(self.raw)) + _bits(self.raw))

    @classmethod
    def decode(cls, data: bytes) -> SelftestResult:
        r = _Reader(data, "SELFTEST")
        readers = tuple(r.raw(r.one("B")))
        chain = r.one("B")
        raw = r.bits(r.one("<H"))
        r.end()
        return cls(readers, chain == 0, raw)


# --- host -> device -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CmdHello:
    TYPE: ClassVar[int] = CMD_HELLO

    def encode(self) -> bytes:
        return b""

    @classmethod
    def decode(cls, payload: bytes) -> CmdHello:
        _Reader(payload, "CMD_HELLO").end()
        return cls()


@dataclass(frozen=True, slots=True)
class CmdSnapshot:
    TYPE: ClassVar[int] = CMD_SNAPSHOT

    def encode(self) -> bytes:
        return b""

    @classmethod
    def decode(cls, payload: bytes) -> CmdSnapshot:
        _Reader(payload, "CMD_SNAPSHOT").end()
        return cls()


@dataclass(frozen=True, slots=True)
class CmdConfig:
    """Change scan settings; a None field keeps the device's value (sent as 0xFF / 0xFFFF)."""

    TYPE: ClassVar[int] = CMD_CONFIG
    scan_period_ms: int | None = None
    absent_misses: int | None = None
    presence_debounce_ms: int | None = None
    snapshot_ms: int | None = None
    heartbeat_ms: int | None = None

    FORMAT: ClassVar[str] = "<HBHHH"

    def encode(self) -> bytes:
        values = (self.scan_period_ms, self.absent_misses, self.presence_debounce_ms,
                  self.snapshot_ms, self.heartbeat_ms)
        keeps = (0xFFFF, 0xFF, 0xFFFF, 0xFFFF, 0xFFFF)
        return struct.pack(self.FORMAT, *(k if v is None else v for v, k in
                                          zip(values, keeps, strict=True)))

    @classmethod
    def decode(cls, payload: bytes) -> CmdConfig:
        r = _Reader(payload, "CMD_CONFIG")
        raw = r.take(cls.FORMAT)
        r.end()
        keeps = (0xFFFF, 0xFF, 0xFFFF, 0xFFFF, 0xFFFF)
        values = [None if v == k else v for v, k in zip(raw, keeps, strict=True)]
        return cls(*values)


@dataclass(frozen=True, slots=True)
class CmdSelftest:
    TYPE: ClassVar[int] = CMD_SELFTEST

    def encode(self) -> bytes:
        return b""

    @classmethod
    def decode(cls, payload: bytes) -> CmdSelftest:
        _Reader(payload, "CMD_SELFTEST").end()
        return cls()


DeviceMessage = (Hello | Tags | Presence | Snapshot | Heartbeat | Button | Ack | Error
                 | ScanTimes)
Command = CmdHello | CmdSnapshot | CmdConfig | CmdSelftest
Message = DeviceMessage | Command

MESSAGE_TYPES: dict[int, type[Message]] = {
    cls.TYPE: cls for cls in (Hello, Tags, Presence, Snapshot, Heartbeat, Button, Ack, Error,
                              ScanTimes, CmdHello, CmdSnapshot, CmdConfig, CmdSelftest)
}
TYPE_NAMES = {t: cls.__name__.upper() for t, cls in MESSAGE_TYPES.items()}


def decode_message(mtype: int, payload: bytes) -> Message:
    """The message in a frame; MessageError for an unknown type or a malformed payload."""
    cls = MESSAGE_TYPES.get(mtype)
    if cls is None:
        raise MessageError(f"unknown message type 0x{mtype:02X}")
    return cls.decode(payload)
