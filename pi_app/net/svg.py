"""The live board as a picture: SVG drawn on the server from the board's geometry file.

The cells, their kinds and positions come from ``hardware/boards/GAME.json`` (millimetres; the
SVG's user unit is one millimetre), the pieces from the snapshot's ``view`` (cell -> pieces,
bottom first). Drawn on the server so both pages share one picture and need no build step;
every text in it is escaped, so a piece or cell name can never become markup.
"""

from __future__ import annotations

import functools
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape

from pi_app.board.geometry import Geometry, GeometryError, load_geometry
from pi_app.games import GAME_NAMES, get_game
from pi_app.games.base import PieceStyle

PLAYER_COLOURS = ("#c0392b", "#2471a3", "#239b56", "#b7950b")
TIKI_COLOURS = ("#8e44ad", "#d35400", "#16a085", "#2c3e50", "#c0392b", "#27ae60", "#2980b9",
                "#f39c12", "#7f8c8d")


@functools.lru_cache(maxsize=8)
def geometry_of(game: str) -> Geometry | None:
    try:
        return load_geometry(game)
    except GeometryError:
        return None


def piece_style(game: str, piece: str) -> PieceStyle:
    """How the engine of ``game`` says its piece is drawn (a game no engine plays: the
    piece's own colour and name)."""
    if game not in GAME_NAMES:
        return PieceStyle(None, piece)
    return get_game(game).piece_style(piece)


def piece_colour(game: str, piece: str) -> str:
    """An owned piece in its owner's colour, any other in a colour its name picks."""
    owner = piece_style(game, piece).owner
    if owner is not None:
        return PLAYER_COLOURS[owner % len(PLAYER_COLOURS)]
    return TIKI_COLOURS[zlib.crc32(piece.encode()) % len(TIKI_COLOURS)]


def piece_label(game: str, piece: str) -> str:
    """A piece's word on the picture, as its engine labels it (a Manami token shows its owner
    as people count players: ``p0`` is player 1's)."""
    return piece_style(game, piece).label


def ghosts_of(marks: Sequence[Mapping[str, object]] | None) -> Counter[tuple[str, str]]:
    """(cell, piece) of every piece the position has but the board lacks: each ``place`` fix,
    and the far end of each ``move`` fix. The picture draws them as outlines."""
    out: Counter[tuple[str, str]] = Counter()
    for mark in marks or ():
        kind, piece = mark.get("kind"), str(mark.get("piece"))
        if kind == "place":
            out[str(mark.get("cell")), piece] += 1
        elif kind == "move" and mark.get("to") is not None:
            out[str(mark.get("to")), piece] += 1
    return out


def marked_cells(marks: Sequence[Mapping[str, object]] | None) -> set[str]:
    """Every cell a fix names (where to take from and where to put): a wrong move's cells."""
    return {str(c) for mark in marks or () for c in (mark.get("cell"), mark.get("to"))
            if c is not None}


def value_label(value: int) -> str:
    return f"+{value}" if value > 0 else ("\u2212" + str(-value) if value < 0 else "0")


