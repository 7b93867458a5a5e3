"""Wiring: build the Device from a ``machine`` module, the pin map and the board's geometry.

``machine`` is a parameter, not an import: main.py passes the Pico's, the host tests pass
hostsim/machine.py. The reader chip comes from the geometry file (``reader_chip``): MFRC522 for
Tiki Topple, PN5180 for Manami and TacTiki (firmware/README.md says why).
"""

from tikifw import proto
from tikifw.device import Device
from tikifw.mfrc522 import Mfrc522
from tikifw.pn5180 import Pn5180
from tikifw.readers import DecoderSelect, SpiPort, no_sleep_us
from tikifw.scanner import Config, Scanner
from tikifw.shiftin import NoPresence, ShiftIn

DRIVERS = {"MFRC522": Mfrc522, "PN5180": Pn5180}
RESET_LOW_US = 100  # the RST pulse (a PN5180 needs at least 10 us low)
# No fixed wait after RST rises: a PN5180 starts up in about 2.5 ms typical (data sheet), more
# than the 2 ms this used to wait, so each driver's first init() polls for the chip to be up
# (PN5180: IDLE_IRQ; MFRC522: its soft reset and 50 ms oscillator wait).
RESET_WAIT_US = 0


def build_device(machine, pins, info, transport, now_ms, sleep_us=no_sleep_us, config=None,
                 presence_readers=None):
    game, chip, n_readers, n_presence = info
    if n_readers and chip not in DRIVERS:
        raise ValueError(f"unknown reader_chip {chip!r} (expected MFRC522 or PN5180)")
    pin = machine.Pin
    s = pins["spi"]
    spi = machine.SPI(s["id"], baudrate=s.get("baudrate", 4000000), polarity=0, phase=0,
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
    readers = []
    for i in range(n_readers):
        port = SpiPort(spi, select, i, busy)
        readers.append(DRIVERS[chip](port, sleep_us=sleep_us))
    if n_presence:
        sh = pins["shift_in"]
        presence = ShiftIn(pin(sh["load"], pin.OUT, value=1), pin(sh["clock"], pin.OUT, value=0),
                           pin(sh["data"], pin.IN), n_presence, sh.get("active_low", True))
    else:
        presence = NoPresence()
    scanner = Scanner(readers, presence, config or Config(), None)
    return Device(scanner, transport, now_ms, board=game,
                  chip=proto.CHIP_CODES.get(chip, proto.CHIP_NONE),
                  presence_readers=presence_readers)
