"""The OLED: a ``Display`` with ``show(image)`` over luma.oled, or over luma's dummy device.

``LumaDisplay`` wraps any luma device: ``ssd1306`` or ``sh1106`` on I²C for the station (128x64),
``luma.core.device.dummy`` for tests and the simulator (it keeps the last frame in memory), and
``CapturingDisplay`` adds a PNG per frame for the docs. Same interface, chosen by
``TIKIBOARD_DISPLAY`` or the pin map's ``pi.oled.driver`` (``ssd1306``, ``sh1106``, ``mock``).

A full frame costs about 23 ms at 400 kHz I²C (92 ms at the Pi's default 100 kHz), so ``show``
skips a frame identical to the last one. The screens themselves belong to the referee; this
module only has the hardware test screen.
"""

from __future__ import annotations

import argparse
import importlib
import os
from pathlib import Path
from typing import Any, Protocol

from PIL import Image, ImageDraw, ImageFont

from pi_app.hw.pinmap import OledConfig, load_pinmap

#: The checkout's hardware/images, relative to the current directory (for the docs).
IMAGES_DIR = Path("hardware") / "images"


class Display(Protocol):
    size: tuple[int, int]

    def show(self, image: Image.Image) -> bool:
        """Put ``image`` on the panel; False when it equals what is shown already."""
        ...

    def clear(self) -> None: ...

    def close(self) -> None: ...


class LumaDisplay:
    """``Display`` over a luma device (real panel or dummy)."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.size: tuple[int, int] = (int(device.width), int(device.height))
        self.mode: str = str(device.mode)
        self.writes = 0
        self.skipped = 0
        self.last_image: Image.Image | None = None
        self._last: bytes | None = None

    def show(self, image: Image.Image) -> bool:
        if image.size != self.size:
            raise ValueError(f"the display is {self.size[0]}x{self.size[1]}, "
                             f"the image {image.size[0]}x{image.size[1]}")
        frame = image if image.mode == self.mode else image.convert(self.mode)
        raw = frame.tobytes()
        if raw == self._last:
            self.skipped += 1
            return False
        self.device.display(frame)
        self._last = raw
        self.last_image = frame
        self.writes += 1
        return True

    def clear(self) -> None:
        self.show(Image.new(self.mode, self.size))

    def close(self) -> None:
        self.device.cleanup()


class CapturingDisplay(LumaDisplay):
    """A dummy display that also saves every new frame as ``frame_NNN.png`` in ``directory``."""

    def __init__(self, device: Any, directory: Path) -> None:
        super().__init__(device)
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def show(self, image: Image.Image) -> bool:
        if not super().show(image):
            return False
        assert self.last_image is not None
        self.last_image.save(self.directory / f"frame_{self.writes:03d}.png")
        return True


def open_display(config: OledConfig, driver: str | None = None,
                 capture_dir: Path | None = None) -> LumaDisplay:
    """The configured display: ``driver`` argument, else ``TIKIBOARD_DISPLAY``, else pin map."""
    name = driver or os.environ.get("TIKIBOARD_DISPLAY") or config.driver
    if name == "mock":
        dummy = importlib.import_module("luma.core.device").dummy
        device = dummy(width=config.width, height=config.height, mode="1")
        if capture_dir is not None:
            return CapturingDisplay(device, capture_dir)
        return LumaDisplay(device)
    if name in ("ssd1306", "sh1106"):
        i2c = importlib.import_module("luma.core.interface.serial").i2c
        panel = getattr(importlib.import_module("luma.oled.device"), name)
        serial = i2c(port=config.i2c_port, address=config.address)
        return LumaDisplay(panel(serial, width=config.width, height=config.height))
    raise ValueError(f"unknown display driver {name!r} (ssd1306, sh1106 or mock)")


def display_test_screen(size: tuple[int, int] = (128, 64),
                        label: str = "display test") -> Image.Image:
    """The hardware test screen: frame, corner marks, diagonals, a checkerboard and text, so a
    shifted column offset (SH1106 vs SSD1306), a mirrored panel or dead pixels show at once."""
    w, h = size
    img = Image.new("1", size)
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, w - 1, h - 1), outline=1)
    draw.line((0, 0, w - 1, h - 1), fill=1)
    draw.line((0, h - 1, w - 1, 0), fill=1)
    for y in range(4, 20, 4):
        for x in range(w - 20, w - 4, 4):
            if (x // 4 + y // 4) % 2 == 0:
                draw.rectangle((x, y, x + 3, y + 3), fill=1)
    draw.rectangle((2, 2, 5, 5), fill=1)  # top-left marker: tells a mirrored panel
    font = ImageFont.load_default()
    draw.rectangle((8, 12, w - 26, h - 3), fill=0)
    draw.text((12, 14), "tikiboard", fill=1, font=font)
    draw.text((12, 28), label, fill=1, font=font)
    draw.text((12, 44), f"{w} x {h}", fill=1, font=font)
    return img


def main(argv: list[str] | None = None) -> None:
    """Render the test screen through the mock display into hardware/images/ (for the docs; run
    from the checkout's root)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--out", type=Path, default=IMAGES_DIR / "oled-test.png")
    parser.add_argument("--scale", type=int, default=4)
    args = parser.parse_args(argv)
    config = load_pinmap().oled
    display = open_display(config, "mock")
    display.show(display_test_screen(display.size))
    assert display.last_image is not None
    img = display.last_image.convert("L").resize(
        (display.size[0] * args.scale, display.size[1] * args.scale), Image.Resampling.NEAREST)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    img.save(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
