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

from collections.abc import Sequence
from html import escape

from pi_app.games import get_game
from pi_app.tournament.export import number_text, result_text
from pi_app.tournament.model import Game, Pairing, Round, Tournament
from pi_app.tournament.standings import TIEBREAKS_TOPPLE, TIEBREAKS_TWO_PLAYER, standings

TIEBREAK_HEADINGS = {"buchholz_cut1": "Bh-1", "buchholz": "Bh", "sonneborn_berger": "SB",
                     "wins": "Wins"}

TOURNAMENT_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{{csrf}}">
<title>Tournament · {{event}}</title><link rel="stylesheet" href="/static/site.css"></head>
<body data-referee="{{referee}}">
<header><a href="/">{{event}}</a><h1>Tournament</h1>{{{account}}}</header>
<p id="result" role="status"></p>
<main id="t-live" data-version="{{version}}">{{{body}}}</main>
<script src="/static/tournament.js"></script></body></html>
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _form(action: str, inner: str, form_id: str, extra: str = "") -> str:
    return (f'<form data-action="{_e(action)}" id="{_e(form_id)}"{extra}>{inner}</form>')


def _new_form(event: str) -> str:
    options = "".join(f'<option value="{g.value}">{_e(get_game(g.value).title)}</option>'
                      for g in Game)
    return _form("new", f'<label>Event <input name="event" value="{_e(event)}" size="20">'
                        f'</label><label>Game <select name="game" id="new-game">{options}'
                        '</select></label><button type="submit" id="new-tournament">'
                        "Start the tournament</button>", "new-form")


