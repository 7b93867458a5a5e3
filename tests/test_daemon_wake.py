"""The daemon's loop steps at once when another thread asks (``Station.wake``).

A remote game's link receives the other board's move on its MQTT thread; without a wake the
loop sleeps until its next planned wake-up (a blink edge, the follower's deadline, the next
sensor report, at most five seconds), and the move reaches the LEDs that much later.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.station import Station
from pi_app.station_main import serve

pytestmark = [pytest.mark.realtime]

#: How soon after a wake the loop must have stepped (the loop itself needs a millisecond; the
#: rest is room for a busy machine).
SOON_S = 0.1


def test_a_wake_from_another_thread_steps_the_loop_at_once(tmp_path: Path) -> None:
    config = Config(station=replace(StationConfig(), game="manami", seed=5,
                                    data_dir=str(tmp_path)))
    stepped: list[float] = []  # when each step without a hardware event was done
    asked: list[float] = []

    def probe(event: Any, _arrived: float, done: float, _outcomes: list[Any]) -> None:
        if event is None:
            stepped.append(done)

    async def main() -> None:
        stop = asyncio.Event()
        tasks: list[asyncio.Future[None]] = []

        def ready(station: Station, _hardware: Hardware) -> None:
            def from_another_thread() -> None:
                asked.append(time.perf_counter())
                station.wake()

            async def poke() -> None:
                await asyncio.sleep(0.5)
                for _ in range(5):
                    thread = threading.Thread(target=from_another_thread)
                    thread.start()
                    await asyncio.to_thread(thread.join)
                    await asyncio.sleep(0.3)
                stop.set()

            tasks.append(asyncio.ensure_future(poke()))

        await asyncio.wait_for(serve(config, stop=stop, on_ready=ready, probe=probe), 60)

    asyncio.run(main())
    assert len(asked) == 5
    late = [t for t in asked if not any(t <= s <= t + SOON_S for s in stepped)]
    assert not late, f"{len(late)} of 5 wakes had no step within {SOON_S} s"
