"""The TacTiki sensing layer (hardware/antenna/): its geometry, and the KiCad board, DRC and
Gerbers that make_layer.py generates from it.

The geometry tests run everywhere. The KiCad tests run make_layer.py with the system Python
(KiCad's ``pcbnew`` is a Debian package, not a pip one); tests/bootstrap.sh installs KiCad on
every machine but a Raspberry Pi, so they are skipped only on ARM, where the station runs and
nobody lays out boards, and fail elsewhere when KiCad is missing.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import platform
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
ANTENNA = ROOT / "hardware" / "antenna"
SYSTEM_PYTHON = "/usr/bin/python3"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"antenna_{name}", ANTENNA / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"antenna_{name}"] = module
    spec.loader.exec_module(module)
    return module


layout = _load("layout")
preview = _load("preview")
Pt = tuple[float, float]


def _point_segment(p: Pt, a: Pt, b: Pt) -> float:
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    t = max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / (dx * dx + dy * dy)))
    return math.dist(p, (ax + t * dx, ay + t * dy))


def _segment_gap(s: tuple[Pt, Pt], u: tuple[Pt, Pt]) -> float:
    """Centreline distance of two segments that do not cross (the spiral's never do)."""
    return min(_point_segment(s[0], *u), _point_segment(s[1], *u),
               _point_segment(u[0], *s), _point_segment(u[1], *s))


def _segments(points: list[Pt]) -> list[tuple[Pt, Pt]]:
    return list(itertools.pairwise(points))


def test_every_cell_with_a_reader_gets_coil_py_s_coil() -> None:
    board = layout.board("tactiki")
    (w, h), coils, holes = layout.layer("tactiki")
    assert (w, h) == tuple(board["size_mm"])
    assert [c.cell for c in coils] == [c["name"] for c in board["cells"]]
    assert len(coils) == 25 and len(holes) == 8
    for c in coils:
        assert c.coil == layout.BOARD_COILS["tactiki"]
        # The spiral's copper spans exactly the coil's outer side, centred on the cell.
        xs = [p[0] for p in c.spiral[1:]]
        assert max(xs) - min(xs) + c.coil.width_mm == pytest.approx(c.coil.outer_mm)
        assert (max(xs) + min(xs)) / 2 == pytest.approx(c.centre[0])
        # 4 sides a turn, plus the lead from pad A.
        assert len(c.spiral) == 4 * c.coil.turns + 2


def test_turns_keep_their_spacing_and_the_feed_clears_them() -> None:
    """Every pair of non-adjacent spiral sides is at least one pitch apart (so the copper gap
    is the coil's spacing, over the DRC's 0.2 mm), the via clears the turn beside it, and the
    B.Cu return and the pads clear the F.Cu copper they do not belong to."""
    c = layout.layer("tactiki")[1][0]
    w, s = c.coil.width_mm, c.coil.spacing_mm
    segs = _segments(c.spiral)
    for i, a in enumerate(segs):
        for b in segs[i + 2:]:
            assert _segment_gap(a, b) >= w + s - 1e-9
    # The via sits at the spiral's end; the sides it is not on must clear it.
    for a in segs[:-2]:
        gap = _point_segment(c.via, *a) - layout.VIA_DIAMETER_MM / 2 - w / 2
        assert gap >= layout.CLEARANCE_MM
    # Pad B (plated through, so copper on F.Cu too) against the spiral.
    for a in segs:
        assert (_point_segment(c.pad_b, *a) - layout.PAD_DIAMETER_MM / 2 - w / 2
                >= layout.CLEARANCE_MM)
    # The header and capacitor sit in the 15 mm gap below the coil, their copper (within
    # 1 mm of their centres) at least 5 mm from the next coil down (50 mm pitch).
    for p in (c.pad_a, c.pad_b, *c.cap_pads):
        assert p[1] - c.centre[1] + 1.0 < 50 - c.coil.outer_mm / 2 - 5


def test_neighbouring_coils_and_holes_keep_apart() -> None:
    """Coils one pitch apart leave the gap the README promises (15 mm at TacTiki), and no
    mounting hole lands on copper."""
    _, coils, holes = layout.layer("tactiki")
    a, b = coils[0], coils[1]
    assert abs(a.centre[0] - b.centre[0]) - a.coil.outer_mm == pytest.approx(15.0)
    for hole in holes:
        for c in coils:
            for seg in _segments(c.spiral) + _segments(c.back):
                assert _point_segment(hole, *seg) > layout.HOLE_DRILL_MM / 2 + 1.0


def _pcbnew_available() -> bool:
    if not Path(SYSTEM_PYTHON).exists():
        return False
    return subprocess.run([SYSTEM_PYTHON, "-c", "import pcbnew"], capture_output=True,
                          check=False).returncode == 0


@pytest.fixture(scope="module")
def kicad() -> None:
    if _pcbnew_available():
        return
    if platform.machine() in ("aarch64", "armv7l"):
        pytest.skip("KiCad is not installed on a Raspberry Pi (tests/bootstrap.sh leaves it out)")
    pytest.fail("KiCad's pcbnew is not importable by /usr/bin/python3: run tests/bootstrap.sh "
                "(it installs the Debian package kicad)")


def _make(out: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    run = subprocess.run([SYSTEM_PYTHON, str(ANTENNA / "make_layer.py"), "--out", str(out),
                          *extra], capture_output=True, text=True, check=False, timeout=120)
    summary_path = out / "tactiki" / "summary.json"
    assert summary_path.exists(), run.stderr
    summary: dict[str, object] = json.loads(summary_path.read_text())
    return run, summary


@pytest.mark.slow
def test_generated_board_passes_drc_and_has_a_complete_gerber_set(
        kicad: None, tmp_path: Path) -> None:
    run, summary = _make(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert summary["drc"] == {"violations": 0, "unconnected": 0, "footprint_errors": 0}
    board = layout.board("tactiki")
    assert summary["cells"] == [c["name"] for c in board["cells"]]
    files = summary["gerber_files"]
    assert isinstance(files, list)
    for layer_name in ("F_Cu", "B_Cu", "F_Mask", "B_Mask", "F_Silkscreen", "Edge_Cuts"):
        assert f"tactiki-sensing-{layer_name}.gbr" in files
    assert {"tactiki-sensing-PTH.drl", "tactiki-sensing-NPTH.drl"} <= set(files)
    out = tmp_path / "tactiki"
    gerber = out / "gerber"
    assert "%TF.FileFunction,Copper,L1,Top*%" in (gerber / "tactiki-sensing-F_Cu.gbr").read_text()
    assert "%TF.FileFunction,Copper,L2,Bot*%" in (gerber / "tactiki-sensing-B_Cu.gbr").read_text()
    # The outline is the board file's 270 mm square (Gerber 4.6: nanometres).
    assert "X270000000Y-270000000" in (gerber / "tactiki-sensing-Edge_Cuts.gbr").read_text()
    # 25 x 2 header holes of 1.0 mm, 25 vias of 0.3 mm; 8 mounting holes of 3.2 mm.
    pth = (gerber / "tactiki-sensing-PTH.drl").read_text()
    assert "C1.000" in pth and "C0.300" in pth
    assert len(re.findall(r"^X", pth, re.M)) == 25 * 3
    npth = (gerber / "tactiki-sensing-NPTH.drl").read_text()
    assert "C3.200" in npth and len(re.findall(r"^X", npth, re.M)) == 8
    # Every cell's coil in the board file itself: its net, the spiral and return segments,
    # the cap stubs, one via, and two header pads on that net.
    pcb = (out / "tactiki-sensing.kicad_pcb").read_text()
    turns = 4
    for cell in summary["cells"]:
        net = re.search(rf'\(net (\d+) "/{cell}/COIL"\)', pcb)
        assert net, cell
        n = net.group(1)
        segs = re.findall(rf"\(segment [^\n]*\(net {n}\)", pcb)
        assert len(segs) == (4 * turns + 1) + 2 + 2, cell
        assert len(re.findall(rf"\(via [^\n]*\(net {n}\)", pcb)) == 1, cell
        # The net's declaration, then the header's two pads and the capacitor's two.
        assert pcb.count(f'(net {n} "/{cell}/COIL")') == 1 + 4, cell
    # The README's picture reads the same file: it must find all of it.
    items = preview.parse(pcb)
    assert len(items["F.Cu"]) == 25 * (4 * turns + 1 + 2) and len(items["B.Cu"]) == 25 * 2
    assert len(items["via"]) == 25 and len(items["pad"]) == 25 * 4 + 8
    assert len(items["edge"]) == 4
    with zipfile.ZipFile(out / "tactiki-sensing-gerbers.zip") as z:
        assert sorted(z.namelist()) == sorted(files)


@pytest.mark.slow
def test_the_drc_fails_a_coil_too_big_for_the_pitch(kicad: None, tmp_path: Path) -> None:
    """The check can fail: 52 mm coils at a 50 mm pitch overlap their neighbours."""
    run, summary = _make(tmp_path, "--coil", "52", "4", "0.5", "0.5")
    assert run.returncode == 1
    drc = summary["drc"]
    assert isinstance(drc, dict) and drc["violations"] > 0
