"""Hardware faults the sensor link reports, next to the shared vocabulary of events.py.

``pi_app.hw.events`` has no event for "reader 4 stopped answering"; this module adds one so
the referee can show the fault instead of the tracker seeing a cell silently empty. (Proposed
for events.py; until then hardware sources emit ``HwEvent``.)
"""

from __future__ import annotations

from dataclasses import dataclass

from pi_app.hw.events import SensorEvent


@dataclass(frozen=True, slots=True)
class HardwareFault:
    """Part ``source`` (``"reader"``, ``"presence"``, ``"firmware"``, ``"link"``) number
    ``index`` failed (``ok`` False) or recovered (``ok`` True). While a reader is faulty its
    last tags stay as they were: unknown is not empty."""

    t: float
    source: str
    index: int | None
    ok: bool
    detail: str


HwEvent = SensorEvent | HardwareFault
