"""Hints that are the same for the same position and level, and only for the asker's turn.

A hint used to draw its chance from a fresh seed on every ask and to stop its search at a
time limit, so the same position could get ``place b2``, ``place b3`` and ``place a1`` on
three asks (issue 34), and a faster machine another answer again. Here the chance is seeded
from the position (:func:`hint_seed`: what the sensors read, made public, and whose turn it
is, so it is the same in every process and never depends on a hidden fact) and the search
has a playout budget only (the level's own, :data:`pi_app.bots.levels.NAMED`), so a hint is a
function of the position and the level. The bot sees only the asker's view, as ever.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from pi_app.bots.base import Budget
from pi_app.bots.levels import NAMED, make_bot
from pi_app.bots.views import seat_view
from pi_app.errors import TikiError
from pi_app.games.base import Game

#: The level hints are given at: the club level, whose TacTiki budget a Pi 4 thinks through
#: in about a second (``docs/levels.md``).
HINT_LEVEL = "club"


class NotYourTurn(TikiError, ValueError):
    """A hint asked for by a player who is not to move: a hint is for one's own turn only (a
    refusal meant for a person, so under the one root; still a ``ValueError`` for its callers)."""


def hint_seed(game: Game[Any, Any], state: Any, level: str) -> int:
    """A seed from the position as anyone may see it, whose turn it is and the level."""
    public = game.public_view(game.expected_view(state))
    text = json.dumps([game.name, level, game.to_move(state), public], sort_keys=True)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def hint_budget(game_name: str, level: str = HINT_LEVEL) -> Budget:
    """The level's playouts for the game, with no time limit: a time limit would make the
    hint depend on how busy the machine is. A greedy level needs none."""
    spec = NAMED[level]
    return Budget(playouts=spec.playouts_for(game_name) if spec.playouts else 1)


def hint_rng(game: Game[Any, Any], state: Any, level: str = HINT_LEVEL) -> random.Random:
    """The chance a hint for ``state`` at ``level`` draws from."""
    return random.Random(hint_seed(game, state, level))


def hint(game: Game[Any, Any], state: Any, asker: int, level: str = HINT_LEVEL) -> Any:
    """The move the ``level`` bot suggests to ``asker`` from their view; :class:`NotYourTurn`
    when it is not ``asker``'s turn (nobody's, or another player's)."""
    seat = game.to_move(state)
    if seat is None or seat != asker:
        raise NotYourTurn("a hint is only for your own turn")
    bot = make_bot(game.name, level)
    return bot.choose(seat_view(game, state, seat), hint_rng(game, state, level),
                      hint_budget(game.name, level))
