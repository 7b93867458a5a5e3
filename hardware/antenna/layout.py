"""The sensing layer's geometry, in plain Python: where each coil's copper and feed go.

Why this is apart from make_layer.py: that script needs KiCad's ``pcbnew`` module, which only
the system Python has (a Debian package), while this geometry is what the tests must be able
to check on any machine: that each coil is the one coil.py sized, that its turns keep their
spacing, and that the feed pads and vias clear the copper around them. make_layer.py turns
exactly these shapes into KiCad tracks, vias and pads.

Coordinates are millimetres, x right and y down, with the board file's origin (the top-left
corner of the board, as in the overlays), which is also KiCad's orientation.

A coil, drawn in its cell's own frame (centre at 0, 0)::

    pad A (F.Cu lead)  o  o  pad B (B.Cu lead, from the via at the spiral's inner end)
                       |  |
      +----------------|--|---+   turn 0: outermost, on F.Cu, entered at its bottom-left
      | +--------------|--+   |   corner and wound clockwise on screen (up, right, down, left)
      | |   ...        v      |
      | |  via (inner end)    |
      | +---------------------+
      +-----------------------+

The feed leads leave the coil on its bottom edge (towards +y), into the 15 mm gap between
cells, to a 2-pin 2.54 mm header where the twisted pair to the reader's matching network is
soldered, with an 0805 footprint across the pads for the tuning capacitor (fit it only if the
tuning step calls for it: the matching network may sit at the reader instead).
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

# coil.py is this file's sibling, not a package module: both run as scripts (the system Python
# runs make_layer.py, the venv runs the tests), so its folder goes on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from coil import BOARD_COILS, Coil

__all__ = ["BOARD_COILS", "Coil", "CoilLayout", "Point", "board", "coil_layout", "layer", "spiral"]

ROOT = Path(__file__).resolve().parents[2]
BOARDS = ROOT / "pi_app" / "data" / "boards"

#: Via at the spiral's inner end: 0.6 mm pad, 0.3 mm drill (a standard 2-layer fab's minimum
#: is about 0.45 / 0.2 mm, so this leaves margin).
VIA_DIAMETER_MM, VIA_DRILL_MM = 0.6, 0.3
#: The feed header: KiCad's PinHeader_1x02_P2.54mm pads (1.7 mm round, 1.0 mm drill).
PAD_PITCH_MM, PAD_DIAMETER_MM, PAD_DRILL_MM = 2.54, 1.7, 1.0
#: How far below the coil's outer edge the pads' centres sit.
PAD_DROP_MM = 3.5
#: 0805 tuning capacitor pads (KiCad's C_0805 land pattern, rounded): 1.0 x 1.45 mm at 1.9 mm.
CAP_PAD_MM, CAP_PITCH_MM = (1.0, 1.45), 1.9
#: Mounting holes: M3 clearance, 5 mm in from the board's corners, plus the four inner
#: crossings of the cell grid's gaps nearest the centre (a 270 mm panel sags otherwise).
#: Use nylon screws: no metal over the antennas (README).
HOLE_DRILL_MM, HOLE_EDGE_MM = 3.2, 5.0
#: Design rules for the DRC: a common 2-layer fab's standard capability with margin.
CLEARANCE_MM, MIN_TRACK_MM = 0.2, 0.2

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class CoilLayout:
    """One cell's coil as copper: the F.Cu spiral, the via, the B.Cu return, the pads."""

    cell: str
    centre: Point
    coil: Coil
    spiral: list[Point]  # F.Cu, from pad A's lead through every turn to the via
    back: list[Point]  # B.Cu, from the via out to pad B
    via: Point
    pad_a: Point
    pad_b: Point
    cap_pads: tuple[Point, Point]  # the 0805's two pads, on F.Cu, across A and B

    def length_mm(self) -> float:
        """The spiral's track length (its leads included): the coil's DC resistance and
        self-resonance follow from it."""
        return sum(math.dist(p, q) for p, q in itertools.pairwise(self.spiral))


