"""The NeoPixel strip: one ``show(frame)`` that writes only changes and respects the power supply.

``LedStrip`` is the interface; ``PixelStrip`` implements it over any ``adafruit_pixelbuf``
object: the real ``neopixel.NeoPixel`` (PWM/DMA, needs root, Pi 4 and older), the real
``neopixel_spi.NeoPixel_SPI`` (SPI MOSI, no root, Pi 5 too) or ``RecordingPixels``, a PixelBuf
that records the bytes it would put on the wire. The drivers are imported only when chosen, so
nothing Pi-only loads on a PC. Which one: ``TIKIBOARD_LEDS`` or the pin map's
``pi.neopixel.driver`` (``neopixel``, ``neopixel_spi``, ``mock``), like gpiozero's pin factories.

Power: a WS2812 draws about 20 mA per colour channel at full scale and about 1 mA dark
(docs/hardware-notes.md). ``PowerBudget`` estimates a frame's current and scales every channel down
evenly when it would exceed the supply, so a full-white test pattern cannot brown out the Pi.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import adafruit_pixelbuf  # type: ignore[import-untyped]

from pi_app.hw.pinmap import NeoPixelConfig

RGB = tuple[int, int, int]


class LedStrip(Protocol):
    """What the referee draws on: a strip of ``count`` RGB LEDs."""

    count: int

    def show(self, frame: Sequence[RGB]) -> bool:
        """Display ``frame`` (one (r, g, b) per LED); False when it equals the last frame."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class PowerBudget:
    supply_ma: float
    ma_per_channel: float = 20.0
    idle_ma_per_led: float = 1.0

    def current_ma(self, frame: Sequence[RGB]) -> float:
        """Estimated strip current for ``frame``."""
        channels = sum(r + g + b for r, g, b in frame) / 255.0
        return channels * self.ma_per_channel + len(frame) * self.idle_ma_per_led

    def scale(self, frame: Sequence[tuple[float, float, float]]) -> float:
        """The factor (≤ 1) that brings ``frame`` within the supply. A dark frame is left as
        it is even where the strip's idle draw alone exceeds the supply: dimming cannot help."""
        channels = sum(r + g + b for r, g, b in frame) / 255.0 * self.ma_per_channel
        headroom = self.supply_ma - len(frame) * self.idle_ma_per_led
        if channels <= headroom or channels == 0:
            return 1.0
        return max(0.0, headroom / channels)


def cap_frame(frame: Sequence[RGB], budget: PowerBudget,
              brightness: float = 1.0) -> tuple[tuple[RGB, ...], float]:
    """``frame`` dimmed by ``brightness`` and then to the budget; returns it and the factor."""
    dimmed = [(r * brightness, g * brightness, b * brightness) for r, g, b in frame]
    factor = budget.scale(dimmed)
    out = tuple((int(r * factor), int(g * factor), int(b * factor)) for r, g, b in dimmed)
    return out, factor * brightness


def _check(frame: Sequence[RGB], count: int) -> tuple[RGB, ...]:
    if len(frame) != count:
        raise ValueError(f"an LED frame needs {count} colours, got {len(frame)}")
    out = []
    for i, colour in enumerate(frame):
        if len(colour) != 3 or not all(isinstance(v, int) and 0 <= v <= 255 for v in colour):
            raise ValueError(f"LED {i}: {colour!r} is not an (r, g, b) of 0..255")
        out.append((colour[0], colour[1], colour[2]))
    return tuple(out)


class RecordingPixels(adafruit_pixelbuf.PixelBuf):  # type: ignore[misc]
    """A NeoPixel without hardware: every ``show`` appends the wire bytes to ``frames``."""

    def __init__(self, pin: object, n: int, *, bpp: int = 3, brightness: float = 1.0,
                 auto_write: bool = False, pixel_order: str | None = None) -> None:
        self.pin = pin
        self.frames: list[bytes] = []
        order = pixel_order or ("GRB" if bpp == 3 else "GRBW")
        super().__init__(n, brightness=brightness, byteorder=order, auto_write=auto_write)

    def _transmit(self, buffer: bytearray) -> None:
        self.frames.append(bytes(buffer))

    def deinit(self) -> None:
        pass


class PixelStrip:
    """``LedStrip`` over a PixelBuf: change detection, validation, power cap, counters."""

    def __init__(self, pixels: Any, count: int, budget: PowerBudget,
                 brightness: float = 1.0) -> None:
        self.pixels = pixels
        self.count = count
        self.budget = budget
        self.brightness = brightness
        self.writes = 0
        self.skipped = 0
        self.last_current_ma = 0.0
        self.last_scale = 1.0
        self._last: tuple[RGB, ...] | None = None

    def show(self, frame: Sequence[RGB]) -> bool:
        colours = _check(frame, self.count)
        if colours == self._last:
            self.skipped += 1
            return False
        capped, scale = cap_frame(colours, self.budget, self.brightness)
        self.pixels[:] = list(capped)
        self.pixels.show()
        self._last = colours
        self.writes += 1
        self.last_scale = scale
        self.last_current_ma = self.budget.current_ma(capped)
        return True

    def clear(self) -> None:
        self.show([(0, 0, 0)] * self.count)

    def close(self) -> None:
        self.clear()
        deinit = getattr(self.pixels, "deinit", None)
        if deinit is not None:
            deinit()


def open_strip(count: int, config: NeoPixelConfig, driver: str | None = None,
               brightness: float = 1.0) -> PixelStrip:
    """The configured strip: ``driver`` argument, else ``TIKIBOARD_LEDS``, else the pin map."""
    name = driver or os.environ.get("TIKIBOARD_LEDS") or config.driver
    budget = PowerBudget(config.supply_ma, config.ma_per_channel, config.idle_ma_per_led)
    bpp = len(config.pixel_order)
    pixels: Any
    if name == "mock":
        pixels = RecordingPixels(None, count, bpp=bpp, pixel_order=config.pixel_order)
    elif name == "neopixel":
        board = importlib.import_module("board")  # Blinka: only here, only on a Pi
        neopixel = importlib.import_module("neopixel")
        pixels = neopixel.NeoPixel(getattr(board, f"D{config.pwm_gpio}"), count, bpp=bpp,
                                   auto_write=False, pixel_order=config.pixel_order)
    elif name == "neopixel_spi":
        board = importlib.import_module("board")
        neopixel_spi = importlib.import_module("neopixel_spi")
        pixels = neopixel_spi.NeoPixel_SPI(board.SPI(), count, bpp=bpp, auto_write=False,
                                           pixel_order=config.pixel_order,
                                           reset_time=config.reset_us * 1e-6)
    else:
        raise ValueError(f"unknown LED driver {name!r} (neopixel, neopixel_spi or mock)")
    return PixelStrip(pixels, count, budget, brightness)


def led_test_pattern(count: int) -> Iterator[list[RGB]]:
    """The LED test pattern: solid red, green, blue and white, then one white LED walking the
    strip, then dark. Solid white is the worst case for the power cap."""
    for colour in ((255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)):
        yield [colour] * count
    for i in range(count):
        frame = [(0, 0, 0)] * count
        frame[i] = (255, 255, 255)
        yield frame
    yield [(0, 0, 0)] * count
