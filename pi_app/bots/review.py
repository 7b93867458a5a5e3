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
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_app.bots.models import MODELS
from pi_app.games import get_game
from pi_app.games.base import JSON, IllegalMove

#: The most moves named per player.
PER_PLAYER = 3
#: The smallest drop named, in each game's evaluation units (``Model.evaluate``: Topple's
#: points of the seat's card, Manami's fruit lead, TacTiki's share of a win): below it the
#: one-move evaluation is not exact enough to call a move a mistake.
MIN_DROP: dict[str, float] = {"topple": 1.0, "manami": 1.0, "tactiki": 0.03}


@dataclass(frozen=True)
class Slip:
    """One move the review names: ``move`` is its number in the whole game (counted from 1,
    as the page's move list shows it), ``drop`` the share of a win it gave away."""

    player: int
    move: int
    text: str
    better: str
    drop: float

    def to_json(self) -> JSON:
        return {"player": self.player, "move": self.move, "text": self.text,
                "better": self.better, "drop": round(self.drop, 3)}


@dataclass(frozen=True)
class Review:
    """The slips, each player's worst first, and how many of the record's decisions were
    valued (``partial``: the time ran out before the last)."""

    slips: tuple[Slip, ...]
    reviewed: int
    total: int

    @property
    def partial(self) -> bool:
        return self.reviewed < self.total

    def to_json(self) -> JSON:
        return {"done": True, "slips": [s.to_json() for s in self.slips],
                "reviewed": self.reviewed, "total": self.total, "partial": self.partial}


def review(record: JSON, *, seconds: float = 3.0,
           clock: Callable[[], float] = time.perf_counter) -> Review:
    """The review of ``record`` (a finished game, ``docs/records.md``), thinking at most
    ``seconds``. A record that does not replay is reviewed up to its first illegal move."""
    game = get_game(record["game"])
    model = MODELS[game.name]
    deadline = clock() + seconds
    drops: list[Slip] = []
    state: Any = None
    reviewed = total = 0
    stopped = False
    for segment in game.record_segments(record):
        try:
            state = segment.start(state)
        except IllegalMove:
            break
        for text in segment.moves:
            try:
                played = game.parse_move(state, text)
            except IllegalMove:
                return Review(_worst(drops), reviewed, total)
            total += 1
            seat = game.to_move(state)
            if not stopped and seat is not None:
                stopped = clock() > deadline
                if not stopped:
                    reviewed += 1
                    slip = _slip(model, state, seat, played, total)
                    if slip is not None:
                        drops.append(slip)
            state = game.apply(state, played)
    return Review(_worst(drops), reviewed, total)


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
    return Slip(seat, number, game.move_text(state, played), game.move_text(state, best), drop)


def _worst(slips: list[Slip]) -> tuple[Slip, ...]:
    """Each player's :data:`PER_PLAYER` largest drops, players in seat order, worst first."""
    out: list[Slip] = []
    for seat in sorted({s.player for s in slips}):
        mine = sorted((s for s in slips if s.player == seat), key=lambda s: (-s.drop, s.move))
        out += mine[:PER_PLAYER]
    return tuple(out)
