"""What the sensing hardware tells the Pi: the one vocabulary shared by every sensor source.

The serial link (firmware), the direct-GPIO path, the simulator and recorded traces all produce
these events, so the tracker never knows which one it listens to. The module stands below both
the hardware layer (which produces readings) and the board model (which consumes them), so
neither imports the other. They speak in hardware terms
(reader channel, presence-sensor number, button name); the board geometry maps them to cells.
Times ``t`` are seconds on the host's monotonic clock (a trace or the simulator uses its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True, slots=True)
class TagsSeen:
    """Reader ``reader`` finished a scan and saw exactly ``tags`` (upper-case hex UIDs).

    A reader reports a set: stacked tags come without their order, and a tag in a stack may be
    missed in one scan. The firmware reports a tag's absence only after several clean misses.
    """

    t: float
    reader: int
    tags: frozenset[str]


@dataclass(frozen=True, slots=True)
class PresenceChanged:
    """Presence sensor ``sensor`` (reed or hall under a cell) changed to ``present``."""

    t: float
    sensor: int
    present: bool


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A full picture: every reader's tags and every presence sensor, by index.

    Sent periodically and after a sequence gap, so a lost change event heals by itself.
    """

    t: float
    tags: tuple[frozenset[str], ...]
    presence: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class ButtonPressed:
    """A player button (``"ok"``, ``"back"``, ...) was pressed."""

    t: float
    button: str


class LinkState(StrEnum):
    """Where the sensor link stands. Behaviour follows this, never the wording of ``detail``
    (which is for people and may change, or be translated)."""

    UP = "up"
    """The board answered the handshake; readings flow."""
    DOWN = "down"
    """Lost, silent, or refused (a protocol or board mismatch): ``detail`` says which."""
    RETRYING = "retrying"
    """The serial port cannot be opened (unplugged); the link keeps trying, quietly: a failed
    retry while the link is already down is no news."""


@dataclass(frozen=True, slots=True)
class LinkStatus:
    """The sensor link went up or down (unplugged, version mismatch, silent), with why."""

    t: float
    state: LinkState
    detail: str
    """Why, in words for people (the screen, the log, the feed)."""

    @property
    def up(self) -> bool:
        return self.state is LinkState.UP


@dataclass(frozen=True, slots=True)
class ScanCycle:
    """The sensor board measured its own scan (the firmware's SCAN_TIMES): one full board
    cycle, every reader once, took ``period`` seconds, and its slowest reader ``reader``
    seconds (None when no reader has been timed yet).

    The board's pace decides how soon a change on a cell can be seen at all: a tag newly put
    down is read at that cell's next scan, one taken away is reported gone only after several
    clean scans. So the tracker and the follower time their waits on this figure, not on the
    one written in the board file (which stands until the first measurement arrives)."""

    t: float
    period: float
    reader: float | None = None


SensorEvent = TagsSeen | PresenceChanged | Snapshot | ButtonPressed | LinkStatus | ScanCycle


@dataclass(frozen=True, slots=True)
class HardwareFault:
    """Part ``source`` (``"reader"``, ``"presence"``, ``"firmware"``, ``"link"``) number
    ``index`` failed (``ok`` False) or recovered (``ok`` True). While a reader is faulty its
    last tags stay as they were: unknown is not empty, so the referee shows the fault instead of
    the tracker seeing a cell silently empty."""

    t: float
    source: str
    index: int | None
    ok: bool
    detail: str


# What a hardware source emits: the readings the tracker consumes, plus faults for the referee.
HwEvent = SensorEvent | HardwareFault


def apply_reading(event: object, tags: dict[int, frozenset[str]],
                  presence: dict[int, bool]) -> None:
    """Fold one event into a raw picture of the board, in place: tags by reader channel,
    presence by sensor number. A change updates its entry, a snapshot replaces the whole
    picture, anything else leaves it as it is.

    For the tools that show or judge what the readers themselves report (``tikiboard diag``,
    ``hardware/hil_check.py``): no debounce and no cells, unlike the tracker. It lives here,
    below every layer, so a tool can keep the picture without importing the serial link.
    """
    if isinstance(event, TagsSeen):
        tags[event.reader] = event.tags
    elif isinstance(event, PresenceChanged):
        presence[event.sensor] = event.present
    elif isinstance(event, Snapshot):
        tags.clear()
        tags.update(enumerate(event.tags))
        presence.clear()
        presence.update(enumerate(event.presence))
