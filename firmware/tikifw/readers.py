"""The tiny reader interface the scanner relies on, and the SPI plumbing readers share.

A reader is any object with:

- ``name``: the chip, for HELLO and messages;
- ``init()``: bring the chip to a known state with its RF field off; raises ``ReaderError``;
- ``scan()``: switch the field on, find every tag, switch the field off, and return
  ``(uids, complete)``: a list of UID bytes (most significant byte first) and whether the scan
  was clean. ``complete`` is False when a collision or a garbled answer may have hidden a tag,
  so the scanner must not count that scan as a miss. Raises ``ReaderError`` when the chip does
  not answer at all (no SPI answer, BUSY stuck, no interrupt).

So the scanner does not care whether an MFRC522, a PN5180 or a simulation sits behind it.
"""


class ReaderError(Exception):
    """The reader chip itself did not answer (wiring, power, a dead module)."""


class DecoderSelect:
    """Chip-selects through a 74HC154-style decoder: address lines plus an active-low enable.

    With 5 address lines two 74HC154s give 32 selects from 6 Pico pins, which is what 25 PN5180
    readers need; the same address lines steer the BUSY multiplexer. Only this object drives
    the address lines, so it skips the pin writes when they already carry ``index``: a BUSY
    poll then costs one pin read, not five writes and a read.
    """

    def __init__(self, address_pins, enable_pin):
        self.address_pins = address_pins
        self.enable_pin = enable_pin
        self.enable_pin.value(1)
        self.current = None

    def address(self, index):
        if index == self.current:
            return
        for bit, pin in enumerate(self.address_pins):
            pin.value((index >> bit) & 1)
        self.current = index

    def select(self, index):
        self.address(index)
        self.enable_pin.value(0)

    def deselect(self):
        self.enable_pin.value(1)


class DirectSelect:
    """One active-low chip-select pin per reader (small boards without a decoder)."""

    def __init__(self, cs_pins):
        self.cs_pins = cs_pins
        for pin in cs_pins:
            pin.value(1)

    def address(self, index):
        pass

    def select(self, index):
        self.cs_pins[index].value(0)

    def deselect(self):
        for pin in self.cs_pins:
            pin.value(1)


class SpiPort:
    """One reader's view of the shared SPI bus: its chip-select, and BUSY if the chip has one.

    Every transfer selects the reader, clocks the bytes and deselects, so a transfer can never
    leave two readers selected.
    """

    def __init__(self, spi, select, index, busy_pin=None):
        self.spi = spi
        self.sel = select
        self.index = index
        self.busy_pin = busy_pin
        self.transfers = 0

    def xfer(self, tx):
        """Full-duplex transfer: returns as many bytes as were sent."""
        rx = bytearray(len(tx))
        self.sel.select(self.index)
        try:
            self.spi.write_readinto(tx, rx)
        finally:
            self.sel.deselect()
        self.transfers += 1
        return rx

    def write(self, tx):
        self.sel.select(self.index)
        try:
            self.spi.write(tx)
        finally:
            self.sel.deselect()
        self.transfers += 1

    def read(self, n):
        rx = bytearray(n)
        self.sel.select(self.index)
        try:
            self.spi.readinto(rx, 0xFF)
        finally:
            self.sel.deselect()
        self.transfers += 1
        return rx

    def busy(self):
        """True while the chip signals BUSY (PN5180); always False for chips without it."""
        if self.busy_pin is None:
            return False
        self.sel.address(self.index)
        return bool(self.busy_pin.value())


def no_sleep_us(_us):
    """The default delay for tests and simulations: time does not pass."""
