"""HTML, CSS and JavaScript of the station page and the referee dashboard (no build step).

Pages are rendered once on the server (so they show something without JavaScript, and so a test
can read them) and then kept live by a small script over server-sent events. Untrusted text
(player names, board ids, notes) is escaped on the server by :func:`render` and set with
``textContent`` in the browser, never parsed as markup; the only markup inserted from data is
the board SVG, which :mod:`pi_app.net.svg` builds with every text escaped. Scripts and styles
are served as files so the Content-Security-Policy can forbid inline script entirely.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from html import escape
from typing import Any

from pi_app.bots import LEVELS
from pi_app.games import get_game
from pi_app.i18n import EDITION_TITLES, LANGUAGE_NAMES, game_title
from pi_app.referee.players import counts_text
from pi_app.referee.rule_options import page_controls

_SLOT = re.compile(r"\{\{(\{?)\s*([a-z_]+)\s*\}?\}\}")

SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'self'; script-src 'self'; style-src 'self'; "
                                "img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                                "frame-ancestors 'none'; form-action 'self'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


def render(template: str, **values: Any) -> str:
    """``{{name}}`` is replaced by the escaped value, ``{{{name}}}`` by the raw one."""
    def slot(match: re.Match[str]) -> str:
        raw, name = match.group(1), match.group(2)
        value = values[name]
        return str(value) if raw else escape(str(value), quote=True)
    return _SLOT.sub(slot, template)


def json_for_script(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (no ``</script>``)."""
    return (json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))


def page_words(_: Callable[[str], str]) -> dict[str, str]:
    """Every word of the station page in one language (``_``: its gettext). The server fills
    the HTML with them and hands them to the page's script in the initial JSON: the CSP
    forbids inline script, so the script is one file for every language and only speaks
    through these words (English is its fallback)."""
    return {
        "moves": _("Moves"), "actions": _("Station actions"),
        "need_pin": _("Need the station's PIN."), "pin": _("PIN"),
        "undo": _("Undo last move"), "names": _("names, comma separated"),
        "names_hint": _("Ana, Ben, Caro: as many names as players (empty: Player 1, "
                        "Player 2...)"),
        "new_game": _("New game"), "override_hint": _("legal move, e.g. up1 Nani"),
        "override": _("Override last move"), "this_page": _("This page"),
        "past_games": _("Past games"), "game": _("Game"), "players": _("Players"),
        "result": _("Result"), "date": _("Date (UTC)"), "language": _("Language"),
        "choose": _("Choose: {options}"),
        "mismatch": _("The board does not match the game: fix it."),
        "follow_up": _("Finish the move on the board."),
        "over": _("Game over."), "over_draw": _("Game over: a draw."),
        "over_won": _("Game over: {names} won."), "and": _("{first} and {second}"),
        "to_move": _("{name} to move."), "no_game": _("No game yet."),
        "player": _("Player {number}"),
        "island": _("Fruit in the supply: {supply} · spoiled: {spoiled}"),
        "finished": _("finished"), "draw": _("draw"), "won": _("won: {names}"),
        "record": _("record"), "public_record": _("public record"),
        "done": _("Done."), "refused": _("Refused ({status})"),
        "asked": _("Asked: OK on the station starts it, BACK refuses."),
        "s_playing": _("playing"), "s_waiting": _("waiting"), "s_prompt": _("question"),
        "s_follow_up": _("finish the move"), "s_setup": _("set-up"), "s_idle": _("idle"),
        "s_mismatch": _("mismatch"), "s_offline": _("offline"), "s_over": _("game over"),
        "s_confirmed": _("confirmed"), "s_unknown": _("unknown"), "s_fault": _("fault"),
        **edition_titles(_), "rules": _("Rule options"), "station_plays": _("The station plays"),
        "nobody": _("nobody"), "l_random": _("random"), "l_greedy": _("greedy"),
        "l_search": _("search"), "seat": _("{name} (the station, {level})"),
        "offer_draw": _("Offer draw"), "accept_draw": _("Accept draw"),
        "draw_offered": _("A draw is offered: {agreed} of 2 players agree."),
        "review": _("Review"),
        "review_wait": _("The station is reviewing the game..."),
        "review_slip": _("{name}, move {number}: {move} (better: {better})"),
        "review_none": _("{name}: no move lost much."),
        "review_partial": _("(the first {count} moves reviewed)"),
        "round_clock": _("Round clock: {time} left"),
        "round_up": _("Round clock: time is up, the referee rules"),
    }


def dashboard_words(_: Callable[[str], str]) -> dict[str, str]:
    """The words of the dashboard's overview (the public grid) in one language, as
    :func:`page_words` are the station page's: the server's rows and the script's."""
    return {
        "board": _("Board"), "round": _("Round"), "table": _("Table"),
        "status": _("Status"), "game": _("Game"), "players": _("Players"),
        "scores": _("Scores"), "moves": _("Moves"), "last_move": _("Last move"),
        "feed": _("Feed"), "result": _("Result"), "boards": _("{count} boards"),
        "tournament": _("tournament"), "language": _("Language"), "gap": _("gap"),
        "malformed": _("malformed {count}"), "not_heard": _("not heard since start"),
        "last_heard": _("last heard {ago} ago"), "live": _("live"),
        "behind": _("{ago} behind"), "quiet": _("quiet {ago}"),
        "s_never": _("never connected"), "s_playing": _("playing"),
        "s_waiting": _("waiting"), "s_mismatch": _("mismatch"), "s_fault": _("fault"),
        "s_offline": _("offline"), "s_over": _("game over"), "s_confirmed": _("confirmed"),
        "s_unknown": _("unknown"), **edition_titles(_),
    }


