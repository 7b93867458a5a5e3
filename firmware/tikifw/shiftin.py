"""Reed/hall presence sensors through a chain of 74HC165 parallel-in shift registers.

Why 74HC165: a whole board (up to 32 sensors in four chips) costs three pins and well under a
millisecond to read, so presence can be sampled between every two NFC reads.

The chain is ``count`` sensor bits followed by two sentinel inputs wired to 3.3 V and GND. A
broken data line, an unplugged chain or a missing chip reads all ones or all zeros and so
fails the sentinel check: that read is rejected instead of turning into "every cell empty".
Reed switches and open-collector hall switches pull their input low, so ``active_low`` is the
default: a 0 bit means a piece is there.
"""

SENTINEL = (1, 0)


class PresenceError(Exception):
    """The shift-register chain did not return its sentinel bits."""


class ShiftIn:
    """Bit-banged 74HC165 chain: pulse SH/LD low to latch, then shift bits out of QH."""

    def __init__(self, load_pin, clock_pin, data_pin, count, active_low=True):
        self.load = load_pin
        self.clock = clock_pin
        self.data = data_pin
        self.count = count
        self.active_low = active_low
        self.load.value(1)
        self.clock.value(0)

    def read_raw(self):
        """Every bit in shift order, sentinels included (for the self-test)."""
        self.load.value(0)
        self.load.value(1)
        bits = []
        for _ in range(self.count + len(SENTINEL)):
            bits.append(self.data.value())
            self.clock.value(1)
            self.clock.value(0)
        return bits

    def read(self):
        """Presence of each sensor as a list of bools; PresenceError if the chain is broken."""
        bits = self.read_raw()
        if tuple(bits[self.count:]) != SENTINEL:
            raise PresenceError(f"presence chain broken (sentinel bits {bits[self.count:]!r})")
        if self.active_low:
            return [not b for b in bits[:self.count]]
        return [bool(b) for b in bits[:self.count]]


class NoPresence:
    """A board without presence sensors."""

    count = 0

    def read_raw(self):
        return []

    def read(self):
        return []
