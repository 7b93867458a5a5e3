"""``tikiboard play GAME``: a game on the page, moves by tap or click, no hardware (issue 34).

The page draws the board as the station's page does (:func:`pi_app.net.svg.board_svg`); a tap
on a cell lists the player's legal moves that take a piece from it or put one on it, and a tap
on one of those makes it. The station's bot plays the other seat at the chosen level
(:data:`pi_app.bots.ALL_LEVELS`), or two people share the screen. The same engines check every
move: an illegal one (a stale page, a hand-made request) is refused with the engine's reason and
nothing is lost. A TacTiki turn is made step by step, as at the table: the first step, then,
once its fight has shown what it shows, the second (the whole turns of the position would tell
the outcome of fights against ranks the player has not seen). The page shows the player to
move only what their seat may see (:func:`pi_app.bots.views.seat_view`'s rules: TacTiki's enemy
ranks and the other Topple cards stay hidden until the game is over).

When the game ends the record (``docs/records.md``) is written to ``--out`` and the page shows
the review (:mod:`pi_app.bots.review`) with its charts (:mod:`pi_app.net.review_svg`). A hint
(:mod:`pi_app.bots.hints`) is the same for the same position and only for the player to move;
the page outlines its cells. The server binds the loopback address unless told otherwise.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from pi_app.bots.base import Budget
from pi_app.bots.hints import NotYourTurn, hint
from pi_app.bots.levels import make_bot
from pi_app.bots.play import decide
from pi_app.bots.review import changed_cells, review
from pi_app.games import get_game
from pi_app.games.base import JSON, Game, GameError
from pi_app.net.review_svg import evaluation_svg, scores_svg, slip_svg
from pi_app.net.svg import board_svg, piece_style
from pi_app.records import fold

#: A bot decision's safety cap (a named level has its own playout budget).
BOT_SECONDS = 5.0


@dataclass
class PlayGame:
    """One game on the page: the engine's state, who the people are, and what was played."""

    game: Game[Any, Any]
    state: Any
    people: frozenset[int]
    level: str
    rng: random.Random
    setup: JSON
    events: list[tuple[str, JSON]] = field(default_factory=list)
    #: TacTiki: the first step of the turn already made (the second is asked next).
    first: tuple[int, int] | None = None
    error: str = ""
    out: Path | None = None
    saved: str = ""

    @classmethod
    def start(cls, game_name: str, level: str, people: frozenset[int], seed: int,
              out: Path | None = None) -> PlayGame:
        game = get_game(game_name)
        rng = random.Random(seed)
        options = {"players": 2} if len(game.player_counts) > 1 else None
        state = game.new_game(rng, options)
        made = cls(game, state, people, level, rng, game.setup_record(state), out=out)
        made.advance()
        return made

    # -- play ------------------------------------------------------------------------------------
    def advance(self) -> None:
        """Deal and let the bot play until a person is to move or the game is over."""
        game = self.game
        while not game.is_over(self.state):
            seat = game.to_move(self.state)
            if seat is None:
                self.state = game.deal(self.state, self.rng)
                self.events.append(("deal", {"round": game.round_record(self.state)}))
                continue
            if seat in self.people:
                return
            bot = make_bot(game.name, self.level)
            move = decide(game, self.state, bot, self.rng, Budget(seconds=BOT_SECONDS))
            self._apply(move)
        self._save()

    def _apply(self, move: Any) -> None:
        text = self.game.move_text(self.state, move)
        self.state = self.game.apply(self.state, move)
        self.events.append(("move", {"text": text}))
        self.first = None

    def options(self) -> list[dict[str, Any]]:
        """The moves the person to move may tap now: text, and the cells it lifts from and
        puts on (TacTiki: the first steps, or the second steps after one)."""
        game, state = self.game, self.state
        seat = game.to_move(state)
        if seat is None or seat not in self.people:
            return []
        if game.name != "tactiki":
            out = []
            for move in game.legal_moves(state):
                lift, put = changed_cells(game, state, move)
                out.append({"text": game.move_text(state, move), "lift": lift, "put": put})
            return out
        from pi_app.games import tactiki

        names = tactiki.FIELD_NAMES
        ways = game.ways(state)
        if self.first is None:
            seen: dict[str, dict[str, Any]] = {}
            for way in ways:
                if isinstance(way, tactiki.Steps):
                    a, b = way.steps[0]
                    seen.setdefault(f"{names[a]}-{names[b]}",
                                    {"text": f"{names[a]}-{names[b]}", "lift": [names[a]],
                                     "put": [names[b]]})
                else:
                    lift, put = changed_cells(game, state, way)
                    seen.setdefault(game.move_text(state, way),
                                    {"text": game.move_text(state, way), "lift": lift,
                                     "put": put})
            return list(seen.values())
        out = []
        for way in ways:
            if isinstance(way, tactiki.Steps) and way.steps[0] == self.first:
                if len(way.steps) == 1:
                    out.append({"text": "end the turn", "lift": [], "put": []})
                else:
                    a, b = way.steps[1]
                    out.append({"text": f"{names[a]}-{names[b]}", "lift": [names[a]],
                                "put": [names[b]]})
        return out

    def play(self, text: str) -> None:
        """Make the tapped option ``text``; :class:`GameError` with the reason when it is not
        one (the page was stale, or the request was made by hand)."""
        game, state = self.game, self.state
        if game.to_move(state) not in self.people:
            raise GameError("it is not your turn")
        if text not in {o["text"] for o in self.options()}:
            raise GameError(f"{text!r} is not a move you can make now")
        if game.name == "tactiki":
            from pi_app.games import tactiki

            if self.first is None and "-" in text and " " not in text:
                a, b = (tactiki.field_index(x) for x in text.split("-"))
                whole = [w for w in game.ways(state)
                         if isinstance(w, tactiki.Steps) and w.steps[0] == (a, b)]
                if all(len(w.steps) == 1 for w in whole):
                    self._apply(whole[0])
                else:
                    self.first = (a, b)
                    return
            elif self.first is not None:
                steps: tuple[tuple[int, int], ...] = (self.first,)
                if text != "end the turn":
                    a, b = (tactiki.field_index(x) for x in text.split("-"))
                    steps = (self.first, (a, b))
                self._apply(tactiki.Steps(steps))
            else:
                self._apply(game.parse_move(state, text))
        else:
            self._apply(game.parse_move(state, text))
        self.advance()

    # -- what the page shows ---------------------------------------------------------------------
    def _shown_state(self) -> Any:
        """The position to draw: mid-turn after a TacTiki first step (the fight settled)."""
        if self.first is None:
            return self.state
        from pi_app.games import tactiki

        way = next(w for w in self.game.ways(self.state)
                   if isinstance(w, tactiki.Steps) and w.steps[0] == self.first)
        assert isinstance(self.game, tactiki.TacTikiGame)
        return self.game.trace(self.state, way)[0]

    def _viewer(self) -> int | None:
        """Whose eyes the board is drawn for: the person to move (or the one person)."""
        seat = self.game.to_move(self.state)
        if seat in self.people:
            return seat
        return min(self.people) if len(self.people) == 1 else None

    def view(self) -> dict[str, list[str]]:
        """The board as the viewer may see it: every piece while the game is over, else their
        own pieces in full and everything else as anyone at the table sees it."""
        game = self.game
        full = game.expected_view(self._shown_state())
        if game.is_over(self.state):
            return {c: list(p) for c, p in full.items()}
        viewer = self._viewer()
        return {cell: [p if piece_style(game.name, p).owner == viewer and viewer is not None
                       else game.public_piece(p) for p in pieces]
                for cell, pieces in full.items()}

    def facts(self) -> list[str]:
        """Lines the board does not show: the viewer's Topple card, the scores."""
        out = []
        state = self.state
        viewer = self._viewer()
        if self.game.name == "topple" and viewer is not None and not self.game.is_over(state):
            card = state.table.cards[viewer]
            if card is not None:
                out.append("Your secret card: " + ", ".join(card))
        out.append("Scores: " + ", ".join(f"Player {i + 1}: {s}" for i, s in
                                         enumerate(self.game.scores(state))))
        return out

    def snapshot(self) -> JSON:
        game, state = self.game, self.state
        over = game.is_over(state)
        seat = game.to_move(state)
        data: JSON = {
            "game": game.name, "over": over, "to_move": seat,
            "yours": seat in self.people, "first": self.first is not None,
            "board": board_svg(game.name, self.view()), "options": self.options(),
            "facts": self.facts(), "moves": [d["text"] for k, d in self.events if k == "move"],
            "error": self.error, "saved": self.saved,
        }
        if over:
            result = game.result(state)
            data["result"] = None if result is None else result.to_json()
            done = review(self.record(), skip=tuple(s for s in range(len(game.scores(state)))
                                                   if s not in self.people))
            data["review"] = done.to_json()
            data["charts"] = [evaluation_svg(data["review"])] + [
                c for c in (scores_svg(data["review"]),) if c is not None]
            data["slips"] = [{"text": f"Player {s['player'] + 1}, move {s['move']}: "
                                      f"{s['text']} (better: {s['better']})",
                              "picture": slip_svg(game.name, s)}
                             for s in data["review"]["slips"]]
        return data

    def record(self) -> JSON:
        return fold(self.setup, self.events)

    def _save(self) -> None:
        if self.out is None or self.saved:
            return
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / f"{self.game.name}-{time.strftime('%Y%m%d-%H%M%S')}.tiki.json"
        path.write_text(json.dumps(self.record(), indent=1), encoding="utf-8")
        self.saved = str(path)


