"""A game's equipment as the board sees it: the registry name of every piece's tag (and of
Topple's cards), and a registry of made-up UIDs for them.

The made-up registry is what the simulated sensor board reads, in the daemon (``sensors.source
= "sim"``), the demo and the tests; it is board description, not simulation, so the referee
uses it without importing the simulator.
"""

from __future__ import annotations

import random

from pi_app.board.registry import TagRegistry
from pi_app.games import get_game
from pi_app.games.base import card_tag

#: The registry name of a secret card's tag (a Secret Tiki card: ``card:Hookipa/Lokahi/Nani``).
card_name = card_tag


def registry_for(game_name: str, salt: int = 0) -> TagRegistry:
    """Made-up UIDs for every piece of ``game_name`` and every other tag its table reads
    (Topple's action cards and Secret Tiki cards: ``Game.table_tags``)."""
    game = get_game(game_name)
    names = game.pieces(game.new_game(random.Random(0))) + game.table_tags()
    return TagRegistry.synthetic(names, salt=salt)
