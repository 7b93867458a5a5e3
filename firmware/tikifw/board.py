"""Wiring: build the Device from a ``machine`` module, the pin map and the board's geometry.

``machine`` is a parameter, not an import: main.py passes the Pico's, the host tests pass
hostsim/machine.py. The reader chip comes from the geometry file (``reader_chip``): MFRC522 for
Tiki Topple, PN5180 for Manami and TacTiki (firmware/README.md says why).
"""

from tikifw import proto
from tikifw.device import Device
from tikifw.mfrc522 import Mfrc522
from tikifw.pn5180 import Pn5180
from tikifw.readers import DecoderSelect, ReaderError, SpiPort, no_sleep_us
from tikifw.scanner import Config, Scanner
from tikifw.shiftin import NoPresence, ShiftIn

DRIVERS = {"MFRC522": Mfrc522, "PN5180": Pn5180}
RESET_LOW_US = 100  # the RST pulse (a PN5180 needs at least 10 us low)
# No fixed wait after RST rises: a PN5180 starts up in about 2.5 ms typical (data sheet), more
# than the 2 ms this used to wait, so each driver's first init() polls for the chip to be up
# (PN5180: IDLE_IRQ; MFRC522: its soft reset and 50 ms oscillator wait).
RESET_WAIT_US = 0
# SPI speed ramp (hardware/README.md, "SPI loading"): every reader's identification is read at
# each rate in turn, up to the pin map's baudrate, TRIES times; the board runs at the fastest
# rate at which every reader gave the same answer every time and the same as at the slowest.
SPI_RATES = (1000000, 2000000, 4000000)
TRIES = 3
# RP2040 pads (RP2040 datasheet, PADS_BANK0: GPIOn register at base + 4 + 4n; DRIVE in bits
# 5:4, 0 = 2 mA, 1 = 4 mA (the reset value), 2 = 8 mA, 3 = 12 mA; SLEWFAST bit 0; as
# remembered from the datasheet, not re-read here). SCK, MOSI and the selects at 8 mA, fast.
PADS_BANK0 = 0x4001C000
DRIVE_8MA = 2 << 4
SLEWFAST = 1


def set_drive(machine, gpios):
    """8 mA drive and fast slew on ``gpios``; nothing where ``machine`` has no mem32 (a PC)."""
    mem32 = getattr(machine, "mem32", None)
    if mem32 is None:
        return
    for gp in gpios:
        addr = PADS_BANK0 + 4 + 4 * gp
        mem32[addr] = (mem32[addr] & ~0x31) | DRIVE_8MA | SLEWFAST


def spi_ramp(spi, readers, top, tries=TRIES):
    """The fastest rate of SPI_RATES (up to ``top``) at which every reader answers its
    identification the same ``tries`` times and as at the slowest rate, and a note saying why
    when that is below ``top`` (None otherwise). The bus is left at that rate."""
    rates = [r for r in SPI_RATES if r < top] + [top]
    good = None
    first = {}
    note = None
    for rate in rates:
        spi.init(baudrate=rate)
        bad = None
        for i, reader in enumerate(readers):
            try:
                answers = [bytes(reader.ident()) for _ in range(tries)]
            except ReaderError:
                answers = [None]
            if any(a != answers[0] for a in answers) or first.get(i, answers[0]) != answers[0]:
                bad = i
                break
            first.setdefault(i, answers[0])
        if bad is not None:
            note = (f"SPI at {good or rates[0]} Hz: reader R{bad} gave different answers"
                    f" at {rate} Hz")
            break
        good = rate
    spi.init(baudrate=good or rates[0])
    return good or rates[0], note


def build_device(machine, pins, info, transport, now_ms, sleep_us=no_sleep_us, config=None,
                 presence_readers=None):
    game, chip, n_readers, n_presence = info
    if n_readers and chip not in DRIVERS:
        raise ValueError(f"unknown reader_chip {chip!r} (expected MFRC522 or PN5180)")
    pin = machine.Pin
    s = pins["spi"]
    top = s.get("baudrate", 4000000)
    spi = machine.SPI(s["id"], baudrate=SPI_RATES[0], polarity=0, phase=0,
                      sck=pin(s["sck"]), mosi=pin(s["mosi"]), miso=pin(s["miso"]))
    sel = pins["reader_select"]
    select = DecoderSelect([pin(a, pin.OUT, value=0) for a in sel["address"]],
                           pin(sel["enable"], pin.OUT, value=1))
    reset = pin(pins["reader_reset"], pin.OUT, value=1)
    reset.value(0)  # one hardware reset of every reader at boot
    sleep_us(RESET_LOW_US)
    reset.value(1)
    if RESET_WAIT_US:
        sleep_us(RESET_WAIT_US)
    busy = None
    if chip == "PN5180" and pins.get("reader_busy") is not None:
        busy = pin(pins["reader_busy"], pin.IN, pin.PULL_DOWN)
    driven = [s["sck"], s["mosi"], sel["enable"]]
    driven.extend(sel["address"])  # (no * unpacking in a list display: MicroPython lacks it)
    set_drive(machine, driven)
    readers = []
    for i in range(n_readers):
        port = SpiPort(spi, select, i, busy)
        readers.append(DRIVERS[chip](port, sleep_us=sleep_us))
    spi_hz, spi_note = spi_ramp(spi, readers, top) if readers else (top, None)
    if n_presence:
        sh = pins["shift_in"]
        presence = ShiftIn(pin(sh["load"], pin.OUT, value=1), pin(sh["clock"], pin.OUT, value=0),
                           pin(sh["data"], pin.IN), n_presence, sh.get("active_low", True))
    else:
        presence = NoPresence()
    scanner = Scanner(readers, presence, config or Config(), None)
    device = Device(scanner, transport, now_ms, board=game,
                    chip=proto.CHIP_CODES.get(chip, proto.CHIP_NONE),
                    presence_readers=presence_readers)
    device.spi_hz = spi_hz
    if spi_note:
        device.boot_notes.append((proto.ERR_INTERNAL, 0, spi_note))
    return device
