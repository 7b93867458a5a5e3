"""What every rules engine shares beyond the rules: one naming scheme, a typed final result,
and caches that are explicit and bounded rather than hidden on the engine singletons."""

from __future__ import annotations

import json
import random
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from pi_app.board import tracker
from pi_app.games import GAME_NAMES, Game, get_game, tactiki
from pi_app.games.base import FinalResult
from pi_app.records import replay
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


# -- caches ---------------------------------------------------------------------------------------
def _tactiki_positions(count: int = 30) -> list[Any]:
    game = get_game("tactiki")
    rng = random.Random(7)
    state = game.new_game(rng)
    out: list[Any] = []
    while len(out) < count and not game.is_over(state):
        out.append(state)
        state = game.apply(state, game.random_move(state, rng))
    return out


@pytest.mark.parametrize("name", GAME_NAMES)
def test_the_engine_singletons_keep_no_state(name: str) -> None:
    """An engine is a stateless singleton shared by the station, its bots' thread and the
    tools: after real use it still holds nothing of its own (caches live in explicit, bounded
    functions)."""
    game, states = _play_out(name, 3)
    for state in states[:40]:
        if game.to_move(state) is None:
            continue
        for way in game.ways(state)[:30]:
            game.move_text(state, way)
            game.transit_views(state, way)
            game.placement_view(state, way)
    assert vars(game) == {}


def test_the_tactiki_caches_are_bounded_and_give_what_the_rules_compute() -> None:
    game = tactiki.GAME
    for state in _tactiki_positions():
        for way in game.ways(state):
            if isinstance(way, tactiki.Steps) and len(way.steps) == 2:
                # the in-between pictures, computed afresh from the whole turn
                placed = tactiki._physical_views(state, way)[0]
                middle = game.expected_view(game.trace(state, way)[0])
                assert game.transit_views(state, way) == [placed, middle]
    assert tactiki._turn_table.cache_info().maxsize == tactiki.TURN_TABLE_CACHE <= 16
    assert tactiki._first_step_views.cache_info().maxsize == tactiki.TRANSIT_CACHE <= 1024
    assert tactiki._turn_table.cache_info().currsize <= tactiki.TURN_TABLE_CACHE


def test_legal_moves_agree_across_threads() -> None:
    """The station's follower and a bot's search ask the one engine at the same time."""
    game = get_game("tactiki")
    positions = _tactiki_positions(24)
    alone = [[game.move_text(s, m) for m in game.legal_moves(s)] for s in positions]

    def texts(indexes: list[int]) -> list[list[str]]:
        return [[game.move_text(positions[i], m) for m in game.legal_moves(positions[i])]
                for i in indexes]

    with ThreadPoolExecutor(4) as pool:
        orders = [list(range(len(positions)))[k::4] for k in range(4)]
        results = list(pool.map(texts, orders))
    for order, got in zip(orders, results, strict=True):
        assert got == [alone[i] for i in order]


def test_view_keys_memo_is_bounded() -> None:
    for n in range(tracker.SORTED_STACKS_MAX + 10):
        tracker.view_key({"a": (f"p{n}", "x")}, ["a"])
    assert len(tracker._SORTED_STACKS) <= tracker.SORTED_STACKS_MAX
    assert tracker.view_key({"a": ("z", "b", "a")}, ["a", "b"]) == (("a", ("a", "b", "z")),
                                                                      ("b", ()))


def test_a_replayed_record_says_its_final_result() -> None:
    """``tikiboard replay`` reads the result the same way: the engine's at the end, a draw
    nobody won when the players agreed one, nothing while the game goes on."""
    game, states = _play_out("manami", 4)
    record = game.setup_record(states[0])
    texts = [game.move_text(before, _move_between(game, before, after))
             for before, after in pairwise(states)]
    assert replay({**record, "moves": texts}).result() == game.result(states[-1])
    assert replay({**record, "moves": texts[:3]}).result() is None
    agreed = replay({**record, "moves": texts[:3], "draw_agreed": True})
    assert agreed.result() == FinalResult(game.scores(states[3]), (), draw=True)
    assert agreed.to_json()["winner"] == [] and agreed.to_json()["finished"]


def _move_between(game: Game[Any, Any], before: Any, after: Any) -> Any:
    return next(m for m in game.legal_moves(before) if game.apply(before, m) == after)
