"""The sensor link protocol, firmware side (firmware/PROTOCOL.md is the specification).

A frame is ``COBS(type, seq, length u16 LE, payload, CRC-32 LE) 0x00``. This module builds the
device-to-host payloads, parses the host's commands, and splits a byte stream into frames. The
Pi's ``pi_app/hw/frames.py`` and ``messages.py`` mirror it; ``firmware/test_vectors.json`` holds
both to the same bytes.
"""

import struct

from tikifw import cobs
from tikifw.crc import crc32

PROTOCOL_VERSION = 1
HEADER_LEN = 4
CRC_LEN = 4
MAX_PAYLOAD = 2048
# A COBS body of MAX_PAYLOAD plus header and CRC, plus its code bytes; anything longer is garbage.
MAX_ENCODED = MAX_PAYLOAD + HEADER_LEN + CRC_LEN + (MAX_PAYLOAD + 8) // 254 + 2

# Device -> host.
HELLO = 0x01
TAGS = 0x02
PRESENCE = 0x03
SNAPSHOT = 0x04
HEARTBEAT = 0x05
BUTTON = 0x06
ACK = 0x07
ERROR = 0x08
SCAN_TIMES = 0x09  # optional: a host that does not know it counts it as malformed, no more
# Host -> device.
CMD_HELLO = 0x41
CMD_SNAPSHOT = 0x42
CMD_CONFIG = 0x43
CMD_SELFTEST = 0x44

# Reader chips named in HELLO.
CHIP_NONE = 0
CHIP_MFRC522 = 1
CHIP_PN5180 = 2
CHIP_SIM = 3
CHIP_CODES = {"": CHIP_NONE, "MFRC522": CHIP_MFRC522, "PN5180": CHIP_PN5180, "SIM": CHIP_SIM}

# ACK status.
ACK_OK = 0
ACK_BAD_ARGUMENT = 1
ACK_UNKNOWN_COMMAND = 2

# ERROR codes.
ERR_READER_FAULT = 1
ERR_READER_RECOVERED = 2
ERR_PRESENCE_FAULT = 3
ERR_PRESENCE_RECOVERED = 4
ERR_BAD_HOST_FRAME = 5
ERR_INTERNAL = 6

# SNAPSHOT flags.
SNAP_PRESENCE_FAULT = 0x01

MAX_TAGS = 32
MAX_UID = 10


