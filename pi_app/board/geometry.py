"""Board geometry: which reader, presence sensor and LEDs belong to each cell of a physical board.

The geometry of each board is data (``pi_app/data/boards/GAME.json``, linked from the checkout's
``hardware/boards``), so a new board revision is a new file, not new code. The shipped boards are
read as package data, so an installed wheel finds them without the source checkout. Cells are
named as in the record notation (``a1``, ``s3``, ``a1/b1`` for a Manami edge); ``kind`` is
``cell`` (a place pieces stand), ``pad`` (Topple's card pad) or ``edge`` (where Manami's shaman
stands). Every problem in a file is reported with the file and the key, never as a traceback,
because a station must say what is wrong with its own set-up.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pi_app.errors import UnreadableInput

#: The boards shipped with the project: package data (``hardware/boards`` in the checkout
#: links here).
BOARDS: Traversable = resources.files("pi_app.data") / "boards"

KINDS = ("cell", "pad", "edge")


class GeometryError(UnreadableInput, ValueError):
    """A geometry file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One sensed place on the board."""

    name: str
    kind: str
    center_mm: tuple[float, float]
    size_mm: tuple[float, float]
    reader: int | None
    presence: int | None
    leds: tuple[int, ...]
    presence_piece: str | None = None
    """For a cell sensed by presence alone: the piece that stands there (Manami's shaman)."""


@dataclass(frozen=True)
class Geometry:
    """A physical board: its cells, and the indexes from hardware channels back to cells."""

    game: str
    title: str
    size_mm: tuple[float, float]
    reader_chip: str
    cells: tuple[Cell, ...]
    status_leds: Mapping[str, tuple[int, ...]]
    scan_period: float = 0.05
    """Seconds for the firmware to scan every reader once (firmware/PROTOCOL.md)."""
    settle_min: float = 0.0
    """Seconds a clear move must rest before it is accepted when a piece carried over a cell
    could look the same for a moment (0 where that cannot happen)."""
    presence_on_contact: bool = True
    """The presence sensors close only with a piece lying on the cell, not with one carried
    above it (hardware/README.md, "Presence sensors"): a piece arriving on an empty cell is
    then accepted at once, and only one arriving on a stack waits ``settle_min``. False:
    every clear move waits ``settle_min``."""

    @cached_property
    def _by_name(self) -> dict[str, Cell]:
        return {c.name: c for c in self.cells}

    @cached_property
    def _by_reader(self) -> dict[int, Cell]:
        return {c.reader: c for c in self.cells if c.reader is not None}

    @cached_property
    def _by_presence(self) -> dict[int, Cell]:
        return {c.presence: c for c in self.cells if c.presence is not None}

    def cell(self, name: str) -> Cell:
        """The cell called ``name``; :class:`KeyError` when the board has none."""
        return self._by_name[name]

    def cell_of_reader(self, reader: int) -> Cell | None:
        """The cell a reader channel serves (None for a channel the board does not use)."""
        return self._by_reader.get(reader)

    def cell_of_presence(self, sensor: int) -> Cell | None:
        """The cell a presence sensor sits under (None for an unused sensor)."""
        return self._by_presence.get(sensor)

    def near(self, one: str, other: str) -> bool:
        """Are the two cells close enough for a reader under one to pick up a tag lying on
        the other (centres within 1.5 cell widths)? The simulated sensors make such reads
        and the follower must not take them for moves, so both ask here."""
        a, b = self.cell(one), self.cell(other)
        return math.dist(a.center_mm, b.center_mm) <= 1.5 * max(*a.size_mm, *b.size_mm)

    def names(self, kind: str = "cell") -> tuple[str, ...]:
        """Cell names of one kind, in file order."""
        return tuple(c.name for c in self.cells if c.kind == kind)

    @property
    def led_count(self) -> int:
        """LEDs on the strip: one more than the highest index used."""
        used = [i for c in self.cells for i in c.leds]
        used += [i for leds in self.status_leds.values() for i in leds]
        return max(used, default=-1) + 1

    @property
    def reader_count(self) -> int:
        return max((c.reader for c in self.cells if c.reader is not None), default=-1) + 1

    @property
    def presence_count(self) -> int:
        return max((c.presence for c in self.cells if c.presence is not None), default=-1) + 1


def board_names() -> tuple[str, ...]:
    """The games with a shipped board, sorted."""
    return tuple(sorted(p.name.removesuffix(".json") for p in BOARDS.iterdir()
                        if p.name.endswith(".json")))


def load_geometry(game_or_path: str | Path) -> Geometry:
    """Load a shipped board by game name, or any geometry file by path."""
    given = Path(game_or_path)
    path: Traversable = given if given.suffix == ".json" else BOARDS / f"{game_or_path}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GeometryError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GeometryError(f"{path}: not JSON: {exc}") from exc
    return parse_geometry(data, str(path))


def parse_geometry(data: Any, source: str = "geometry") -> Geometry:
    """Check and build a geometry from parsed JSON."""

    def fail(key: str, why: str) -> GeometryError:
        return GeometryError(f"{source}: {key}: {why}")

    if not isinstance(data, dict):
        raise fail("(top)", "a geometry file is a JSON object")
    for key in ("game", "title"):
        if not isinstance(data.get(key), str):
            raise fail(key, "must be a text")
    raw_cells = data.get("cells")
    if not isinstance(raw_cells, list) or not raw_cells:
        raise fail("cells", "must be a non-empty list")
    cells: list[Cell] = []
    seen: dict[str, dict[Any, str]] = {"name": {}, "reader": {}, "presence": {}, "led": {}}

    def claim(what: str, value: Any, owner: str, key: str) -> None:
        if value in seen[what]:
            raise fail(key, f"{what} {value} is used twice ({seen[what][value]} and {owner})")
        seen[what][value] = owner

    for i, raw in enumerate(raw_cells):
        key = f"cells[{i}]"
        if not isinstance(raw, dict):
            raise fail(key, "must be an object")
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise fail(f"{key}.name", "must be a non-empty text")
        key = f"cells[{i}] ({name})"
        claim("name", name, name, f"{key}.name")
        kind = raw.get("kind", "cell")
        if kind not in KINDS:
            raise fail(f"{key}.kind", f"must be one of {', '.join(KINDS)}")
        reader = _channel(raw.get("reader"), lambda why, k=f"{key}.reader": fail(k, why))
        presence = _channel(raw.get("presence"), lambda why, k=f"{key}.presence": fail(k, why))
        if reader is not None:
            claim("reader", reader, name, f"{key}.reader")
        if presence is not None:
            claim("presence", presence, name, f"{key}.presence")
        if reader is None and presence is None:
            raise fail(key, "a cell needs a reader, a presence sensor, or both")
        leds = raw.get("leds", [])
        if not isinstance(leds, list):
            raise fail(f"{key}.leds", "must be a list of LED indexes")
        for led in leds:
            _channel(led, lambda why, k=f"{key}.leds": fail(k, why))
            claim("led", led, name, f"{key}.leds")
        presence_piece = raw.get("presence_piece")
        if presence_piece is not None and (not isinstance(presence_piece, str) or reader is not None
                                           or presence is None):
            raise fail(f"{key}.presence_piece",
                       "names the piece of a cell sensed by presence alone (no reader)")
        cells.append(Cell(name, kind, _pair(raw.get("center_mm"), fail, f"{key}.center_mm"),
                          _pair(raw.get("size_mm"), fail, f"{key}.size_mm"),
                          reader, presence, tuple(leds), presence_piece))
    status: dict[str, tuple[int, ...]] = {}
    raw_status = data.get("status_leds", {})
    if not isinstance(raw_status, dict):
        raise fail("status_leds", "must be an object of LED lists")
    for who, leds in raw_status.items():
        if not isinstance(leds, list):
            raise fail(f"status_leds.{who}", "must be a list of LED indexes")
        for led in leds:
            _channel(led, lambda why, k=f"status_leds.{who}": fail(k, why))
            claim("led", led, f"status {who}", f"status_leds.{who}")
        status[who] = tuple(leds)
    timing = {}
    for key, default in (("scan_period_s", 0.05), ("settle_min_s", 0.0)):
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 5:
            raise fail(key, "must be a number of seconds from 0 to 5")
        timing[key] = float(value)
    contact = data.get("presence_on_contact", True)
    if not isinstance(contact, bool):
        raise fail("presence_on_contact", "must be true or false")
    return Geometry(
        game=data["game"], title=data["title"],
        size_mm=_pair(data.get("size_mm"), fail, "size_mm"),
        reader_chip=str(data.get("reader_chip", "")),
        cells=tuple(cells), status_leds=status,
        scan_period=timing["scan_period_s"], settle_min=timing["settle_min_s"],
        presence_on_contact=contact,
    )


def _channel(value: Any, fail: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 4096:
        raise fail(f"must be a whole number from 0 to 4095, not {value!r}")
    return value


def _pair(value: Any, fail: Any, key: str) -> tuple[float, float]:
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)):
        raise fail(key, "must be a list of two numbers (millimetres)")
    return float(value[0]), float(value[1])
