"""A tiny vector drawing (rectangles, lines, circles, text) rendered to SVG and to PNG.

The overlays and the wiring diagram are generated from data (geometry, pin map), and the docs
want both a printable SVG and a PNG preview. No SVG rasteriser is installed on the build
machine, so instead of converting, the same primitives are drawn twice: as SVG elements and
with PIL. Units are millimetres in the SVG (``width="200mm"``, so it prints 1:1) and
``scale`` pixels per unit in the PNG.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from PIL import Image, ImageDraw, ImageFont

FONT_FILES = ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@dataclass(frozen=True, slots=True)
class Style:
    stroke: str = "black"
    fill: str = "none"
    width: float = 0.3
    dash: bool = False


@dataclass
class Canvas:
    width: float
    height: float
    unit: str = "mm"
    #: Added to every coordinate drawn from now on (a margin, a sub-drawing's origin).
    offset: tuple[float, float] = (0.0, 0.0)
    items: list[tuple[str, tuple[float, ...], Style, str]] = field(default_factory=list)

    def rect(self, x: float, y: float, w: float, h: float, style: Style = Style(),
             radius: float = 0.0) -> None:
        dx, dy = self.offset
        self.items.append(("rect", (x + dx, y + dy, w, h, radius), style, ""))

    def line(self, x1: float, y1: float, x2: float, y2: float, style: Style = Style()) -> None:
        dx, dy = self.offset
        self.items.append(("line", (x1 + dx, y1 + dy, x2 + dx, y2 + dy), style, ""))

    def circle(self, cx: float, cy: float, r: float, style: Style = Style()) -> None:
        dx, dy = self.offset
        self.items.append(("circle", (cx + dx, cy + dy, r), style, ""))

    def text(self, x: float, y: float, text: str, size: float = 3.5, colour: str = "black",
             anchor: str = "start") -> None:
        """Text with its baseline at ``y``; ``anchor`` is start, middle or end."""
        dx, dy = self.offset
        self.items.append(("text", (x + dx, y + dy, size), Style(fill=colour),
                           f"{anchor}|{text}"))

    # --- SVG ----------------------------------------------------------------------------------
    def svg(self, title: str = "") -> str:
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(self.width)}{self.unit}" '
               f'height="{_n(self.height)}{self.unit}" '
               f'viewBox="0 0 {_n(self.width)} {_n(self.height)}" '
               'font-family="DejaVu Sans, Arial, sans-serif">']
        if title:
            out.append(f"<title>{escape(title)}</title>")
        out.append(f'<rect x="0" y="0" width="{_n(self.width)}" height="{_n(self.height)}" '
                   'fill="white"/>')
        for kind, v, st, extra in self.items:
            paint = (f'stroke="{st.stroke}" stroke-width="{_n(st.width)}" fill="{st.fill}"'
                     + (' stroke-dasharray="2 1"' if st.dash else ""))
            if kind == "rect":
                rx = f' rx="{_n(v[4])}"' if v[4] else ""
                out.append(f'<rect x="{_n(v[0])}" y="{_n(v[1])}" width="{_n(v[2])}" '
                           f'height="{_n(v[3])}"{rx} {paint}/>')
            elif kind == "line":
                out.append(f'<line x1="{_n(v[0])}" y1="{_n(v[1])}" x2="{_n(v[2])}" '
                           f'y2="{_n(v[3])}" {paint}/>')
            elif kind == "circle":
                out.append(f'<circle cx="{_n(v[0])}" cy="{_n(v[1])}" r="{_n(v[2])}" {paint}/>')
            else:
                anchor, text = extra.split("|", 1)
                out.append(f'<text x="{_n(v[0])}" y="{_n(v[1])}" font-size="{_n(v[2])}" '
                           f'fill="{st.fill}" text-anchor="{anchor}">{escape(text)}</text>')
        out.append("</svg>")
        return "\n".join(out) + "\n"

    # --- PNG ----------------------------------------------------------------------------------
    def png(self, scale: float) -> Image.Image:
        img = Image.new("RGB", (round(self.width * scale), round(self.height * scale)), "white")
        draw = ImageDraw.Draw(img)
        fonts: dict[int, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}
        for kind, v, st, extra in self.items:
            width = max(1, round(st.width * scale))
            outline = None if st.stroke == "none" else st.stroke
            fill = None if st.fill == "none" else st.fill
            if kind == "rect":
                box = (v[0] * scale, v[1] * scale, (v[0] + v[2]) * scale, (v[1] + v[3]) * scale)
                draw.rounded_rectangle(box, radius=v[4] * scale, outline=outline, fill=fill,
                                       width=width)
            elif kind == "line":
                draw.line([(v[0] * scale, v[1] * scale), (v[2] * scale, v[3] * scale)],
                          fill=outline, width=width)
            elif kind == "circle":
                r = v[2] * scale
                draw.ellipse((v[0] * scale - r, v[1] * scale - r, v[0] * scale + r,
                              v[1] * scale + r), outline=outline, fill=fill, width=width)
            else:
                anchor, text = extra.split("|", 1)
                px = max(6, round(v[2] * scale * 1.0))
                if px not in fonts:
                    fonts[px] = _font(px)
                pil_anchor = {"start": "ls", "middle": "ms", "end": "rs"}[anchor]
                draw.text((v[0] * scale, v[1] * scale), text, fill=st.fill, font=fonts[px],
                          anchor=pil_anchor)
        return img

    def save(self, svg_path: Path | None, png_path: Path | None, scale: float = 4.0,
             title: str = "") -> None:
        if svg_path is not None:
            svg_path.parent.mkdir(parents=True, exist_ok=True)
            svg_path.write_text(self.svg(title), encoding="utf-8")
        if png_path is not None:
            png_path.parent.mkdir(parents=True, exist_ok=True)
            self.png(scale).save(png_path)


def _font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for name in FONT_FILES:
        try:
            return ImageFont.truetype(name, px)
        except OSError:
            continue
    return ImageFont.load_default(px)


def _n(value: float) -> str:
    """A number for SVG: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text if text != "-0" else "0"
