"""A board drawn from its geometry with each LED in its colour: the demo's ``--picture`` and
the docs' LED pictures (``tools/render_docs.py``) share it, so the docs show what the demo shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from pi_app.board.geometry import Geometry
from pi_app.hw.leds import RGB
from pi_app.referee.feedback import text_mask

BG = (24, 24, 28)
BOARD = (48, 46, 44)
CELL = (110, 106, 100)
INK = (220, 220, 220)
UNLIT = (64, 64, 64)
DARK = (36, 36, 36)


def label(img: Image.Image, xy: tuple[int, int], text: str, colour: RGB = INK,
          scale: int = 1) -> int:
    """Text in the station's own bitmap font (identical pixels everywhere); returns its width."""
    mask = text_mask(text, scale)
    img.paste(colour, xy, mask)
    return mask.width


def visible(colour: RGB, under: RGB = UNLIT) -> RGB:
    """An LED as a picture shows it: its light added to the unlit LED's grey, and brightened,
    since capped LEDs look brighter than their numbers."""
    top = max(*colour, 1)
    gain = min(255 / 192, 255 / top)
    r, g, b = (min(255, u + round(c * gain)) for u, c in zip(under, colour, strict=True))
    return r, g, b


def _status_name(group: str) -> str:
    return f"P{int(group[1:]) + 1}" if group[1:].isdigit() else group


def draw_board(geometry: Geometry, frame: Sequence[RGB], size: int = 240) -> Image.Image:
    """A board from its geometry: cells with their names, each LED a dot in its frame colour,
    the status LEDs (P1..P4) in a row under the board."""
    w_mm, h_mm = geometry.size_mm
    k = size / max(w_mm, h_mm)
    width, height = round(w_mm * k), round(h_mm * k)
    pad, gap = 6, 10
    radius = max(3, round(3.5 * k))
    dot = 2 * radius + 4
    status_w = sum(text_mask(_status_name(g)).width + dot * len(leds) + gap
                   for g, leds in geometry.status_leds.items())
    status_h = 24 if geometry.status_leds else 0
    img = Image.new("RGB", (max(width, status_w) + 2 * pad, height + 2 * pad + status_h), BG)
    draw = ImageDraw.Draw(img)
    draw.rectangle((pad, pad, pad + width, pad + height), fill=BOARD)
    for cell in geometry.cells:
        if cell.kind == "edge":
            continue
        (cx, cy), (sw, sh) = cell.center_mm, cell.size_mm
        x0, y0 = pad + round((cx - sw / 2) * k), pad + round((cy - sh / 2) * k)
        x1, y1 = pad + round((cx + sw / 2) * k), pad + round((cy + sh / 2) * k)
        draw.rectangle((x0, y0, x1, y1), outline=CELL, width=1)
        label(img, (x0 + 3, y1 - 11), cell.name, CELL)
        count = len(cell.leds)
        for i, led in enumerate(cell.leds):
            x = round(x0 + (x1 - x0) * (i + 1) / (count + 1))
            y = y0 + radius + 3
            draw.ellipse((x - radius, y - radius, x + radius, y + radius),
                         fill=visible(frame[led]))
    x = pad
    y = pad + height + 12
    for group, leds in geometry.status_leds.items():
        x += label(img, (x, y - 4), _status_name(group))
        for led in leds:
            draw.ellipse((x + 3, y - radius, x + 3 + 2 * radius, y + radius),
                         fill=visible(frame[led]))
            x += dot
        x += gap
    return img
