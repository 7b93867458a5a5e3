"""Planar antenna coils for a sensing layer at the cell pitch: inductance and resonance.

Why this exists: stock reader modules do not fit TacTiki's 50 mm pitch nor Topple's 40 mm
(hardware/README.md, "Layout and mechanics"), so a board that fits needs one PCB coil per
cell. This is the first, checkable step of that design, not the design: it sizes a square
spiral to the cell and gives its inductance and the capacitance that tunes it to 13.56 MHz.
The layout, DRC and Gerbers are made from it by make_layer.py (layout.py places the copper);
the matching network to the reader's transmitter is not designed anywhere yet (issue 35,
item 5; hardware/README.md says what is missing).

Inductance: the modified Wheeler formula for a square planar spiral (Mohan, del Mar
Hershenson, Boyd and Lee, "Simple accurate expressions for planar spiral inductances", IEEE
JSSC 34(10), 1999; K1 = 2.34, K2 = 2.75 for a square; a few per cent against field solvers
for the geometries they tested; quoted from memory, check before relying on it)::

    L = K1 * mu0 * n^2 * d_avg / (1 + K2 * rho)
    d_avg = (d_out + d_in) / 2,  rho = (d_out - d_in) / (d_out + d_in)
    d_in = d_out - 2 * n * w - 2 * (n - 1) * s

Resonance: C = 1 / ((2 pi f)^2 L) at f = 13.56 MHz (the whole capacitance across the coil:
tuning capacitors, the coil's own and the matching network's share).

    .venv/bin/python hardware/antenna/coil.py            # the boards' coils
    .venv/bin/python hardware/antenna/coil.py 35 4 0.5 0.5
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

MU0 = 4e-7 * math.pi
FC_HZ = 13.56e6
K1_SQUARE, K2_SQUARE = 2.34, 2.75


@dataclass(frozen=True, slots=True)
class Coil:
    """A square planar spiral: outer side, turns, trace width and spacing, all in mm."""

    outer_mm: float
    turns: int
    width_mm: float
    spacing_mm: float

    @property
    def inner_mm(self) -> float:
        return self.outer_mm - 2 * self.turns * self.width_mm - 2 * (self.turns - 1) * (
            self.spacing_mm)

    def inductance_h(self) -> float:
        d_in = self.inner_mm
        if self.turns < 1 or d_in <= 0:
            raise ValueError("the turns do not fit inside the outer side")
        d_avg = (self.outer_mm + d_in) / 2 / 1000
        rho = (self.outer_mm - d_in) / (self.outer_mm + d_in)
        return K1_SQUARE * MU0 * self.turns**2 * d_avg / (1 + K2_SQUARE * rho)

    def resonance_f(self, f_hz: float = FC_HZ) -> float:
        """The capacitance across the coil that resonates it at ``f_hz``."""
        return 1 / ((2 * math.pi * f_hz) ** 2 * self.inductance_h())


#: A coil per cell, inside the cell with a margin to the next one (README's sizes).
BOARD_COILS = {
    "tactiki": Coil(35.0, 4, 0.5, 0.5),  # 50 mm pitch, 44 mm fields: 15 mm between coils
    "topple": Coil(30.0, 4, 0.5, 0.5),  # 40 mm pitch
}


def main(argv: list[str]) -> int:
    coils = ({"custom": Coil(float(argv[0]), int(argv[1]), float(argv[2]), float(argv[3]))}
             if len(argv) == 4 else BOARD_COILS)
    for name, coil in coils.items():
        print(f"{name}: {coil.outer_mm:g} mm square, {coil.turns} turns, "
              f"{coil.width_mm:g}/{coil.spacing_mm:g} mm: inner {coil.inner_mm:g} mm, "
              f"L = {coil.inductance_h() * 1e6:.2f} uH, "
              f"C at 13.56 MHz = {coil.resonance_f() * 1e12:.0f} pF")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
