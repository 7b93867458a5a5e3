"""Emulated time for the chip emulators: a clock that counts 13.56 MHz carrier cycles.

Both reader chips derive their timers from the 13.56 MHz carrier (fc), and both air protocols
state their timings in carrier cycles (ISO/IEC 15693-3 t1 = 4352/fc, ISO/IEC 14443-3 bit =
128/fc), so the emulators keep time as an integer count of carrier cycles: exact, and identical
under CPython and MicroPython (no floats). Time passes only through the host's own actions: SPI
bytes clocked, BUSY polled, and the driver's ``sleep_us``. A driver that polls too few times or
gives up too early therefore fails against the emulator exactly as it would against a chip.

The host-side costs are the emulator's model, not datasheet figures, in two profiles:

- ``HOST_FAST`` (the default): 4 MHz SPI as in hardware/pinmap.json and a few microseconds per
  chip-select and pin read, deliberately at the fast end, so a driver whose waits are bounded by
  a count rather than by time is caught;
- ``HOST_PICO``: what MicroPython on the RP2040 spends around each SPI transfer, BUSY poll and
  ``sleep_us`` call (the interpreter walking driver -> port -> select -> machine.SPI and
  back). Issue 35: without it the board files' scan periods were emulator floors. The figures
  are estimates (docs/hardware-notes.md, "Scan timing": the driver path measured under the
  MicroPython unix port on a PC, times the PC-to-RP2040 speed ratio, which is assumed, not
  measured); a real board's HEARTBEAT ``cycle_ms`` is the authority
  (``hardware/hil_check.py --steps cycle`` compares it with the board file).
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

#: (microseconds per SPI transfer, per BUSY/pin poll, per sleep_us call) spent by the host.
HOST_FAST = (2, 3, 0)
#: The Pico's MicroPython: 70 us per transfer (the middle of the 50-90 us estimate), 15 us per
#: BUSY poll, 10 us per sleep_us call on top of the sleep itself. Estimates: see the module
#: docstring.
HOST_PICO = (70, 15, 10)
#: The ends of the estimate, for the bracket the docs give.
HOST_PICO_LOW = (50, 10, 8)
HOST_PICO_HIGH = (90, 20, 12)


class AirClock:
    """The emulated present, in carrier cycles since the emulator started.

    ``host`` is a host-cost profile (``HOST_FAST`` or ``HOST_PICO``): the chips charge
    ``frame_overhead`` around each SPI transfer and ``pin_read`` per BUSY poll, and each
    ``sleep_us`` call costs its ``call`` overhead on top of the sleep.
    """

    def __init__(self, host=HOST_FAST):
        self.t = 0
        self.host = host
        self.frame_overhead = us_to_cycles(host[0])
        self.pin_read = us_to_cycles(host[1])
        self.call = us_to_cycles(host[2])

    def advance(self, cycles):
        self.t += cycles

    def sleep_us(self, us):
        """A driver's ``sleep_us`` when it runs on emulated chips: time passes, nothing else."""
        self.t += us_to_cycles(us) + self.call


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
