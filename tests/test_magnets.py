"""The presence-magnet model against hand-worked figures, and the boards' design against the
README's requirement (a carried piece leaves its sensor open a few mm above the board)."""

from __future__ import annotations

import math

import pytest

from pi_app.hw.magnets import (
    BOARD_MAGNET,
    BOARD_SWITCH,
    HallSwitch,
    Magnet,
    design,
    distance_for_field_mm,
    on_axis_field_mt,
)


def test_field_matches_a_hand_worked_figure() -> None:
    """6 x 2 mm disc, Br 1.19 T, 3 mm from its face, worked on paper:
    5/sqrt(9+25) = 0.85749, 3/sqrt(9+9) = 0.70711, 0.595 T x 0.15038 = 89.5 mT."""
    assert on_axis_field_mt(Magnet(6, 2, "N35"), 3.0) == pytest.approx(89.5, abs=0.1)
    # At the face: Br/2 * L/sqrt(R^2+L^2) = 0.595 * 2/sqrt(13) = 330 mT.
    assert on_axis_field_mt(Magnet(6, 2), 0.0) == pytest.approx(330.0, abs=0.5)


def test_far_field_falls_as_a_dipole() -> None:
    """Far away the cylinder is a dipole: B ~ 1/z^3 (a check on the formula's signs)."""
    m = Magnet(4, 2)
    ratio = on_axis_field_mt(m, 100.0) / on_axis_field_mt(m, 200.0)
    assert ratio == pytest.approx(8.0, rel=0.05)


def test_distance_inverts_the_field() -> None:
    m = Magnet(5, 1, "N42")
    for field in (50.0, 10.0, 3.0):
        assert on_axis_field_mt(m, distance_for_field_mm(m, field)) == pytest.approx(field)
    assert distance_for_field_mm(m, 10_000.0) == 0.0
    with pytest.raises(ValueError):
        distance_for_field_mm(m, 0.0)
    with pytest.raises(ValueError):
        on_axis_field_mt(m, -1.0)


def test_old_design_closed_a_centimetre_up() -> None:
    """The BOM's old parts, a 6 x 2 mm N35 over a 3.5 mT switch set 3 mm deep: a piece held
    8 mm above the board (11 mm away) still gives more than the switch needs."""
    old = Magnet(6, 2)
    assert on_axis_field_mt(old, 11.0) > 3.5


def test_every_part_closes_at_rest() -> None:
    """Issue 35: the old depth (6.5 mm, 10.4 mT) was under the DRV5033AJ's 12 mT maximum
    B_OP, so a part at the top of its spread never closed. The design depth gives more than
    the maximum, with the margin."""
    d = design(BOARD_MAGNET, BOARD_SWITCH)
    assert BOARD_SWITCH.bop_max_mt == 12.0
    assert on_axis_field_mt(BOARD_MAGNET, 6.5) < BOARD_SWITCH.bop_max_mt  # the old trap
    assert d.rest_field_mt == pytest.approx(1.15 * BOARD_SWITCH.bop_max_mt)
    assert d.depth_mm == pytest.approx(5.8, abs=0.05)  # hardware/README.md's figure


def test_board_design_closes_only_near_rest() -> None:
    d = design(BOARD_MAGNET, BOARD_SWITCH)
    assert 4.1 <= d.depth_mm <= 8.0  # room for tag, overlay, 3 mm top sheet and package
    assert d.closes_typ_above_mm < 2.0
    assert d.may_close_above_mm <= 4.5
    # A part at its minimum B_OP is open just above that height ...
    above = d.depth_mm + d.may_close_above_mm + 0.1
    assert on_axis_field_mt(BOARD_MAGNET, above) < BOARD_SWITCH.bop_min_mt
    # ... and the old magnet over the same switch at its own design depth hovers higher.
    assert design(Magnet(6, 2), BOARD_SWITCH).may_close_above_mm > d.may_close_above_mm


def test_design_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        design(BOARD_MAGNET, HallSwitch("x", 5.0), rest_margin=0.5)
    with pytest.raises(ValueError):
        design(BOARD_MAGNET, HallSwitch("x", 5.0, bop_max_mt=4.0))
    assert math.isfinite(design(Magnet(3, 1), HallSwitch("x", 2.0)).depth_mm)
