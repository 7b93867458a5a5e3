"""Chip-level emulators for host tests: an MFRC522, a PN5180, a 74HC165 chain, and the bus.

They answer SPI bytes and pin levels the way the data sheets describe, so the real drivers
(mfrc522.py, pn5180.py, shiftin.py) and the real wiring (board.py) run on a PC: under CPython
in the tests and under MicroPython's unix port in host_selftest.py. The reader chips live in
their own modules, each with its register map, reset values, read-only registers, timers that
count in the chip's real units and tags answering at the air protocol's timings
(chipsim_mfrc522.py, chipsim_pn5180.py), on one emulated clock (chipsim_air.py). Faults a test
can set: ``dead`` (MISO held low: every read is 0x00), for the PN5180 ``busy_stuck`` and
``external_field``.

Tags come from ``uids()``, a function returning the UIDs (bytes, MSB first) in the field now.
"""

from tikifw.chipsim_air import FC, AirClock
from tikifw.chipsim_mfrc522 import Mfrc522Chip
from tikifw.chipsim_pn5180 import Pn5180Chip

__all__ = ["FC", "AirClock", "Hc165Chain", "Mfrc522Chip", "Pn5180Chip", "SimBus"]


class Hc165Chain:
    """A 74HC165 chain: SH/LD low latches ``bits()``, each rising CLK shifts one bit out."""

    def __init__(self, bits):
        self.bits = bits
        self.reg = []

    def latch(self):
        self.reg = list(self.bits())

    def shift(self):
        if self.reg:
            self.reg.pop(0)
            self.reg.append(0)  # the far chip's serial input is tied low

    def q(self):
        return self.reg[0] if self.reg else 0


class SimBus:
    """The Pico's pins and SPI bus as the fake ``machine`` module sees them (hostsim/machine.py).

    Chip-selects come through the decoder (address pins plus active-low enable), BUSY through
    the multiplexer on the same address lines, presence through the 74HC165 pins. Every chip on
    the bus should share ``clock`` (pass ``clock=bus.clock`` when making them), and the
    firmware's ``sleep_us`` should be ``bus.clock.sleep_us``, so time is one for all.
    """

    def __init__(self, pins, host=None):
        self.clock = AirClock() if host is None else AirClock(host)
        self.address_pins = pins["reader_select"]["address"]
        self.enable_pin = pins["reader_select"]["enable"]
        self.reset_pin = pins.get("reader_reset")
        self.busy_pin = pins.get("reader_busy")
        shift = pins["shift_in"]
        self.load_pin = shift["load"]
        self.clock_pin = shift["clock"]
        self.data_pin = shift["data"]
        self.levels = {}
        self.chips = {}
        self.chain = None
        self.selected = None
        self.spi_bytes = 0
        self.spi_hz = 0
        self.max_spi_hz = 0  # a loaded bus: above this rate MISO reads garble (0 = never)
        self.garbled = 0
        self.addr = 0  # the level of the address lines, kept up to date by write_pin

    def address(self):
        return self.addr

    def write_pin(self, pin, value):
        old = self.levels.get(pin, 0)
        self.levels[pin] = value
        if pin != self.enable_pin:  # the enable's cost is in the chips' per-transfer overhead
            self.clock.advance(self.clock.pin_read)
        if pin in self.address_pins:
            bit = 1 << self.address_pins.index(pin)
            self.addr = (self.addr | bit) if value & 1 else (self.addr & ~bit)
        elif pin == self.reset_pin:
            if value == 1 and old == 0:  # RST released: every reader starts up
                for chip in self.chips.values():
                    hard_reset = getattr(chip, "hard_reset", None)
                    if hard_reset is not None:
                        hard_reset()
        elif pin == self.enable_pin:
            if value == 0 and self.selected is None:
                self.selected = self.chips.get(self.address())
                if self.selected is not None:
                    self.selected.begin()
            elif value == 1 and self.selected is not None:
                self.selected.end()
                self.selected = None
        elif self.chain is not None:
            if pin == self.load_pin and value == 0:
                self.chain.latch()
            elif pin == self.clock_pin and value == 1 and old == 0:
                self.chain.shift()

    def read_pin(self, pin):
        if pin == self.busy_pin:
            chip = self.chips.get(self.address())
            return 1 if chip is not None and chip.busy() else 0
        if pin == self.data_pin and self.chain is not None:
            self.clock.advance(self.clock.pin_read)
            return self.chain.q()
        return None

    def set_spi_hz(self, hz):
        self.spi_hz = hz

    def spi(self, tx):
        self.spi_bytes += len(tx)
        if self.selected is None:
            return bytearray(len(tx))  # MISO pulled low
        rx = self.selected.exchange(tx)
        if self.max_spi_hz and self.spi_hz > self.max_spi_hz:
            # edges too slow for the bit time: now and then a bit is read late
            self.garbled += 1
            if self.garbled % 3 == 0 and rx:
                rx = bytearray(rx)
                rx[-1] ^= 0x40
        return rx
