"""What every rules engine shares beyond the rules: one naming scheme, a typed final result,
and caches that are explicit and bounded rather than hidden on the engine singletons."""

from __future__ import annotations

import pytest

from pi_app.games import GAME_NAMES, get_game


@pytest.mark.parametrize("name", GAME_NAMES)
def test_engine_classes_are_named_alike(name: str) -> None:
    """``<Game>Game`` in ``pi_app.games.<name>``: ToppleGame, ManamiGame, TacTikiGame."""
    cls = type(get_game(name))
    assert cls.__module__ == f"pi_app.games.{name}"
    assert cls.__name__.endswith("Game") and cls.__name__.lower() == f"{name}game"
