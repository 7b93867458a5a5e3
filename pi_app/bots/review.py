"""After a game: each player's moves where the bot's evaluation dropped most.

For every decision of a finished game's record, the position before it is valued for the player
who decided, after each of their legal moves, by the evaluation the greedy level maximises
(:meth:`pi_app.bots.models.Model.evaluate`). A move's *drop* is how much less the played move is
worth than the best one; the review names each player's largest drops (at most
:data:`PER_PLAYER`, none below the game's :data:`MIN_DROP`, which is the evaluation's noise
rather than a mistake) with the move the evaluation liked best.

It reads the **full-information** state: the game is over, so every Secret Tiki card and TacTiki
rank is public, and a move is judged by what it did on the table. (Tiki Topple's evaluation reads
only the mover's own card and the public line, so there the review is seat-honest anyway; a
TacTiki move is judged with the enemy ranks the mover could not see. A seat-honest TacTiki review
would average over the ranks the seat did not know, as the greedy level does; after the game
that would only blur the answer.) It looks one move ahead, like the greedy level: a short review
for players at the table, not an analysis.

Pure and bounded: it stops at ``seconds`` (the station runs it off its event loop, on a worker
thread) and then says how many decisions it covered, so a long game on a slow Pi still gets a
review of its first part rather than a late one.

Beyond the slips (issue 34): the **curve**, what the evaluation (:meth:`Model.values`, each
player's share in ``[0, 1]``, 0.5 even) makes of the position after every move, and the
**scores** after every move (Topple's totals by rounds, Manami's fruit), which
:mod:`pi_app.bots.review_svg` draws as charts; each slip carries the position before it (what
the sensors read) and the cells of the better move, so a picture can show both. The seats the
station's own bots played (the record's ``station_seats``) are never named: a bot's move is not
a player's mistake to learn from.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_app.bots.models import MODELS
from pi_app.games import get_game
from pi_app.games.base import Game, IllegalMove
from pi_app.json_types import JSON

#: The most moves named per player.
PER_PLAYER = 3
#: The smallest drop named, in each game's evaluation units (``Model.evaluate``: Topple's
#: points of the seat's card, Manami's fruit lead, TacTiki's share of a win): below it the
#: one-move evaluation is not exact enough to call a move a mistake.
MIN_DROP: dict[str, float] = {"topple": 1.0, "manami": 1.0, "tactiki": 0.03}


@dataclass(frozen=True)
class Slip:
    """One move the review names: ``move`` is its number in the whole game (counted from 1,
    as the page's move list shows it), ``drop`` the share of a win it gave away. ``before`` is
    the position before it as the sensors read it (cell -> pieces, bottom first), ``lift`` and
    ``put`` the cells the better move takes a piece from and puts one on."""

    player: int
    move: int
    text: str
    better: str
    drop: float
    before: tuple[tuple[str, tuple[str, ...]], ...] = ()
    lift: tuple[str, ...] = ()
    put: tuple[str, ...] = ()

    def to_json(self) -> JSON:
        return {"player": self.player, "move": self.move, "text": self.text,
                "better": self.better, "drop": round(self.drop, 3),
                "before": {cell: list(pieces) for cell, pieces in self.before},
                "lift": list(self.lift), "put": list(self.put)}


@dataclass(frozen=True)
class Point:
    """The game after move ``move`` (from 1) by ``player``: what the evaluation makes of it
    for each player (``values``, 0.5 even) and the scores then."""

    move: int
    player: int
    values: tuple[float, ...]
    scores: tuple[int, ...]

    def to_json(self) -> JSON:
        return {"move": self.move, "player": self.player,
                "values": [round(v, 3) for v in self.values], "scores": list(self.scores)}


@dataclass(frozen=True)
class Review:
    """The slips, each player's worst first, and how many of the record's decisions were
    valued (``partial``: the time ran out before the last)."""

    slips: tuple[Slip, ...]
    reviewed: int
    total: int
    curve: tuple[Point, ...] = ()
    game: str = ""
    skipped: tuple[int, ...] = ()

    @property
    def partial(self) -> bool:
        return self.reviewed < self.total

    def to_json(self) -> JSON:
        return {"done": True, "slips": [s.to_json() for s in self.slips],
                "reviewed": self.reviewed, "total": self.total, "partial": self.partial,
                "game": self.game, "curve": [p.to_json() for p in self.curve],
                "skipped": list(self.skipped)}


def station_seats(record: JSON) -> tuple[int, ...]:
    """The seats the station's bots played (``station_seats``, ``docs/records.md``)."""
    raw = record.get("station_seats")
    if not isinstance(raw, dict):
        return ()
    return tuple(sorted(int(seat) for seat in raw if isinstance(seat, str) and seat.isdigit()))


def review(record: JSON, *, seconds: float = 3.0,
           clock: Callable[[], float] = time.perf_counter,
           skip: tuple[int, ...] | None = None) -> Review:
    """The review of ``record`` (a finished game, ``docs/records.md``), thinking at most
    ``seconds``. A record that does not replay is reviewed up to its first illegal move.
    ``skip``: seats whose moves are never named (default: the record's station seats)."""
    game = get_game(record["game"])
    model = MODELS[game.name]
    skipped = station_seats(record) if skip is None else skip
    deadline = clock() + seconds
    drops: list[Slip] = []
    curve: list[Point] = []
    state: Any = None
    reviewed = total = 0
    stopped = False

    def done() -> Review:
        return Review(_worst(drops), reviewed, total, tuple(curve), game.name, skipped)

    for segment in game.record_segments(record):
        try:
            state = segment.start(state)
        except IllegalMove:
            break
        for text in segment.moves:
            try:
                played = game.parse_move(state, text)
            except IllegalMove:
                return done()
            total += 1
            seat = game.to_move(state)
            if not stopped and seat is not None:
                stopped = clock() > deadline
                if not stopped:
                    reviewed += 1
                    slip = None if seat in skipped else _slip(model, state, seat, played, total)
                    if slip is not None:
                        drops.append(slip)
            try:
                state = game.apply(state, played)
            except IllegalMove:
                total -= 1
                return done()
            if not stopped and seat is not None:
                curve.append(Point(total, seat, tuple(model.values(state)),
                                   tuple(game.scores(state))))
    return done()


def changed_cells(game: Game[Any, Any], state: Any, move: Any
                  ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(cells a piece leaves, cells a piece arrives on) when ``move`` is made by hand in
    ``state``: a cell whose stack only shrank is lifted from, any other that changed is put on."""
    before = game.expected_view(state)
    after = game.placement_view(state, move)
    lift: list[str] = []
    put: list[str] = []
    for cell in sorted(set(before) | set(after)):
        was, now = tuple(before.get(cell, ())), tuple(after.get(cell, ()))
        if was == now:
            continue
        (lift if len(now) < len(was) and was[:len(now)] == now else put).append(cell)
    return tuple(lift), tuple(put)


def _slip(model: Any, state: Any, seat: int, played: Any, number: int) -> Slip | None:
    """The drop of ``played`` against the model's best move for ``seat`` in ``state``."""
    game = model.game
    worth = model.evaluate(game.apply(state, played), seat)
    best, best_worth = played, worth
    for move in model.moves(state):
        value = model.evaluate(game.apply(state, move), seat)
        if value > best_worth + 1e-9:
            best, best_worth = move, value
    drop = best_worth - worth
    if drop < MIN_DROP[game.name]:
        return None
    view = game.expected_view(state)
    lift, put = changed_cells(game, state, best)
    return Slip(seat, number, game.move_text(state, played), game.move_text(state, best), drop,
                tuple((cell, tuple(view[cell])) for cell in sorted(view)), lift, put)


def _worst(slips: list[Slip]) -> tuple[Slip, ...]:
    """Each player's :data:`PER_PLAYER` largest drops, players in seat order, worst first."""
    out: list[Slip] = []
    for seat in sorted({s.player for s in slips}):
        mine = sorted((s for s in slips if s.player == seat), key=lambda s: (-s.drop, s.move))
        out += mine[:PER_PLAYER]
    return tuple(out)
