"""The spectators' page (``/watch``): every board of the event, read-only, optionally late.

Chess broadcasts show the games some minutes late so that nobody in the hall can relay a
position to a player and send back a move; this page does the same with a delay the referee
sets (``spectator_delay`` in ``referee.toml``, seconds; 0: live). It holds no secret of its own:
each row is built only from what the desk already gives anyone without a login (the overview's
fields and the moves of :func:`pi_app.net.redact.public_snapshot`), so a hidden fact (TacTiki's
ranks, Topple's secret cards) is as absent here as on the public overview, and while the game
is on the delay changes only *when* a public fact is shown, never *which*.

:class:`Broadcast` keeps, per board, the public rows recorded in the last ``delay`` seconds
plus the newest one older than that, and shows each board as it was ``delay`` seconds ago. A
board first heard less than ``delay`` seconds ago is not shown yet. Nothing is written to disk:
after a restart the page is blank for ``delay`` seconds, which errs on the late side.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Mapping, Sequence
from html import escape

from pi_app.i18n import N_, translator
from pi_app.json_types import JSON

#: The overview's fields a spectator row keeps (all public, ``Desk.summary(full=False)``).
ROW_FIELDS = ("board", "round", "table", "status", "title", "game", "players", "scores",
              "to_move", "winners", "moves", "last_move")
#: How many of the latest public moves a row lists.
MOVES_SHOWN = 12
#: How often the page reloads itself (seconds): a meta refresh, no script.
REFRESH_S = 5


def public_row(summary: Mapping[str, object], moves: Sequence[str]) -> JSON:
    """A spectator's row from an overview summary made *without* a login and the public
    moves: only :data:`ROW_FIELDS`, the last result's words, the latest moves."""
    row: JSON = {key: summary.get(key) for key in ROW_FIELDS}
    last = summary.get("last_result")
    row["result"] = last.get("text", "") if isinstance(last, dict) else ""
    row["moves_list"] = [str(m) for m in list(moves)[-MOVES_SHOWN:]]
    return row


class Broadcast:
    """Each board's public row as it was ``delay`` seconds ago."""

    def __init__(self, delay: float = 0.0, clock: Callable[[], float] = time.time) -> None:
        if delay < 0:
            raise ValueError("spectator_delay: seconds, 0 or more")
        self.delay = float(delay)
        self.clock = clock
        self._rows: dict[str, collections.deque[tuple[float, JSON]]] = {}

    def record(self, board: str, row: JSON, now: float | None = None) -> None:
        """Keep ``row`` as ``board``'s from ``now`` on; drop what no view needs any more
        (every row but the newest one at least ``delay`` old)."""
        now = self.clock() if now is None else now
        kept = self._rows.setdefault(board, collections.deque())
        kept.append((now, row))
        cut = now - self.delay
        while len(kept) > 1 and kept[1][0] <= cut:
            kept.popleft()

    def rows(self, now: float | None = None) -> list[JSON]:
        """Every board shown now, in board order: its newest row at least ``delay`` old."""
        cut = (self.clock() if now is None else now) - self.delay
        out = []
        for board in sorted(self._rows):
            shown = [row for at, row in self._rows[board] if at <= cut]
            if shown:
                out.append(shown[-1])
        return out


WATCH_HTML = """<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="{refresh}">
<title>{title}</title><link rel="stylesheet" href="/static/site.css"></head>
<body><header><h1>{event}</h1><span id="delay">{delay}</span>
<a href="/tournament" id="standings-link">{standings}</a></header>
<main><section id="watch" class="grid-box">{body}</section></main></body></html>
"""


def watch_html(event: str, rows: Sequence[JSON], delay: float, lang: str = "en") -> str:
    """The spectators' page in ``lang``: a card per board (round and table, players and
    scores, the latest public moves, the result). Every value escaped; no script, no form."""
    _ = translator(lang).gettext
    said = (_("shown {minutes} min late").format(minutes=round(delay / 60, 1))
            if delay else _("live"))
    cards = []
    for row in rows:
        where = ""
        if row.get("round") is not None:
            where = _("round {round}, table {table}").format(round=row["round"],
                                                              table=row["table"])
        players = row.get("players") or []
        scores = row.get("scores") or []
        line = " \u2013 ".join(
            f"{name} {scores[i]}" if i < len(scores) else str(name)
            for i, name in enumerate(players))
        moves = "".join(f"<li>{escape(str(m))}</li>" for m in row.get("moves_list") or [])
        title = _(str(row.get("title") or "")) if row.get("title") else ""
        cards.append(
            f'<article id="watch-{escape(str(row["board"]), quote=True)}" class="watch">'
            f'<h2>{escape(str(row["board"]))} <small>{escape(where)}</small></h2>'
            f"<p>{escape(title)}</p><p class=\"players\">{escape(line)}</p>"
            f'<ol class="moves">{moves}</ol>'
            f'<p class="result">{escape(str(row.get("result") or ""))}</p></article>')
    spectators = _("spectators")
    if not cards:
        cards.append(f'<p class="muted">{escape(_(NOTHING_YET))}</p>')
    return WATCH_HTML.format(
        lang=escape(lang, quote=True), refresh=REFRESH_S,
        title=escape(f"{event} \u00b7 {spectators}"), event=escape(event),
        delay=escape(said), standings=escape(_("Standings")), body="".join(cards))


NOTHING_YET = N_("No game to show yet (or not yet past the delay).")
