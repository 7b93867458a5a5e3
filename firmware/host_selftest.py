"""The firmware on a PC: codec vectors, a scripted scan of emulated chips, and scan timings.

Runs under MicroPython's unix port (the real interpreter the Pico runs) and under CPython::

    MICROPYPATH=firmware/hostsim:firmware micropython firmware/host_selftest.py vectors \
        firmware/test_vectors.json
    ... host_selftest.py scan hardware/boards/topple.json hardware/pinmap.json
    ... host_selftest.py bench hardware/boards/tactiki.json hardware/pinmap.json [CYCLES]
    ... host_selftest.py cycle hardware/boards/tactiki.json hardware/pinmap.json

``scan`` wires the firmware exactly as main.py does (tikifw.board.build_device) but with the
fake ``machine`` module of hostsim/ routed to chip emulators (tikifw.chipsim), plays a fixed
script (tags placed and lifted, a presence change, a reader that stops answering and comes
back, host commands and garbage) on a simulated millisecond clock, and prints every frame the
device sends as one ``FRAME <hex>`` line. The output is deterministic, so tests decode it with
the Pi's codec and compare the MicroPython run with the CPython run byte for byte.

``cycle`` runs the same wiring with the device's millisecond clock taken from the emulators'
air clock, so the scan cycle the firmware measures and reports (SCAN_TIMES) is the chips' own
time: SPI traffic, BUSY, timers, field settling and every tag's answer at the air protocol's
rate. It is a floor for the real board: the Pico's CPU time is not in it (``bench`` measures
that part).
"""

import json
import struct
import sys
import time

import machine
from tikifw import chipsim, proto
from tikifw.board import build_device
from tikifw.cobs import decode as cobs_decode
from tikifw.cobs import encode as cobs_encode
from tikifw.crc import crc32, crc32_pure
from tikifw.pins import board_info, pico_pins, presence_readers
from tikifw.scanner import Config, Scanner
from tikifw.sim import SimBoard, SimPresence, SimReader


def load(path):
    with open(path) as f:
        return json.load(f)


class HostTransport:
    def __init__(self):
        self.inbox = bytearray()
        self.frames = []

    def read(self):
        data = bytes(self.inbox)
        self.inbox = bytearray()
        return data

    def write(self, data):
        if data != b"\x00":
            self.frames.append(bytes(data))


class Clock:
    def __init__(self):
        self.ms = 0

    def __call__(self):
        return self.ms


# Tag UIDs for the script: 7-byte NTAG UIDs for 14443-A, 8-byte E0... UIDs for 15693.
UID_A = [bytes((0x04, 0x10 + i, 0x22, 0x33, 0x44, 0x55, 0x66)) for i in range(4)]
# The last bytes share low nibbles, so a 16-slot round collides and masked rounds must follow.
UID_V = [bytes((0xE0, 0x04, 0x01, 0x00, 0x00, 0x00, 0x10, b))
         for b in (0x01, 0x11, 0x21, 0x02, 0x12, 0x03)]


def _tags_of(board, i):
    def tags():
        return board.tags[i]
    return tags


def rig(game_path, pinmap_path, air_time=False):
    """A device wired to emulated chips: (device, board, chips, transport, clock, bus).

    With ``air_time`` the device's millisecond clock is the emulators' air clock.
    """
    pins = pico_pins(load(pinmap_path))
    geometry = load(game_path)
    info = board_info(geometry)
    _game, chip, n_readers, n_presence = info
    board = SimBoard(n_readers, n_presence)
    bus = chipsim.SimBus(pins)
    chips = []
    for i in range(n_readers):
        fn = _tags_of(board, i)
        kind = chipsim.Mfrc522Chip if chip == "MFRC522" else chipsim.Pn5180Chip
        emu = kind(fn, clock=bus.clock)
        bus.chips[i] = emu
        chips.append(emu)

    def chain_bits():
        if board.chain_broken:
            return [1] * (n_presence + 8)
        return [0 if p else 1 for p in board.presence] + [1, 0]

    bus.chain = chipsim.Hc165Chain(chain_bits)
    machine.attach(bus)
    transport = HostTransport()
    clock = Clock()
    if air_time:
        def clock():
            return bus.clock.t * 1000 // chipsim.FC
    device = build_device(machine, pins, info, transport, clock, sleep_us=bus.clock.sleep_us,
                          presence_readers=presence_readers(geometry))
    return device, board, chips, transport, clock, bus


def run_for(device, clock, ms):
    end = clock.ms + ms
    while clock.ms < end:
        device.poll()
        clock.ms += 1


def command(transport, mtype, seq, payload=b""):
    transport.inbox += proto.frame(mtype, seq, payload)


