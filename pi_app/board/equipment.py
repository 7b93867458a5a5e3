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

#: Tags the Topple card pad may see: the action cards (an Up 1 answers "which card?").
ACTION_CARDS = ("action:up1", "action:up2", "action:up3", "action:topple", "action:toast")


def card_name(card: tuple[str, str, str]) -> str:
    """The registry name of a Secret Tiki card's tag: ``card:Hookipa/Lokahi/Nani``."""
    return "card:" + "/".join(card)


def registry_for(game_name: str, salt: int = 0) -> TagRegistry:
    """Made-up UIDs for every piece of ``game_name`` (and Topple's action cards)."""
    game = get_game(game_name)
    names = game.pieces(game.new_game(random.Random(0)))
    if game_name == "topple":
        from pi_app.games.topple_deck import deck

        names += list(ACTION_CARDS) + [card_name(c) for c in deck()]
    return TagRegistry.synthetic(names, salt=salt)
