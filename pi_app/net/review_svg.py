"""The review after a game as pictures (issue 34): SVG charts of the evaluation and the score
over the game, and each named move's position with the better move drawn.

Drawn from the review's JSON (:meth:`pi_app.bots.review.Review.to_json`), so the page, the
dashboard and ``tikiboard review`` draw the same pictures from what the station stores; plain
SVG text with every word escaped, no script, no build step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from pi_app.net.svg import PLAYER_COLOURS, board_svg, geometry_of

#: The chart's size in its own units (the page scales it to its width).
WIDTH, HEIGHT = 320.0, 160.0
_LEFT, _RIGHT, _TOP, _BOTTOM = 34.0, 8.0, 14.0, 22.0


def _names(names: Sequence[str], players: int) -> list[str]:
    given = [str(n) for n in names[:players]]
    return given + [f"Player {i + 1}" for i in range(len(given), players)]


def _frame(title: str, low: float, high: float, moves: int, ticks: Sequence[float],
           label: str) -> list[str]:
    """The chart's box, axes, grid lines at ``ticks`` and the move axis."""
    w, h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH:g} {HEIGHT:g}" '
           f'class="chart" role="img" aria-label="{escape(title)}">',
           f'<rect x="0" y="0" width="{WIDTH:g}" height="{HEIGHT:g}" fill="#fffaf0"/>',
           f'<text x="{_LEFT:g}" y="10" font-size="8" fill="#333">{escape(title)}</text>']
    span = (high - low) or 1.0
    for tick in ticks:
        y = _TOP + h * (1 - (tick - low) / span)
        out.append(f'<line x1="{_LEFT:g}" y1="{y:.1f}" x2="{_LEFT + w:g}" y2="{y:.1f}" '
                   'stroke="#ddd" stroke-width="0.5"/>')
        out.append(f'<text x="{_LEFT - 3:g}" y="{y + 2.5:.1f}" font-size="7" '
                   f'text-anchor="end" fill="#555">{tick:g}</text>')
    out.append(f'<line x1="{_LEFT:g}" y1="{_TOP + h:g}" x2="{_LEFT + w:g}" y2="{_TOP + h:g}" '
               'stroke="#555" stroke-width="0.6"/>')
    out.append(f'<text x="{_LEFT + w:g}" y="{HEIGHT - 4:g}" font-size="7" '
               f'text-anchor="end" fill="#555">{escape(label)} (1 to {moves})</text>')
    return out


def _x(move: int, moves: int) -> float:
    return _LEFT + (WIDTH - _LEFT - _RIGHT) * (move / max(moves, 1))


def _y(value: float, low: float, high: float) -> float:
    h = HEIGHT - _TOP - _BOTTOM
    return _TOP + h * (1 - (value - low) / ((high - low) or 1.0))


def _line(points: Sequence[tuple[float, float]], colour: str, name: str) -> str:
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return (f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.4" '
            f'class="series"><title>{escape(name)}</title></polyline>')


def evaluation_svg(review: Mapping[str, Any], names: Sequence[str] = ()) -> str:
    """Each player's share by the evaluation after every move (0.5: even), one line per
    player, the named moves marked on their player's line."""
    curve = [p for p in review.get("curve") or [] if isinstance(p, dict)]
    players = len(curve[0]["values"]) if curve else 2
    who = _names(names, players)
    moves = curve[-1]["move"] if curve else 0
    out = _frame("Evaluation after each move (0.5: even)", 0.0, 1.0, moves,
                 (0.0, 0.25, 0.5, 0.75, 1.0), "move")
    for p in range(players):
        points = [(_x(0, moves), _y(0.5, 0, 1))] + [
            (_x(pt["move"], moves), _y(pt["values"][p], 0, 1)) for pt in curve]
        out.append(_line(points, PLAYER_COLOURS[p % len(PLAYER_COLOURS)], who[p]))
    at = {pt["move"]: pt for pt in curve}
    for slip in review.get("slips") or []:
        point = at.get(slip.get("move"))
        if point is None:
            continue
        p = int(slip["player"])
        x, y = _x(point["move"], moves), _y(point["values"][p], 0, 1)
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.6" fill="none" '
                   f'stroke="{PLAYER_COLOURS[p % len(PLAYER_COLOURS)]}" stroke-width="1" '
                   f'class="slip"><title>{escape(who[p])}, move {slip["move"]}: '
                   f'{escape(str(slip["text"]))} (better: {escape(str(slip["better"]))})'
                   '</title></circle>')
    out += _legend(who)
    out.append("</svg>")
    return "".join(out)


