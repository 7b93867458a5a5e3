"""The link protocol: COBS, CRC-32, frames, messages; the Pi codec against the test vectors and
against the firmware's codec (same bytes), and how the stream decoder survives garbage."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_app.hw import cobs
from pi_app.hw import messages as m
from pi_app.hw.frames import (
    MAX_ENCODED,
    Frame,
    FrameDecoder,
    FrameError,
    crc32,
    decode_frame,
    encode_frame,
)
from pi_app.hw.simfirmware import firmware_module
from pi_app.hw.vectors import from_fields, render

VECTORS_PATH = Path(__file__).resolve().parent.parent / "firmware" / "test_vectors.json"

VECTORS: dict[str, Any] = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
fw_cobs = firmware_module("cobs")
fw_proto = firmware_module("proto")


def test_vectors_file_is_up_to_date() -> None:
    assert VECTORS_PATH.read_text(encoding="utf-8") == render(), \
        "firmware/test_vectors.json is stale: run python -m pi_app.hw.vectors"


@pytest.mark.parametrize("vector", VECTORS["cobs"], ids=lambda v: v["data"][:12] or "empty")
def test_cobs_reference_vectors(vector: dict[str, str]) -> None:
    data, encoded = bytes.fromhex(vector["data"]), bytes.fromhex(vector["encoded"])
    assert cobs.encode(data) == encoded
    assert cobs.decode(encoded) == data
    assert fw_cobs.encode(data) == encoded
    assert fw_cobs.decode(encoded) == data


@given(st.binary(max_size=1200))
def test_cobs_round_trip_and_firmware_agrees(data: bytes) -> None:
    encoded = cobs.encode(data)
    assert b"\x00" not in encoded
    assert len(encoded) <= len(data) + len(data) // 254 + 1
    assert cobs.decode(encoded) == data
    assert fw_cobs.encode(data) == encoded


@pytest.mark.parametrize("bad", [b"\x05\x11\x22", b"\x03\x11\x00\x33", b"\x02"])
def test_cobs_rejects(bad: bytes) -> None:
    with pytest.raises(cobs.CobsError):
        cobs.decode(bad)


def test_crc32_reference() -> None:
    for v in VECTORS["crc32"]:
        raw = v["ascii"].encode() if "ascii" in v else bytes.fromhex(v["data"])
        assert crc32(raw) == v["crc"]
    assert crc32(b"123456789") == 0xCBF43926


@pytest.mark.parametrize("vector", VECTORS["messages"], ids=lambda v: v["name"])
def test_message_vectors(vector: dict[str, Any]) -> None:
    """Every vector: fields -> payload -> frame and back, byte for byte."""
    msg = from_fields(vector["type"], vector["fields"])
    payload = bytes.fromhex(vector["payload"])
    frame_bytes = bytes.fromhex(vector["frame"])
    assert msg.encode() == payload
    assert encode_frame(vector["type"], vector["seq"], payload) == frame_bytes
    frame = decode_frame(frame_bytes[:-1])
    assert (frame.type, frame.seq, frame.payload) == (vector["type"], vector["seq"], payload)
    assert m.decode_message(frame.type, frame.payload) == msg
    assert fw_proto.frame(vector["type"], vector["seq"], payload) == frame_bytes


@pytest.mark.parametrize("vector", VECTORS["bad_frames"], ids=lambda v: v["name"])
def test_bad_frame_vectors(vector: dict[str, str]) -> None:
    raw = bytes.fromhex(vector["frame"])
    with pytest.raises(FrameError) as info:
        decode_frame(raw)
    assert info.value.reason == vector["error"]
    with pytest.raises(ValueError, match="^" + vector["error"]):
        fw_proto.unframe(raw)


def test_hello_protocol_byte_is_readable_from_any_version() -> None:
    future = m.Hello(7, 0, 0, 0, 0, "x", "y").encode() + b"new fields"
    assert m.Hello.protocol_of(future) == 7
    with pytest.raises(m.MessageError):
        m.Hello.decode(future)


# An ACK carries free-form data after its header, so only the other types have a fixed end.
SAMPLES: list[m.Message] = [from_fields(v["type"], v["fields"]) for v in VECTORS["messages"]
                            if v["type"] != m.ACK]


@pytest.mark.parametrize("msg", SAMPLES, ids=lambda x: type(x).__name__)
def test_truncated_or_padded_payloads_are_malformed(msg: m.Message) -> None:
    payload = msg.encode()
    if payload:
        with pytest.raises(m.MessageError):
            m.decode_message(msg.TYPE, payload[:-1])
    with pytest.raises(m.MessageError):
        m.decode_message(msg.TYPE, payload + b"\x00")


def test_unknown_type_and_bad_values_are_malformed() -> None:
    with pytest.raises(m.MessageError, match="unknown message type 0x7E"):
        m.decode_message(0x7E, b"")
    with pytest.raises(m.MessageError, match="neither 0 nor 1"):
        m.Presence.decode(bytes(6) + b"\x02")
    with pytest.raises(m.MessageError, match="UID of 11 bytes"):
        m.Tags.decode(bytes(5) + b"\x01\x0b" + bytes(11))
    with pytest.raises(m.MessageError, match="not UTF-8"):
        m.Error.decode(bytes(7) + b"\x01\xff")


def _frames(items: list[Frame | FrameError]) -> list[Frame]:
    return [f for f in items if isinstance(f, Frame)]


def test_decoder_resyncs_after_garbage_and_counts_it() -> None:
    good = encode_frame(m.TAGS, 1, m.Tags(5, 0, ()).encode())
    garbage = b"\x13\x37 boot banner \xff\xfe"
    items = FrameDecoder().feed(garbage + b"\x00" + good + b"noise" + good)
    frames = _frames(items)
    errors = [e for e in items if isinstance(e, FrameError)]
    assert len(frames) == 1  # "noise" glued to the second frame spoils it
    assert len(errors) == 2


def test_decoder_handles_any_split() -> None:
    stream = b"".join(encode_frame(m.PRESENCE, i, m.Presence(i, i, True).encode())
                      for i in range(20))
    rng = random.Random(4)
    decoder = FrameDecoder()
    got: list[Frame] = []
    pos = 0
    while pos < len(stream):
        n = rng.randint(1, 9)
        got += _frames(decoder.feed(stream[pos:pos + n]))
        pos += n
    assert [f.seq for f in got] == list(range(20))


def test_decoder_bounds_its_buffer() -> None:
    decoder = FrameDecoder()
    items = decoder.feed(b"\x01" * (MAX_ENCODED + 10))
    assert [e.reason for e in items if isinstance(e, FrameError)] == ["oversize"]
    items = decoder.feed(b"\x01" * 100 + b"\x00" + encode_frame(m.TAGS, 0, bytes(6)))
    assert len(_frames(items)) == 1


@settings(max_examples=300)
@given(st.binary(min_size=1, max_size=400))
def test_random_bytes_never_pass_as_a_frame(noise: bytes) -> None:
    """CRC-32 plus the length field: random chunks are rejected (and never crash)."""
    items = FrameDecoder().feed(noise + b"\x00")
    assert _frames(items) == []


@given(st.binary(max_size=300), st.integers(0, 255))
def test_good_frame_after_any_garbage_decodes(noise: bytes, seq: int) -> None:
    good = encode_frame(m.HEARTBEAT, seq, m.Heartbeat(1, 2, 3, 4, 5, 6).encode())
    frames = _frames(FrameDecoder().feed(noise + b"\x00" + good))
    assert frames[-1] == Frame(m.HEARTBEAT, seq, m.Heartbeat(1, 2, 3, 4, 5, 6).encode())


@given(st.lists(st.binary(max_size=60), max_size=8), st.binary(max_size=200))
def test_firmware_deframer_agrees_with_pi_decoder(payloads: list[bytes], noise: bytes) -> None:
    stream = noise + b"\x00" + b"".join(encode_frame(0x41, i, p) for i, p in enumerate(payloads))
    pi = [(f.type, f.seq, f.payload) for f in _frames(FrameDecoder().feed(stream))]
    fw = [(t, s, bytes(p)) for t, s, p in fw_proto.Deframer().feed(stream)]
    assert pi == fw


def test_firmware_parses_config_with_keep_values() -> None:
    payload = m.CmdConfig(scan_period_ms=40, heartbeat_ms=300).encode()
    assert fw_proto.parse_config(payload) == {"scan_period_ms": 40, "heartbeat_ms": 300}
    assert m.CmdConfig.decode(payload) == m.CmdConfig(scan_period_ms=40, heartbeat_ms=300)
    with pytest.raises(ValueError):
        fw_proto.parse_config(payload[:-1])


def test_oversized_payload_is_refused() -> None:
    with pytest.raises(ValueError, match="over the 2048 limit"):
        encode_frame(m.SNAPSHOT, 0, bytes(2049))
