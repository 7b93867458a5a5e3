"""The OLED behind ``Display``: luma's dummy device as the mock, change detection, PNG capture,
the test screen, and the driver chosen by configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageChops

from pi_app.hw.display import (
    CapturingDisplay,
    LumaDisplay,
    display_test_screen,
    open_display,
)
from pi_app.hw.display import main as render_docs_image
from pi_app.hw.pinmap import load_pinmap

CONFIG = load_pinmap().oled
IMAGES_DIR = Path(__file__).resolve().parent.parent / "hardware" / "images"


def test_mock_display_shows_and_skips_repeats() -> None:
    display = open_display(CONFIG, "mock")
    assert isinstance(display, LumaDisplay) and display.size == (128, 64)
    screen = display_test_screen(display.size)
    assert display.show(screen)
    assert not display.show(screen.copy())
    assert display.writes == 1 and display.skipped == 1
    assert display.device.image.tobytes() == screen.tobytes()
    display.clear()
    assert display.device.image.getbbox() is None
    display.close()


def test_rgb_images_are_converted() -> None:
    display = open_display(CONFIG, "mock")
    img = Image.new("RGB", (128, 64), "black")
    img.putpixel((3, 4), (255, 255, 255))
    display.show(img)
    assert display.device.image.getpixel((3, 4))
    assert display.device.image.getbbox() == (3, 4, 4, 5)


def test_wrong_size_is_refused() -> None:
    display = open_display(CONFIG, "mock")
    with pytest.raises(ValueError, match="display is 128x64, the image 64x32"):
        display.show(Image.new("1", (64, 32)))


def test_capture_writes_one_png_per_new_frame(tmp_path: Path) -> None:
    display = open_display(CONFIG, "mock", capture_dir=tmp_path)
    assert isinstance(display, CapturingDisplay)
    display.show(display_test_screen())
    display.show(display_test_screen())
    display.show(display_test_screen(label="second"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frame_001.png", "frame_002.png"]
    assert Image.open(tmp_path / "frame_001.png").size == (128, 64)


def test_test_screen_marks_the_corners() -> None:
    img = display_test_screen((128, 64))
    assert img.getpixel((3, 3))  # top-left marker
    assert img.getpixel((127, 0)) and img.getpixel((0, 63))
    assert not img.getpixel((95, 58))  # the text box is cleared


def test_driver_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKIBOARD_DISPLAY", "mock")
    assert open_display(CONFIG).size == (128, 64)
    with pytest.raises(ValueError, match="unknown display driver 'vfd'"):
        open_display(CONFIG, "vfd")


def test_docs_image_is_current(tmp_path: Path) -> None:
    out = tmp_path / "oled.png"
    render_docs_image(["--out", str(out)])
    committed = Image.open(IMAGES_DIR / "oled-test.png").convert("L")
    assert ImageChops.difference(committed, Image.open(out).convert("L")).getbbox() is None