def scenario(game_path, pinmap_path):
    """The scripted session; returns the frames the device sent, in order."""
    device, board, chips, transport, clock, _bus = rig(game_path, pinmap_path)
    stacked = isinstance(chips[0], chipsim.Pn5180Chip) if chips else False
    run_for(device, clock, 150)
    board.set_tags(0, [UID_A[0]] if not stacked else [UID_V[0]])
    if stacked:
        board.set_tags(1, UID_V[1:6])  # a stack of five in one field
    else:
        board.set_tags(1, [UID_A[1]])
    run_for(device, clock, 150)
    if board.presence:
        board.set_presence(0, True)
    run_for(device, clock, 100)
    board.set_tags(0, [])
    run_for(device, clock, 400)
    chips[2].dead = True
    run_for(device, clock, 300)
    chips[2].dead = False
    run_for(device, clock, 1000)
    command(transport, proto.CMD_SNAPSHOT, 1)
    run_for(device, clock, 5)
    config = b"\x32\x00\xff\xff\xff\xff\xff\xff\xff"  # scan period 50 ms, keep the rest
    command(transport, proto.CMD_CONFIG, 2, config)
    command(transport, proto.CMD_CONFIG, 3, b"\x00\x00\xff\xff\xff\xff\xff\xff\xff")  # 0 ms: bad
    transport.inbox += b"\x13\x37garbage\x00"
    command(transport, 0x7E, 4)
    command(transport, proto.CMD_SELFTEST, 5)
    command(transport, proto.CMD_HELLO, 6)
    run_for(device, clock, 600)
    return transport.frames


def measure_cycle(game_path, pinmap_path, beats=4):
    """Scan cycle on emulated chips in air time, as the firmware reports it in SCAN_TIMES.

    Every second cell holds a stack (three ISO 15693 tags, or one NTAG on Topple), the others
    are empty; returns the last report as a dict.
    """
    device, board, chips, transport, _clock, bus = rig(game_path, pinmap_path, air_time=True)
    stacked = isinstance(chips[0], chipsim.Pn5180Chip) if chips else False
    for i in range(len(chips)):
        if i % 2 == 0:
            board.set_tags(i, UID_V[:3] if stacked else [UID_A[i % 4]])
    report = None
    seen = 0
    while seen < beats:
        if not device.poll():
            bus.clock.sleep_us(1000)  # idle until the next board cycle is due
        for frame in transport.frames:
            mtype, _seq, payload = proto.unframe(frame[:-1])
            if mtype == proto.SCAN_TIMES:
                report = payload
                seen += 1
        transport.frames = []
    cycle_ms, n = struct.unpack("<HB", report[4:7])
    readers = list(struct.unpack("<" + str(n) + "H", report[7:7 + 2 * n]))
    return {"board": board_info(load(game_path))[0], "chip": chips[0].__class__.__name__,
            "readers": n, "cycle_ms": cycle_ms, "reader_ms_min": min(readers),
            "reader_ms_max": max(readers), "reader_ms": readers}


def check_vectors(path):
    """Compare the firmware codec with firmware/test_vectors.json; returns a list of failures."""
    vectors = load(path)
    failures = []
    for v in vectors["cobs"]:
        data = bytes.fromhex(v["data"])
        enc = bytes.fromhex(v["encoded"])
        if cobs_encode(data) != enc or cobs_decode(enc) != data:
            failures.append("cobs " + v["data"][:16])
    for v in vectors["crc32"]:
        raw = v["ascii"].encode() if "ascii" in v else bytes.fromhex(v["data"])
        if crc32(raw) != v["crc"] or crc32_pure(raw) != v["crc"]:
            failures.append("crc32 " + v.get("ascii", v.get("data", "")))
    for v in vectors["messages"]:
        if v["direction"] == "device":
            got = encode_device(v)
            if got != bytes.fromhex(v["payload"]):
                failures.append("payload " + v["name"])
            if proto.frame(v["type"], v["seq"], got) != bytes.fromhex(v["frame"]):
                failures.append("frame " + v["name"])
        else:
            mtype, seq, payload = proto.unframe(bytes.fromhex(v["frame"])[:-1])
            if (mtype, seq, payload) != (v["type"], v["seq"], bytes.fromhex(v["payload"])):
                failures.append("unframe " + v["name"])
            if mtype == proto.CMD_CONFIG:
                want = {k: f for k, f in v["fields"].items() if f is not None}
                if proto.parse_config(payload) != want:
                    failures.append("config " + v["name"])
    for v in vectors["bad_frames"]:
        try:
            proto.unframe(bytes.fromhex(v["frame"]))
            failures.append("accepted bad frame " + v["name"])
        except ValueError as exc:
            if str(exc).split(":")[0] != v["error"]:
                failures.append("bad frame " + v["name"] + ": " + str(exc))
    return failures


