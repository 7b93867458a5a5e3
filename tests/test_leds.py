"""The LED strip: wire bytes through a recording PixelBuf, change detection, the power cap,
the test pattern, and drivers chosen by configuration without loading Pi-only modules."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_app.hw.leds import (
    PixelStrip,
    PowerBudget,
    RecordingPixels,
    cap_frame,
    led_test_pattern,
    open_strip,
)
from pi_app.hw.pinmap import load_pinmap

colour = st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255))


def strip(count: int = 3, supply: float = 10_000.0) -> tuple[PixelStrip, RecordingPixels]:
    pixels = RecordingPixels(None, count)
    return PixelStrip(pixels, count, PowerBudget(supply)), pixels


def test_wire_bytes_are_grb() -> None:
    s, pixels = strip()
    assert s.show([(255, 0, 0), (0, 255, 0), (1, 2, 3)])
    assert pixels.frames == [bytes([0, 255, 0, 255, 0, 0, 2, 1, 3])]


def test_rgbw_strip_pads_white() -> None:
    pixels = RecordingPixels(None, 1, bpp=4, pixel_order="GRBW")
    PixelStrip(pixels, 1, PowerBudget(1000.0)).show([(10, 20, 30)])
    assert pixels.frames == [bytes([20, 10, 30, 0])]


def test_only_changes_are_written() -> None:
    s, pixels = strip()
    frame = [(1, 1, 1)] * 3
    assert s.show(frame)
    assert not s.show(list(frame))
    assert s.show([(2, 2, 2)] * 3)
    assert len(pixels.frames) == 2 and s.writes == 2 and s.skipped == 1


def test_bad_frames_are_refused() -> None:
    s, _ = strip()
    with pytest.raises(ValueError, match="needs 3 colours, got 2"):
        s.show([(0, 0, 0)] * 2)
    with pytest.raises(ValueError, match="LED 1"):
        s.show([(0, 0, 0), (0, 0, 256), (0, 0, 0)])


def test_power_cap_scales_a_white_frame_to_the_supply() -> None:
    budget = PowerBudget(supply_ma=500, ma_per_channel=20, idle_ma_per_led=1)
    white = [(255, 255, 255)] * 10  # 10 x 61 mA = 610 mA
    assert budget.current_ma(white) == pytest.approx(610)
    capped, scale = cap_frame(white, budget)
    assert scale == pytest.approx(490 / 600)
    assert budget.current_ma(capped) <= 500
    assert capped[0][0] == int(255 * 490 / 600)


def test_dim_frames_pass_unchanged_and_brightness_applies() -> None:
    budget = PowerBudget(supply_ma=2000)
    frame = [(10, 20, 30)] * 4
    assert cap_frame(frame, budget) == (tuple(frame), 1.0)
    assert cap_frame(frame, budget, brightness=0.5)[0][0] == (5, 10, 15)


@given(st.lists(colour, min_size=1, max_size=60), st.floats(40, 5000), st.floats(0, 1))
def test_capped_frames_never_exceed_the_supply(frame: list[tuple[int, int, int]],
                                               supply: float, brightness: float) -> None:
    budget = PowerBudget(supply_ma=supply)
    capped, scale = cap_frame(frame, budget, brightness)
    assert 0 <= scale <= 1
    if supply >= len(frame) * budget.idle_ma_per_led:
        assert budget.current_ma(capped) <= supply + 1e-6
    assert all(c <= o for new, old in zip(capped, frame, strict=True)
               for c, o in zip(new, old, strict=True))


def test_a_dark_frame_on_a_strip_whose_idle_draw_exceeds_the_supply_stays_dark() -> None:
    """Hypothesis found it: 60 idle LEDs on 40 mA and nothing lit divided by zero."""
    assert cap_frame([(0, 0, 0)] * 60, PowerBudget(supply_ma=40)) == (((0, 0, 0),) * 60, 1.0)


def test_strip_records_its_current() -> None:
    s, pixels = strip(count=20, supply=300)
    s.show([(255, 255, 255)] * 20)
    assert s.last_current_ma <= 300 and s.last_scale < 1
    s.close()
    assert pixels.frames[-1] == bytes(60)


def test_pattern_covers_every_led_and_ends_dark() -> None:
    frames = list(led_test_pattern(5))
    assert len(frames) == 4 + 5 + 1
    assert frames[3] == [(255, 255, 255)] * 5
    lit = [next(i for i, c in enumerate(f) if c != (0, 0, 0)) for f in frames[4:9]]
    assert lit == [0, 1, 2, 3, 4]
    assert frames[-1] == [(0, 0, 0)] * 5


def test_open_strip_by_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_pinmap().neopixel
    monkeypatch.setenv("TIKIBOARD_LEDS", "mock")
    s = open_strip(24, config)
    assert isinstance(s.pixels, RecordingPixels) and s.count == 24
    assert s.budget.supply_ma == config.supply_ma
    with pytest.raises(ValueError, match="unknown LED driver 'ws2801'"):
        open_strip(4, config, driver="ws2801")


def test_real_driver_needs_pi_modules_only_when_chosen() -> None:
    """Importing the module loads no Pi-only driver; choosing one on a PC fails clearly."""
    code = ("import sys, pi_app.hw.leds as l\n"
            "assert not {'neopixel', 'neopixel_spi', 'board'} & set(sys.modules)\n"
            "from pi_app.hw.pinmap import load_pinmap\n"
            "try:\n"
            "    l.open_strip(3, load_pinmap().neopixel, driver='neopixel_spi')\n"
            "except Exception as e:\n"
            "    print(type(e).__name__)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=False,
                         env={"BLINKA_SKIP_DEPENDENCY_CHECK": "1", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() in ("ModuleNotFoundError", "NotImplementedError", "RuntimeError",
                                  "ValueError", "AttributeError")