def _half(coil: Coil, k: int) -> float:
    """The centreline half-side of turn k (0 = outermost)."""
    return coil.outer_mm / 2 - coil.width_mm / 2 - k * (coil.width_mm + coil.spacing_mm)


def spiral(coil: Coil) -> list[Point]:
    """The centreline of an n-turn square spiral, outer end first, in the coil's frame.

    Turn k runs up its left side, right along the top, down the right side and left along
    the bottom to one pitch inside its own left side, where turn k+1's left side begins: so
    every side is one pitch (width + spacing) from its neighbour. The last bottom side ends
    one pitch inside the last left side: that end is the via."""
    pts: list[Point] = [(-_half(coil, 0), _half(coil, 0))]
    for k in range(coil.turns):
        h, h_next = _half(coil, k), _half(coil, k + 1)
        pts += [(-h, -h), (h, -h), (h, h), (-h_next, h)]
    return pts


def coil_layout(cell: str, centre: Point, coil: Coil) -> CoilLayout:
    """Place one coil, its via, leads and pads around ``centre``."""
    cx, cy = centre
    pts = spiral(coil)
    h0 = _half(coil, 0)
    pad_y = coil.outer_mm / 2 + PAD_DROP_MM
    pad_a = (-h0, pad_y)
    pad_b = (-h0 + PAD_PITCH_MM, pad_y)
    via = pts[-1]
    # B.Cu: from the via straight down under the turns, then across to pad B.
    back = [via, (via[0], pad_y), pad_b]
    # The 0805 below the header, its pads tied to A and B by short F.Cu stubs (see make_layer).
    cap_y = pad_y + 3.0
    cap = ((pad_a[0] + PAD_PITCH_MM / 2 - CAP_PITCH_MM / 2, cap_y),
           (pad_a[0] + PAD_PITCH_MM / 2 + CAP_PITCH_MM / 2, cap_y))

    def at(p: Point) -> Point:
        return (round(cx + p[0], 4), round(cy + p[1], 4))

    return CoilLayout(cell=cell, centre=centre, coil=coil,
                      spiral=[at(pad_a)] + [at(p) for p in pts],
                      back=[at(p) for p in back], via=at(via), pad_a=at(pad_a), pad_b=at(pad_b),
                      cap_pads=(at(cap[0]), at(cap[1])))


def board(game: str = "tactiki") -> dict[str, object]:
    """The board file (pi_app/data/boards/GAME.json): outline and cell centres."""
    data: dict[str, object] = json.loads((BOARDS / f"{game}.json").read_text())
    return data


def layer(game: str = "tactiki", coil: Coil | None = None,
          ) -> tuple[tuple[float, float], list[CoilLayout], list[Point]]:
    """The whole layer: board size, one coil per cell that has a reader, mounting holes.

    ``coil`` replaces coil.py's coil for the game (the tests give one too big for the pitch,
    to see the DRC fail)."""
    data = board(game)
    size = data["size_mm"]
    assert isinstance(size, list)
    w, h = float(size[0]), float(size[1])
    coil = coil or BOARD_COILS[game]
    cells = data["cells"]
    assert isinstance(cells, list)
    coils = [coil_layout(c["name"], (float(c["center_mm"][0]), float(c["center_mm"][1])), coil)
             for c in cells if c.get("reader") is not None]
    xs = sorted({c.centre[0] for c in coils})
    ys = sorted({c.centre[1] for c in coils})
    # The grid's gap crossings, the four nearest the board's centre.
    gaps = [((a + b) / 2, (c + d) / 2) for a, b in itertools.pairwise(xs)
            for c, d in itertools.pairwise(ys)]
    gaps.sort(key=lambda p: (p[0] - w / 2) ** 2 + (p[1] - h / 2) ** 2)
    e = HOLE_EDGE_MM
    holes = [(e, e), (w - e, e), (e, h - e), (w - e, h - e), *gaps[:4]]
    return (w, h), coils, holes
