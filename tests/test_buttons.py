"""Player buttons and the direct-GPIO presence path, on gpiozero's MockFactory pins."""

from __future__ import annotations

import time
from typing import Any

import pytest

from pi_app.hw.buttons import Buttons
from pi_app.hw.gpio_sensors import GpioPresence
from pi_app.hw.pinmap import load_pinmap
from pi_app.readings import ButtonPressed, HwEvent, PresenceChanged, Snapshot

PINS = load_pinmap()


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def press(factory: Any, gpio: int) -> None:
    pin = factory.pin(gpio)
    pin.drive_low()
    pin.drive_high()


def test_each_button_from_the_pin_map(mock_factory: Any) -> None:
    events: list[ButtonPressed] = []
    clock = Clock()
    with Buttons(PINS.buttons, events.append, clock=clock) as buttons:
        for gpio in PINS.buttons.values():
            clock.t += 1
            press(mock_factory, gpio)
        assert [e.button for e in events] == ["ok", "back", "menu"]
        assert events[0] == ButtonPressed(101.0, "ok")
        assert buttons.presses["menu"] == 1
        mock_factory.pin(PINS.buttons["back"]).drive_low()
        assert buttons.is_pressed("back")


def test_bounces_are_dropped(mock_factory: Any) -> None:
    events: list[ButtonPressed] = []
    clock = Clock()
    with Buttons({"ok": 5}, events.append, bounce_time=0.05, clock=clock) as buttons:
        press(mock_factory, 5)
        clock.t += 0.01
        press(mock_factory, 5)  # contact bounce
        clock.t += 0.2
        press(mock_factory, 5)  # a real second press
        assert len(events) == 2 and buttons.bounced["ok"] == 1


def test_closing_releases_the_pins(mock_factory: Any) -> None:
    Buttons({"ok": 5}, lambda e: None).close()
    with Buttons({"ok": 5}, lambda e: None):
        pass


def test_a_pin_used_twice_fails_and_releases_the_others(mock_factory: Any) -> None:
    from gpiozero.exc import GPIOPinInUse  # type: ignore[import-untyped]

    with Buttons({"ok": 5}, lambda e: None), pytest.raises(GPIOPinInUse):
        Buttons({"menu": 13, "back": 5}, lambda e: None)
    with Buttons({"menu": 13}, lambda e: None):  # 13 was released after the failure
        pass


def test_gpio_presence_debounce_and_snapshot(mock_factory: Any) -> None:
    events: list[HwEvent] = []
    clock = Clock()
    gpios = PINS.presence_gpio[:3]
    sensors = GpioPresence(gpios, events.append, debounce=0.03, clock=clock)
    try:
        pin = mock_factory.pin(gpios[1])
        pin.drive_low()  # a reed closes: a piece arrived
        sensors.poll()
        clock.t += 0.02
        sensors.poll()
        assert events == []
        clock.t += 0.02
        sensors.poll()
        assert events == [PresenceChanged(100.0, 1, True)]
        pin.drive_high()  # a short bounce open is ignored
        clock.t += 0.01
        sensors.poll()
        pin.drive_low()
        clock.t += 0.1
        sensors.poll()
        assert len(events) == 1
        assert sensors.snapshot() == Snapshot(clock.t, (), (False, True, False))
    finally:
        sensors.close()


@pytest.mark.realtime
def test_gpio_presence_thread(mock_factory: Any) -> None:
    events: list[HwEvent] = []
    sensors = GpioPresence(PINS.presence_gpio[:2], events.append, debounce=0.0).start(0.002)
    try:
        assert isinstance(events[0], Snapshot)
        mock_factory.pin(PINS.presence_gpio[0]).drive_low()
        deadline = time.monotonic() + 10  # the thread's first poll; generous on a busy machine
        while len(events) < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert isinstance(events[1], PresenceChanged) and events[1].present
    finally:
        sensors.close()
