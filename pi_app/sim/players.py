"""Simulated players' equipment: a tag registry covering every piece of a game."""

from __future__ import annotations

import random

from pi_app.board.registry import TagRegistry
from pi_app.games import get_game

#: Tags the Topple card pad may see: the action cards (an Up 1 answers "which card?").
ACTION_CARDS = ("action:up1", "action:up2", "action:up3", "action:topple", "action:toast")


def registry_for(game_name: str, salt: int = 0) -> TagRegistry:
    """Made-up UIDs for every piece of ``game_name`` (and Topple's action cards)."""
    game = get_game(game_name)
    names = game.pieces(game.new_game(random.Random(0)))
    if game_name == "topple":
        names += list(ACTION_CARDS)
    return TagRegistry.synthetic(names, salt=salt)
