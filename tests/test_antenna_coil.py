"""hardware/antenna/coil.py: the planar coil sizing against a hand-worked figure."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

SCRIPT = Path(__file__).resolve().parent.parent / "hardware" / "antenna" / "coil.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("antenna_coil", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["antenna_coil"] = module
    spec.loader.exec_module(module)
    return module


coil = _load()


def test_tactiki_coil_matches_a_hand_worked_figure() -> None:
    """35 mm, 4 turns, 0.5/0.5 mm: d_in = 35 - 4 - 3 = 28 mm, d_avg 31.5 mm, rho = 7/63;
    L = 2.34 * 4e-7 pi * 16 * 0.0315 / (1 + 2.75/9) = 1.135 uH; C = 1/((2 pi 13.56 MHz)^2 L)
    = 121 pF."""
    c = coil.BOARD_COILS["tactiki"]
    assert c.inner_mm == pytest.approx(28.0)
    assert c.inductance_h() == pytest.approx(1.135e-6, rel=0.002)
    assert c.resonance_f() == pytest.approx(121.4e-12, rel=0.005)


def test_a_coil_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ValueError):
        coil.Coil(10.0, 8, 0.5, 0.5).inductance_h()


@given(st.floats(20, 45), st.integers(1, 5))
def test_more_turns_more_inductance_and_resonance_holds(outer: float, turns: int) -> None:
    a, b = coil.Coil(outer, turns, 0.4, 0.4), coil.Coil(outer, turns + 1, 0.4, 0.4)
    assert b.inductance_h() > a.inductance_h() > 0
    f = 1 / (2 * math.pi * math.sqrt(a.inductance_h() * a.resonance_f()))
    assert f == pytest.approx(coil.FC_HZ)
