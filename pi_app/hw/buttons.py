"""Player buttons (OK, back/undo, menu) through gpiozero, producing ``ButtonPressed`` events.

gpiozero picks the pins: real ones on a Pi (lgpio), ``MockFactory`` pins when
``GPIOZERO_PIN_FACTORY=mock`` or a test sets one, so this class is its own mock, exactly as
gpiozero intends. Buttons switch to ground with the internal pull-up. gpiozero's
``bounce_time`` debounces on a real Pi; on top, a press within ``bounce_time`` of the last
accepted press of the same button is dropped in software, because a mock pin does not
debounce and a double "undo" is the last thing a referee needs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from gpiozero import Button  # type: ignore[import-untyped]

from pi_app.readings import ButtonPressed


class Buttons:
    def __init__(
        self,
        pins: Mapping[str, int],
        sink: Callable[[ButtonPressed], None],
        *,
        bounce_time: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        pin_factory: Any = None,
    ) -> None:
        self.sink = sink
        self.bounce_time = bounce_time
        self.clock = clock
        self.presses: Counter[str] = Counter()
        self.bounced: Counter[str] = Counter()
        self._last: dict[str, float] = {}
        self.buttons: dict[str, Any] = {}
        try:
            for name, gpio in pins.items():
                button = Button(gpio, pull_up=True, bounce_time=bounce_time,
                                pin_factory=pin_factory)
                button.when_pressed = self._handler(name)
                self.buttons[name] = button
        except Exception:
            self.close()
            raise

    def _handler(self, name: str) -> Callable[[], None]:
        def pressed() -> None:
            now = self.clock()
            last = self._last.get(name)
            if last is not None and now - last < self.bounce_time:
                self.bounced[name] += 1
                return
            self._last[name] = now
            self.presses[name] += 1
            self.sink(ButtonPressed(now, name))
        return pressed

    def is_pressed(self, name: str) -> bool:
        return bool(self.buttons[name].is_pressed)

    def close(self) -> None:
        for button in self.buttons.values():
            button.close()
        self.buttons.clear()

    def __enter__(self) -> Buttons:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
