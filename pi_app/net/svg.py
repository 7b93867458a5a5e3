"""The live board as a picture: SVG drawn on the server from the board's geometry file.

The cells, their kinds and positions come from ``hardware/boards/GAME.json`` (millimetres; the
SVG's user unit is one millimetre), the pieces from the snapshot's ``view`` (cell -> pieces,
bottom first). Drawn on the server so both pages share one picture and need no build step;
every text in it is escaped, so a piece or cell name can never become markup.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Mapping, Sequence
from html import escape

from pi_app.board.geometry import Geometry, GeometryError, load_geometry

PLAYER_COLOURS = ("#c0392b", "#2471a3", "#239b56", "#b7950b")
TIKI_COLOURS = ("#8e44ad", "#d35400", "#16a085", "#2c3e50", "#c0392b", "#27ae60", "#2980b9",
                "#f39c12", "#7f8c8d")


@functools.lru_cache(maxsize=8)
def geometry_of(game: str) -> Geometry | None:
    try:
        return load_geometry(game)
    except GeometryError:
        return None


def piece_colour(game: str, piece: str) -> str:
    if game == "manami" and len(piece) == 2 and piece[0] == "p" and piece[1].isdigit():
        return PLAYER_COLOURS[int(piece[1]) % len(PLAYER_COLOURS)]
    if game == "tactiki" and piece[:1] in ("T", "C"):
        return PLAYER_COLOURS[0 if piece[0] == "T" else 1]
    return TIKI_COLOURS[zlib.crc32(piece.encode()) % len(TIKI_COLOURS)]


def piece_label(game: str, piece: str) -> str:
    if game == "manami" and piece.startswith("p"):
        return piece[1:]
    return piece


def board_svg(game: str, view: Mapping[str, Sequence[str]] | None,
              highlight: Sequence[str] = (), geometry: Geometry | None = None) -> str:
    """An ``<svg>`` element of ``game``'s board with ``view``'s pieces on it.

    ``geometry``: the station's own board file when it is not the shipped one for ``game``.
    """
    if geometry is None or geometry.game != game:
        geometry = geometry_of(game)
    if geometry is None:
        return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 20" role="img">'
                f'<text x="2" y="12" font-size="8">{escape(game)}: no board picture</text></svg>')
    view = view or {}
    width, height = geometry.size_mm
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:g} {height:g}" '
           f'class="board" role="img" aria-label="{escape(geometry.title)}">',
           f'<rect x="0" y="0" width="{width:g}" height="{height:g}" rx="6" fill="#f5e6c8"/>']
    marked = set(highlight)
    for cell in geometry.cells:
        cx, cy = cell.center_mm
        w, h = cell.size_mm
        x, y = cx - w / 2, cy - h / 2
        pieces = list(view.get(cell.name, ()))
        if cell.kind == "edge":
            fill = "#222" if pieces else "none"
            out.append(f'<circle cx="{cx:g}" cy="{cy:g}" r="{w / 2:g}" fill="{fill}" '
                       f'stroke="#8a6d3b" stroke-width="0.8"><title>{escape(cell.name)}'
                       f'{": shaman" if pieces else ""}</title></circle>')
            continue
        stroke = "#e67e22" if cell.name in marked else "#8a6d3b"
        dash = ' stroke-dasharray="4 3"' if cell.kind == "pad" else ""
        out.append(f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="3" '
                   f'fill="#fffaf0" stroke="{stroke}" stroke-width="1.2"{dash} '
                   f'data-cell="{escape(cell.name)}"/>')
        out.append(f'<text x="{x + 2:g}" y="{y + 6:g}" font-size="5" fill="#8a6d3b">'
                   f'{escape(cell.name)}</text>')
        if not pieces:
            continue
        slot = min(9.0, (h - 8) / len(pieces))
        for i, piece in enumerate(pieces):
            py = y + h - 2 - slot * (i + 1)
            colour = piece_colour(game, piece)
            out.append(f'<rect x="{x + 3:g}" y="{py:.2f}" width="{w - 6:g}" '
                       f'height="{slot - 0.8:.2f}" rx="1.5" fill="{colour}"/>')
            font = min(6.0, slot - 1.5)
            out.append(f'<text x="{cx:g}" y="{py + slot / 2 + font / 3:.2f}" '
                       f'font-size="{font:.2f}" text-anchor="middle" fill="#fff">'
                       f'{escape(piece_label(game, piece))}</text>')
    out.append("</svg>")
    return "".join(out)