def edition_titles(_: Callable[[str], str]) -> dict[str, str]:
    """The game titles an edition prints otherwise (:data:`pi_app.i18n.EDITION_TITLES`), as
    words ``title:<English title>``: the pages' scripts say a snapshot's title through them."""
    return {f"title:{english}": _(english) for english in EDITION_TITLES}


def board_words(_: Callable[[str], str]) -> dict[str, str]:
    """The words of the dashboard's page of one board: the overview's, and its own."""
    return {
        **dashboard_words(_), "events": _("Events"),
        "confirm": _("Confirm reported result"), "rule": _("Rule this result"),
        "winners_hint": _("winners: 1, or 1,2"),
        "winners_title": _("the winning players' numbers, from 1; empty for a draw"),
        "note": _("note"), "record": _("current record (JSON)"),
        "ruled_by": _("Ruled by {referee}"), "player": _("Player {number}"),
        "done": _("Done."), "refused": _("Refused ({status})"),
    }


def say(words: dict[str, str], key: str, **values: Any) -> str:
    """One of :func:`page_words` with its ``{placeholders}`` filled."""
    return words[key].format(**values)


def language_links(current: str) -> str:
    """Links to this page in each language, each named in its own (the current one bold)."""
    out = []
    for code, name in LANGUAGE_NAMES.items():
        if code == current:
            out.append(f'<b lang="{code}">{escape(name)}</b>')
        else:
            out.append(f'<a href="?lang={code}" lang="{code}" hreflang="{code}">'
                       f"{escape(name)}</a>")
    return " · ".join(out)


