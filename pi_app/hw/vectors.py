"""firmware/test_vectors.json: the bytes both codecs must produce and accept.

``python -m pi_app.hw.vectors``, run from the checkout's root, rewrites the file;
tests/test_protocol.py fails when the file and this generator disagree, and the firmware tests
(CPython and MicroPython) check the firmware codec against the same file. The COBS and CRC-32
vectors are the published reference examples, typed in, not computed, so they check both
implementations independently.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from pi_app.hw import cobs
from pi_app.hw import messages as m
from pi_app.hw.frames import CRC, HEADER, crc32, decode_frame, encode_frame
from pi_app.hw.frames import FrameError as _FrameError

#: The checkout's vectors file, relative to the current directory (the firmware's tests read it
#: there; it is not package data).
VECTORS_PATH = Path("firmware") / "test_vectors.json"

#: Reference COBS examples (data, encoding without the delimiter).
COBS_REFERENCE = [
    ("", "01"),
    ("00", "0101"),
    ("0000", "010101"),
    ("00110000", "0102110101"),
    ("11220033", "0311220233"),
    ("11223344", "0511223344"),
    ("11000000", "0211010101"),
    ("".join(f"{i:02x}" for i in range(1, 255)), "ff" + "".join(f"{i:02x}" for i in range(1, 255))),
    ("".join(f"{i:02x}" for i in range(0, 255)),
     "01ff" + "".join(f"{i:02x}" for i in range(1, 255))),
    ("".join(f"{i:02x}" for i in range(1, 256)),
     "ff" + "".join(f"{i:02x}" for i in range(1, 255)) + "02ff"),
    ("".join(f"{i:02x}" for i in range(2, 256)) + "00",
     "ff" + "".join(f"{i:02x}" for i in range(2, 256)) + "0101"),
    ("".join(f"{i:02x}" for i in range(3, 256)) + "0001",
     "fe" + "".join(f"{i:02x}" for i in range(3, 256)) + "0201"),
]

#: CRC-32/ISO-HDLC reference values.
CRC_REFERENCE: list[dict[str, Any]] = [
    {"ascii": "123456789", "crc": 0xCBF43926},
    {"data": "", "crc": 0},
    {"ascii": "The quick brown fox jumps over the lazy dog", "crc": 0x414FA339},
]

UID7 = bytes.fromhex("04A1B2C3D4E5F6")
UID4 = bytes.fromhex("DEADBEEF")
STACK = tuple(bytes.fromhex(f"E00401000000{i:02X}{i * 0x11 & 0xFF:02X}") for i in range(5))


def sample_messages() -> list[tuple[str, int, m.Message]]:
    """(name, seq, message) for every message type, with edge values."""
    big = tuple(m.ReaderState(1 if r == 7 else 0, STACK if r % 3 == 0 else (UID7,))
                for r in range(25))
    return [
        ("hello", 0, m.Hello(1, 1, 10, 10, 123456, "tikifw 0.1.0", "topple")),
        ("hello_protocol_2", 0, m.Hello(2, 2, 25, 25, 5, "tikifw 9.0.0", "tactiki")),
        ("tags_one", 1, m.Tags(1000, 3, (UID7,))),
        ("tags_empty", 2, m.Tags(1100, 3, ())),
        ("tags_stack", 3, m.Tags(0xFFFFFFFF, 24, STACK)),
        ("tags_uid4", 4, m.Tags(7, 0, (UID4,))),
        ("presence_on", 5, m.Presence(1234, 0, True)),
        ("presence_off_u16", 6, m.Presence(1300, 300, False)),
        ("snapshot_topple", 7, m.Snapshot(2000, 0, tuple(
            m.ReaderState(0, (UID7,) if r in (0, 4) else ()) for r in range(10)),
            tuple(r in (0, 4, 9) for r in range(10)))),
        ("snapshot_tactiki_faults", 8, m.Snapshot(4000, m.SNAP_PRESENCE_FAULT, big,
                                                  tuple(i % 2 == 0 for i in range(25)))),
        ("snapshot_empty", 9, m.Snapshot(0, 0, (), ())),
        ("heartbeat", 10, m.Heartbeat(5000, 50, 123, 2, 7, 96)),
        ("heartbeat_max", 11, m.Heartbeat(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFF, 0xFFFF,
                                          0xFFFF)),
        ("scan_times", 12, m.ScanTimes(5000, 412, (9, 23, None, 0xFFFE))),
        ("scan_times_no_readers", 12, m.ScanTimes(0, 0, ())),
        ("button", 12, m.Button(6000, 2)),
        ("ack_ok", 13, m.Ack(5, m.CMD_SNAPSHOT, m.ACK_OK)),
        ("ack_selftest", 14, m.Ack(6, m.CMD_SELFTEST, m.ACK_OK, m.SelftestResult(
            (0, 1, 0), True, (False, True, True, False, True, False)).encode())),
        ("ack_bad_argument", 15, m.Ack(7, m.CMD_CONFIG, m.ACK_BAD_ARGUMENT,
                                       b"scan_period_ms must be 5..10000, not 0")),
        ("error_reader", 16, m.Error(7000, m.ERR_READER_FAULT, 2,
                                     "reader 2: MFRC522 does not answer (no interrupt)")),
        ("error_utf8", 255, m.Error(8000, m.ERR_INTERNAL, 0, "caf\u00e9 \u2713")),
        ("cmd_hello", 0, m.CmdHello()),
        ("cmd_snapshot", 1, m.CmdSnapshot()),
        ("cmd_config_all", 2, m.CmdConfig(50, 4, 20, 1000, 250)),
        ("cmd_config_partial", 3, m.CmdConfig(scan_period_ms=120)),
        ("cmd_selftest", 255, m.CmdSelftest()),
    ]


def to_fields(msg: m.Message) -> dict[str, Any]:
    """A message's fields in JSON terms: bytes as upper-case hex."""
    def conv(value: Any) -> Any:
        if isinstance(value, bytes):
            return value.hex().upper()
        if isinstance(value, m.ReaderState):
            return {"status": value.status, "uids": [u.hex().upper() for u in value.uids]}
        if isinstance(value, tuple):
            return [conv(v) for v in value]
        return value
    return {f.name: conv(getattr(msg, f.name)) for f in dataclasses.fields(msg)}


