"""Map the sensor board's millisecond clock to the Pi's monotonic seconds.

Each frame's sensor time ``t_ms`` was taken shortly before the frame arrived; the smallest
``arrival - t_ms`` over recent frames is the best estimate of the offset (the least delayed
frame), so an event keeps its sensor-side spacing even when USB delivers frames in bursts.
A window (not all history) lets the estimate follow the two clocks drifting apart (a crystal's
50 ppm is 0.18 s per hour). Mapped times never lie in the future of their arrival. The 32-bit
millisecond counter wraps after 49.7 days; ``reset`` is called when the board says hello
(it may have rebooted).
"""

from __future__ import annotations

from collections import deque

WRAP = 1 << 32


class SensorClock:
    def __init__(self, window: int = 64) -> None:
        self._offsets: deque[float] = deque(maxlen=window)
        self._last: int | None = None
        self._wraps = 0

    def reset(self) -> None:
        self._offsets.clear()
        self._last = None
        self._wraps = 0

    def to_host(self, t_ms: int, arrival: float) -> float:
        if self._last is not None and t_ms < self._last and self._last - t_ms > WRAP // 2:
            self._wraps += 1
        self._last = t_ms
        sensor_s = (t_ms + self._wraps * WRAP) / 1000.0
        self._offsets.append(arrival - sensor_s)
        return min(sensor_s + min(self._offsets), arrival)
