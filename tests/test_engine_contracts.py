"""What every rules engine shares beyond the rules: one naming scheme, a typed final result,
and caches that are explicit and bounded rather than hidden on the engine singletons."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pi_app.games import GAME_NAMES, Game, get_game
from pi_app.games.base import FinalResult
from pi_app.referee.session import Session
from pi_app.referee.store import EventStore


@pytest.mark.parametrize("name", GAME_NAMES)
def test_engine_classes_are_named_alike(name: str) -> None:
    """``<Game>Game`` in ``pi_app.games.<name>``: ToppleGame, ManamiGame, TacTikiGame."""
    cls = type(get_game(name))
    assert cls.__module__ == f"pi_app.games.{name}"
    assert cls.__name__.endswith("Game") and cls.__name__.lower() == f"{name}game"


# -- the final result -----------------------------------------------------------------------------
def _play_out(name: str, seed: int) -> tuple[Game[Any, Any], list[Any]]:
    """A random game to its end: every state on the way."""
    game = get_game(name)
    rng = random.Random(seed)
    state = game.new_game(rng)
    states = [state]
    for _ in range(3000):
        if game.is_over(state):
            return game, states
        if game.to_move(state) is None:
            state = game.deal(state, rng)
        else:
            state = game.apply(state, game.random_move(state, rng))
        states.append(state)
    raise AssertionError(f"{name} seed {seed}: no end in 3000 moves")


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_finished_game_has_a_final_result(name: str) -> None:
    for seed in range(12):
        game, states = _play_out(name, seed)
        assert all(game.result(s) is None for s in states[:-1])
        result = game.result(states[-1])
        assert isinstance(result, FinalResult)
        assert result.scores == game.scores(states[-1])
        assert result.winners == game.winners(states[-1]) and set(result.winners) <= set(
            range(len(result.scores)))
        # How each game reads a draw (docs/records.md): Topple shares a win and never draws,
        # Manami's tie lists both players, TacTiki's referee draw lists nobody.
        if name == "topple":
            assert not result.draw and result.winners
        elif name == "manami":
            assert result.draw == (result.scores[0] == result.scores[1])
            assert result.winners == ((0, 1) if result.draw else result.winners)
        else:
            assert result.draw == (result.winners == ())
        assert result.to_json() == {"scores": list(result.scores),
                                    "winners": list(result.winners)}


def test_the_stored_result_is_the_json_stations_always_wrote(tmp_path: Path) -> None:
    """``games.result`` keeps its form: the scores and the winners, nothing else."""
    game, states = _play_out("manami", 2)
    store = EventStore(tmp_path / "s.db")
    session = Session.new(store, "manami", state=states[0])
    session.state = states[-1]
    assert session.finish_if_over() is not None
    store.close()
    with sqlite3.connect(tmp_path / "s.db") as db:
        (raw,) = db.execute("SELECT result FROM games").fetchone()
    winners = game.winners(states[-1])
    assert winners is not None
    assert raw == json.dumps({"scores": list(game.scores(states[-1])), "winners": list(winners)})
