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
from pi_app.bots.models import MODELS
from pi_app.bots.play import decide
from pi_app.bots.review import changed_cells, review
from pi_app.bots.views import FirstStep, SeatView, seat_view
from pi_app.games import get_game
from pi_app.games.base import Game, GameError
from pi_app.json_types import JSON
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
    #: The first part of the turn already made, whose outcome the seat has now seen (a
    #: TacTiki first step into a fight); the rest is asked next.
    first: FirstStep | None = None
    error: str = ""
    out: Path | None = None
    saved: str = ""
    reviewed: JSON | None = None

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

    def _seat_view(self) -> SeatView | None:
        """The view of the person to move (after the first step, when one is made)."""
        seat = self.game.to_move(self.state)
        if seat is None or seat not in self.people:
            return None
        view = seat_view(self.game, self.state, seat)
        return view if self.first is None else view.after_step(self.state, self.first)

    def _ways(self) -> list[tuple[str, Any, tuple[str, ...], tuple[str, ...]]]:
        """(text, move, lift, put) of each option the person may tap now. A move whose first
        part starts what the seat cannot foresee (a TacTiki fight against unseen ranks,
        :meth:`SeatView.unforeseen_step`) is offered as that part alone, and once it is made
        the rest as the moves that go on from it (the seat's model's ``root_moves``)."""
        view = self._seat_view()
        if view is None:
            return []
        game, state = self.game, self.state
        out: dict[str, tuple[str, Any, tuple[str, ...], tuple[str, ...]]] = {}
        if self.first is not None:
            for move in MODELS[game.name].root_moves(view, state):
                text = game.move_text(state, move)
                out.setdefault(text, (text, move, *changed_cells(game, state, move)))
            return list(out.values())
        for move in game.legal_moves(state):
            step = view.unforeseen_step(move)
            if step is not None:
                out.setdefault(step.text, (step.text, step, step.lift, step.put))
                continue
            text = game.move_text(state, move)
            out.setdefault(text, (text, move, *changed_cells(game, state, move)))
        return list(out.values())

    def options(self) -> list[dict[str, Any]]:
        """The moves the person to move may tap now: text, and the cells it lifts from and
        puts on."""
        return [{"text": text, "lift": list(lift), "put": list(put)}
                for text, _, lift, put in self._ways()]

    def play(self, text: str) -> None:
        """Make the tapped option ``text``; :class:`GameError` with the reason when it is not
        one (the page was stale, or the request was made by hand)."""
        if self.game.to_move(self.state) not in self.people:
            raise GameError("it is not your turn")
        chosen = next((move for t, move, _, _ in self._ways() if t == text), None)
        if chosen is None:
            raise GameError(f"{text!r} is not a move you can make now")
        if isinstance(chosen, FirstStep):
            self.first = chosen
            return
        self._apply(chosen)
        self.advance()

    # -- what the page shows ---------------------------------------------------------------------
    def _viewer(self) -> int | None:
        """Whose eyes the board is drawn for: the person to move (or the one person)."""
        seat = self.game.to_move(self.state)
        if seat in self.people:
            return seat
        return min(self.people) if len(self.people) == 1 else None

    def view(self) -> dict[str, list[str]]:
        """The board as the viewer may see it: every piece while the game is over, else their
        own pieces in full and everything else as anyone at the table sees it. After a first
        step, the board with that step made and its fight settled."""
        game = self.game
        full = game.expected_view(self.state)
        if self.first is not None:
            way = next(m for m in game.ways(self.state)
                       if self._first_of(m) == self.first.step)
            full = (game.transit_views(self.state, way) or [full])[-1]
        if game.is_over(self.state):
            return {c: list(p) for c, p in full.items()}
        viewer = self._viewer()
        return {cell: [p if piece_style(game.name, p).owner == viewer and viewer is not None
                       else game.public_piece(p) for p in pieces]
                for cell, pieces in full.items()}

    def _first_of(self, move: Any) -> Any:
        view = seat_view(self.game, self.state, self.game.to_move(self.state) or 0)
        step = view.unforeseen_step(move)
        return None if step is None else step.step

    def facts(self) -> list[str]:
        """Lines the board does not show: the viewer's secret card (the state's documented
        ``cards``, ``docs/records.md``), the scores."""
        out = []
        viewer = self._viewer()
        if viewer is not None and not self.game.is_over(self.state):
            cards = self.game.state_to_json(self.state).get("cards")
            if isinstance(cards, list) and viewer < len(cards) and cards[viewer]:
                out.append("Your secret card: " + ", ".join(map(str, cards[viewer])))
        out.append("Scores: " + ", ".join(f"Player {i + 1}: {s}" for i, s in
                                         enumerate(self.game.scores(self.state))))
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
            if self.reviewed is None:  # once: the page asks for the state again and again
                self.reviewed = review(self.record(), skip=tuple(
                    s for s in range(len(game.scores(state))) if s not in self.people)).to_json()
            data["review"] = self.reviewed
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
