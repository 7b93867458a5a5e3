"""Emulated time for the chip emulators: a clock that counts 13.56 MHz carrier cycles.

Both reader chips derive their timers from the 13.56 MHz carrier (fc), and both air protocols
state their timings in carrier cycles (ISO/IEC 15693-3 t1 = 4352/fc, ISO/IEC 14443-3 bit =
128/fc), so the emulators keep time as an integer count of carrier cycles: exact, and identical
under CPython and MicroPython (no floats). Time passes only through the host's own actions: SPI
bytes clocked, BUSY polled, and the driver's ``sleep_us``. A driver that polls too few times or
gives up too early therefore fails against the emulator exactly as it would against a chip.

The host-side costs below are the emulator's model (4 MHz SPI as in hardware/pinmap.json, a
few microseconds per chip-select and pin read), not datasheet figures: they are deliberately at
the fast end, so a driver whose waits are bounded by a count rather than by time is caught.
"""

FC = 13560000  # carrier frequency, Hz (ISO/IEC 14443-2 and 15693-2: fc = 13.56 MHz)


def us_to_cycles(us):
    """Microseconds to carrier cycles, rounded down."""
    return us * FC // 1000000


def cycles_to_us(cycles):
    """Carrier cycles to whole microseconds, rounded down."""
    return cycles * 1000000 // FC


SPI_HZ = 4000000
SPI_BYTE = 8 * FC // SPI_HZ  # one byte at 4 MHz: 2 us = 27 carrier cycles
FRAME_OVERHEAD = us_to_cycles(2)  # chip-select down and up around one transfer
PIN_READ = us_to_cycles(3)  # one GPIO read (BUSY) from MicroPython


class AirClock:
    """The emulated present, in carrier cycles since the emulator started."""

    def __init__(self):
        self.t = 0

    def advance(self, cycles):
        self.t += cycles

    def sleep_us(self, us):
        """A driver's ``sleep_us`` when it runs on emulated chips: time passes, nothing else."""
        self.t += us_to_cycles(us)


class TimedChip:
    """What both reader-chip emulators do with time: scheduled events and one timer.

    A subclass keeps ``clock`` (an :class:`AirClock`), ``events`` (a list of ``[time, kind,
    payload]``), ``timer_expiry`` (carrier cycle of the timer's next expiry, or None while it is
    stopped), and defines ``_event(at, kind, payload)`` and ``_timer_expired()``. Nothing runs
    by itself: the chip catches up in :meth:`_update` whenever the host touches it, in time
    order, so a timer that expires before a tag answers stops the exchange as on the chip.
    """

    def now(self):
        return self.clock.t

    def _update(self):
        """Run every event and timer expiry due by now, earliest first."""
        while True:
            now = self.now()
            due = None
            for ev in self.events:
                if ev[0] <= now and (due is None or ev[0] < due[0]):
                    due = ev
            if self.timer_expiry is not None and self.timer_expiry <= now and (
                    due is None or self.timer_expiry < due[0]):
                self._timer_expired()
                continue
            if due is None:
                return
            self.events.remove(due)
            self._event(due[0], due[1], due[2])
