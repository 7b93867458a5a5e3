"""Link frames, Pi side: ``COBS(type, seq, length, payload, CRC-32) 0x00`` (firmware/PROTOCOL.md).

Why CRC-32 and not CRC-16: with a 16-bit check one random chunk of garbage in 65,536 passes,
and a cable being plugged in or a REPL banner can produce thousands of chunks; with 32 bits
(plus the length field, which must also match) a random chunk passes about once in 2**48.
Both ends compute it in C (``binascii.crc32`` in MicroPython and CPython).
"""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass

from pi_app.errors import UnreadableInput
from pi_app.hw import cobs

PROTOCOL_VERSION = 1
HEADER = struct.Struct("<BBH")
CRC = struct.Struct("<I")
MAX_PAYLOAD = 2048
#: The longest encoded frame a decoder buffers before it gives up and waits for a delimiter.
MAX_ENCODED = MAX_PAYLOAD + HEADER.size + CRC.size + (MAX_PAYLOAD + 8) // 254 + 2

#: Why a frame was rejected, in the words the counters and log messages use.
REASONS = {
    "cobs": "not COBS (a zero byte or a block running past the end)",
    "short": "shorter than a header and a CRC",
    "crc": "CRC mismatch",
    "length": "length field does not match",
    "oversize": "no delimiter within the longest frame",
}


class FrameError(UnreadableInput, ValueError):
    """A chunk between two delimiters that is not a frame; ``reason`` is a key of REASONS."""

    def __init__(self, reason: str, size: int = 0) -> None:
        super().__init__(f"{reason}: {REASONS[reason]} ({size} bytes)")
        self.reason = reason
        self.size = size


@dataclass(frozen=True, slots=True)
class Frame:
    type: int
    seq: int
    payload: bytes


def crc32(data: bytes) -> int:
    return binascii.crc32(data) & 0xFFFFFFFF


def encode_frame(mtype: int, seq: int, payload: bytes) -> bytes:
    """One encoded frame including its 0x00 delimiter."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes is over the {MAX_PAYLOAD} limit")
    body = HEADER.pack(mtype, seq & 0xFF, len(payload)) + payload
    return cobs.encode(body + CRC.pack(crc32(body))) + b"\x00"


def decode_frame(encoded: bytes) -> Frame:
    """The frame in ``encoded`` (delimiter stripped); :class:`FrameError` says why not."""
    try:
        body = cobs.decode(encoded)
    except cobs.CobsError:
        raise FrameError("cobs", len(encoded)) from None
    if len(body) < HEADER.size + CRC.size:
        raise FrameError("short", len(encoded))
    if CRC.unpack_from(body, len(body) - CRC.size)[0] != crc32(body[:-CRC.size]):
        raise FrameError("crc", len(encoded))
    mtype, seq, length = HEADER.unpack_from(body)
    if length != len(body) - HEADER.size - CRC.size:
        raise FrameError("length", len(encoded))
    return Frame(mtype, seq, body[HEADER.size:-CRC.size])


class FrameDecoder:
    """Turns a byte stream into frames and rejects; resynchronises at every 0x00.

    The buffer is bounded: after ``max_encoded`` bytes without a delimiter the decoder reports
    one ``oversize`` reject and discards everything up to the next 0x00.
    """

    def __init__(self, max_encoded: int = MAX_ENCODED) -> None:
        self.max_encoded = max_encoded
        self._buf = bytearray()
        self._dropping = False

    def reset(self) -> None:
        self._buf.clear()
        self._dropping = False

    def feed(self, data: bytes) -> list[Frame | FrameError]:
        out: list[Frame | FrameError] = []
        start = 0
        n = len(data)
        while start < n:
            i = data.find(b"\x00", start)
            if i < 0:
                if not self._dropping:
                    self._buf += data[start:]
                    if len(self._buf) > self.max_encoded:
                        out.append(FrameError("oversize", len(self._buf)))
                        self._buf.clear()
                        self._dropping = True
                break
            if self._dropping:
                self._dropping = False
            else:
                self._buf += data[start:i]
                if self._buf:
                    try:
                        out.append(decode_frame(bytes(self._buf)))
                    except FrameError as exc:
                        out.append(exc)
            self._buf.clear()
            start = i + 1
        return out