def board_svg(game: str, view: Mapping[str, Sequence[str]] | None,
              highlight: Sequence[str] = (), geometry: Geometry | None = None,
              marks: Sequence[Mapping[str, object]] | None = None,
              values: Mapping[str, int] | None = None) -> str:
    """An ``<svg>`` element of ``game``'s board with ``view``'s pieces on it.

    ``geometry``: the station's own board file when it is not the shipped one for ``game``.
    ``marks``: the station's guidance as fixes (kind, piece, cell, to: the snapshot's
    ``marks``): their cells are outlined in red, and the pieces still to put on the board
    (set-up, or the far end of a wrong move) are drawn as dashed outlines, not solid.
    ``values``: a number per cell (Manami's village values), drawn in the cell's corner.
    """
    if geometry is None or geometry.game != game:
        geometry = geometry_of(game)
    if geometry is None:
        return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 20" role="img">'
                f'<text x="2" y="12" font-size="8">{escape(game)}: no board picture</text></svg>')
    view = view or {}
    values = values or {}
    width, height = geometry.size_mm
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:g} {height:g}" '
           f'class="board" role="img" aria-label="{escape(geometry.title)}">',
           f'<rect x="0" y="0" width="{width:g}" height="{height:g}" rx="6" fill="#f5e6c8"/>']
    marked = set(highlight) | marked_cells(marks)
    ghosts = ghosts_of(marks)
    for cell in geometry.cells:
        cx, cy = cell.center_mm
        w, h = cell.size_mm
        x, y = cx - w / 2, cy - h / 2
        pieces = list(view.get(cell.name, ()))
        here = cell.name in marked
        cls = ' class="marked"' if here else ""
        if cell.kind == "edge":
            ghost = bool(pieces) and any(ghosts[cell.name, p] for p in pieces)
            fill = "none" if ghost or not pieces else "#222"
            stroke = "#c62828" if here else "#8a6d3b"
            dash = ' stroke-dasharray="1.5 1"' if ghost else ""
            out.append(f'<circle cx="{cx:g}" cy="{cy:g}" r="{w / 2:g}" fill="{fill}" '
                       f'stroke="{stroke}" stroke-width="{1.6 if here else 0.8}"{dash} '
                       f'data-cell="{escape(cell.name)}"{cls}>'
                       f'<title>{escape(cell.name)}{": shaman" if pieces else ""}'
                       f'{" (to place)" if ghost else ""}</title></circle>')
            continue
        stroke, fill, wide = ("#c62828", "#fde0dc", 2.4) if here else ("#8a6d3b", "#fffaf0", 1.2)
        dash = ' stroke-dasharray="4 3"' if cell.kind == "pad" else ""
        out.append(f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="3" '
                   f'fill="{fill}" stroke="{stroke}" stroke-width="{wide:g}"{dash} '
                   f'data-cell="{escape(cell.name)}"{cls}/>')
        out.append(f'<text x="{x + 2:g}" y="{y + 6:g}" font-size="5" fill="#8a6d3b">'
                   f'{escape(cell.name)}</text>')
        value = values.get(cell.name)
        if isinstance(value, int):
            out.append(f'<text x="{x + w - 2:g}" y="{y + 7:g}" font-size="7" '
                       f'font-weight="bold" text-anchor="end" fill="#5d4037" '
                       f'class="value" data-cell="{escape(cell.name)}">'
                       f'{escape(value_label(value))}</text>')
        if not pieces:
            continue
        slot = min(9.0, (h - 8) / len(pieces))
        missing = [False] * len(pieces)
        for i in reversed(range(len(pieces))):  # the top ones are the last put on
            if ghosts[cell.name, pieces[i]]:
                ghosts[cell.name, pieces[i]] -= 1
                missing[i] = True
        for i, piece in enumerate(pieces):
            py = y + h - 2 - slot * (i + 1)
            colour = piece_colour(game, piece)
            font = min(6.0, slot - 1.5)
            if missing[i]:
                out.append(f'<rect x="{x + 3.4:g}" y="{py + 0.4:.2f}" width="{w - 6.8:g}" '
                           f'height="{slot - 1.6:.2f}" rx="1.5" fill="#fff" fill-opacity="0.6" '
                           f'stroke="{colour}" stroke-width="0.8" stroke-dasharray="2 1.2" '
                           f'class="ghost"><title>{escape(piece_label(game, piece))}: to '
                           f'place</title></rect>')
            else:
                out.append(f'<rect x="{x + 3:g}" y="{py:.2f}" width="{w - 6:g}" '
                           f'height="{slot - 0.8:.2f}" rx="1.5" fill="{colour}" class="piece"/>')
            out.append(f'<text x="{cx:g}" y="{py + slot / 2 + font / 3:.2f}" '
                       f'font-size="{font:.2f}" text-anchor="middle" '
                       f'fill="{colour if missing[i] else "#fff"}">'
                       f'{escape(piece_label(game, piece))}</text>')
    out.append("</svg>")
    return "".join(out)
