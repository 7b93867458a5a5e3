"""A picture of the generated sensing layer for the README, drawn from the .kicad_pcb itself.

Why from the KiCad file and not from layout.py: the picture is to show what the fab will get,
so it reads the tracks, vias and pads make_layer.py saved (KiCad 6's s-expression board file),
not the intentions they came from. Why not KiCad's own SVG plot: it plots one layer a file on
a fixed paper size; this draws F.Cu (red) and B.Cu (blue) together, the whole board and one
cell enlarged, with the project's own drawing module (SVG and PNG, no converter).

    /usr/bin/python3 hardware/antenna/make_layer.py
    .venv/bin/python hardware/antenna/preview.py     # -> hardware/images/sensing-layer.png
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere
from pi_app.hw.drawing import Canvas, Style

ROOT = Path(__file__).resolve().parents[2]

NUM = r"(-?[\d.]+)"
COLOURS = {"F.Cu": "#c83232", "B.Cu": "#3250c8"}


def parse(pcb: str) -> dict[str, list[tuple[float, ...]]]:
    """Tracks per layer (x1, y1, x2, y2, width), vias (x, y, d), pads (x, y, w, h, drill),
    board outline lines, in mm."""
    out: dict[str, list[tuple[float, ...]]] = {"F.Cu": [], "B.Cu": [], "via": [], "pad": [],
                                               "edge": []}
    for m in re.finditer(rf"\(segment \(start {NUM} {NUM}\) \(end {NUM} {NUM}\) "
                         rf"\(width {NUM}\) \(layer \"([FB]\.Cu)\"\)", pcb):
        out[m.group(6)].append(tuple(float(v) for v in m.groups()[:5]))
    for m in re.finditer(rf"\(via \(at {NUM} {NUM}\) \(size {NUM}\)", pcb):
        out["via"].append(tuple(float(v) for v in m.groups()))
    for m in re.finditer(rf"\(gr_line \(start {NUM} {NUM}\) \(end {NUM} {NUM}\) "
                         rf"\(layer \"Edge.Cuts\"\)", pcb):
        out["edge"].append(tuple(float(v) for v in m.groups()))
    for fp in re.split(r"\n  \(footprint ", pcb)[1:]:
        at = re.search(rf"\(at {NUM} {NUM}", fp)
        assert at is not None
        fx, fy = float(at.group(1)), float(at.group(2))
        for p in re.finditer(rf"\(pad \"[^\"]*\" \w+ \w+ \(at {NUM} {NUM}\) "
                             rf"\(size {NUM} {NUM}\)(?: \(drill {NUM}\))?", fp):
            x, y, w, h = (float(v) for v in p.groups()[:4])
            drill = float(p.group(5)) if p.group(5) else 0.0
            out["pad"].append((fx + x, fy + y, w, h, drill))
    return out


def draw(items: dict[str, list[tuple[float, ...]]], cell: tuple[float, float]) -> Canvas:
    """The whole board in 140 mm on the left, one cell's 50 mm square at 2.9 : 1 on the right."""
    edge = items["edge"]
    size = max(max(e[0], e[2]) for e in edge), max(max(e[1], e[3]) for e in edge)
    c = Canvas(300.0, 168.0)
    c.text(6, 8, "TacTiki sensing layer as generated (F.Cu red, B.Cu blue, pads and holes "
           "grey)", 4.0)
    panels = ((6.0, 14.0, 140.0 / max(size), (0.0, 0.0, size[0], size[1])),
              (152.0, 14.0, 2.9, (cell[0] - 25, cell[1] - 25, cell[0] + 25, cell[1] + 25)))
    for ox, oy, k, (x0, y0, x1, y1) in panels:
        def at(x: float, y: float, ox: float = ox, oy: float = oy, k: float = k,
               x0: float = x0, y0: float = y0) -> tuple[float, float]:
            return ox + (x - x0) * k, oy + (y - y0) * k

        def inside(x: float, y: float, x0: float = x0, y0: float = y0, x1: float = x1,
                   y1: float = y1) -> bool:
            return x0 <= x <= x1 and y0 <= y <= y1

        c.rect(*at(x0, y0), (x1 - x0) * k, (y1 - y0) * k, Style(stroke="#999999", width=0.2))
        for layer in ("B.Cu", "F.Cu"):
            for x_1, y_1, x_2, y_2, w in items[layer]:
                if inside(x_1, y_1) and inside(x_2, y_2):
                    c.line(*at(x_1, y_1), *at(x_2, y_2),
                           Style(stroke=COLOURS[layer], width=max(w * k, 0.15)))
        for x, y, w, h, drill in items["pad"]:
            if inside(x, y) and not drill:  # an SMD pad: the 0805's
                c.rect(*at(x - w / 2, y - h / 2), w * k, h * k,
                       Style(stroke="#555555", fill="#bbbbbb", width=0.1))
            elif inside(x, y):
                c.circle(*at(x, y), w / 2 * k, Style(stroke="#555555", fill="#bbbbbb",
                                                     width=0.15))
                if drill:  # the hole (white: an unplated one is all hole)
                    c.circle(*at(x, y), drill / 2 * k, Style(stroke="#555555", fill="white",
                                                             width=0.1))
        for x, y, d in items["via"]:
            if inside(x, y):
                c.circle(*at(x, y), max(d / 2 * k, 0.3), Style(stroke="#555555",
                                                                fill="#bbbbbb", width=0.1))
    c.text(6, 165, f"{size[0]:g} x {size[1]:g} mm, 2 layers (left); one cell, 50 mm square "
           "(right): 35 mm coil, 4 turns, via to the B.Cu return, header J and 0805 below",
           2.8)
    return c


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--pcb", type=Path,
                    default=ROOT / "build" / "sensing-layer" / "tactiki" /
                    "tactiki-sensing.kicad_pcb")
    ap.add_argument("--png", type=Path, default=ROOT / "hardware" / "images" /
                    "sensing-layer.png")
    args = ap.parse_args(argv)
    items = parse(args.pcb.read_text())
    draw(items, (35.0, 235.0)).save(None, args.png, scale=4.0)
    print(f"wrote {args.png} ({sum(len(v) for v in items.values())} items)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
