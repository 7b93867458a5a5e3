"""HTML and JavaScript of the dashboard's tournament page (served by :mod:`.tournament_app`).

The page is built on the server, every name escaped (a player may call themselves
``<script>``), so it reads without JavaScript and a test can check it. Its changing part
(``#t-live``) is fetched again when the tournament's version moves (a result came in, another
referee acted), and put in place unless the referee is typing in it. The script is a file
(``/static/tournament.js``): the Content-Security-Policy forbids inline script. Forms post JSON
with the page's CSRF token; people number players and seats from 1, the API counts seats from 0
(as records do), and the script converts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from html import escape

from pi_app.games import get_game
from pi_app.i18n import N_, game_title, translator
from pi_app.net.schema import LocksPayload
from pi_app.tournament.export import number_text, result_text
from pi_app.tournament.model import Game, Pairing, Round, Tournament
from pi_app.tournament.standings import (
    TIEBREAKS_TOPPLE,
    TIEBREAKS_TWO_PLAYER,
    crosstable,
    standings,
)
from pi_app.tournament.store import Confirmation

TIEBREAK_HEADINGS = {"buchholz_cut1": N_("Bh-1"), "buchholz": N_("Bh"),
                     "sonneborn_berger": N_("SB"), "wins": N_("Wins")}
"""The standings' tie-break columns, short (the page says them in its reader's language)."""

Say = Callable[[str], str]
"""A language's ``gettext``: the page's words in its reader's language."""


def _same(text: str) -> str:
    return text


TOURNAMENT_HTML = """<!doctype html>
<html lang="{{lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{{csrf}}">
<title>{{w_tournament}} · {{event}}</title><link rel="stylesheet" href="/static/site.css"></head>
<body data-referee="{{referee}}" data-done="{{w_done}}" data-refused="{{w_refused}}"
 data-away="{{w_away}}" data-late="{{w_late}}">
<header><a href="/">{{event}}</a><h1>{{w_tournament}}</h1>
<nav id="languages" aria-label="{{w_language}}">{{{languages}}}</nav>{{{account}}}</header>
<p id="result" role="status"></p>
<main id="t-live" data-version="{{version}}" data-lang="{{lang}}">{{{body}}}</main>
<script src="/static/tournament.js"></script></body></html>
"""


def page_words(_: Say) -> dict[str, str]:
    """The words of the page's frame and script (the live part says its own)."""
    return {"tournament": _("Tournament"), "language": _("Language"), "done": _("Done."),
            "refused": _("Refused ({status})"),
            "away": _("The dashboard did not answer; try again."),
            "late": _("Go ahead anyway?")}


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _form(action: str, inner: str, form_id: str, extra: str = "") -> str:
    return (f'<form data-action="{_e(action)}" id="{_e(form_id)}"{extra}>{inner}</form>')


def _new_form(event: str, _: Say) -> str:
    options = "".join(f'<option value="{g.value}">{_e(game_title(get_game(g.value).title, _))}'
                      "</option>" for g in Game)
    said = _e(_("Event")), _e(_("Game")), _e(_("Start the tournament"))
    return _form("new", f'<label>{said[0]} <input name="event" value="{_e(event)}" '
                        f'size="20"></label><label>{said[1]} <select name="game" '
                        f'id="new-game">{options}</select></label><button type="submit" '
                        f'id="new-tournament">{said[2]}</button>', "new-form")


