"""The station's one pin map (``pi_app/data/pinmap.json``, linked as ``hardware/pinmap.json``),
read by the Pi code and flashed to the Pico with the firmware.

No pin number is written in code; everything asks this loader. A pin named twice (two buttons
on GPIO 5, a button on the OLED's SDA line, a JSON key given twice) is an error that names the
key, because a doubled pin fails silently on the bench: a button that "does nothing", an LED
strip that flickers with the display. The Pico's half is checked here too (same rules as
firmware/tikifw/pins.py, which the Pico runs). It is package data, so an installed wheel finds
it without the source checkout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pi_app.errors import UnreadableInput

#: The shipped pin map (package data; ``hardware/pinmap.json`` in the checkout links here).
PINMAP: Traversable = resources.files("pi_app.data") / "pinmap.json"
PI_GPIO_MAX = 27
PICO_GP_MAX = 29
BUTTONS = ("ok", "back", "menu")
LED_DRIVERS = ("neopixel", "neopixel_spi", "mock")
OLED_DRIVERS = ("ssd1306", "sh1106", "mock")
PICO_PIN_KEYS = (
    "spi.sck", "spi.mosi", "spi.miso", "reader_select.address", "reader_select.enable",
    "reader_reset", "reader_busy", "shift_in.load", "shift_in.clock", "shift_in.data",
    "status_led",
)
PICO_OPTIONAL = ("reader_busy", "status_led")


class PinMapError(UnreadableInput, ValueError):
    """A pin map that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class NeoPixelConfig:
    driver: str
    pwm_gpio: int
    spi_mosi_gpio: int
    pixel_order: str
    reset_us: int
    supply_ma: float
    ma_per_channel: float
    idle_ma_per_led: float


@dataclass(frozen=True, slots=True)
class OledConfig:
    driver: str
    i2c_port: int
    address: int
    sda_gpio: int
    scl_gpio: int
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class SerialConfig:
    device: str
    baudrate: int


@dataclass(frozen=True, slots=True)
class PinMap:
    source: str
    buttons: dict[str, int]
    neopixel: NeoPixelConfig
    oled: OledConfig
    serial: SerialConfig
    presence_gpio: tuple[int, ...]
    pico: dict[str, Any]
    pico_pins: dict[str, int]


def _no_duplicate_keys(source: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise PinMapError(f"{source}: key {key!r} is given twice in one object")
            out[key] = value
        return out
    return hook


def load_pinmap(path: str | Path | None = None) -> PinMap:
    """Load and check a pin map (default: the shipped one, :data:`PINMAP`)."""
    source: Traversable = Path(path) if path is not None else PINMAP
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise PinMapError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys(str(source)))
    except json.JSONDecodeError as exc:
        raise PinMapError(f"{source}: not JSON: {exc}") from exc
    return parse_pinmap(data, str(source))


