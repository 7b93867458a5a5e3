"""Hardware-layer speed: link decoding, frame-to-event latency, firmware scan time, LED frames.

Run ``python -m tools.bench.hardware [--seconds S]``; it prints one JSON object:

- ``link_decode``: a recorded mix of frames (tags, presence, heartbeats, TacTiki-sized
  snapshots) through ``FrameDecoder`` and ``decode_message``: frames/s and MB/s;
- ``link_latency_ms``: a frame written into a pty until ``SerialLink`` hands its event to the
  sink (thread, pyserial, decoding, time mapping): p50 / p99 / max;
- ``snapshot_retry_late_ms``: how late, on the link's reader thread over a pty, an unanswered
  snapshot request is asked again after ``snapshot_retry`` (the timers run between reads of
  ``read_timeout``): p50 / max. Tests check the timer exactly on a virtual clock
  (tests/test_link_timers.py); this is what the thread and the machine add;
- ``firmware_scan``: the firmware's scan loop under MicroPython's unix port
  (firmware/host_selftest.py bench) for each board, through the real drivers against chip
  emulators (no RF air time: docs/hardware-notes.md's 4-5 ms per cell) and over simulated readers
  (the scanner's own cost); null when the micropython binary is missing;
- ``led_frame_us``: ``PixelStrip.show`` of a changing 52-LED frame (TacTiki) into a recording
  PixelBuf: validation, power cap and byte packing; plus the WS2812 wire time for comparison.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path
from typing import Any

from pi_app.hw import messages as m
from pi_app.hw.frames import Frame, FrameDecoder, encode_frame
from pi_app.hw.leds import PixelStrip, PowerBudget, RecordingPixels
from pi_app.hw.link import SerialLink
from pi_app.readings import HwEvent, TagsSeen

ROOT = Path(__file__).resolve().parents[2]
UID7 = bytes.fromhex("04A1B2C3D4E5F6")
STACK = tuple(bytes.fromhex(f"E004010000001{i:03X}") for i in range(5))


def _stream(count: int) -> bytes:
    out = bytearray()
    snap = m.Snapshot(1, 0, tuple(m.ReaderState(0, STACK if r % 2 else (UID7,))
                                  for r in range(25)), tuple(r % 3 == 0 for r in range(25)))
    for i in range(count):
        kind = i % 10
        msg: m.Message
        if kind < 5:
            msg = m.Tags(i, i % 25, STACK[: 1 + i % 5])
        elif kind < 8:
            msg = m.Presence(i, i % 25, bool(i & 1))
        elif kind == 8:
            msg = m.Heartbeat(i, i, i, 0, 0, 40)
        else:
            msg = snap
        out += encode_frame(msg.TYPE, i & 0xFF, msg.encode())
    return bytes(out)


def link_decode(seconds: float) -> dict[str, float]:
    """Frames per second and megabytes per second through the decoder and message parser."""
    data = _stream(2000)
    frames = 0
    rounds = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds or rounds == 0:
        decoder = FrameDecoder()
        for pos in range(0, len(data), 4096):
            for item in decoder.feed(data[pos:pos + 4096]):
                if isinstance(item, Frame):
                    m.decode_message(item.type, item.payload)
                    frames += 1
        rounds += 1
    elapsed = time.perf_counter() - start
    return {"frames_per_s": round(frames / elapsed), "mb_per_s": round(
        rounds * len(data) / elapsed / 1e6, 2), "mean_frame_bytes": round(len(data) / 2000, 1)}


def link_latency(samples: int) -> dict[str, float]:
    """Milliseconds from writing a frame into a pty to its event reaching the sink."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    path = os.ttyname(slave)
    arrived: dict[int, float] = {}
    got = threading.Event()

    def sink(event: HwEvent) -> None:
        if isinstance(event, TagsSeen):
            arrived[event.reader] = time.perf_counter()
            got.set()

    link = SerialLink(path, sink, heartbeat_timeout=30.0, read_timeout=0.01)
    latencies: list[float] = []
    try:
        link.start()
        hello = m.Hello(1, 3, 1, 0, 0, "bench", "bench")
        deadline = time.monotonic() + 5
        while not link.up and time.monotonic() < deadline:
            os.write(master, encode_frame(m.HELLO, 0, hello.encode()))
            time.sleep(0.05)
        _drain(master)
        for i in range(samples):
            got.clear()
            frame = encode_frame(m.TAGS, (i + 1) & 0xFF, m.Tags(i, i % 200, (UID7,)).encode())
            sent = time.perf_counter()
            os.write(master, frame)
            if got.wait(1.0) and (i % 200) in arrived:
                latencies.append((arrived.pop(i % 200) - sent) * 1000)
            _drain(master)
            time.sleep(0.002)
    finally:
        link.stop()
        os.close(master)
        os.close(slave)
    latencies.sort()
    return {"samples": len(latencies), "p50": round(statistics.median(latencies), 3),
            "p99": round(latencies[int(len(latencies) * 0.99) - 1], 3),
            "max": round(latencies[-1], 3)}


