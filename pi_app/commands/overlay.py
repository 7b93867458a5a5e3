"""Printable board overlays, one per game, generated from hardware/boards/GAME.json.

``python -m pi_app.commands.overlay``, run from the checkout's root, writes
``hardware/overlays/GAME.svg`` (1:1, in millimetres: print at 100 % and check the 100 mm scale
bar) and a PNG preview in ``hardware/images/``. Each cell shows its name, its reader antenna
(dashed circle, ``R``n), its presence sensor (square, ``P``n) and its LEDs (dots with their
strip index). The geometry gives no LED positions, so the LEDs are drawn evenly along the cell's
top edge: that is the suggested placement, not data. Coordinates are the geometry's: x to the
right, y down, from the board's top-left corner.

Boards larger than the paper (Topple's overlay is 212 x 466 mm, over A3) are also written as
tiles, ``hardware/overlays/tiles/GAME-A4-r1c2.svg`` and the same for A3: each tile is one
sheet at true scale (the tile's content is the overlay itself, never rescaled), with a printer
margin, trim marks at the content's corners, alignment crosses in the strips that neighbouring
tiles share (lay the sheets so the crosses coincide), the tile's place in the grid, and a
100 mm scale bar to check the print with a ruler.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

from pi_app.board.geometry import Cell, Geometry, board_names, load_geometry
from pi_app.hw.drawing import Canvas, Style

#: The checkout's hardware/ folder, relative to the current directory: the drawings belong to
#: the source tree, never to an installed package.
HARDWARE_DIR = Path("hardware")
LEGEND_MM = 40.0
MARGIN_MM = 6.0

CELL = Style(stroke="#1f4e79", width=0.5, fill="#eef4fb")
PAD = Style(stroke="#7f6000", width=0.5, fill="#fff7e0")
EDGE = Style(stroke="#385723", width=0.4, fill="#e8f3e0")
ANTENNA = Style(stroke="#c00000", width=0.3, dash=True)
PRESENCE = Style(stroke="#385723", width=0.3, fill="#a9d18e")
LED = Style(stroke="#7030a0", width=0.2, fill="#e4c8f5")
OUTLINE = Style(stroke="black", width=0.4)


def led_positions(cell: Cell) -> list[tuple[float, float]]:
    """Suggested LED spots: evenly along the top edge, 3 mm inside."""
    (cx, cy), (w, h) = cell.center_mm, cell.size_mm
    n = len(cell.leds)
    left, top = cx - w / 2, cy - h / 2
    return [(left + (k + 1) * w / (n + 1), top + 3.0) for k in range(n)]


def draw_overlay(geo: Geometry) -> Canvas:
    bw, bh = geo.size_mm
    canvas = Canvas(bw + 2 * MARGIN_MM, bh + LEGEND_MM + MARGIN_MM,
                    offset=(MARGIN_MM, MARGIN_MM))
    canvas.rect(0, 0, bw, bh, OUTLINE)
    for x, y in ((0, 0), (bw, 0), (0, bh), (bw, bh)):  # registration crosses at the corners
        canvas.line(x - 4, y, x + 4, y, OUTLINE)
        canvas.line(x, y - 4, x, y + 4, OUTLINE)
    for cell in geo.cells:
        (cx, cy), (w, h) = cell.center_mm, cell.size_mm
        style = {"cell": CELL, "pad": PAD, "edge": EDGE}[cell.kind]
        canvas.rect(cx - w / 2, cy - h / 2, w, h, style, radius=min(w, h) * 0.08)
        if cell.kind == "edge":
            canvas.text(cx, cy - h / 2 - 1.2, cell.name, 2.6, "#385723", "middle")
        else:
            canvas.text(cx - w / 2 + 1.5, cy + h / 2 - 1.5, cell.name, 4.5, "#1f4e79")
        if cell.reader is not None:
            r = min(w, h) * 0.33
            canvas.circle(cx, cy, r, ANTENNA)
            canvas.text(cx + r * 0.72, cy - r * 0.72, f"R{cell.reader}", 3.0, "#c00000")
        if cell.presence is not None:
            s = min(4.0, min(w, h) * 0.4)
            canvas.rect(cx - s / 2, cy - s / 2, s, s, PRESENCE)
            canvas.text(cx, cy + s / 2 + 3.2 if cell.kind != "edge" else cy + s / 2 + 2.8,
                        f"P{cell.presence}", 2.6, "#385723", "middle")
        for led, (lx, ly) in zip(cell.leds, led_positions(cell), strict=True):
            canvas.circle(lx, ly, 1.6, LED)
            canvas.text(lx, ly + 4.4, str(led), 2.4, "#7030a0", "middle")
    y = bh + 7
    canvas.text(4, y, geo.title, 4.2)
    canvas.text(4, y + 6, f"reader chip {geo.reader_chip or '-'}; {geo.reader_count} readers, "
                          f"{geo.presence_count} presence sensors, {geo.led_count} LEDs",
                3.2, "#404040")
    status = ", ".join(f"{who}: {', '.join(map(str, leds))}"
                       for who, leds in geo.status_leds.items())
    if status:
        canvas.text(4, y + 11, f"status LEDs (off-board, by player) {status}", 3.0, "#7030a0")
    canvas.circle(8, y + 17, 1.6, LED)
    canvas.text(11, y + 18, "LED", 3.0)
    canvas.circle(28, y + 17, 3, ANTENNA)
    canvas.text(33, y + 18, "reader antenna", 3.0)
    canvas.rect(62, y + 15, 4, 4, PRESENCE)
    canvas.text(68, y + 18, "reed/hall", 3.0)
    bar = min(100.0, bw - 8)
    canvas.line(4, y + 29, 4 + bar, y + 29, Style(width=0.6))
    for k in range(int(bar // 10) + 1):
        canvas.line(4 + 10 * k, y + 27.5, 4 + 10 * k, y + 30.5, Style(width=0.3))
    canvas.text(4 + bar / 2, y + 26, f"{bar:g} mm: check after printing at 100 %", 2.8,
                "#404040", "middle")
    return canvas


#: Paper sizes in mm, portrait.
PAPER_MM = {"A4": (210.0, 297.0), "A3": (297.0, 420.0)}
#: Unprinted border most printers need, and the bottom strip for the tile label and scale bar.
PRINT_MARGIN_MM = 8.0
FOOTER_MM = 14.0
#: Width of the strip two neighbouring tiles both print, to align and tape them.
OVERLAP_MM = 12.0
#: Alignment crosses along a seam are at most this far apart.
MARK_PITCH_MM = 60.0
SCALE_BAR_MM = 100.0
MARK = Style(stroke="black", width=0.25)
TRIM = Style(stroke="#808080", width=0.2)


@dataclass(frozen=True, slots=True)
class Tile:
    """One printed sheet: which part of the overlay (in the overlay's own mm) it carries."""

    row: int
    col: int
    rows: int
    cols: int
    paper: str
    page_mm: tuple[float, float]
    """The sheet as printed (width, height): the paper, portrait or landscape."""
    window: tuple[float, float, float, float]
    """x, y, width, height of the overlay shown, in overlay millimetres."""
    marks: tuple[tuple[float, float], ...]
    """Alignment crosses on this sheet, in overlay millimetres."""

    @property
    def name(self) -> str:
        return f"r{self.row + 1}c{self.col + 1}"


def _grid(length: float, content: float) -> tuple[int, float]:
    """How many tiles along one side, and the step between their origins."""
    if length <= content:
        return 1, 0.0
    count = math.ceil((length - OVERLAP_MM) / (content - OVERLAP_MM))
    return count, (length - content) / (count - 1)


def plan_tiles(width: float, height: float, paper: str) -> list[Tile]:
    """Tiles covering a ``width`` x ``height`` mm drawing, in the orientation needing fewest
    sheets (then the narrowest shared strips: a sheet that repeats most of its neighbour helps
    nobody); neighbours share at least ``OVERLAP_MM``, and the steps are spread evenly."""
    best: list[Tile] = []
    best_key = (math.inf, math.inf)
    pw, ph = PAPER_MM[paper]
    for page in ((pw, ph), (ph, pw)):
        cw, ch = page[0] - 2 * PRINT_MARGIN_MM, page[1] - PRINT_MARGIN_MM - FOOTER_MM
        cols, step_x = _grid(width, cw)
        rows, step_y = _grid(height, ch)
        seams_x = [c * step_x + cw - (cw - step_x) / 2 for c in range(cols - 1)]
        seams_y = [r * step_y + ch - (ch - step_y) / 2 for r in range(rows - 1)]
        tiles = []
        for r in range(rows):
            for c in range(cols):
                x0, y0 = c * step_x, r * step_y
                w, h = min(cw, width), min(ch, height)
                marks = {(sx, y) for sx in seams_x if x0 < sx < x0 + w
                         for y in _along(y0, h)}
                marks |= {(x, sy) for sy in seams_y if y0 < sy < y0 + h
                          for x in _along(x0, w)}
                tiles.append(Tile(r, c, rows, cols, paper, page, (x0, y0, w, h),
                                  tuple(sorted(marks))))
        shared = max(cw - step_x if cols > 1 else 0.0, ch - step_y if rows > 1 else 0.0)
        key = (len(tiles), shared)
        if key < best_key:
            best, best_key = tiles, key
    return best


def _along(start: float, length: float) -> list[float]:
    """Evenly spaced positions along a seam, well inside the sheet, at most MARK_PITCH apart;
    absolute (overlay) coordinates so neighbouring sheets put them in the same places."""
    n = max(2, math.ceil(length / MARK_PITCH_MM))
    inner = length - 2 * OVERLAP_MM
    return [round(start + OVERLAP_MM + inner * k / (n - 1), 2) for k in range(n)]


def tile_svg(canvas: Canvas, tile: Tile, title: str) -> str:
    """One sheet: the overlay's own elements in a window at 1:1, plus marks and footer."""
    page_w, page_h = tile.page_mm
    x0, y0, w, h = tile.window
    body = canvas.svg().split("\n")
    inner = "\n".join(line for line in body[1:-2])  # without the outer <svg> element
    sheet = Canvas(page_w, page_h)
    left, top = PRINT_MARGIN_MM, PRINT_MARGIN_MM
    for cx, cy in ((left, top), (left + w, top), (left, top + h), (left + w, top + h)):
        sx = -1 if cx == left else 1  # trim marks point away from the content
        sy = -1 if cy == top else 1
        sheet.line(cx + sx * 1.5, cy, cx + sx * 6, cy, TRIM)
        sheet.line(cx, cy + sy * 1.5, cx, cy + sy * 6, TRIM)
    for mx, my in tile.marks:
        px, py = left + mx - x0, top + my - y0
        sheet.circle(px, py, 2.5, MARK)
        sheet.line(px - 4, py, px + 4, py, MARK)
        sheet.line(px, py - 4, px, py + 4, MARK)
    base = top + h + 5.5
    sheet.text(left, base, f"{title}: sheet {tile.name} (row {tile.row + 1} of {tile.rows}, "
                           f"column {tile.col + 1} of {tile.cols}), {tile.paper}, print at "
                           f"100 %", 2.8, "#404040")
    bar_y = base + 5
    sheet.line(left, bar_y, left + SCALE_BAR_MM, bar_y, Style(width=0.5))
    for k in range(int(SCALE_BAR_MM // 10) + 1):
        sheet.line(left + 10 * k, bar_y - 1.5, left + 10 * k, bar_y + 1.5, Style(width=0.25))
    sheet.text(left + SCALE_BAR_MM + 2, bar_y + 1, f"{SCALE_BAR_MM:g} mm", 2.8, "#404040")
    svg = sheet.svg(f"{title} ({tile.paper} sheet {tile.name})").split("\n")
    window = (f'<svg x="{left:g}" y="{top:g}" width="{w:g}" height="{h:g}" '
              f'viewBox="{x0:g} {y0:g} {w:g} {h:g}" overflow="hidden">\n{inner}\n</svg>')
    return "\n".join([*svg[:3], window, *svg[3:]])


def write_tiles(out_dir: Path, games: list[str]) -> list[Path]:
    """Every game's overlay as A4 and A3 sheets; stale sheets of a game are removed first."""
    written = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for game in games:
        for old in out_dir.glob(f"{game}-*.svg"):
            old.unlink()
        geo = load_geometry(game)
        canvas = draw_overlay(geo)
        for paper in PAPER_MM:
            for tile in plan_tiles(canvas.width, canvas.height, paper):
                path = out_dir / f"{game}-{paper}-{tile.name}.svg"
                path.write_text(tile_svg(canvas, tile, geo.title), encoding="utf-8")
                written.append(path)
    return written


def write_overlays(out_dir: Path, png_dir: Path | None, games: list[str]) -> list[Path]:
    written = []
    for game in games:
        geo = load_geometry(game)
        canvas = draw_overlay(geo)
        svg = out_dir / f"{game}.svg"
        png = png_dir / f"overlay-{game}.png" if png_dir is not None else None
        canvas.save(svg, png, scale=3.0, title=f"{geo.title} (1:1 overlay)")
        written.append(svg)
    return written


def main(argv: list[str] | None = None) -> None:
    games = list(board_names())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HARDWARE_DIR / "overlays")
    parser.add_argument("--png", type=Path, default=HARDWARE_DIR / "images")
    parser.add_argument("--game", action="append", choices=games)
    args = parser.parse_args(argv)
    for path in write_overlays(args.out, args.png, args.game or games):
        print(f"wrote {path}")
    for path in write_tiles(args.out / "tiles", args.game or games):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