def frame(mtype, seq, payload):
    """One encoded frame, delimiter included."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError("payload too long")
    body = bytearray(struct.pack("<BBH", mtype, seq & 0xFF, len(payload)))
    body += payload
    body += struct.pack("<I", crc32(body))
    return cobs.encode(body) + b"\x00"


def unframe(encoded):
    """(type, seq, payload) of one frame without its delimiter; ValueError names what is wrong."""
    body = cobs.decode(encoded)
    if len(body) < HEADER_LEN + CRC_LEN:
        raise ValueError("short")
    if struct.unpack_from("<I", body, len(body) - CRC_LEN)[0] != crc32(body[:-CRC_LEN]):
        raise ValueError("crc")
    mtype, seq, n = struct.unpack_from("<BBH", body, 0)
    if n != len(body) - HEADER_LEN - CRC_LEN:
        raise ValueError("length")
    return mtype, seq, body[HEADER_LEN:-CRC_LEN]


class Deframer:
    """Splits a byte stream into frames: resynchronises at every 0x00 and bounds its buffer.

    ``feed`` returns the good frames; bad ones only count (``bad``, ``last_error``), because the
    firmware answers a bad command frame with one ERROR message, not by stopping.
    """

    def __init__(self, max_encoded=MAX_ENCODED):
        self.max_encoded = max_encoded
        self.buf = bytearray()
        self.dropping = False
        self.good = 0
        self.bad = 0
        self.last_error = ""

    def feed(self, data):
        frames = []
        start = 0
        n = len(data)
        while start <= n:
            i = data.find(b"\x00", start)
            if i < 0:
                if not self.dropping and start < n:
                    self.buf += data[start:]
                    if len(self.buf) > self.max_encoded:
                        self.buf = bytearray()
                        self.dropping = True
                        self._fail("oversize")
                break
            if self.dropping:
                self.dropping = False
            else:
                self.buf += data[start:i]
                if self.buf:
                    try:
                        frames.append(unframe(self.buf))
                        self.good += 1
                    except ValueError as exc:
                        self._fail(str(exc))
            self.buf = bytearray()
            start = i + 1
        return frames

    def _fail(self, why):
        self.bad += 1
        self.last_error = why


# --- payload builders (device -> host) ----------------------------------------------------------

def _str8(text):
    raw = text.encode()[:255]
    return bytes((len(raw),)) + raw


def _uids(uids):
    out = bytearray((len(uids),))
    for uid in uids:
        out.append(len(uid))
        out += uid
    return out


def hello(fw_version, board, chip, readers, presence, uptime_ms, protocol=PROTOCOL_VERSION):
    """Who the device is: protocol first, so any later layout can still be told apart."""
    return (struct.pack("<BBBHI", protocol, chip, readers, presence, uptime_ms & 0xFFFFFFFF)
            + _str8(fw_version) + _str8(board))


def tags(t_ms, reader, uids):
    """Reader ``reader`` now sees exactly ``uids`` (a sorted list of UID bytes)."""
    return struct.pack("<IB", t_ms & 0xFFFFFFFF, reader) + _uids(uids)


def presence(t_ms, sensor, present):
    return struct.pack("<IHB", t_ms & 0xFFFFFFFF, sensor, 1 if present else 0)


def presence_bitmap(states):
    """Presence states packed LSB first: sensor i is bit i % 8 of byte i // 8."""
    out = bytearray((len(states) + 7) // 8)
    for i, on in enumerate(states):
        if on:
            out[i // 8] |= 1 << (i % 8)
    return out


def snapshot(t_ms, flags, readers, states):
    """Every reader as (status, uids) with status 0 ok / 1 fault, then every presence sensor."""
    out = bytearray(struct.pack("<IBB", t_ms & 0xFFFFFFFF, flags, len(readers)))
    for status, uids in readers:
        out.append(status)
        out += _uids(uids)
    out += struct.pack("<H", len(states))
    out += presence_bitmap(states)
    return out


def heartbeat(t_ms, cycles, frames_tx, rx_bad, reader_errors, cycle_ms):
    """Liveness plus the device's counters; ``cycle_ms`` is the last full board scan."""
    return struct.pack("<IIIHHH", t_ms & 0xFFFFFFFF, cycles & 0xFFFFFFFF,
                       frames_tx & 0xFFFFFFFF, min(rx_bad, 0xFFFF), min(reader_errors, 0xFFFF),
                       min(cycle_ms, 0xFFFF))


UNMEASURED = 0xFFFF  # a reader not scanned yet


def scan_times(t_ms, cycle_ms, reader_ms):
    """The measured scan cycle: the last full board scan and each reader's last scan, in ms.

    ``reader_ms`` holds None for a reader not scanned yet (sent as 0xFFFF); values saturate.
    """
    out = bytearray(struct.pack("<IHB", t_ms & 0xFFFFFFFF, min(cycle_ms, 0xFFFF),
                                len(reader_ms)))
    for ms in reader_ms:
        out += struct.pack("<H", UNMEASURED if ms is None else min(ms, UNMEASURED - 1))
    return out


def button(t_ms, index):
    return struct.pack("<IB", t_ms & 0xFFFFFFFF, index)


def ack(cmd_seq, cmd, status, data=b""):
    return struct.pack("<BBB", cmd_seq, cmd, status) + data


def error(t_ms, code, arg, text):
    return struct.pack("<IBH", t_ms & 0xFFFFFFFF, code, arg) + _str8(text)


# --- command parsers (host -> device) -----------------------------------------------------------

CONFIG_FIELDS = ("scan_period_ms", "absent_misses", "presence_debounce_ms", "snapshot_ms",
                 "heartbeat_ms")
CONFIG_FORMAT = "<HBHHH"
CONFIG_LEN = 9
KEEP_U8 = 0xFF
KEEP_U16 = 0xFFFF


def parse_config(payload):
    """CMD_CONFIG as a dict of the fields to change (0xFF / 0xFFFF means "keep").

    ValueError if the payload is malformed; the ranges are checked by the device.
    """
    if len(payload) != CONFIG_LEN:
        raise ValueError("config payload must be 9 bytes")
    values = struct.unpack(CONFIG_FORMAT, payload)
    out = {}
    for i, name in enumerate(CONFIG_FIELDS):
        keep = KEEP_U8 if CONFIG_FORMAT[i + 1] == "B" else KEEP_U16
        if values[i] != keep:
            out[name] = values[i]
    return out


def selftest_result(reader_status, presence_ok, raw_bits):
    """ACK data of CMD_SELFTEST: per-reader status, presence-chain status and its raw bits."""
    out = bytearray((len(reader_status),))
    out += bytes(reader_status)
    out.append(0 if presence_ok else 1)
    out += struct.pack("<H", len(raw_bits))
    out += presence_bitmap(raw_bits)
    return out
