"""Presence sensors straight on Pi GPIO, for cheap builds without the sensor board.

Reed switches (or open-collector hall switches) to ground, one GPIO each with the pull-up, read
through gpiozero (real or mock pins, like the buttons). It produces the same events as the
serial link: ``PresenceChanged`` for each debounced change and a ``Snapshot`` (no readers, only
presence) on demand, so the tracker cannot tell the two sources apart.

Debounce works like the firmware's: a new state counts once it has lasted ``debounce`` seconds,
and the event carries the time it was first seen. gpiozero's edge callbacks only note the raw
change; ``poll`` (called by the built-in thread every ``interval``, or by a test with its own
clock) decides. A Pi has about a dozen free GPIOs next to the buttons, LEDs and OLED (see
``pi.presence_gpio`` in the pin map): enough for Tiki Topple's nine slots, not for TacTiki.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from gpiozero import DigitalInputDevice  # type: ignore[import-untyped]

from pi_app.readings import HwEvent, PresenceChanged, Snapshot


class GpioPresence:
    def __init__(
        self,
        pins: Sequence[int],
        sink: Callable[[HwEvent], None],
        *,
        debounce: float = 0.03,
        clock: Callable[[], float] = time.monotonic,
        pin_factory: Any = None,
    ) -> None:
        self.sink = sink
        self.debounce = debounce
        self.clock = clock
        self.inputs: list[Any] = []
        try:
            for gpio in pins:
                self.inputs.append(DigitalInputDevice(gpio, pull_up=True,
                                                      pin_factory=pin_factory))
        except Exception:
            self.close()
            raise
        self.present = [bool(d.value) for d in self.inputs]
        self._since: list[float | None] = [None] * len(self.inputs)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.changes = 0

    def poll(self) -> None:
        """Compare every input with its reported state and report what has settled."""
        now = self.clock()
        events = []
        with self._lock:
            for i, device in enumerate(self.inputs):
                raw = bool(device.value)
                if raw == self.present[i]:
                    self._since[i] = None
                    continue
                first = self._since[i]
                if first is None:
                    first = self._since[i] = now
                if now - first >= self.debounce:
                    self.present[i] = raw
                    self._since[i] = None
                    self.changes += 1
                    events.append(PresenceChanged(first, i, raw))
        for event in events:
            self.sink(event)

    def snapshot(self) -> Snapshot:
        """The current debounced picture, as the sensor board would send it."""
        with self._lock:
            return Snapshot(self.clock(), (), tuple(self.present))

    def start(self, interval: float = 0.005) -> GpioPresence:
        """Emit a snapshot, then poll in a thread every ``interval`` seconds until ``close``."""
        self.sink(self.snapshot())

        def run() -> None:
            while not self._stop.wait(interval):
                self.poll()

        self._thread = threading.Thread(target=run, name="gpio-presence", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
            self._thread = None
        for device in self.inputs:
            device.close()
        self.inputs = []
