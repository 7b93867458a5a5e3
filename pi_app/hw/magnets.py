"""Presence magnets and hall switches: how deep a sensor goes so only a resting piece closes it.

Why this exists: move inference trusts a closed presence sensor to mean "a piece lies on this
cell" (hardware/README.md, "Presence sensors"). A sensitive switch under a strong magnet closes
while the piece is still carried a centimetre above the board. What decides the hover height
is not the switch's threshold alone but the threshold's spread together with how fast the
magnet's field falls off: a small magnet close to the sensor falls off steeply, so the window
between "surely closed at rest" and "surely open a few mm up" is narrow.

The model is the on-axis field of an axially magnetised cylinder (exact for a uniformly
magnetised cylinder, on its axis)::

    B(z) = Br/2 * ((z + L) / sqrt(R² + (z + L)²) - z / sqrt(R² + z²))

with z the distance from the magnet's face to the Hall element, L the magnet's length, R its
radius, Br the grade's remanence. Off-axis (a piece set down 5 mm off centre) the field under
a small magnet is weaker, which errs on the safe side (later closing, never earlier).

Design rule (``design``): put the Hall element at the depth where a resting magnet gives
``rest_margin`` times the switch's **maximum** operate point, so a part at the top of its spread
still closes (issue 35: the first design sized the depth from 1.5 x the typical 6.9 mT, 10.4 mT,
under the DRV5033AJ's 12 mT maximum, so some cells would never have closed), then report the
height above rest at which a part at the bottom of its spread could already close. That
height is what the bring-up card test checks cell by cell (hardware/BRINGUP.md, step 6).
``python -m pi_app.hw.magnets`` prints the table for the boards' magnet and switch.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

#: Nominal remanence Br in tesla of common sintered NdFeB grades (the middle of the grade's
#: 1.17-1.21, 1.28-1.32, 1.42-1.47 T ranges).
GRADE_BR_T = {"N35": 1.19, "N42": 1.30, "N52": 1.45}


@dataclass(frozen=True, slots=True)
class Magnet:
    """An axially magnetised disc or rod magnet."""

    diameter_mm: float
    length_mm: float
    grade: str = "N35"

    @property
    def br_t(self) -> float:
        return GRADE_BR_T[self.grade]

    def __str__(self) -> str:
        return f"{self.diameter_mm:g} x {self.length_mm:g} mm {self.grade}"


@dataclass(frozen=True, slots=True)
class HallSwitch:
    """A digital hall switch by its operate point B_OP (mT): typical, and the spread's ends.

    Without ``bop_max_mt`` / ``bop_min_mt`` the spread is taken as 1.75 x and 0.5 x typical
    (the DRV5033AJ's 12 / 6.9 and an assumed half).
    """

    part: str
    bop_typ_mt: float
    bop_max_mt: float = 0.0
    bop_min_mt: float = 0.0

    @property
    def bop_high(self) -> float:
        return self.bop_max_mt or 1.75 * self.bop_typ_mt

    @property
    def bop_low(self) -> float:
        return self.bop_min_mt or 0.5 * self.bop_typ_mt


def on_axis_field_mt(magnet: Magnet, z_mm: float) -> float:
    """Flux density in mT on the magnet's axis, ``z_mm`` from its face (z >= 0)."""
    if z_mm < 0:
        raise ValueError("z must be at or beyond the magnet's face")
    r, length = magnet.diameter_mm / 2, magnet.length_mm
    far = (z_mm + length) / math.hypot(r, z_mm + length)
    near = z_mm / math.hypot(r, z_mm)
    return magnet.br_t / 2 * (far - near) * 1000.0


def distance_for_field_mm(magnet: Magnet, field_mt: float) -> float:
    """The distance from the face at which the on-axis field has fallen to ``field_mt``."""
    if field_mt <= 0:
        raise ValueError("field must be positive")
    if field_mt >= on_axis_field_mt(magnet, 0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while on_axis_field_mt(magnet, hi) > field_mt:  # B falls monotonically with z
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if on_axis_field_mt(magnet, mid) > field_mt:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass(frozen=True, slots=True)
class PresenceDesign:
    """Where the sensor goes and what a piece has to do to close it."""

    magnet: Magnet
    switch: HallSwitch
    depth_mm: float
    """Magnet face to Hall element with the piece at rest."""
    rest_field_mt: float
    closes_typ_above_mm: float
    """Height above rest at which a typical part closes on the way down."""
    may_close_above_mm: float
    """Highest hover at which a part at the low end of the spread could close."""


def design(magnet: Magnet, switch: HallSwitch, rest_margin: float = 1.15) -> PresenceDesign:
    """Sensor depth and hover heights for ``magnet`` over ``switch``.

    ``rest_margin``: the resting field over the switch's maximum B_OP (covers magnet
    tolerance, temperature and a piece set down a little off centre).
    """
    if rest_margin < 1:
        raise ValueError("rest_margin must be >= 1")
    if not 0 < switch.bop_low <= switch.bop_typ_mt <= switch.bop_high:
        raise ValueError("B_OP must be min <= typical <= max, all positive")
    depth = distance_for_field_mm(magnet, rest_margin * switch.bop_high)
    typ = distance_for_field_mm(magnet, switch.bop_typ_mt) - depth
    worst = distance_for_field_mm(magnet, switch.bop_low) - depth
    return PresenceDesign(magnet, switch, depth, on_axis_field_mt(magnet, depth), typ, worst)


#: The presence parts of every board (hardware/BOM.md): a 4 x 2 mm N35 disc in each piece's
#: base and TI's DRV5033AJ (omnipolar): B_OP 6.9 mT typical and 12 mT maximum (TI DRV5033
#: data sheet, magnetic characteristics, as read in issue 35's review); the minimum is taken as
#: half the typical, an assumption (not re-checked against the data sheet here): the bring-up
#: card test finds a cell whose part sits lower.
BOARD_MAGNET = Magnet(4.0, 2.0, "N35")
BOARD_SWITCH = HallSwitch("TI DRV5033AJ", 6.9, 12.0, 3.45)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--diameter", type=float, default=BOARD_MAGNET.diameter_mm)
    parser.add_argument("--length", type=float, default=BOARD_MAGNET.length_mm)
    parser.add_argument("--grade", choices=sorted(GRADE_BR_T), default=BOARD_MAGNET.grade)
    parser.add_argument(
        "--bop",
        type=float,
        default=BOARD_SWITCH.bop_typ_mt,
        help="typical operate point of the switch, mT",
    )
    parser.add_argument(
        "--bop-max",
        type=float,
        default=None,
        help="maximum operate point, mT (default: the board switch's 12, "
        "or 1.75 x --bop for another switch)",
    )
    parser.add_argument(
        "--bop-min",
        type=float,
        default=None,
        help="minimum operate point, mT (default: half of --bop)",
    )
    args = parser.parse_args(argv)
    magnet = Magnet(args.diameter, args.length, args.grade)
    same = args.bop == BOARD_SWITCH.bop_typ_mt
    switch = HallSwitch(
        "switch",
        args.bop,
        args.bop_max if args.bop_max is not None else (BOARD_SWITCH.bop_max_mt if same else 0.0),
        args.bop_min if args.bop_min is not None else 0.0,
    )
    d = design(magnet, switch)
    print(
        f"magnet {magnet}, switch B_OP {switch.bop_low:g} / {switch.bop_typ_mt:g} / "
        f"{switch.bop_high:g} mT (min / typical / max)"
    )
    print(
        f"Hall element {d.depth_mm:.1f} mm below the magnet's face at rest "
        f"({d.rest_field_mt:.1f} mT there: a part at its maximum B_OP closes)"
    )
    print(
        f"a typical part closes {d.closes_typ_above_mm:.1f} mm above rest; "
        f"a part at its minimum B_OP may close from {d.may_close_above_mm:.1f} mm"
    )
    print("z (mm)  B (mT)")
    for z in range(0, 16):
        print(f"{z:6d}  {on_axis_field_mt(magnet, z):6.1f}")


if __name__ == "__main__":
    main()