def snapshot_retry_late(retries: int, interval: float = 0.2) -> dict[str, float | None]:
    """Milliseconds past ``interval`` between a snapshot request and its unanswered retries."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    link = SerialLink(os.ttyname(slave), lambda event: None, heartbeat_timeout=60.0,
                      snapshot_retry=interval)
    decoder = FrameDecoder()
    asked: list[float] = []  # when each CMD_SNAPSHOT came out; HELLO's answer is never sent
    try:
        link.start()
        deadline = time.monotonic() + 5 + retries * interval * 4
        hello = m.Hello(1, 3, 1, 0, 0, "bench", "bench").encode()
        while len(asked) <= retries and time.monotonic() < deadline:
            if not link.up:
                os.write(master, encode_frame(m.HELLO, 0, hello))
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                continue
            now = time.perf_counter()
            asked += [now for f in decoder.feed(os.read(master, 4096))
                      if isinstance(f, Frame) and f.type == m.CMD_SNAPSHOT]
    finally:
        link.stop()
        os.close(master)
        os.close(slave)
    late = sorted((b - a - interval) * 1000 for a, b in itertools.pairwise(asked))
    return {"retries": len(late), "interval_s": interval,
            "p50": round(statistics.median(late), 3) if late else None,
            "max": round(late[-1], 3) if late else None}


def _drain(fd: int) -> None:
    os.set_blocking(fd, False)
    try:
        while os.read(fd, 4096):
            pass
    except (BlockingIOError, OSError):
        pass
    finally:
        os.set_blocking(fd, True)


def firmware_scan(cycles: int) -> dict[str, Any] | None:
    """The firmware's scan loop per board under MicroPython (null without the binary)."""
    binary = shutil.which("micropython", path=str(Path(sys.executable).parent)) or \
        shutil.which("micropython")
    if binary is None:
        return None
    env = dict(os.environ, MICROPYPATH=f"{ROOT / 'firmware' / 'hostsim'}:{ROOT / 'firmware'}")
    out: dict[str, Any] = {}
    for game in ("topple", "manami", "tactiki"):
        run = subprocess.run(
            [binary, str(ROOT / "firmware" / "host_selftest.py"), "bench",
             str(ROOT / "hardware" / "boards" / f"{game}.json"),
             str(ROOT / "hardware" / "pinmap.json"), str(cycles)],
            capture_output=True, text=True, timeout=120, env=env, check=True)
        out[game] = json.loads(run.stdout)
    return out


def led_frames(seconds: float, count: int = 52) -> dict[str, float]:
    pixels = RecordingPixels(None, count)
    strip = PixelStrip(pixels, count, PowerBudget(2000.0))
    frames = [[((i * 7 + k) % 256, (i * 3) % 256, (k * 5) % 256) for i in range(count)]
              for k in range(64)]
    shown = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds or shown == 0:
        for frame in frames:
            strip.show(frame)
            pixels.frames.clear()
            shown += 1
    elapsed = time.perf_counter() - start
    return {"leds": count, "show_us": round(elapsed / shown * 1e6, 1),
            "wire_us": round(count * 30 + 300, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per throughput figure")
    parser.add_argument("--samples", type=int, default=500, help="latency samples")
    parser.add_argument("--cycles", type=int, default=20, help="firmware board cycles")
    args = parser.parse_args(argv)
    print(json.dumps({
        "benchmark": "hardware",
        "machine": {"cpu": platform.processor() or platform.machine(),
                    "python": platform.python_version(), "cores": os.cpu_count()},
        "link_decode": link_decode(args.seconds),
        "link_latency_ms": link_latency(args.samples),
        "snapshot_retry_late_ms": snapshot_retry_late(10),
        "firmware_scan": firmware_scan(args.cycles),
        "led_frame_us": led_frames(args.seconds),
    }, indent=2))


if __name__ == "__main__":
    main()
