"""The rules engines, one module per game, all behind :class:`pi_app.games.base.Game`.

Engines are looked up by the record's ``"game"`` value. Each engine module exposes ``GAME``;
modules are imported on first use so that one game's import cost is never paid for another.
"""

from __future__ import annotations

import importlib
from typing import Any

from pi_app.games.base import Game, GameError, IllegalMove, RecordError, Segment, View

__all__ = ["GAME_NAMES", "Game", "GameError", "IllegalMove", "RecordError", "Segment", "View",
           "get_game"]

_MODULES = {
    "topple": "pi_app.games.topple",
    "manami": "pi_app.games.manami",
    "tactiki": "pi_app.games.tactiki",
}

#: The record ``"game"`` values the station knows, in menu order.
GAME_NAMES: tuple[str, ...] = tuple(_MODULES)


def get_game(name: str) -> Game[Any, Any]:
    """The engine for a record's ``"game"`` value; :class:`RecordError` for an unknown one."""
    module = _MODULES.get(name)
    if module is None:
        known = ", ".join(GAME_NAMES)
        raise RecordError(f"unknown game {name!r} (known games: {known})")
    game: Game[Any, Any] = importlib.import_module(module).GAME
    return game
