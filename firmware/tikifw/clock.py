"""A millisecond uptime that does not wrap: MicroPython's ``ticks_ms`` wraps at 2**30 (12 days).

The functions are injected (``time.ticks_ms`` and ``time.ticks_diff`` on the Pico) so the
clock is testable on a PC. Call it at least once per wrap period; the main loop does so every
few milliseconds.
"""


class Uptime:
    def __init__(self, ticks_ms, ticks_diff):
        self.ticks_ms = ticks_ms
        self.ticks_diff = ticks_diff
        self.last = ticks_ms()
        self.total = 0

    def __call__(self):
        now = self.ticks_ms()
        self.total += self.ticks_diff(now, self.last)
        self.last = now
        return self.total
