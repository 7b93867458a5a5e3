"""A stand-in for MicroPython's ``machine`` module on a PC (CPython or the unix port).

The unix port's own ``machine`` has no Pin or SPI, and CPython has no ``machine`` at all; put
this directory first on the module path (``MICROPYPATH`` / ``sys.path``) and ``main.py``'s wiring
code runs unchanged. Pin levels and SPI bytes go to a bus object attached with ``attach`` (see
``tikifw.chipsim.SimBus``); with no bus, pins just remember their level and SPI reads zeros.
"""

_bus = None


def attach(bus):
    """Route every pin and SPI access to ``bus`` (None to detach)."""
    global _bus  # noqa: PLW0603 - a module-level switch, like the real machine module
    _bus = bus


class Pin:
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, pin_id, mode=-1, pull=-1, value=None):
        self.id = pin_id
        self.mode = mode
        self.pull = pull
        self._level = 1 if pull == Pin.PULL_UP else 0
        if value is not None:
            self.value(value)

    def init(self, mode=-1, pull=-1, value=None):
        self.mode = mode
        self.pull = pull
        if value is not None:
            self.value(value)

    def value(self, level=None):
        if level is None:
            if _bus is not None:
                seen = _bus.read_pin(self.id)
                if seen is not None:
                    return seen
            return self._level
        self._level = 1 if level else 0
        if _bus is not None:
            _bus.write_pin(self.id, self._level)
        return None

    def __call__(self, level=None):
        return self.value(level)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)


class SPI:
    def __init__(self, spi_id, baudrate=1000000, polarity=0, phase=0, sck=None, mosi=None,
                 miso=None):
        self.id = spi_id
        self.baudrate = baudrate

    def init(self, baudrate=None, **_kw):
        if baudrate is not None:
            self.baudrate = baudrate
        if _bus is not None and hasattr(_bus, "set_spi_hz"):
            _bus.set_spi_hz(self.baudrate)

    def _xfer(self, tx):
        if _bus is None:
            return bytearray(len(tx))
        return _bus.spi(bytes(tx))

    def write(self, buf):
        self._xfer(buf)

    def read(self, n, write=0):
        return bytes(self._xfer(bytes((write,)) * n))

    def readinto(self, buf, write=0):
        rx = self._xfer(bytes((write,)) * len(buf))
        for i in range(len(buf)):
            buf[i] = rx[i]

    def write_readinto(self, wbuf, rbuf):
        rx = self._xfer(wbuf)
        for i in range(len(rbuf)):
            rbuf[i] = rx[i]


def freq(hz=None):
    return 125000000
