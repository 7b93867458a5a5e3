"""The firmware on a PC: codec vectors, a scripted scan of emulated chips, and scan timings.

Runs under MicroPython's unix port (the real interpreter the Pico runs) and under CPython::

    MICROPYPATH=firmware/hostsim:firmware micropython firmware/host_selftest.py vectors \
        firmware/test_vectors.json
    ... host_selftest.py scan hardware/boards/topple.json hardware/pinmap.json
    ... host_selftest.py bench hardware/boards/tactiki.json hardware/pinmap.json [CYCLES]
    ... host_selftest.py cycle hardware/boards/tactiki.json hardware/pinmap.json [LAYOUT]
    ... host_selftest.py costs hardware/boards/tactiki.json hardware/pinmap.json
    ... host_selftest.py driver

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


def rig(game_path, pinmap_path, air_time=False, host=None, max_spi_hz=0):
    """A device wired to emulated chips: (device, board, chips, transport, clock, bus).

    With ``air_time`` the device's millisecond clock is the emulators' air clock; ``host`` is
    the emulators' host-cost profile (chipsim_air.HOST_FAST by default, HOST_PICO for the
    Pico's interpreter time).
    """
    pins = pico_pins(load(pinmap_path))
    geometry = load(game_path)
    info = board_info(geometry)
    _game, chip, n_readers, n_presence = info
    board = SimBoard(n_readers, n_presence)
    bus = chipsim.SimBus(pins, host)
    bus.max_spi_hz = max_spi_hz  # a loaded bus that garbles reads above this rate (tests)
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
    # Pieces put down close their cells' presence switches, as on the board: the firmware
    # leaves an empty cell's reader out of most cycles (scanner.Scanner.idle).
    board.set_tags(0, [UID_A[0]] if not stacked else [UID_V[0]])
    if stacked:
        board.set_tags(1, UID_V[1:6])  # a stack of five in one field
    else:
        board.set_tags(1, [UID_A[1]])
    if board.presence:
        board.set_presence(0, True)
        board.set_presence(1, True)
    run_for(device, clock, 250)
    board.set_tags(0, [])
    if board.presence:
        board.set_presence(0, False)
    run_for(device, clock, 400)
    chips[1].dead = True  # the reader under the stack stops answering
    run_for(device, clock, 300)
    chips[1].dead = False
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


# Board layouts for ``cycle``: per layout, (cell name, number of tags) for each occupied cell.
# "alternate" is every second reader cell with a three-tag stack whose UIDs collide (one
# NTAG on Topple); "start" and "mid" are a game's start position and one from the middle of a
# game (pi_app's engines, seed 1, 40 random moves); "full" is the slowest board a game gives:
# every piece on a cell of its own, so the most readers hold a tag.
LAYOUTS = {
    "topple": {
        "start": [("s" + str(i), 1) for i in range(1, 10)],
        "mid": [("s" + str(i), 1) for i in range(1, 6)],
        "full": [("s" + str(i), 1) for i in range(1, 10)] + [("card", 1)],
    },
    "manami": {
        "start": [],
        "mid": [("a1", 1), ("a2", 1), ("a3", 2), ("b1", 1), ("b2", 2), ("c1", 1), ("c2", 1),
                ("c3", 1)],
        "full": [(c + r, 3) for c in "abc" for r in "123"],
    },
    "tactiki": {
        "start": [(c + r, 2) for c in "abcde" for r in "15"],
        "mid": [("a1", 1), ("a2", 1), ("a3", 1), ("a4", 1), ("a5", 1), ("b1", 1), ("b2", 1),
                ("c1", 1), ("c2", 1), ("c5", 1), ("d1", 2), ("d2", 1), ("d3", 1), ("d5", 3),
                ("e1", 1)],
        "full": [(c + r, 1) for c in "abcde" for r in "1234"],
    },
}


class Rng:
    """xorshift32: the same UIDs under CPython and MicroPython (whose ``random`` has no
    ``Random`` class)."""

    def __init__(self, seed):
        self.x = (seed * 2654435761) % 4294967296 or 1

    def byte(self):
        x = self.x
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.x = x
        return x & 0xFF


def random_uids(rng, n, stacked):
    """``n`` tag UIDs as real tags carry them: ISO 15693 E0 04 ... (the low nibble, which picks
    the inventory slot, at random) or 7-byte NTAGs."""
    out = []
    for _ in range(n):
        tail = bytes(rng.byte() for _ in range(5 if stacked else 6))
        out.append((b"\xe0\x04\x01" if stacked else b"\x04") + tail)
    return out


def place(board, geometry, chips, layout, seed=1):
    """Put ``layout``'s tags on the emulated board and close those cells' presence switches."""
    rng = Rng(seed)
    stacked = isinstance(chips[0], chipsim.Pn5180Chip) if chips else False
    cells = {c["name"]: c for c in geometry["cells"]}
    if layout == "alternate":
        spots = []
        for c in geometry["cells"]:
            r = c.get("reader")
            if r is not None and r % 2 == 0:
                spots.append((c["name"], 3 if stacked else 1))
    else:
        spots = LAYOUTS[geometry["game"]][layout]
    for name, n in spots:
        cell = cells[name]
        if layout == "alternate":
            uids = UID_V[:3] if stacked else [UID_A[cell["reader"] % 4]]
        else:
            uids = random_uids(rng, n, stacked)
        if cell.get("reader") is not None:
            board.set_tags(cell["reader"], uids)
        if cell.get("presence") is not None:
            board.set_presence(cell["presence"], True)


def measure_cycle(game_path, pinmap_path, layout="alternate", cycles=24, seed=1, host=None):
    """Scan cycles on emulated chips in air time, as the firmware measures and reports them.

    ``layout`` is "alternate" or a name in LAYOUTS. Runs ``cycles`` full board cycles after
    the first few (the boot cycle scans every reader once); returns the shortest, mean and
    longest cycle the device measured, its last SCAN_TIMES (``reported_ms``: what the Pi
    stretches its waits to) and each reader's last scan.
    """
    device, board, chips, transport, _clock, bus = rig(game_path, pinmap_path, air_time=True,
                                                       host=host)
    place(board, load(game_path), chips, layout, seed)
    while device.cycles < 3:  # boot: every reader initialised and read once
        if not device.poll():
            bus.clock.sleep_us(1000)
    first = device.cycles
    lengths = []
    reports = []
    while device.cycles < first + cycles:
        before = device.cycles
        if not device.poll():
            bus.clock.sleep_us(1000)  # idle until the next board cycle is due
        if device.cycles != before:
            lengths.append(device.cycle_ms)
        for frame in transport.frames:
            mtype, _seq, payload = proto.unframe(frame[:-1])
            if mtype == proto.SCAN_TIMES:
                reports.append(struct.unpack("<HB", payload[4:7])[0])
        transport.frames = []
    readers = device.reader_ms
    scanned = [ms for ms in readers if ms is not None]
    return {"board": board_info(load(game_path))[0], "chip": chips[0].__class__.__name__,
            "layout": layout, "readers": len(readers), "cycle_ms": lengths[-1],
            "cycle_ms_min": min(lengths), "cycle_ms_mean": sum(lengths) // len(lengths),
            "cycle_ms_max": max(lengths), "reported_ms": reports[-1] if reports else None,
            "reported_ms_max": max(reports) if reports else None,
            "reader_ms_min": min(scanned), "reader_ms_max": max(scanned),
            "reader_ms": readers}


def reader_costs(game_path, pinmap_path, max_tags=5, trials=40, seed=1, host=None):
    """Microseconds one reader scan takes on the emulated chips in air time, by how many tags
    lie in its field: the mean over ``trials`` random sets of UIDs (a stack's UIDs decide
    whether two tags collide in a slot and a masked round follows), as a list indexed by
    the number of tags. pi_app/sim/sensors.py models the scan on these figures."""
    rng = Rng(seed)
    device, board, chips, _transport, _clock, bus = rig(game_path, pinmap_path, air_time=True,
                                                        host=host)
    stacked = isinstance(chips[0], chipsim.Pn5180Chip) if chips else False
    scanner = device.scanner
    scanner.scan_reader(0, 0)  # init outside the timing
    out = []
    for n in range(max_tags + 1 if stacked else 2):
        total = 0
        for _ in range(trials):
            board.set_tags(0, random_uids(rng, n, stacked))
            t0 = bus.clock.t
            scanner.scan_reader(0, 0)
            total += bus.clock.t - t0
        out.append(total * 1000000 // (trials * chipsim.FC))
    return out


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


def driver_cost(n=2000):
    """Microseconds of interpreter time per driver register access, on this machine: the real
    PN5180 and MFRC522 drivers over the real SpiPort and DecoderSelect, with hostsim's machine
    detached (SPI reads zeros, pins just store), so nothing but the Python path is timed.
    Under the MicroPython unix port this is the path the Pico runs; scaled by the PC-to-RP2040
    ratio it gives the per-transfer cost in chipsim_air.HOST_PICO (docs/hardware-notes.md)."""
    from tikifw.mfrc522 import Mfrc522
    from tikifw.pn5180 import Pn5180
    from tikifw.readers import DecoderSelect, SpiPort

    machine.attach(None)
    pin = machine.Pin
    spi = machine.SPI(0, baudrate=4000000)
    select = DecoderSelect([pin(a, pin.OUT, value=0) for a in (2, 3, 4, 5, 6)],
                           pin(7, pin.OUT, value=1))
    busy = pin(9, pin.IN)
    pn = Pn5180(SpiPort(spi, select, 3, busy))
    rc = Mfrc522(SpiPort(spi, select, 4))
    ticks_us = getattr(time, "ticks_us", None)

    def timed(fn):
        t0 = ticks_us() if ticks_us else time.perf_counter()
        for _ in range(n):
            fn()
        if ticks_us:
            return time.ticks_diff(ticks_us(), t0) / n
        return (time.perf_counter() - t0) * 1e6 / n

    write = timed(lambda: pn.write_reg(0x03, 0x000FFFFF))  # 1 transfer, 2 BUSY polls
    read = timed(lambda: pn.read_reg(0x02))  # 2 transfers, 3 BUSY polls
    rc_read = timed(lambda: rc.read(0x37))  # 1 transfer, no BUSY
    return {"implementation": sys.implementation.name,
            "pn5180_write_reg_us": round(write, 2), "pn5180_read_reg_us": round(read, 2),
            "mfrc522_read_us": round(rc_read, 2)}


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
    if mode == "costs":
        print(json.dumps(reader_costs(argv[2], argv[3])))
        return 0
    if mode == "driver":
        print(json.dumps(driver_cost()))
        return 0
    if mode == "cycle":
        layout = argv[4] if len(argv) > 4 else "alternate"
        print(json.dumps(measure_cycle(argv[2], argv[3], layout)))
        return 0
    print("unknown mode " + mode)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
