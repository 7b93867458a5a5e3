"""Overlays tiled for A4/A3 (pi_app/commands/overlay.py): the sheets cover the whole overlay,
neighbours share an alignment strip with the same crosses on both, each sheet prints at true
scale (1 SVG unit = 1 mm, the overlay window unscaled, a 100 mm scale bar), and the checked-in
sheets are current."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from pi_app.board.geometry import board_names, load_geometry
from pi_app.commands.overlay import (
    FOOTER_MM,
    OVERLAP_MM,
    PAPER_MM,
    PRINT_MARGIN_MM,
    SCALE_BAR_MM,
    Tile,
    draw_overlay,
    plan_tiles,
    tile_svg,
    write_tiles,
)

GAMES = board_names()
TILES = Path(__file__).resolve().parent.parent / "hardware" / "overlays" / "tiles"
NS = {"s": "http://www.w3.org/2000/svg"}
CASES = list(itertools.product(GAMES, PAPER_MM))


def inside(tile: Tile, x: float, y: float) -> bool:
    x0, y0, w, h = tile.window
    return x0 <= x <= x0 + w and y0 <= y <= y0 + h


@pytest.mark.parametrize(("game", "paper"), CASES)
def test_tiles_cover_the_overlay_and_fit_the_paper(game: str, paper: str) -> None:
    canvas = draw_overlay(load_geometry(game))
    tiles = plan_tiles(canvas.width, canvas.height, paper)
    for x, y in itertools.product(range(int(canvas.width) + 1), range(int(canvas.height) + 1)):
        assert any(inside(t, min(x, canvas.width), min(y, canvas.height)) for t in tiles), (x, y)
    for t in tiles:
        assert sorted(t.page_mm) == sorted(PAPER_MM[paper])
        _, _, w, h = t.window
        assert 2 * PRINT_MARGIN_MM + w <= t.page_mm[0] + 1e-9
        assert PRINT_MARGIN_MM + FOOTER_MM + h <= t.page_mm[1] + 1e-9
    by_place = {(t.row, t.col): t for t in tiles}
    for (r, c), t in by_place.items():  # neighbours share the alignment strip
        if (r, c + 1) in by_place:
            right = by_place[(r, c + 1)]
            assert t.window[0] + t.window[2] - right.window[0] >= OVERLAP_MM - 1e-9
            assert right.window[0] - t.window[0] >= 20  # each sheet adds real width
        if (r + 1, c) in by_place:
            below = by_place[(r + 1, c)]
            assert t.window[1] + t.window[3] - below.window[1] >= OVERLAP_MM - 1e-9
            assert below.window[1] - t.window[1] >= 20


def test_topple_needs_more_than_one_a3_sheet() -> None:
    canvas = draw_overlay(load_geometry("topple"))
    assert (canvas.width, canvas.height) == (212, 466)
    assert len(plan_tiles(canvas.width, canvas.height, "A3")) >= 2
    assert len(plan_tiles(canvas.width, canvas.height, "A4")) >= 3


@pytest.mark.parametrize(("game", "paper"), CASES)
def test_alignment_crosses_are_shared_by_neighbours(game: str, paper: str) -> None:
    canvas = draw_overlay(load_geometry(game))
    tiles = plan_tiles(canvas.width, canvas.height, paper)
    counts = Counter(m for t in tiles for m in t.marks)
    assert all(n >= 2 for n in counts.values()), counts
    if len(tiles) > 1:
        assert counts  # every seam carries crosses
    for t in tiles:
        assert all(inside(t, *m) for m in t.marks)


def test_sheet_is_true_scale() -> None:
    geo = load_geometry("topple")
    canvas = draw_overlay(geo)
    tile = plan_tiles(canvas.width, canvas.height, "A4")[1]
    root = ET.fromstring(tile_svg(canvas, tile, geo.title))
    page_w, page_h = tile.page_mm
    assert root.get("width") == f"{page_w:g}mm" and root.get("height") == f"{page_h:g}mm"
    assert root.get("viewBox") == f"0 0 {page_w:g} {page_h:g}"  # 1 unit = 1 mm on paper
    (window,) = root.findall("s:svg", NS)
    vx, vy, vw, vh = (float(v) for v in (window.get("viewBox") or "").split())
    assert (vx, vy, vw, vh) == pytest.approx(tile.window)
    assert float(window.get("width") or 0) == pytest.approx(vw)  # the overlay is not rescaled
    assert float(window.get("height") or 0) == pytest.approx(vh)
    lengths = [abs(float(e.get("x2") or 0) - float(e.get("x1") or 0))
               for e in root.findall("s:line", NS) if e.get("y1") == e.get("y2")]
    assert SCALE_BAR_MM in lengths
    assert "row 2 of" in "".join(root.itertext())
    assert ">s5<" in tile_svg(canvas, tile, geo.title)  # the board content is on the sheet


@pytest.mark.parametrize("game", GAMES)
def test_checked_in_sheets_are_current(game: str, tmp_path: Path) -> None:
    fresh = {p.name: p.read_text() for p in write_tiles(tmp_path, [game])}
    kept = {p.name: p.read_text() for p in TILES.glob(f"{game}-*.svg")}
    assert kept == fresh, "hardware/overlays/tiles is stale: run python -m pi_app.commands.overlay"