def _uids(hexes):
    return [bytes.fromhex(h) for h in hexes]


def encode_device(v):
    """The firmware's payload for a device-to-host vector, built from its fields."""
    f = v["fields"]
    t = v["type"]
    if t == proto.HELLO:
        return proto.hello(f["firmware"], f["board"], f["chip"], f["readers"], f["presence"],
                           f["uptime_ms"], protocol=f["protocol"])
    if t == proto.TAGS:
        return proto.tags(f["t_ms"], f["reader"], _uids(f["uids"]))
    if t == proto.PRESENCE:
        return proto.presence(f["t_ms"], f["sensor"], f["present"])
    if t == proto.SNAPSHOT:
        readers = [(r["status"], _uids(r["uids"])) for r in f["readers"]]
        return proto.snapshot(f["t_ms"], f["flags"], readers, f["presence"])
    if t == proto.HEARTBEAT:
        return proto.heartbeat(f["t_ms"], f["cycles"], f["frames_tx"], f["rx_bad"],
                               f["reader_errors"], f["cycle_ms"])
    if t == proto.SCAN_TIMES:
        return proto.scan_times(f["t_ms"], f["cycle_ms"], f["reader_ms"])
    if t == proto.BUTTON:
        return proto.button(f["t_ms"], f["button"])
    if t == proto.ACK:
        return proto.ack(f["cmd_seq"], f["cmd"], f["status"], bytes.fromhex(f["data"]))
    if t == proto.ERROR:
        return proto.error(f["t_ms"], f["code"], f["arg"], f["text"])
    raise ValueError(f"unknown device message type {t}")


def bench(game_path, pinmap_path, cycles):
    """Time full board scans through the real drivers and chip emulators (no air time)."""
    device, board, chips, _transport, _clock, bus = rig(game_path, pinmap_path)
    stacked = isinstance(chips[0], chipsim.Pn5180Chip) if chips else False
    for i in range(len(chips)):
        if i % 2 == 0:
            board.set_tags(i, UID_V[:3] if stacked else [UID_A[i % 4]])
    scanner = device.scanner
    n = len(scanner.readers)
    for i in range(n):  # init outside the timing
        scanner.scan_reader(i, 0)
    start_bytes = bus.spi_bytes
    t_board = _time_cycles(scanner, n, cycles)
    spi_per_board = (bus.spi_bytes - start_bytes) // cycles
    # The same scanner logic over simulated readers (no SPI, no chip): the firmware's own cost.
    sim_board = SimBoard(n, len(scanner.present))
    for i in range(n):
        sim_board.set_tags(i, UID_V[:3] if stacked else [UID_A[i % 4]])
    logic = Scanner([SimReader(sim_board, i) for i in range(n)], SimPresence(sim_board),
                    Config(), _NullSink())
    t_logic = _time_cycles(logic, n, cycles)
    return {
        "implementation": sys.implementation.name,
        "board": board_info(load(game_path))[0],
        "chip": scanner.readers[0].name if n else "",
        "readers": n,
        "cycles": cycles,
        "board_scan_us": round(t_board, 1),
        "cell_scan_us": round(t_board / max(n, 1), 1),
        "spi_bytes_per_board": spi_per_board,
        "logic_board_us": round(t_logic, 1),
        "logic_cell_us": round(t_logic / max(n, 1), 1),
    }


class _NullSink:
    def on_tags(self, reader, uids, t):
        pass

    def on_presence(self, sensor, present, t):
        pass

    def on_fault(self, code, index, text, t):
        pass


def _time_cycles(scanner, n, cycles):
    """Mean microseconds per full board cycle (every reader, then presence)."""
    ticks_us = getattr(time, "ticks_us", None)
    t0 = ticks_us() if ticks_us else time.perf_counter()
    for c in range(cycles):
        for i in range(n):
            scanner.scan_reader(i, c)
        scanner.scan_presence(c)
    if ticks_us:
        return time.ticks_diff(ticks_us(), t0) / cycles
    return (time.perf_counter() - t0) * 1e6 / cycles


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    mode = argv[1]
    if mode == "vectors":
        failures = check_vectors(argv[2])
        for f in failures:
            print("FAIL " + f)
        print("VECTORS " + ("OK" if not failures else "FAILED"))
        return 1 if failures else 0
    if mode == "scan":
        for frame in scenario(argv[2], argv[3]):
            print("FRAME " + frame.hex())
        print("DONE")
        return 0
    if mode == "bench":
        cycles = int(argv[4]) if len(argv) > 4 else 20
        print(json.dumps(bench(argv[2], argv[3], cycles)))
        return 0
    if mode == "cycle":
        print(json.dumps(measure_cycle(argv[2], argv[3])))
        return 0
    print("unknown mode " + mode)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