def from_fields(mtype: int, fields: dict[str, Any]) -> m.Message:
    """The message a vector's fields describe (the inverse of :func:`to_fields`)."""
    cls = m.MESSAGE_TYPES[mtype]
    args: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = fields[f.name]
        if f.name in ("uids",):
            value = tuple(bytes.fromhex(u) for u in value)
        elif f.name == "data":
            value = bytes.fromhex(value)
        elif f.name == "readers" and cls is m.Snapshot:
            value = tuple(m.ReaderState(r["status"], tuple(bytes.fromhex(u) for u in r["uids"]))
                          for r in value)
        elif (f.name == "presence" and cls is m.Snapshot) or f.name == "reader_ms":
            value = tuple(value)
        args[f.name] = value
    return cls(**args)


def _bad_frames() -> list[dict[str, str]]:
    good = encode_frame(m.TAGS, 1, m.Tags(1000, 3, (UID7,)).encode())[:-1]
    flipped = bytearray(good)
    flipped[5] ^= 0x01
    body = HEADER.pack(m.TAGS, 1, 99) + b"\x01\x02\x03"
    wrong_length = cobs.encode(body + CRC.pack(crc32(body)))
    cases = {
        "truncated": good[:-3],
        "bit_flip": bytes(flipped),
        "short": bytes.fromhex("030102"),
        "wrong_length": wrong_length,
        "cobs_overrun": bytes.fromhex("05112233"),
        "zero_inside": bytes.fromhex("0311000233"),
        "ascii_noise": b"MicroPython v1.23 on 2024-06-02; Raspberry Pi Pico",
    }
    out = []
    for name, raw in cases.items():
        try:
            decode_frame(raw)
            raise AssertionError(f"bad frame {name} decodes")
        except _FrameError as exc:
            out.append({"name": name, "frame": raw.hex(), "error": exc.reason})
    return out


def build_vectors() -> dict[str, Any]:
    direction = {"Cmd": "host"}
    msgs = []
    for name, seq, msg in sample_messages():
        payload = msg.encode()
        msgs.append({
            "name": name,
            "direction": direction.get(type(msg).__name__[:3], "device"),
            "type": msg.TYPE,
            "seq": seq,
            "fields": to_fields(msg),
            "payload": payload.hex(),
            "frame": encode_frame(msg.TYPE, seq, payload).hex(),
        })
    return {
        "_doc": "Protocol test vectors (firmware/PROTOCOL.md). Regenerate with "
                "`python -m pi_app.hw.vectors`; frames include their 0x00 delimiter, "
                "bad_frames do not.",
        "protocol": 1,
        "cobs": [{"data": d, "encoded": e} for d, e in COBS_REFERENCE],
        "crc32": CRC_REFERENCE,
        "messages": msgs,
        "bad_frames": _bad_frames(),
    }


def render() -> str:
    return json.dumps(build_vectors(), indent=1) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=VECTORS_PATH)
    args = parser.parse_args(argv)
    args.out.write_text(render(), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