def scores_svg(review: Mapping[str, Any], names: Sequence[str] = ()) -> str | None:
    """Each player's score after every move (Topple's totals as the rounds end, Manami's
    fruit); None for a game whose score only changes at the end (TacTiki)."""
    curve = [p for p in review.get("curve") or [] if isinstance(p, dict)]
    if not curve or all(p["scores"] == curve[0]["scores"] for p in curve[:-1]):
        return None  # it changed at the last move at most: the result says it all
    players = len(curve[0]["scores"])
    who = _names(names, players)
    moves = curve[-1]["move"]
    high = max(1, *(max(p["scores"]) for p in curve))
    step = max(1, round(high / 4))
    out = _frame("Score after each move", 0.0, float(high), moves,
                 [float(v) for v in range(0, high + 1, step)], "move")
    for p in range(players):
        points = [(_x(0, moves), _y(0, 0, high))] + [
            (_x(pt["move"], moves), _y(pt["scores"][p], 0, high)) for pt in curve]
        out.append(_line(points, PLAYER_COLOURS[p % len(PLAYER_COLOURS)], who[p]))
    out += _legend(who)
    out.append("</svg>")
    return "".join(out)


def _legend(who: Sequence[str]) -> list[str]:
    """The players' colours along the bottom, left of the move axis's words."""
    out = []
    y = HEIGHT - 4
    for p, name in enumerate(who):
        x = 4 + 52 * p
        colour = PLAYER_COLOURS[p % len(PLAYER_COLOURS)]
        out.append(f'<rect x="{x:g}" y="{y - 4:g}" width="8" height="3" fill="{colour}"/>'
                   f'<text x="{x + 10:g}" y="{y:g}" font-size="7" fill="#333">'
                   f'{escape(name[:10])}</text>')
    return out


def slip_svg(game: str, slip: Mapping[str, Any]) -> str:
    """The position before a named move, the better move's cells outlined and an arrow from
    the cell it takes a piece from to the cell it puts one on."""
    view = {str(c): [str(p) for p in pieces] for c, pieces in (slip.get("before") or {}).items()}
    lift = [str(c) for c in slip.get("lift") or []]
    put = [str(c) for c in slip.get("put") or []]
    picture = board_svg(game, view, highlight=lift + put)
    geometry = geometry_of(game)
    if geometry is None or not put:
        return picture
    centre = {cell.name: cell.center_mm for cell in geometry.cells}
    arrows = ['<defs><marker id="better-head" viewBox="0 0 10 10" refX="8" refY="5" '
              'markerWidth="5" markerHeight="5" orient="auto-start-reverse">'
              '<path d="M0,0 L10,5 L0,10 z" fill="#1b5e20"/></marker></defs>']
    starts = [centre[c] for c in lift if c in centre]
    for cell in put:
        if cell not in centre:
            continue
        x2, y2 = centre[cell]
        if starts:
            x1, y1 = starts[0]
            arrows.append(f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" '
                          'stroke="#1b5e20" stroke-width="2.2" stroke-opacity="0.8" '
                          'marker-end="url(#better-head)" class="better"/>')
        else:
            arrows.append(f'<circle cx="{x2:g}" cy="{y2:g}" r="7" fill="none" stroke="#1b5e20" '
                          'stroke-width="2" class="better"/>')
    return picture[:-len("</svg>")] + "".join(arrows) + "</svg>"