def _players(t: Tournament, referee: bool, _: Say) -> str:
    rows = []
    out = _e(_("withdrawn"))
    more = t.planned is None or len(t.rounds) < t.planned
    for number, p in enumerate(t.players, start=1):
        button = ""
        if referee:
            label = _("bring back") if p.withdrawn else _("withdraw")
            button = _form("withdraw",
                           f'<input type="hidden" name="player" value="{_e(p.id)}">'
                           f'<input type="hidden" name="withdrawn" data-type="bool" '
                           f'value="{"false" if p.withdrawn else "true"}">'
                           f'<button type="submit">{_e(label)}</button>', f"withdraw-{p.id}")
            asked = p.id in t.half_byes
            if t.game.two_player and more and not p.withdrawn:
                half = _("cancel the ½-point bye") if asked else _("½-point bye next round")
                button += _form("halfbye",
                                f'<input type="hidden" name="player" value="{_e(p.id)}">'
                                f'<input type="hidden" name="wanted" data-type="bool" '
                                f'value="{"false" if asked else "true"}">'
                                f'<button type="submit" id="halfbye-{number}">{_e(half)}'
                                "</button>", f"halfbye-form-{number}")
        rows.append(f'<tr id="player-{number}"><td>{number}</td><td>{_e(p.name)}</td>'
                    f'<td>{"" if p.rating is None else p.rating}</td>'
                    f'<td>{out if p.withdrawn else ""}</td>'
                    f'{"<td>" + button + "</td>" if referee else ""}</tr>')
    add = ""
    if referee:
        hint, button_text = _("one name a line; Name, 1850 for a rating"), _("Add players")
        add = _form("players", '<textarea name="names" id="new-players" rows="4" cols="24" '
                    f'placeholder="{_e(hint)}"></textarea>'
                    f'<button type="submit" id="add-players">{_e(button_text)}</button>',
                    "players-form")
    heading = _("Players ({count})").format(count=len(t.players))
    heads = "".join(f"<th>{_e(_(h))}</th>" for h in (N_("No"), N_("Name"), N_("Rating")))
    return (f'<section id="players-section"><h2>{_e(heading)}</h2>'
            f'<table id="players"><thead><tr>{heads}<th></th>'
            f'{"<th></th>" if referee else ""}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f'</table>{add}</section>')


def _seats(t: Tournament, pairing: Pairing) -> str:
    return " \u2013 ".join(f"{_e(t.player(pid).name)} ({t.number(pid)})" for pid in pairing.seats)


STATION_TROUBLE = {"offline": N_("offline"), "never": N_("never connected"),
                   "fault": N_("fault")}
"""A board's status (:class:`~pi_app.net.desk.BoardStatus` values) that says its table is not
being played, whatever the pairing says: shown instead of "playing"."""


def _status(pairing: Pairing, _: Say = _same, stations: Mapping[str, str] | None = None) -> str:
    """A table's state; in English (``_`` the identity) it is also the row's ``data-status``
    that scripts and tests read, whatever the page's language. ``stations`` are the boards'
    statuses as the desk sees them: a table whose station went offline says so."""
    if pairing.bye:
        return _("bye")
    result = pairing.result
    if result is None:
        if not pairing.board:
            return _("no board")
        trouble = STATION_TROUBLE.get((stations or {}).get(pairing.board, ""))
        return _(trouble) if trouble else _("playing")
    if not result.confirmed:
        return _("to confirm")
    if result.game_id is None:
        how = N_("confirmed by {referee} (entered by hand)")
    elif result.corrected:
        how = N_("confirmed by {referee} (corrected)")
    else:
        how = N_("confirmed by {referee}")
    return _(how).format(referee=result.confirmed_by)


def _result_cell(t: Tournament, pairing: Pairing, _: Say) -> str:
    result = pairing.result
    if result is None:
        if pairing.bye:
            return "\u00bd " + _("bye") if pairing.half else _("bye")
        return result_text(pairing)
    if result.forfeit:
        came = ", ".join(t.player(pairing.seats[w]).name for w in result.winners)
        said = _("forfeit: {names} came").format(names=came) if came else _(
            "forfeit: neither came")
        return _e(f"{result_text(pairing)}; {said}")
    won = ", ".join(t.player(pairing.seats[w]).name for w in result.winners)
    detail = f" ({' : '.join(str(s) for s in result.scores)})"
    who = _("won: {names}").format(names=won) if won and not result.is_draw(
        len(pairing.seats)) else _("draw")
    game = "" if result.game_id is None else "; " + _("game {number} on {board}").format(
        number=result.game_id, board=result.board)
    return _e(f"{result_text(pairing)} {who}{detail}{game}")


def _result_form(t: Tournament, rnd: Round, pairing: Pairing, hidden: str, _: Say) -> str:
    """A result entered or corrected by hand, made for a phone at the table: a labelled
    number field per seat (the player's name; the reported score filled in), then who won as
    buttons, one per player, and "Draw" (two-player games) or "Shared win" (Topple: the
    leaders on the scores). The button pressed is the ruling, so there is no seat number to
    type and mistype. The form's first button is disabled: Enter in a score field rules
    nothing."""
    key = f"{rnd.number}-{pairing.table}"
    result = pairing.result
    fields = []
    for seat, pid in enumerate(pairing.seats):
        name = t.player(pid).name
        value = "" if result is None else str(result.scores[seat])
        fields.append(f'<label class="score"><span>{_e(name)}</span> <input type="number" '
                      f'name="score-{seat}" data-type="score" data-seat="{seat}" min="0" '
                      f'step="1" inputmode="numeric" required value="{value}"></label>')
    ruled = None if result is None else tuple(result.winners)
    buttons = []
    for seat, pid in enumerate(pairing.seats):
        won = _("{name} won").format(name=t.player(pid).name)
        pressed = "true" if ruled == (seat,) else "false"
        buttons.append(f'<button type="submit" id="win-{key}-{seat + 1}" data-winners="{seat}" '
                       f'aria-pressed="{pressed}">{_e(won)}</button>')
    if len(pairing.seats) == 2:
        pressed = "true" if ruled is not None and len(ruled) != 1 else "false"
        draw = _("Draw")
        buttons.append(f'<button type="submit" id="draw-{key}" data-winners="" '
                       f'aria-pressed="{pressed}">{_e(draw)}</button>')
    else:
        pressed = "true" if ruled is not None and len(ruled) > 1 else "false"
        shared = _("Shared win")
        buttons.append(f'<button type="submit" id="shared-{key}" data-winners="leaders" '
                       f'aria-pressed="{pressed}">{_e(shared)}</button>')
    title = _("Correct the result") if result else _("Enter the result")
    return _form("confirm", hidden + '<button type="submit" disabled hidden></button>'
                 f'<fieldset><legend>{_e(title)}</legend>'
                 f'<div class="scores">{"".join(fields)}</div>'
                 f'<div class="winners">{"".join(buttons)}</div></fieldset>',
                 f"correct-form-{key}", ' class="result-form"')


def _actions(t: Tournament, rnd: Round, pairing: Pairing, _: Say) -> str:
    if pairing.bye:
        return ""
    key = f"{rnd.number}-{pairing.table}"
    hidden = (f'<input type="hidden" name="round" data-type="int" value="{rnd.number}">'
              f'<input type="hidden" name="table" data-type="int" value="{pairing.table}">')
    out = ""
    result = pairing.result
    if result is not None and not result.confirmed:
        confirm = _e(_("Confirm"))
        out += _form("confirm", hidden + f'<button type="submit" id="confirm-{key}">'
                     f'{confirm}</button>', f"confirm-form-{key}")
    if result is not None and result.confirmed:
        back = _e(_("Take back"))
        out += _form("unconfirm", hidden + f'<button type="submit" id="unconfirm-{key}">'
                     f'{back}</button>', f"unconfirm-form-{key}")
    seats = len(pairing.seats)
    out += _result_form(t, rnd, pairing, hidden, _)
    if seats == 2:
        came, neither, forfeit = _("seat {number} came"), _("neither came"), _("Forfeit")
        options = "".join(f'<option value="{n}">{_e(came.format(number=n))}</option>'
                          for n in (1, 2))
        options += f'<option value="">{_e(neither)}</option>'
        out += _form("confirm", hidden + '<input type="hidden" name="forfeit" data-type="bool" '
                     f'value="true"><select name="winners" data-type="seats">{options}</select>'
                     f'<button type="submit" id="forfeit-{key}">{_e(forfeit)}</button>',
                     f"forfeit-form-{key}")
    return out


def _assign(rnd: Round, boards: Sequence[str], _: Say) -> str:
    """The current round's boards: a list per table, free boards suggested in order."""
    tables = [p for p in rnd.pairings if not p.bye]
    taken = {p.board for p in tables if p.board}
    free = iter([b for b in boards if b not in taken])
    rows = []
    none, assign = _e(_("(none)")), _e(_("Assign boards"))
    for p in tables:
        chosen = p.board or next(free, "")
        options = [f'<option value="">{none}</option>']
        options += [f'<option value="{_e(b)}"{" selected" if b == chosen else ""}>{_e(b)}'
                    "</option>" for b in boards]
        label = _("Table {number}").format(number=p.table)
        rows.append(f'<label>{_e(label)} <select name="table-{p.table}" '
                    f'data-table="{p.table}">{"".join(options)}</select></label>')
    inner = (f'<input type="hidden" name="round" data-type="int" value="{rnd.number}">'
             + "".join(rows) + f'<button type="submit" id="assign">{assign}</button>')
    return _form("boards", inner, f"assign-{rnd.number}")


def _round(t: Tournament, rnd: Round, boards: Sequence[str], referee: bool,
           current: bool, _: Say, stations: Mapping[str, str] | None = None) -> str:
    rows = []
    for p in rnd.pairings:
        # only the current round's tables are being played: an old round's board has moved on
        live = stations if current else None
        rows.append(f'<tr id="table-{rnd.number}-{p.table}" '
                    f'data-status="{_e(_status(p, stations=live))}">'
                    f"<td>{p.table}</td><td>{_seats(t, p)}</td><td>{_e(p.board or '')}</td>"
                    f"<td>{_result_cell(t, p, _)}</td><td>{_e(_status(p, _, live))}</td>"
                    f'{"<td>" + _actions(t, rnd, p, _) + "</td>" if referee else ""}</tr>')
    assign = _assign(rnd, boards, _) if referee and current and not rnd.done else ""
    heads = "".join(f"<th>{_e(_(h))}</th>" for h in (
        N_("Table"), N_("Seats (first moves first)"), N_("Board"), N_("Result"), N_("Status")))
    title = _("Round {number}").format(number=rnd.number)
    return (f'<section id="round-{rnd.number}" class="round"><h2>{_e(title)}</h2>'
            f'<div class="scroll"><table><thead><tr>{heads}'
            f'{"<th></th>" if referee else ""}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f"</table></div>{assign}</section>")


def _standings(t: Tournament, _: Say) -> str:
    names = TIEBREAKS_TWO_PLAYER if t.game.two_player else TIEBREAKS_TOPPLE
    extra = [n for n in names if n != "wins"]
    # On a phone (pages.CSS) the columns marked "wide" are left out: rank, name, points, the
    # first tie-break, wins and "withdrawn" fit 390 px; the rest is in the crosstable too.
    wide = ' class="wide"'
    head = "".join(f"<th{wide if i else ''}>{_e(_(TIEBREAK_HEADINGS[n]))}</th>"
                   for i, n in enumerate(extra))
    rows = []
    for line in standings(t):
        cells = "".join(f"<td{wide if i else ''}>{number_text(getattr(line, n))}</td>"
                        for i, n in enumerate(extra))
        rows.append(f'<tr id="standing-{line.number}"><td>{line.rank}</td><td{wide}>'
                    f"{line.number}</td><td>{_e(line.name)}</td>"
                    f"<td>{number_text(line.points)}</td>{cells}<td>{line.wins}</td>"
                    f"<td{wide}>{line.draws}</td><td{wide}>{line.losses}</td>"
                    f"<td{wide}>{line.games}</td>"
                    f"<td>{_e(_('withdrawn')) if line.withdrawn else ''}</td></tr>")
    first = "".join(f"<th{wide if h == 'No' else ''}>{_e(_(h))}</th>"
                    for h in (N_("Rank"), N_("No"), N_("Name"), N_("Points")))
    # W, D, L: won, drawn, lost (each language's own initials)
    last = "".join(f"<th{'' if h == 'W' else wide}>{_e(_(h))}</th>"
                   for h in (N_("W"), N_("D"), N_("L"), N_("Games")))
    heading = _e(_("Final standings") if t.finished else _("Standings"))
    return (f'<section id="standings-section"><h2>{heading}</h2>'
            f'<div class="scroll"><table id="standings"><thead><tr>{first}{head}{last}'
            f'<th></th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            '<p><a href="/tournament/standings.csv" id="standings-csv" download>standings.csv</a>'
            ' <a href="/tournament/pairings.csv" id="pairings-csv" download>pairings.csv</a>'
            "</p></section>")


def _crosstable(t: Tournament, _: Say) -> str:
    """Every player's games round by round, in standings order."""
    if not t.rounds:
        return ""
    cells = crosstable(t)
    rows = []
    for line in standings(t):
        games = "".join(f"<td>{_e(c)}</td>" for c in cells[line.player_id])
        rows.append(f'<tr id="cross-{line.number}"><td>{line.rank}</td><td>{line.number}</td>'
                    f"<td>{_e(line.name)}</td>{games}<td>{number_text(line.points)}</td></tr>")
    rounds = "".join(f"<th>{rnd.number}</th>" for rnd in t.rounds)
    first = "".join(f"<th>{_e(_(h))}</th>" for h in (N_("Rank"), N_("No"), N_("Name")))
    if t.game.two_player:
        key = _("W, D, L: won, drawn, lost against that number; +, -: a forfeit won or lost")
    else:
        key = _("the table's points; * a win")
    heading, points = _e(_("Crosstable")), _e(_("Points"))
    return (f'<section id="crosstable-section"><h2>{heading}</h2><div class="scroll">'
            f'<table id="crosstable"><thead><tr>{first}{rounds}<th>{points}</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            f'<p class="key">{_e(key)}</p></section>')


def _clock(t: Tournament, referee: bool, now: float, _: Say) -> str:
    """The current round's clock: what is left (the script counts it down), and the referee's
    form to start it. At time nothing happens by itself: the referee rules the tables still
    playing, and each ruling is logged with its time (marked "after time" under Rulings)."""
    rnd = t.current
    if rnd is None or t.finished:
        return ""
    ends = rnd.ends
    up = _("time is up: the referee rules the tables still playing")
    left_word = _("{time} left")
    shown = ""
    if ends is not None:
        left = max(0, int(ends - now))
        text = up if left == 0 else left_word.format(time=f"{left // 60}:{left % 60:02d}")
        title = _("Round clock")
        shown = (f'<p id="round-clock" data-left="{left}" data-word="{_e(left_word)}" '
                 f'data-up="{_e(up)}">{_e(title)}: <span id="clock-left">'
                 f"{_e(text)}</span></p>")
    form = ""
    if referee:
        minutes = "" if rnd.minutes is None else str(rnd.minutes)
        label, button = _e(_("minutes")), _e(_("Start the round clock"))
        form = _form("clock", f'<input type="hidden" name="round" data-type="int" '
                              f'value="{rnd.number}"><label>{label} <input name="minutes" '
                              f'data-type="int" type="number" min="1" max="600" size="4" '
                              f'value="{minutes}" id="clock-minutes"></label><button '
                              f'type="submit" id="clock-start">{button}</button>', "clock-form")
    return shown + form


def _plan_form(t: Tournament, _: Say) -> str:
    """The referee says how many rounds the event has."""
    value = "" if t.planned is None else str(t.planned)
    label, button = _e(_("Rounds")), _e(_("Plan rounds"))
    return _form("rounds", f'<label>{label} <input name="rounds" data-type="int" type="number" '
                           f'min="{max(1, len(t.rounds))}" max="60" size="3" value="{value}" '
                           f'id="planned-rounds"></label><button type="submit" '
                           f'id="plan-rounds">{button}</button>', "plan-form")


def _hints(locks: LocksPayload, referee: bool, _: Say) -> str:
    """Whether the stations give hints, and the referee's switch (every station of the event
    reads it from the broker, ``tiki/EVENT/locks``)."""
    if locks.hints:
        said = _("Hints at the tables: allowed")
    else:
        said = _("Hints at the tables: locked by {referee}").format(referee=locks.by or "?")
    button = ""
    if referee:
        label = _("Allow hints") if not locks.hints else _("Lock hints")
        button = _form("hints", '<input type="hidden" name="locked" data-type="bool" '
                                f'value="{"false" if not locks.hints else "true"}">'
                                f'<button type="submit" id="hints-switch">{_e(label)}</button>',
                       "hints-form")
    return f'<section id="hints"><p id="hints-state">{_e(said)}</p>{button}</section>'


HISTORY_SHOWN = 100
"""How many rulings the page lists, newest first (the store keeps every one)."""


def _history(t: Tournament, history: Sequence[Confirmation], _: Say) -> str:
    """The audit trail: every confirmation and every one taken back, newest first, so a
    disputed result can be traced to who ruled what and when (and whether after the round's
    time was up)."""
    if not history:
        return ""
    ends = {rnd.number: rnd.ends for rnd in t.rounds}
    rows = []
    for c in list(reversed(history))[:HISTORY_SHOWN]:
        late = ends.get(c.round)
        after = " (" + _("after time") + ")" if late is not None and c.t > late else ""
        when = time.strftime("%H:%M:%S", time.localtime(c.t))
        if c.action == "unconfirm":
            what = _("taken back")
        elif c.action == "forfeit":
            what = _("forfeit")
        elif c.corrected:
            what = _("confirmed (corrected)")
        else:
            what = _("confirmed")
        winners = " ".join(str(w + 1) for w in c.winners) or _("draw")
        scores = " : ".join(str(s) for s in c.scores)
        rows.append(f'<tr data-action="{_e(c.action)}"><td>{_e(when)}</td><td>{c.round}</td>'
                    f"<td>{c.table}</td><td>{_e(c.referee)}</td><td>{_e(what + after)}</td>"
                    f"<td>{_e(scores)}</td><td>{_e(winners)}</td></tr>")
    heads = "".join(f"<th>{_e(_(h))}</th>" for h in (
        N_("Time"), N_("Round"), N_("Table"), N_("Referee"), N_("Ruling"), N_("Scores"),
        N_("Winning seats")))
    heading = _e(_("Rulings"))
    return (f'<section id="history-section"><h2>{heading}</h2><div class="scroll">'
            f'<table id="history"><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></div></section>")


def live_html(t: Tournament | None, *, boards: Sequence[str], notices: Sequence[str],
              referee: bool, event: str, lang: str = "en",
              locks: LocksPayload | None = None,
              history: Sequence[Confirmation] = (),
              stations: Mapping[str, str] | None = None, now: float | None = None) -> str:
    """The page's changing part: everything below the header, in ``lang``; ``history`` is the
    store's audit trail (oldest first); ``stations`` each board's status from the desk."""
    _ = translator(lang).gettext
    hints = _hints(locks or LocksPayload(), referee, _)
    if t is None:
        inner = _new_form(event, _) if referee else ""
        heading = _e(_("No tournament yet"))
        return f'<section id="no-tournament"><h2>{heading}</h2>{inner}</section>' + hints
    current = t.current
    pair = ""
    last = t.planned is not None and len(t.rounds) >= t.planned
    if referee and not last:
        label = _("Pair round {number}").format(number=len(t.rounds) + 1)
        pair = _form("pair", f'<button type="submit" id="pair">{_e(label)}</button>',
                     "pair-form")
    if referee and not t.finished:
        pair += _plan_form(t, _)
    rounds = "".join(_round(t, rnd, boards, referee, rnd is current, _, stations)
                     for rnd in reversed(t.rounds))
    notes = ""
    if notices and referee:
        heading = _e(_("Station reports not taken"))
        notes = (f'<section id="notices-section"><h2>{heading}</h2>'
                 f'<ul id="notices">{"".join(f"<li>{_e(n)}</li>" for n in notices)}</ul>'
                 "</section>")
    every = _e(_("every game's record (JSON)"))
    records = (f'<p><a href="/tournament/records.json" id="records" download>{every}</a></p>'
               if referee else "")
    printed = _e(_("Print view: pairings, table cards, standings"))
    records += f'<p><a href="/tournament/print" id="print-link">{printed}</a></p>'
    players = _("{count} players").format(count=len(t.players))
    shown = f'<span id="round-number">{len(t.rounds)}</span>'
    if not t.rounds:
        round_word = _e(_("not started"))
    elif t.planned is not None:
        round_word = _e(_("round {number} of {planned}")).format(
            number=shown, planned=t.planned)
    else:
        round_word = _e(_("round {number}")).format(number=shown)
    title = (f'<section id="summary"><h2 id="event-name">{_e(t.event)}</h2>'
             f"<p>{_e(game_title(get_game(t.game.value).title, _))} \u00b7 {_e(players)} \u00b7 "
             f"{round_word}</p>{pair}"
             f"{_clock(t, referee, time.time() if now is None else now, _)}{records}</section>")
    return (title + hints + notes + _standings(t, _) + _crosstable(t, _) + rounds
            + _history(t, history, _) + _players(t, referee, _))


PRINT_CSS = """
body{font-family:system-ui,sans-serif;margin:1em;color:#000;background:#fff}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.2em .6em;border:1px solid #999;
text-align:left}.cards{display:flex;flex-wrap:wrap;gap:.6em}
.card{border:2px solid #000;padding:.6em 1em;width:16em;break-inside:avoid}
.card h3{margin:0 0 .3em}.card p{font-size:1.3em;margin:.15em 0}
section{break-after:page}@media print{nav{display:none}}
"""
"""The print view's own style, served as ``/static/print.css`` (the Content-Security-Policy
allows no inline style)."""


def print_html(t: Tournament, event: str, round_number: int | None, lang: str = "en") -> str:
    """Pairings, table cards and standings for paper: the round's tables with boards and
    names in seat order, one card a table to put on it, and the standings (final once the
    last planned round is confirmed). Everything escaped; no script, no forms."""
    _ = translator(lang).gettext
    rnd = t.current if round_number is None else next(
        (r for r in t.rounds if r.number == round_number), None)
    parts = [f"<h1>{_e(t.event)}</h1>"]
    if rnd is not None:
        title = _e(_("Round {number}").format(number=rnd.number))
        heads = "".join(f"<th>{_e(_(h))}</th>" for h in (
            N_("Table"), N_("Board"), N_("Seats (first moves first)"), N_("Result")))
        rows = "".join(
            f"<tr><td>{p.table}</td><td>{_e(p.board or '')}</td><td>{_seats(t, p)}</td>"
            f"<td>{_e(result_text(p))}</td></tr>" for p in rnd.pairings)
        parts.append(f'<section id="print-pairings"><h2>{title}</h2><table><thead><tr>{heads}'
                     f"</tr></thead><tbody>{rows}</tbody></table></section>")
        cards = []
        for p in rnd.pairings:
            if p.bye:
                continue
            label = _e(_("Table {number}").format(number=p.table))
            names = "".join(f"<p>{n}. {_e(t.player(pid).name)}</p>"
                            for n, pid in enumerate(p.seats, start=1))
            board = " \u00b7 " + _e(p.board) if p.board else ""
            cards.append(f'<div class="card"><h3>{title} \u00b7 {label}{board}</h3>{names}'
                         "</div>")
        heading = _e(_("Table cards"))
        parts.append(f'<section id="print-cards"><h2>{heading}</h2><div class="cards">'
                     f'{"".join(cards)}</div></section>')
    parts.append(_standings(t, _).replace('<div class="scroll">', "<div>"))
    printed = _("Print")
    return (f'<!doctype html><html lang="{_e(lang)}"><head><meta charset="utf-8">'
            f"<title>{_e(printed)} \u00b7 {_e(event)}</title>"
            '<link rel="stylesheet" href="/static/print.css">'
            f"</head><body>{''.join(parts)}</body></html>")


TOURNAMENT_JS = r"""
"use strict";
const csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
const live = document.getElementById("t-live");
// The referee is filling a form: do not replace it under their hands (for 20 s at most).
let typedAt = 0;
function say(text) { document.getElementById("result").textContent = text; }
// The page's words in its reader's language, from the server (the script is one file).
const words = document.body.dataset;
const LANG = encodeURIComponent(live.dataset.lang || "en");
function numbers(text) {
  return String(text).split(/[\s,;]+/).filter((w) => w !== "").map(Number);
}
function collect(form) {
  const body = {};
  for (const field of form.elements) {
    if (!field.name) continue;
    const type = field.dataset.type;
    if (field.dataset.table) {
      body.tables = body.tables || {};
      body.tables[field.dataset.table] = field.value;
      continue;
    }
    if (type === "int") body[field.name] = Number(field.value);
    else if (type === "bool") body[field.name] = field.value === "true";
    else if (type === "score") {
      // One field per seat; all empty: no scores (a ruling on the reported ones).
      if (field.value.trim() !== "") {
        body.scores = body.scores || [];
        body.scores[Number(field.dataset.seat)] = Number(field.value);
      }
    } else if (type === "ints") {
      if (field.value.trim() !== "") body[field.name] = numbers(field.value);
    } else if (type === "seats") {
      // People count seats from 1; the API from 0. A correction with scores but no winners
      // is a draw.
      const given = numbers(field.value).map((n) => n - 1);
      if (field.value.trim() !== "" || body.scores) body[field.name] = given;
    } else body[field.name] = field.value;
  }
  return body;
}
async function refresh(force) {
  if (!force && Date.now() - typedAt < 20000) return;
  const version = force ? "" : live.dataset.version;
  try {
    const response = await fetch("/tournament/live?v=" + encodeURIComponent(version)
                                 + "&lang=" + LANG,
                                 {cache: "no-store", credentials: "same-origin"});
    if (response.status !== 200) return;
    const html = await response.text();  // built by the server with every name escaped
    live.innerHTML = html;
    live.dataset.version = response.headers.get("x-version") || "";
    typedAt = 0;
  } catch (e) { /* the dashboard is away: the next poll tries again */ }
}
function send(action, body) {
  return fetch("/api/tournament/" + action, {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
    body: JSON.stringify(body)});
}
live.addEventListener("input", () => { typedAt = Date.now(); });
live.addEventListener("change", () => { typedAt = Date.now(); });
live.addEventListener("submit", async (event) => {
  const form = event.target.closest("form[data-action]");
  if (!form) return;
  event.preventDefault();
  const body = collect(form);
  // A result form's winner is the button pressed (tournament_pages._result_form): a seat,
  // "" a draw, "leaders" every seat with the highest score.
  const by = event.submitter;
  if (by && by.dataset.winners !== undefined) {
    const w = by.dataset.winners;
    const scores = body.scores || [];
    const top = Math.max(...scores);
    body.winners = w === "" ? [] : w === "leaders"
      ? scores.map((s, i) => (s === top ? i : -1)).filter((i) => i >= 0) : [Number(w)];
  }
  // The scores field comes before the winners field, so "seats" sees body.scores.
  say("\u2026");
  let data = {};
  let response;
  try {
    response = await send(form.dataset.action, body);
    try { data = await response.json(); } catch (e) { data = {}; }
    // A ruling on a round that later rounds were paired after: say which tables it touches,
    // and send it again only if the referee says so.
    if (response.status === 409 && data.late
        && window.confirm(data.error + "\n\n" + (words.late || "Go ahead anyway?"))) {
      body.late = true;
      response = await send(form.dataset.action, body);
      try { data = await response.json(); } catch (e) { data = {}; }
    }
  } catch (e) {
    say(words.away || "The dashboard did not answer; try again.");
    return;
  }
  say(response.ok ? (words.done || "Done.") : (data.error ||
      (words.refused || "Refused ({status})").split("{status}").join(response.status)));
  if (response.ok) await refresh(true);
});
setInterval(() => refresh(false), 1500);
// The round clock counts down between refreshes; a refresh brings the server's count again.
let clockAt = 0, clockLeft = -1;
setInterval(() => {
  const clock = document.getElementById("round-clock");
  const shown = document.getElementById("clock-left");
  if (!clock || !shown) return;
  if (clock.dataset.left !== String(clockLeft)) {
    clockLeft = Number(clock.dataset.left); clockAt = Date.now();
  }
  const left = Math.max(0, clockLeft - Math.floor((Date.now() - clockAt) / 1000));
  const mmss = Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
  shown.textContent = left === 0 ? clock.dataset.up : clock.dataset.word.split("{time}").join(mmss);
}, 1000);
"""