def items(values: list[str], cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return "".join(f"<li{attr}>{escape(str(v))}</li>" for v in values)


def person(players: list[Any], index: int, words: dict[str, str] | None = None) -> str:
    """Player ``index`` (0-based, as records count) as people call them: the name, or
    "Player 1" for index 0 (in ``words``' language)."""
    if 0 <= index < len(players) and players[index]:
        return str(players[index])
    return (words or {}).get("player", "Player {number}").format(number=index + 1)


def game_options(games: Any, current: str = "",
                 _: Callable[[str], str] = lambda text: text) -> str:
    """The ``<option>`` list of the games a station's board plays, each with its player
    counts (the names field must give that many, or none)."""
    out = []
    for name in games:
        title = game_title(get_game(name).title, _)
        chosen = " selected" if name == current else ""
        counts = _("{count} players").format(count=counts_text(name))
        out.append(f'<option value="{escape(name)}"{chosen}>{escape(title)} '
                   f'({escape(counts)})</option>')
    return "".join(out)


def option_fields(games: Any, current: str, _: Callable[[str], str]) -> str:
    """For each game the board plays, a ``<fieldset>`` of its rule options
    (:func:`pi_app.referee.rule_options.page_controls`), each labelled with the OLED's word in
    the page's language; the page's script shows the chosen game's and sends what is set."""
    out = []
    for name in games:
        hidden = "" if name == current else " hidden"
        controls = []
        for key, control in page_controls(name):
            implies = escape(json.dumps(dict(control.implies)), quote=True)
            attrs = f'data-option="{escape(key)}" data-implies="{implies}"'
            label = escape(_(control.label))
            if control.kind == "flag":
                controls.append(f'<label><input type="checkbox" {attrs}> {label}</label>')
            else:
                hint = escape(_(control.hint), quote=True) if control.hint else ""
                controls.append(f'<label>{label} <input type="number" min="0" step="1" '
                                f'size="5" {attrs} placeholder="{hint}" title="{hint}"></label>')
        if controls:
            out.append(f'<fieldset class="rules" data-game="{escape(name)}"{hidden}>'
                       f'<legend>{escape(_("Rule options"))}</legend>{"".join(controls)}'
                       "</fieldset>")
    return "".join(out)


def seat_options(words: dict[str, str]) -> tuple[str, str]:
    """The ``<option>`` lists of the new game's station seat (nobody, Player 1...4) and its
    bot's level (:data:`pi_app.bots.LEVELS`, weakest first; the strongest chosen)."""
    seats = [f'<option value="">{escape(words["nobody"])}</option>']
    seats += [f'<option value="{i}">{escape(person([], i, words))}</option>' for i in range(4)]
    levels = [f'<option value="{escape(level)}"{" selected" if level == LEVELS[-1] else ""}>'
              f'{escape(words.get("l_" + level, level))}</option>' for level in LEVELS]
    return "".join(seats), "".join(levels)


def seat_words(name: str, seats: Any, index: int, words: dict[str, str]) -> str:
    """A player's name, and when the station plays that seat, its level too."""
    level = seats.get(str(index)) if isinstance(seats, dict) else None
    if not isinstance(level, str):
        return name
    return say(words, "seat", name=name, level=words.get("l_" + level, level))


def review_lines(snapshot: dict[str, Any], words: dict[str, str]) -> list[str]:
    """The post-game review (:mod:`pi_app.bots.review`) in words: for each player, the moves
    where the bot's evaluation dropped most, and the move it liked better; the page's script
    says the same."""
    review = snapshot.get("review")
    if snapshot.get("status") != "over" or not isinstance(review, dict):
        return []
    if not review.get("done"):
        return [words["review_wait"]]
    players = list(snapshot.get("players") or [])
    lines = []
    slips = [s for s in review.get("slips") or [] if isinstance(s, dict)]
    for seat in range(len(snapshot.get("scores") or players)):
        name = person(players, seat, words)
        mine = [s for s in slips if s.get("player") == seat]
        if not mine:
            lines.append(say(words, "review_none", name=name))
        for slip in mine:
            lines.append(say(words, "review_slip", name=name, number=slip.get("move"),
                             move=slip.get("text"), better=slip.get("better")))
    if review.get("partial"):
        lines.append(say(words, "review_partial", count=review.get("reviewed")))
    return lines


def title_words(snapshot: dict[str, Any], words: dict[str, str] | None = None,
                lang: str = "en") -> str:
    """The game's title (as the reader's edition prints it: ``words``' ``title:`` entries)
    and the rule options it uses, in ``lang`` where the snapshot has them so (the page's
    script says the same)."""
    said = snapshot.get("option_words")
    options = said.get(lang) if isinstance(said, dict) else None
    if not isinstance(options, str):
        options = ", ".join(str(o) for o in snapshot.get("options") or [])
    title = str(snapshot.get("title", ""))
    title = (words or {}).get(f"title:{title}", title)
    return title + (" · " + options if options else "")


def player_rows(players: list[Any], scores: list[Any], to_move: Any,
                words: dict[str, str] | None = None, seats: Any = None) -> str:
    rows = []
    for i, score in enumerate(scores or [None] * len(players)):
        name = person(players, i, words)
        if words is not None:
            name = seat_words(name, seats, i, words)
        mark = " ◀" if to_move == i else ""
        rows.append(f"<tr><td>{escape(str(name))}{mark}</td>"
                    f"<td>{'' if score is None else escape(str(score))}</td></tr>")
    return "".join(rows)


def result_words(players: list[Any], game: dict[str, Any],
                 words: dict[str, str] | None = None) -> str:
    """A past game's outcome for the list: the winners by name, a draw, or how it ended."""
    said = words or {}
    result = game.get("result")
    if not isinstance(result, dict):
        return str(game.get("state") or "")
    winners = result.get("winners")
    if not isinstance(winners, list):
        return said.get("finished", "finished")
    if not winners:
        return said.get("draw", "draw")
    names = ", ".join(person(players, w, words) for w in winners if isinstance(w, int))
    return said.get("won", "won: {names}").format(names=names)


def game_rows(games: list[dict[str, Any]], words: dict[str, str] | None = None) -> str:
    """The station's games as table rows, each with its record's download link."""
    said = words or {}
    rows = []
    for game in games:
        players = list(game.get("players") or [])
        names = ", ".join(str(p) for p in players)
        link = f"/games/{int(game['id'])}/record.json"
        label = said.get("public_record", "public record") if game.get("state") != "finished" \
            else said.get("record", "record")
        outcome = result_words(players, game, words)
        rows.append(f"<tr><td>{int(game['id'])}</td><td>{escape(str(game.get('game')))}</td>"
                    f"<td>{escape(names)}</td><td>{escape(outcome)}</td>"
                    f"<td>{escape(str(game.get('date')))}</td>"
                    f"<td>{escape(str(game.get('moves')))}</td>"
                    f'<td><a href="{link}" download>{escape(label)}</a></td></tr>')
    return "".join(rows)


CSS = """
body{font-family:system-ui,sans-serif;margin:0;background:#fbf7ef;color:#222}
header{display:flex;gap:1em;align-items:center;padding:.5em 1em;background:#5d4037;color:#fff}
header h1{font-size:1.3em;margin:0}header a{color:#fff}
main{display:flex;flex-wrap:wrap;gap:1.5em;padding:1em}
section{min-width:16em}
.picture svg{width:min(90vw,26em);height:auto;max-height:85vh}
.badge{padding:.1em .6em;border-radius:1em;background:#777;color:#fff;font-size:.9em}
.s-playing{background:#2e7d32}.s-waiting,.s-prompt,.s-follow_up,.s-setup,.s-idle{background:#f9a825}
.s-mismatch{background:#c62828}.s-offline{background:#424242}.s-over{background:#6a1b9a}
.s-confirmed{background:#1565c0}.s-unknown{background:#9e9e9e}.s-fault{background:#e65100}
table{border-collapse:collapse}td,th{padding:.25em .6em;border-bottom:1px solid #ddd;
text-align:left}
ol.moves{max-height:22em;overflow-y:auto;padding-left:3em;font-family:monospace}
ul.log{max-height:22em;overflow-y:auto;padding-left:0;list-style:none;font-size:.9em}
ul.log li{padding:.1em 0}header{flex-wrap:wrap}
.grid .badge,.feed,body[data-board] #status{white-space:nowrap}
.grid-box{overflow-x:auto;max-width:100%}#feed{color:#eadfd8}
body[data-board] .picture svg{max-height:70vh}
@media (max-width:40em){.grid thead{display:none}.grid,.grid tbody{display:block}
.grid tr{display:flex;flex-wrap:wrap;gap:.15em .6em;padding:.45em 0;border-bottom:1px solid #ddd}
.grid td{border:0;padding:0}.grid td:empty{display:none}.grid .c-game{flex-basis:100%}
.grid .c-moves::before{content:"moves "}.grid .c-last::before{content:"last "}
.grid .c-result{flex-basis:100%;font-weight:bold}.grid .feed{color:#555}
body[data-board] .picture svg{max-height:60vh}}
.grid td a{font-weight:bold}.warn{color:#c62828}.muted{color:#777}
form{display:flex;flex-wrap:wrap;gap:.4em;align-items:center;margin:.4em 0}
#result{min-height:1.2em}fieldset.rules{display:flex;flex-wrap:wrap;gap:.4em;border:1px solid #ccc}
svg .ghost{animation:ghost 1.6s ease-in-out infinite alternate}
@keyframes ghost{from{opacity:.45}to{opacity:1}}
#address figure{margin:0;text-align:center}#address svg{width:9em;height:auto}
#address figcaption{font-family:monospace;font-size:.85em;word-break:break-all}
#games-table{font-size:.9em}#past{flex-basis:100%}
.scroll{overflow-x:auto;max-width:100%}
.result-form fieldset{display:flex;flex-direction:column;gap:.5em;border:1px solid #ccc}
.result-form .scores,.result-form .winners{display:flex;flex-wrap:wrap;gap:.5em}
.result-form label.score{display:flex;flex-direction:column;font-size:.9em}
.result-form input[type=number]{width:4.5em;font-size:1.1em;padding:.3em}
.result-form button{min-height:2.75em;padding:.3em .8em}
button[aria-pressed=true]{outline:3px solid #2e7d32}
@media (max-width:40em){main{padding:.5em;gap:1em}section{min-width:0;width:100%}
.picture svg{width:100%;max-height:60vh}
#standings .wide{display:none}#standings td,#standings th{padding:.25em .35em}
.round thead{display:none}.round table,.round tbody,.round tr,.round td{display:block}
.round tr{border-bottom:2px solid #ccc;padding:.4em 0}.round td{border:0;padding:.1em 0}}
"""

STATION_HTML = """<!doctype html>
<html lang="{{lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{board}} · tikiboard</title><link rel="stylesheet" href="/static/site.css"></head>
<body><header><h1 id="board">{{board}}</h1>
<span id="status" class="badge s-{{status}}">{{status_words}}</span>
<span id="title">{{title}}</span>
<nav id="languages" aria-label="{{w_language}}">{{{languages}}}</nav></header>
<main>
<section class="picture" id="picture">{{{svg}}}</section>
<section>
<table id="players">{{{players}}}</table>
<p id="waiting">{{waiting}}</p>
<p id="round-clock" role="timer" hidden></p>
<p id="island">{{island}}</p>
<ul id="guidance">{{{guidance}}}</ul>
<h2>{{w_moves}}</h2><ol id="moves" class="moves">{{{moves}}}</ol>
<div id="review-box"{{{review_hidden}}}><h2>{{w_review}}</h2><ul id="review">{{{review}}}</ul></div>
</section>
<section id="actions"><h2>{{w_actions}}</h2>
<p class="muted">{{w_need_pin}}</p>
<form id="act-form"><label>{{w_pin}} <input id="pin" type="password" autocomplete="off"
 inputmode="numeric"></label></form>
<form id="undo-form"><button type="submit" id="undo">{{w_undo}}</button></form>
<form id="new-form"><select id="new-game">{{{game_options}}}</select>
<input id="new-players" placeholder="{{w_names}}" size="28"
 title="{{w_names_hint}}">
<label>{{w_station_plays}} <select id="new-bot-seat">{{{seat_options}}}</select></label>
<select id="new-bot-level" aria-label="{{w_station_plays}}">{{{level_options}}}</select>
{{{option_fields}}}
<button type="submit" id="new">{{w_new_game}}</button></form>
<form id="draw-form"><button type="submit" id="draw-offer">{{w_offer_draw}}</button></form>
<form id="draw-accept-form"><button type="submit" id="draw-accept">{{w_accept_draw}}</button>
</form>
<form id="override-form"><input id="override-text" placeholder="{{w_override_hint}}">
<button type="submit" id="override">{{w_override}}</button></form>
<p id="result" role="status"></p>
</section>
<section id="address"><h2>{{w_this_page}}</h2><figure>{{{qr}}}
<figcaption id="address-text">{{address}}</figcaption></figure></section>
<section id="past"><h2>{{w_past_games}}</h2><div class="scroll"><table id="games-table">
<thead><tr><th>#</th><th>{{w_game}}</th><th>{{w_players}}</th><th>{{w_result}}</th>
<th>{{w_date}}</th><th>{{w_moves}}</th><th></th></tr></thead>
<tbody id="games">{{{games}}}</tbody></table></div>
</section></main>
<script type="application/json" id="initial">{{{initial}}}</script>
<script src="/static/station.js"></script></body></html>
"""

COMMON_JS = r"""
"use strict";
// The page's words in the viewer's language (the station page's initial JSON carries them,
// pages.page_words); English where a page sends none.
let W = {};
function say(key, english, values) {
  let text = W[key] || english;
  for (const [name, value] of Object.entries(values || {})) {
    text = text.split("{" + name + "}").join(String(value));
  }
  return text;
}
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}
function fill(id, nodes) {
  const box = document.getElementById(id);
  if (!box) return;
  box.replaceChildren(...nodes);
}
function playerRows(players, scores, toMove, seats) {
  const n = Math.max((players || []).length, (scores || []).length);
  const rows = [];
  for (let i = 0; i < n; i++) {
    const tr = el("tr");
    let name = person(players, i);
    // A seat the station's bot plays says so, with its level (pages.seat_words).
    const level = seats ? seats[String(i)] : undefined;
    if (typeof level === "string") {
      name = say("seat", "{name} (the station, {level})",
                 {name: name, level: say("l_" + level, level)});
    }
    tr.append(el("td", name + (toMove === i ? " \u25c0" : "")),
              el("td", scores && scores[i] !== undefined ? scores[i] : ""));
    rows.push(tr);
  }
  return rows;
}
function person(players, i) {
  // Records count players from 0; people from 1.
  return (players && players[i]) ? players[i] : say("player", "Player {number}", {number: i + 1});
}
function setBadge(id, status) {
  const badge = document.getElementById(id);
  if (!badge) return;
  badge.textContent = say("s_" + status, status);
  badge.className = "badge s-" + String(status).replace(/[^a-z_]/g, "");
}
function setSvg(id, svg) {
  // The SVG is built by the server with every text escaped (pi_app/net/svg.py).
  const box = document.getElementById(id);
  if (box && typeof svg === "string") box.innerHTML = svg;
}
function stream(url, handlers) {
  const source = new EventSource(url);
  for (const [name, handler] of Object.entries(handlers)) {
    source.addEventListener(name, (e) => handler(JSON.parse(e.data)));
  }
  return source;
}
"""

STATION_JS = COMMON_JS + r"""
function waiting(s) {
  if (s.prompt && s.prompt.kind === "draw" && s.status !== "over") {
    return say("draw_offered", "A draw is offered: {agreed} of 2 players agree.",
               {agreed: s.prompt.selected || 0});
  }
  if (s.status === "prompt" && s.prompt) {
    return say("choose", "Choose: {options}", {options: (s.prompt.options || []).join(" / ")});
  }
  if (s.status === "mismatch") return say("mismatch", "The board does not match the game: fix it.");
  if (s.status === "follow_up") return say("follow_up", "Finish the move on the board.");
  if (s.status === "over") {
    if (!Array.isArray(s.winners)) return say("over", "Game over.");
    if (!s.winners.length) return say("over_draw", "Game over: a draw.");
    const names = s.winners.map((w) => person(s.players, w))
      .reduce((a, b) => say("and", "{first} and {second}", {first: a, second: b}));
    return say("over_won", "Game over: {names} won.", {names: names});
  }
  if (s.status === "idle" || !s.game) return say("no_game", "No game yet.");
  if (s.to_move !== null && s.to_move !== undefined) {
    return say("to_move", "{name} to move.", {name: person(s.players, s.to_move)});
  }
  return "";
}
function islandText(s) {
  const i = s.island;
  return i ? say("island", "Fruit in the supply: {supply} \u00b7 spoiled: {spoiled}",
                 {supply: i.supply, spoiled: i.spoiled}) : "";
}
function reviewLines(s) {
  // The post-game review in words (pages.review_lines says the same on the server).
  const r = s.review;
  if (s.status !== "over" || !r || typeof r !== "object") return [];
  if (!r.done) return [say("review_wait", "The station is reviewing the game...")];
  const slips = Array.isArray(r.slips) ? r.slips : [];
  const lines = [];
  const n = Math.max((s.scores || []).length, (s.players || []).length);
  for (let seat = 0; seat < n; seat++) {
    const name = person(s.players, seat);
    const mine = slips.filter((x) => x && x.player === seat);
    if (!mine.length) lines.push(say("review_none", "{name}: no move lost much.", {name: name}));
    for (const x of mine) {
      lines.push(say("review_slip", "{name}, move {number}: {move} (better: {better})",
                     {name: name, number: x.move, move: x.text, better: x.better}));
    }
  }
  if (r.partial) {
    lines.push(say("review_partial", "(the first {count} moves reviewed)", {count: r.reviewed}));
  }
  return lines;
}
function resultWords(g) {
  const r = g.result;
  if (!r || typeof r !== "object") return g.state || "";
  if (!Array.isArray(r.winners)) return say("finished", "finished");
  if (!r.winners.length) return say("draw", "draw");
  return say("won", "won: {names}", {names: r.winners.map((w) => person(g.players, w)).join(", ")});
}
function gameRow(g) {
  const tr = el("tr");
  const link = el("a", g.state !== "finished" ? say("public_record", "public record")
                                             : say("record", "record"));
  link.href = "/games/" + Number(g.id) + "/record.json";
  link.setAttribute("download", "");
  const cell = el("td");
  cell.append(link);
  tr.append(el("td", g.id), el("td", g.game), el("td", (g.players || []).join(", ")),
            el("td", resultWords(g)), el("td", g.date), el("td", g.moves), cell);
  return tr;
}
let listed = null;
async function pastGames(s) {
  // The list changes when a game starts or ends: fetch it then, not on every move.
  const key = String(s.game_id) + "/" + String(s.status === "over");
  if (key === listed) return;
  listed = key;
  try {
    const response = await fetch("/games", {cache: "no-store"});
    if (response.ok) fill("games", (await response.json()).map(gameRow));
  } catch (e) { listed = null; }
}
function show(data) {
  const s = data.snapshot || {};
  setBadge("status", s.status || "idle");
  const optionWords = (s.option_words || {})[document.documentElement.lang]
    || (s.options || []).join(", ");
  document.getElementById("title").textContent = say("title:" + s.title, s.title || "")
    + (optionWords ? " · " + optionWords : "");
  setSvg("picture", data.svg);
  fill("players", playerRows(s.players, s.scores, s.to_move, s.station_seats));
  document.getElementById("waiting").textContent = waiting(s);
  document.getElementById("island").textContent = islandText(s);
  const lines = reviewLines(s);
  document.getElementById("review-box").hidden = !lines.length;
  fill("review", lines.map((line) => el("li", line)));
  fill("guidance", (s.guidance || []).map((g) => el("li", g)));
  const moves = document.getElementById("moves");
  const following = !moves.dataset.shown ||
    moves.scrollHeight - moves.scrollTop - moves.clientHeight < 40 ||
    moves.children.length !== (s.moves || []).length;
  moves.dataset.shown = "yes";
  fill("moves", (s.moves || []).map((m) => el("li", m)));
  // The list follows the latest move: it opens at the end, and a new move (or one taken
  // back) scrolls it there; a reader who scrolled back is left there until the list changes.
  if (following) moves.scrollTop = moves.scrollHeight;
  document.body.dataset.seq = String(s.seq || 0);
  roundLeft = typeof s.round_left === "number" ? s.round_left : null;
  roundAt = Date.now();
  roundTick();
  pastGames(s);
}
// The tournament round's clock: the snapshot says the seconds left when it was made (the
// station's count, not a time of day); the page counts down from when it got it.
let roundLeft = null, roundAt = 0;
function roundTick() {
  const shown = document.getElementById("round-clock");
  shown.hidden = roundLeft === null;
  if (roundLeft === null) return;
  const left = Math.max(0, roundLeft - Math.floor((Date.now() - roundAt) / 1000));
  const mmss = Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
  shown.textContent = left === 0 ? say("round_up", "Round clock: time is up, the referee rules")
    : say("round_clock", "Round clock: {time} left", {time: mmss});
}
setInterval(roundTick, 1000);
async function act(name, args) {
  const out = document.getElementById("result");
  const lang = encodeURIComponent(document.documentElement.lang || "en");
  const response = await fetch("/api/action/" + name + "?lang=" + lang, {
    method: "POST",
    headers: {"Content-Type": "application/json",
              "Authorization": "Bearer " + document.getElementById("pin").value},
    body: JSON.stringify(args || {}),
  });
  let body = {};
  try { body = await response.json(); } catch (e) { body = {}; }
  const asked = response.ok && body.result && body.result.asked;
  out.textContent = asked ? say("asked", "Asked: OK on the station starts it, BACK refuses.")
    : response.ok ? say("done", "Done.")
    : (body.error || say("refused", "Refused ({status})", {status: response.status}));
  return response.status;
}
function on(id, handler) {
  document.getElementById(id).addEventListener("submit", (e) => { e.preventDefault(); handler(); });
}
on("undo-form", () => act("undo", {}));
function chosenRules(game) {
  // The rule options set in the chosen game's fieldset (pages.option_fields): a ticked box is
  // true (with what it implies), a number as typed; what is left empty is not sent.
  const options = {};
  const box = document.querySelector('fieldset.rules[data-game="' + CSS.escape(game) + '"]');
  if (!box) return options;
  for (const input of box.querySelectorAll("input[data-option]")) {
    if (input.type === "checkbox") {
      if (!input.checked) continue;
      Object.assign(options, JSON.parse(input.dataset.implies || "{}"));
      options[input.dataset.option] = true;
    } else if (input.value.trim() !== "") {
      options[input.dataset.option] = Number(input.value);
    }
  }
  return options;
}
function showRules() {
  const game = document.getElementById("new-game").value;
  for (const box of document.querySelectorAll("fieldset.rules")) {
    box.hidden = box.dataset.game !== game;
  }
}
document.getElementById("new-game").addEventListener("change", showRules);
showRules();
on("new-form", () => {
  const game = document.getElementById("new-game").value;
  const seat = document.getElementById("new-bot-seat").value;
  const bots = {};
  if (seat !== "") bots[seat] = document.getElementById("new-bot-level").value;
  return act("new_game", {
    game: game, options: chosenRules(game), bots: bots,
    players: document.getElementById("new-players").value.split(",").map((p) => p.trim())
      .filter((p) => p)});
});
on("draw-form", () => act("draw", {}));
on("draw-accept-form", () => act("draw_accept", {}));
on("override-form", () => act("override", {text: document.getElementById("override-text").value}));
on("act-form", () => {});
const initial = JSON.parse(document.getElementById("initial").textContent);
W = initial.words || {};
show(initial);
// A station holds only so many live streams (503 past its cap) and ends them when it stops.
// EventSource retries a dropped stream by itself but gives up for good on a refused one, so
// then the page fetches the state and tries again, waiting 5 s doubling to a minute, spread
// at random, so that many refused pages never knock on the station together.
const RETRY_FIRST = 5000, RETRY_LAST = 60000;
let retryDelay = RETRY_FIRST;
function live() {
  const source = stream("/api/stream", {status: show});
  source.addEventListener("open", () => { retryDelay = RETRY_FIRST; });
  source.addEventListener("error", () => {
    if (source.readyState !== EventSource.CLOSED) return;
    source.close();
    const wait = retryDelay * (0.75 + Math.random() / 2);
    retryDelay = Math.min(retryDelay * 2, RETRY_LAST);
    setTimeout(async () => {
      try {
        const response = await fetch("/api/state", {cache: "no-store"});
        if (response.ok) show(await response.json());
      } catch (e) { /* the station is away: the stream's try below says so again */ }
      live();
    }, wait);
  });
}
live();
"""

DASHBOARD_HTML = """<!doctype html>
<html lang="{{lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{{csrf}}">
<title>{{event}} · referee</title><link rel="stylesheet" href="/static/site.css"></head>
<body><header><h1>{{event}}</h1><span id="boards-count">{{count}}</span>
<a href="/tournament" id="tournament-link">{{w_tournament}}</a>
<nav id="languages" aria-label="{{w_language}}">{{{languages}}}</nav>
{{{account}}}</header>
<main><section class="grid-box">
<table class="grid"><thead><tr><th>{{w_board}}</th><th>{{w_round}}</th><th>{{w_table}}</th>
<th>{{w_status}}</th><th>{{w_game}}</th>
<th>{{w_players}}</th><th>{{w_scores}}</th><th>{{w_moves}}</th><th>{{w_last_move}}</th>
<th>{{w_feed}}</th><th>{{w_result}}</th></tr></thead>
<tbody id="grid">{{{rows}}}</tbody></table>
</section></main>
<script type="application/json" id="initial">{{{initial}}}</script>
<script src="/static/dashboard.js"></script></body></html>
"""

BOARD_HTML = """<!doctype html>
<html lang="{{lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{{csrf}}">
<title>{{board}} · {{event}}</title><link rel="stylesheet" href="/static/site.css"></head>
<body data-board="{{board}}" data-referee="{{referee}}">
<header><a href="/">{{event}}</a><h1 id="board">{{board}}</h1>
<span id="status" class="badge s-{{status}}">{{status_text}}</span><span id="title">{{title}}</span>
<span id="feed" class="muted">{{feed}}</span>
<nav id="languages" aria-label="{{w_language}}">{{{languages}}}</nav>
{{{account}}}</header>
<main>
<section class="picture" id="picture">{{{svg}}}</section>
<section><table id="players">{{{players}}}</table>
<p id="last-result">{{last_result}}</p><p id="confirmed"></p>
<form id="confirm-form" class="referee-only">
<button type="submit" id="confirm">{{w_confirm}}</button></form>
<form id="correct-form" class="referee-only">
<input id="correct-winners" placeholder="{{w_winners_hint}}" size="14"
 title="{{w_winners_title}}">
<input id="correct-note" placeholder="{{w_note}}" size="20">
<button type="submit" id="correct">{{w_rule}}</button></form>
<p id="result" role="status"></p>
<ul id="guidance">{{{guidance}}}</ul>
<h2>{{w_moves}}</h2><ol id="moves" class="moves">{{{moves}}}</ol></section>
<section><h2>{{w_events}}</h2><ul id="events" class="log">{{{events}}}</ul>
<p class="referee-only"><a href="/api/board/{{board}}/record">{{w_record}}</a></p>
</section></main>
<script type="application/json" id="initial">{{{initial}}}</script>
<script src="/static/dashboard.js"></script></body></html>
"""

LOGIN_HTML = """<!doctype html>
<html lang="{{lang}}"><head><meta charset="utf-8"><title>{{w_title}}</title>
<link rel="stylesheet" href="/static/site.css"></head>
<body><header><h1>{{w_heading}}</h1></header><main><section>
<p class="warn">{{message}}</p>
<form method="post" action="/login"><label>{{w_name}} <input name="username"
 autocomplete="username"></label><label>{{w_password}} <input name="password" type="password"
 autocomplete="current-password"></label><button type="submit">{{w_log_in}}</button></form>
</section></main></body></html>
"""

DASHBOARD_JS = COMMON_JS + r"""
// The page's words in its viewer's language (pages.dashboard_words, pages.board_words);
// the live data asks for the same language (results and the event log are said there).
const initialBox = document.getElementById("initial");
if (initialBox) W = JSON.parse(initialBox.textContent).words || {};
const LANG = "lang=" + encodeURIComponent(document.documentElement.lang || "en");
const csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
const boardId = document.body.dataset.board;
const referee = document.body.dataset.referee === "yes";
// How fresh a board's feed is (pi_app/net/eventlog.py feed_text says the same): "heard_s"
// is counted on the dashboard's clock when the data was sent, and grows here by the time
// this page has held it, so the browser's own clock never enters.
const QUIET_AFTER = 60, LIVE_WITHIN = 2;
function ago(s) {
  s = Math.max(0, s);
  if (s < 90) return Math.round(s) + " s";
  if (s < 5400) return Math.round(s / 60) + " min";
  return (s / 3600).toFixed(1) + " h";
}
function feedText(s, held) {
  if (s.heard_s === null || s.heard_s === undefined) {
    return s.status === "never" ? say("s_never", "never connected")
                                : say("not_heard", "not heard since start");
  }
  const quiet = s.heard_s + held;
  if (s.online === false) return say("last_heard", "last heard {ago} ago", {ago: ago(quiet)});
  let text = (s.behind_s === null || s.behind_s <= LIVE_WITHIN) ? say("live", "live") :
    say("behind", "{ago} behind", {ago: ago(s.behind_s)});
  if (quiet > QUIET_AFTER) text += " \u00b7 " + say("quiet", "quiet {ago}", {ago: ago(quiet)});
  return text;
}
const shown = new Map();  // board -> [summary, performance.now() when it came]
function tick() {
  for (const [board, [s, at]] of shown) {
    if (s.status === "never" && !boardId) continue;  // the row's badge says it
    const text = feedText(s, (performance.now() - at) / 1000);
    const cell = boardId ? document.getElementById("feed") :
      document.querySelector("#row-" + CSS.escape(board) + " .feed");
    if (cell && cell.textContent !== text) cell.textContent = text;
  }
}
setInterval(tick, 5000);
function row(s) {
  shown.set(s.board, [s, performance.now()]);
  const tr = el("tr");
  tr.id = "row-" + s.board;
  tr.dataset.status = s.status;
  const link = el("a", s.board);
  link.href = "/board/" + encodeURIComponent(s.board);
  const cell = el("td"); cell.append(link);
  cell.className = "c-board";
  const badge = el("span", say("s_" + s.status, s.status_text || s.status),
                   "badge s-" + String(s.status).replace(/[^a-z_]/g, ""));
  const status = el("td", null, "c-status"); status.append(badge);
  if (s.gaps) status.append(el("span", " " + say("gap", "gap"), "warn"));
  if (s.malformed) {
    const bad = el("span", " " + say("malformed", "malformed {count}", {count: s.malformed}),
                   "warn malformed");
    bad.title = s.problem || "";
    status.append(bad);
  }
  const number = (v) => (typeof v === "number" ? String(v) : "");
  tr.append(cell, el("td", number(s.round), "c-round"), el("td", number(s.table), "c-table"),
            status, el("td", say("title:" + s.title, s.title || s.game || ""), "c-game"),
            el("td", (s.players || []).join(" \u2013 "), "c-players"),
            el("td", (s.scores || []).join(" : "), "c-scores"),
            el("td", s.game ? s.moves : "", "c-moves"),
            el("td", s.last_move || "", "c-last"),
            el("td", s.status === "never" ? "" : feedText(s, 0), "feed"),
            el("td", s.last_result ? s.last_result.text : "", "c-result"));
  return tr;
}
function showRow(s) {
  const grid = document.getElementById("grid");
  const old = document.getElementById("row-" + s.board);
  const fresh = row(s);
  if (old) { old.replaceWith(fresh); return; }
  const rows = Array.from(grid.children);
  const after = rows.find((r) => r.id > fresh.id);
  grid.insertBefore(fresh, after || null);
  document.getElementById("boards-count").textContent =
    say("boards", "{count} boards", {count: grid.children.length});
}
function showBoard(s) {
  shown.set(s.board, [s, performance.now()]);
  setBadge("status", s.status);
  document.getElementById("status").textContent = say("s_" + s.status, s.status_text || s.status);
  document.getElementById("feed").textContent = feedText(s, 0);
  document.getElementById("last-result").textContent = s.last_result ? s.last_result.text : "";
  document.getElementById("title").textContent = say("title:" + s.title, s.title || "");
  setSvg("picture", s.svg);
  fill("players", playerRows(s.players, s.scores, s.to_move));
  fill("moves", (s.moves_list || []).map((m) => el("li", m)));
  fill("guidance", (s.guidance || []).map((g) => el("li", g)));
  // Newest first: the log a referee reads is the one line that just came.
  fill("events", (s.events_tail || []).slice().reverse().map((e) => el("li", e.line)));
  // The result in words is #last-result's; who ruled it, and why, is said here.
  document.getElementById("confirmed").textContent = s.confirmed ?
    say("ruled_by", "Ruled by {referee}", {referee: s.confirmed.referee})
    + (s.confirmed.note ? ": " + s.confirmed.note : "") : "";
  document.body.dataset.gameId = s.game_id === null ? "" : String(s.game_id);
  document.body.dataset.seq = String(s.seq || 0);
}
async function post(url, body) {
  const response = await fetch(url, {method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
    body: JSON.stringify(body)});
  let data = {};
  try { data = await response.json(); } catch (e) { data = {}; }
  const out = document.getElementById("result");
  if (out) {
    out.textContent = response.ok ? say("done", "Done.")
      : (data.error || say("refused", "Refused ({status})", {status: response.status}));
  }
  return response.status;
}
function on(id, handler) {
  const form = document.getElementById(id);
  if (form) form.addEventListener("submit", (e) => { e.preventDefault(); handler(); });
}
if (!referee) document.querySelectorAll(".referee-only").forEach((n) => n.remove());
// The dashboard holds only so many live streams (503 past its cap); EventSource gives up for
// good on a refused one, so the page fetches once and tries again after 5 s doubling to a
// minute, spread at random.
function live(url, handler, poll) {
  let delay = 5000;
  function open() {
    const source = stream(url, {board: handler});
    source.addEventListener("open", () => { delay = 5000; });
    source.addEventListener("error", () => {
      if (source.readyState !== EventSource.CLOSED) return;
      source.close();
      const wait = delay * (0.75 + Math.random() / 2);
      delay = Math.min(delay * 2, 60000);
      setTimeout(async () => {
        try {
          const response = await fetch(poll, {cache: "no-store"});
          if (response.ok) [].concat(await response.json()).forEach(handler);
        } catch (e) { /* away: the stream's next try says so again */ }
        open();
      }, wait);
    });
  }
  open();
}
if (boardId) {
  on("confirm-form", () => post("/api/board/" + encodeURIComponent(boardId) + "/confirm",
    {game_id: Number(document.body.dataset.gameId)}));
  on("correct-form", () => post("/api/board/" + encodeURIComponent(boardId) + "/confirm", {
    game_id: Number(document.body.dataset.gameId),
    // people number players from 1; records (and the API) from 0
    winners: document.getElementById("correct-winners").value.split(",")
      .map((w) => w.trim()).filter((w) => w !== "").map((w) => Number(w) - 1),
    note: document.getElementById("correct-note").value}));
  live("/api/stream?board=" + encodeURIComponent(boardId) + "&" + LANG, showBoard,
       "/api/board/" + encodeURIComponent(boardId) + "?" + LANG);
} else {
  live("/api/stream?" + LANG, showRow, "/api/boards?" + LANG);
}
"""


def account_html(user: str | None, csrf: str,
                 _: Callable[[str], str] = lambda text: text) -> str:
    """The header's login link, or the referee's name, export and log-out (``_``: the
    page's gettext)."""
    if user is None:
        login = escape(_("referee login"))
        return f'<a href="/login" id="login">{login}</a>'
    export, log_out = escape(_("export records")), escape(_("log out"))
    return (f'<span id="user">{escape(user)}</span> <a href="/export.json" id="export">'
            f'{export}</a> <form method="post" action="/logout">'
            f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
            f'<button type="submit">{log_out}</button></form>')