def create_play_app(game_name: str, level: str, people: frozenset[int], seed: int,
                    out: Path | None = None) -> Starlette:
    """The page and its three actions (``/state``, ``/move``, ``/hint``, ``/new``)."""
    holder = {"game": PlayGame.start(game_name, level, people, seed, out)}
    lock = asyncio.Lock()

    async def page(_request: Request) -> Response:
        return HTMLResponse(PAGE.replace("{{title}}", escape(get_game(game_name).title)))

    async def state(_request: Request) -> Response:
        return JSONResponse(holder["game"].snapshot())

    async def move(request: Request) -> Response:
        try:
            body = await request.json()
            text = str(body["text"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "send a move as {\"text\": ...}"}, status_code=400)
        async with lock:
            played = holder["game"]
            played.error = ""
            try:
                await asyncio.to_thread(played.play, text)
            except GameError as exc:
                played.error = str(exc)
            return JSONResponse(played.snapshot())

    async def give_hint(request: Request) -> Response:
        played = holder["game"]
        try:
            asked = request.query_params.get("seat")
            seat = played.game.to_move(played.state) if asked is None else int(asked)
            if seat is None or played.first is not None or seat not in played.people:
                raise NotYourTurn("a hint is only for your own turn, before its first step")
            move = await asyncio.to_thread(hint, played.game, played.state, seat)
        except (NotYourTurn, ValueError, TypeError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=409)
        lift, put = changed_cells(played.game, played.state, move)
        return JSONResponse({"text": played.game.move_text(played.state, move),
                             "lift": list(lift), "put": list(put)})

    async def new(_request: Request) -> Response:
        async with lock:
            holder["game"] = PlayGame.start(game_name, level, people,
                                            random.randrange(2**31), out)
            return JSONResponse(holder["game"].snapshot())

    return Starlette(routes=[Route("/", page), Route("/state", state),
                             Route("/move", move, methods=["POST"]),
                             Route("/hint", give_hint), Route("/new", new, methods=["POST"])])


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}: play</title>
<style>
body{font-family:sans-serif;margin:0;padding:8px;background:#fdf6e8;color:#222}
#board svg{width:100%;max-width:480px;height:auto;touch-action:manipulation}
#board [data-cell]{cursor:pointer}
#board .piece,#board text,#board .ghost{pointer-events:none}
#board .picked{stroke:#1565c0;stroke-width:2.6}
#board .hinted{stroke:#1b5e20;stroke-width:3;stroke-dasharray:3 2}
#options button{margin:3px;padding:10px 12px;font-size:16px;min-width:44px}
#error{color:#b71c1c;min-height:1.2em}
.chart svg,.slip svg{width:100%;max-width:480px;height:auto}
</style></head><body>
<h1 style="font-size:20px">{{title}}</h1>
<div id="status"></div><div id="error" role="alert"></div>
<div id="board"></div>
<div id="facts"></div>
<div id="options"></div>
<p><button id="hint">Hint</button> <button id="new">New game</button></p>
<div id="review"></div>
<script>
let snap = null, picked = null;
function cellsOf(o) { return o.lift.concat(o.put); }
function $(id) { return document.getElementById(id); }
function mark(cell, cls) {
  document.querySelectorAll('#board [data-cell="' + CSS.escape(cell) + '"]')
    .forEach(e => e.classList.add(cls));
}
function show(s) {
  snap = s; picked = null;
  $('board').innerHTML = s.board;
  $('error').textContent = s.error || '';
  $('facts').innerHTML = s.facts.map(f => '<div>' + esc(f) + '</div>').join('');
  let st = 'The station is thinking';
  if (s.over) st = 'Game over';
  else if (s.yours) st = s.first ? 'Your second step'
                                 : 'Your move (player ' + (s.to_move + 1) + ')';
  if (s.saved) st += ' (record: ' + s.saved + ')';
  $('status').textContent = st;
  document.querySelectorAll('#board [data-cell]')
    .forEach(el => el.addEventListener('click', () => pick(el.dataset.cell)));
  renderOptions();
  let review = '';
  if (s.over) {
    review = '<h2>Review</h2>' + s.charts.map(c => '<div class="chart">' + c + '</div>').join('');
    review += s.slips.map(x => '<div class="slip"><p>' + esc(x.text) + '</p>' + x.picture
                          + '</div>').join('');
  }
  $('review').innerHTML = review;
}
function esc(t) { const d = document.createElement('div'); d.textContent = t; return d.innerHTML; }
function pick(cell) {
  picked = (picked === cell) ? null : cell;
  document.querySelectorAll('#board .picked').forEach(e => e.classList.remove('picked'));
  if (picked) mark(picked, 'picked');
  renderOptions();
}
function renderOptions() {
  const box = $('options');
  box.innerHTML = '';
  if (!snap || !snap.yours) return;
  const loose = snap.options.filter(o => cellsOf(o).length === 0);
  if (picked === null && snap.options.length > 8) {
    box.textContent = 'Tap a piece or a cell to see its moves (' + snap.options.length + ').';
    loose.forEach(o => box.appendChild(button(o)));
    return;
  }
  snap.options.filter(o => picked === null || cellsOf(o).includes(picked) || !cellsOf(o).length)
    .forEach(o => box.appendChild(button(o)));
}
function button(o) {
  const b = document.createElement('button');
  b.textContent = o.text; b.className = 'move';
  b.addEventListener('click', () => send(o.text));
  return b;
}
async function send(text) {
  const r = await fetch('move', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                 body: JSON.stringify({text: text})});
  show(await r.json());
}
$('hint').addEventListener('click', async () => {
  const h = await (await fetch('hint')).json();
  if (h.error) { $('error').textContent = h.error; return; }
  $('error').textContent = 'Hint: ' + h.text;
  h.lift.concat(h.put).forEach(c => mark(c, 'hinted'));
});
$('new').addEventListener('click', async () => {
  show(await (await fetch('new', {method: 'POST'})).json());
});
fetch('state').then(r => r.json()).then(show);
</script></body></html>
"""