def _players(t: Tournament, referee: bool) -> str:
    rows = []
    for number, p in enumerate(t.players, start=1):
        button = ""
        if referee:
            label = "bring back" if p.withdrawn else "withdraw"
            button = _form("withdraw",
                           f'<input type="hidden" name="player" value="{_e(p.id)}">'
                           f'<input type="hidden" name="withdrawn" data-type="bool" '
                           f'value="{"false" if p.withdrawn else "true"}">'
                           f'<button type="submit">{label}</button>', f"withdraw-{p.id}")
        rows.append(f'<tr id="player-{number}"><td>{number}</td><td>{_e(p.name)}</td>'
                    f'<td>{"" if p.rating is None else p.rating}</td>'
                    f'<td>{"withdrawn" if p.withdrawn else ""}</td>'
                    f'{"<td>" + button + "</td>" if referee else ""}</tr>')
    add = ""
    if referee:
        add = _form("players", '<textarea name="names" id="new-players" rows="4" cols="24" '
                    'placeholder="one name a line; Name, 1850 for a rating"></textarea>'
                    '<button type="submit" id="add-players">Add players</button>', "players-form")
    return (f'<section id="players-section"><h2>Players ({len(t.players)})</h2>'
            f'<table id="players"><thead><tr><th>No</th><th>Name</th><th>Rating</th><th></th>'
            f'{"<th></th>" if referee else ""}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f'</table>{add}</section>')


def _seats(t: Tournament, pairing: Pairing) -> str:
    return " \u2013 ".join(f"{_e(t.player(pid).name)} ({t.number(pid)})" for pid in pairing.seats)


def _status(pairing: Pairing) -> str:
    if pairing.bye:
        return "bye"
    result = pairing.result
    if result is None:
        return "playing" if pairing.board else "no board"
    if not result.confirmed:
        return "to confirm"
    how = ""
    if result.game_id is None:
        how = " (entered by hand)"
    elif result.corrected:
        how = " (corrected)"
    return f"confirmed by {result.confirmed_by}{how}"


def _result_cell(t: Tournament, pairing: Pairing) -> str:
    result = pairing.result
    if result is None:
        return result_text(pairing)
    won = ", ".join(t.player(pairing.seats[w]).name for w in result.winners)
    detail = f" ({' : '.join(str(s) for s in result.scores)})"
    who = f"won: {won}" if won and not result.is_draw(len(pairing.seats)) else "draw"
    game = "" if result.game_id is None else f"; game {result.game_id} on {result.board}"
    return _e(f"{result_text(pairing)} {who}{detail}{game}")


def _actions(rnd: Round, pairing: Pairing) -> str:
    if pairing.bye:
        return ""
    key = f"{rnd.number}-{pairing.table}"
    hidden = (f'<input type="hidden" name="round" data-type="int" value="{rnd.number}">'
              f'<input type="hidden" name="table" data-type="int" value="{pairing.table}">')
    out = ""
    result = pairing.result
    if result is not None and not result.confirmed:
        out += _form("confirm", hidden + f'<button type="submit" id="confirm-{key}">Confirm'
                     "</button>", f"confirm-form-{key}")
    seats = len(pairing.seats)
    scores = " ".join(str(s) for s in result.scores) if result else ""
    winners = " ".join(str(w + 1) for w in result.winners) if result else ""
    out += _form("confirm", hidden +
                 f'<input name="scores" data-type="ints" size="8" value="{_e(scores)}" '
                 f'placeholder="scores" title="{seats} scores, in seat order">'
                 f'<input name="winners" data-type="seats" size="5" value="{winners}" '
                 'placeholder="winners" '
                 'title="winning seats (1 moves first), e.g. 1; empty for a draw">'
                 f'<button type="submit" id="correct-{key}">'
                 f'{"Correct" if result else "Enter result"}</button>', f"correct-form-{key}")
    return out


def _assign(rnd: Round, boards: Sequence[str]) -> str:
    """The current round's boards: a list per table, free boards suggested in order."""
    tables = [p for p in rnd.pairings if not p.bye]
    taken = {p.board for p in tables if p.board}
    free = iter([b for b in boards if b not in taken])
    rows = []
    for p in tables:
        chosen = p.board or next(free, "")
        options = ['<option value="">(none)</option>']
        options += [f'<option value="{_e(b)}"{" selected" if b == chosen else ""}>{_e(b)}'
                    "</option>" for b in boards]
        rows.append(f'<label>Table {p.table} <select name="table-{p.table}" '
                    f'data-table="{p.table}">{"".join(options)}</select></label>')
    inner = (f'<input type="hidden" name="round" data-type="int" value="{rnd.number}">'
             + "".join(rows) + '<button type="submit" id="assign">Assign boards</button>')
    return _form("boards", inner, f"assign-{rnd.number}")


def _round(t: Tournament, rnd: Round, boards: Sequence[str], referee: bool,
           current: bool) -> str:
    rows = []
    for p in rnd.pairings:
        status = _status(p)
        rows.append(f'<tr id="table-{rnd.number}-{p.table}" data-status="{_e(status)}">'
                    f"<td>{p.table}</td><td>{_seats(t, p)}</td><td>{_e(p.board or '')}</td>"
                    f"<td>{_result_cell(t, p)}</td><td>{_e(status)}</td>"
                    f'{"<td>" + _actions(rnd, p) + "</td>" if referee else ""}</tr>')
    assign = _assign(rnd, boards) if referee and current and not rnd.done else ""
    return (f'<section id="round-{rnd.number}" class="round"><h2>Round {rnd.number}</h2>'
            f'<div class="scroll"><table><thead><tr><th>Table</th><th>Seats (first moves '
            f'first)</th><th>Board</th><th>Result</th><th>Status</th>'
            f'{"<th></th>" if referee else ""}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f"</table></div>{assign}</section>")


def _standings(t: Tournament) -> str:
    names = TIEBREAKS_TWO_PLAYER if t.game.two_player else TIEBREAKS_TOPPLE
    extra = [n for n in names if n != "wins"]
    head = "".join(f"<th>{TIEBREAK_HEADINGS[n]}</th>" for n in extra)
    rows = []
    for line in standings(t):
        cells = "".join(f"<td>{number_text(getattr(line, n))}</td>" for n in extra)
        rows.append(f'<tr id="standing-{line.number}"><td>{line.rank}</td><td>{line.number}'
                    f"</td><td>{_e(line.name)}</td><td>{number_text(line.points)}</td>"
                    f"{cells}<td>{line.wins}</td><td>{line.draws}</td><td>{line.losses}</td>"
                    f"<td>{line.games}</td><td>{'withdrawn' if line.withdrawn else ''}</td>"
                    "</tr>")
    return (f'<section id="standings-section"><h2>Standings</h2><div class="scroll">'
            f'<table id="standings"><thead><tr><th>Rank</th><th>No</th><th>Name</th>'
            f"<th>Points</th>{head}<th>W</th><th>D</th><th>L</th><th>Games</th><th></th>"
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            '<p><a href="/tournament/standings.csv" id="standings-csv" download>standings.csv</a>'
            ' <a href="/tournament/pairings.csv" id="pairings-csv" download>pairings.csv</a>'
            "</p></section>")


def live_html(t: Tournament | None, *, boards: Sequence[str], notices: Sequence[str],
              referee: bool, event: str) -> str:
    """The page's changing part: everything below the header."""
    if t is None:
        inner = _new_form(event) if referee else ""
        return f'<section id="no-tournament"><h2>No tournament yet</h2>{inner}</section>'
    current = t.current
    pair = ""
    if referee:
        label = f"Pair round {len(t.rounds) + 1}"
        pair = _form("pair", f'<button type="submit" id="pair">{label}</button>', "pair-form")
    rounds = "".join(_round(t, rnd, boards, referee, rnd is current)
                     for rnd in reversed(t.rounds))
    notes = ""
    if notices and referee:
        notes = ('<section id="notices-section"><h2>Station reports not taken</h2>'
                 f'<ul id="notices">{"".join(f"<li>{_e(n)}</li>" for n in notices)}</ul>'
                 "</section>")
    records = ('<p><a href="/tournament/records.json" id="records" download>every game\'s '
               "record (JSON)</a></p>" if referee else "")
    title = (f'<section id="summary"><h2 id="event-name">{_e(t.event)}</h2>'
             f"<p>{_e(get_game(t.game.value).title)} \u00b7 {len(t.players)} players \u00b7 "
             f'round <span id="round-number">{len(t.rounds)}</span></p>{pair}{records}'
             "</section>")
    return (title + notes + _standings(t) + rounds + _players(t, referee))


TOURNAMENT_JS = r"""
"use strict";
const csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
const live = document.getElementById("t-live");
// The referee is filling a form: do not replace it under their hands (for 20 s at most).
let typedAt = 0;
function say(text) { document.getElementById("result").textContent = text; }
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
    else if (type === "ints") {
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
    const response = await fetch("/tournament/live?v=" + encodeURIComponent(version),
                                 {cache: "no-store", credentials: "same-origin"});
    if (response.status !== 200) return;
    const html = await response.text();  // built by the server with every name escaped
    live.innerHTML = html;
    live.dataset.version = response.headers.get("x-version") || "";
    typedAt = 0;
  } catch (e) { /* the dashboard is away: the next poll tries again */ }
}
live.addEventListener("input", () => { typedAt = Date.now(); });
live.addEventListener("change", () => { typedAt = Date.now(); });
live.addEventListener("submit", async (event) => {
  const form = event.target.closest("form[data-action]");
  if (!form) return;
  event.preventDefault();
  const body = collect(form);
  // The scores field comes before the winners field, so "seats" sees body.scores.
  say("\u2026");
  let data = {};
  let response;
  try {
    response = await fetch("/api/tournament/" + form.dataset.action, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
      body: JSON.stringify(body)});
    try { data = await response.json(); } catch (e) { data = {}; }
  } catch (e) {
    say("The dashboard did not answer; try again.");
    return;
  }
  say(response.ok ? "Done." : (data.error || "Refused (" + response.status + ")"));
  if (response.ok) await refresh(true);
});
setInterval(() => refresh(false), 1500);
"""
