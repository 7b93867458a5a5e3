"""Printable board overlays, one per game, generated from hardware/boards/GAME.json.

``python -m pi_app.hw.overlay``, run from the checkout's root, writes
``hardware/overlays/GAME.svg`` (1:1, in millimetres: print at 100 % and check the 100 mm scale
bar) and a PNG preview in ``hardware/images/``. Each cell shows its name, its reader antenna
(dashed circle, ``R``n), its presence sensor (square, ``P``n) and its LEDs (dots with their
strip index). The geometry gives no LED positions, so the LEDs are drawn evenly along the cell's
top edge: that is the suggested placement, not data. Coordinates are the geometry's: x to the
right, y down, from the board's top-left corner.
"""

from __future__ import annotations

import argparse
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


if __name__ == "__main__":
    main()