class _Checker:
    def __init__(self, source: str, section: str, maximum: int, prefix: str) -> None:
        self.source = source
        self.section = section
        self.maximum = maximum
        self.prefix = prefix
        self.owner: dict[int, str] = {}

    def fail(self, key: str, why: str) -> PinMapError:
        return PinMapError(f"{self.source}: {key}: {why}")

    def get(self, data: Any, key: str) -> Any:
        value = data
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                raise self.fail(f"{self.section}.{key}", "missing")
            value = value[part]
        return value

    def pin(self, value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= self.maximum:
            raise self.fail(key, f"must be a {self.prefix} number 0..{self.maximum}, "
                                 f"not {value!r}")
        if value in self.owner:
            raise self.fail(key, f"{self.prefix} {value} is already used by {self.owner[value]}")
        self.owner[value] = key
        return value

    def number(self, data: Any, key: str, kind: type = int, positive: bool = True) -> Any:
        value = self.get(data, key)
        ok = isinstance(value, int | float) if kind is float else isinstance(value, int)
        if isinstance(value, bool) or not ok or (positive and value <= 0):
            raise self.fail(f"{self.section}.{key}", f"must be a positive number, not {value!r}")
        return kind(value)

    def choice(self, data: Any, key: str, choices: tuple[str, ...]) -> str:
        value = self.get(data, key)
        if value not in choices:
            raise self.fail(f"{self.section}.{key}",
                            f"must be one of {', '.join(choices)}, not {value!r}")
        return str(value)


def parse_pinmap(data: Any, source: str = "pinmap") -> PinMap:
    """Check a parsed pin map and build a :class:`PinMap`."""
    if not isinstance(data, dict):
        raise PinMapError(f"{source}: a pin map is a JSON object")
    pi = data.get("pi")
    if not isinstance(pi, dict):
        raise PinMapError(f"{source}: pi: missing")
    c = _Checker(source, "pi", PI_GPIO_MAX, "GPIO")
    raw_buttons = c.get(pi, "buttons")
    if not isinstance(raw_buttons, dict):
        raise c.fail("pi.buttons", "must be an object of button name to GPIO")
    buttons = {}
    for name in BUTTONS:
        if name not in raw_buttons:
            raise c.fail(f"pi.buttons.{name}", "missing")
    for name, gpio in raw_buttons.items():
        buttons[name] = c.pin(gpio, f"pi.buttons.{name}")
    oled = OledConfig(
        driver=c.choice(pi, "oled.driver", OLED_DRIVERS),
        i2c_port=c.number(pi, "oled.i2c_port", positive=False),
        address=c.number(pi, "oled.address"),
        sda_gpio=c.pin(c.get(pi, "oled.sda_gpio"), "pi.oled.sda_gpio"),
        scl_gpio=c.pin(c.get(pi, "oled.scl_gpio"), "pi.oled.scl_gpio"),
        width=c.number(pi, "oled.width"),
        height=c.number(pi, "oled.height"),
    )
    order = c.get(pi, "neopixel.pixel_order")
    if order not in ("RGB", "GRB", "RGBW", "GRBW"):
        raise c.fail("pi.neopixel.pixel_order", f"must be RGB, GRB, RGBW or GRBW, not {order!r}")
    neopixel = NeoPixelConfig(
        driver=c.choice(pi, "neopixel.driver", LED_DRIVERS),
        pwm_gpio=c.pin(c.get(pi, "neopixel.pwm_gpio"), "pi.neopixel.pwm_gpio"),
        spi_mosi_gpio=c.pin(c.get(pi, "neopixel.spi_mosi_gpio"), "pi.neopixel.spi_mosi_gpio"),
        pixel_order=order,
        reset_us=c.number(pi, "neopixel.reset_us"),
        supply_ma=c.number(pi, "neopixel.supply_ma", float),
        ma_per_channel=c.number(pi, "neopixel.ma_per_channel", float),
        idle_ma_per_led=c.number(pi, "neopixel.idle_ma_per_led", float, positive=False),
    )
    device = c.get(pi, "serial.device")
    if not isinstance(device, str) or not device:
        raise c.fail("pi.serial.device", "must be a device path")
    serial_cfg = SerialConfig(device, c.number(pi, "serial.baudrate"))
    raw_presence = pi.get("presence_gpio", [])
    if not isinstance(raw_presence, list):
        raise c.fail("pi.presence_gpio", "must be a list of GPIO numbers")
    presence = tuple(c.pin(g, f"pi.presence_gpio[{i}]") for i, g in enumerate(raw_presence))

    pico = data.get("pico")
    if not isinstance(pico, dict):
        raise PinMapError(f"{source}: pico: missing")
    p = _Checker(source, "pico", PICO_GP_MAX, "GP")
    pico_pins: dict[str, int] = {}
    for key in PICO_PIN_KEYS:
        try:
            value = p.get(pico, key)
        except PinMapError:
            if key in PICO_OPTIONAL:
                continue
            raise
        if isinstance(value, list):
            for i, v in enumerate(value):
                pico_pins[f"{key}[{i}]"] = p.pin(v, f"pico.{key}[{i}]")
        else:
            pico_pins[key] = p.pin(value, f"pico.{key}")
    return PinMap(source, buttons, neopixel, oled, serial_cfg, presence, pico, pico_pins)
