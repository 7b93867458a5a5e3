"""Hints (issue 34): the same hint for the same position and level, on every ask and in every
process; only for the asker's own turn; never from a fact the asker may not see."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_levels import twins
from test_station_bot import Table

from pi_app.bots.hints import NotYourTurn, hint, hint_budget, hint_seed
from pi_app.games import get_game
from pi_app.games.base import Game
from pi_app.referee.feed import ActionError

ROOT = Path(__file__).resolve().parents[1]


def midgame(name: str, plies: int = 9, seed: int = 2) -> tuple[Game[Any, Any], Any]:
    game = get_game(name)
    rng = random.Random(seed)
    state = game.new_game(rng, {"players": 2} if len(game.player_counts) > 1 else None)
    for _ in range(plies):
        if game.to_move(state) is None:
            if game.is_over(state):
                break
            state = game.deal(state, rng)
            continue
        state = game.apply(state, game.random_move(state, rng))
    return game, state


@pytest.mark.parametrize("name", ["topple", "manami", "tactiki"])
def test_three_asks_get_one_hint(name: str) -> None:
    game, state = midgame(name)
    seat = game.to_move(state)
    assert seat is not None
    hints = {game.move_text(state, hint(game, state, seat)) for _ in range(3)}
    assert len(hints) == 1
    assert hint_budget(name).seconds is None  # no time limit: a busy machine says the same


def test_the_seed_is_the_same_in_another_process() -> None:
    """Python salts string hashes per process; the seed must not depend on them (a Topple
    state holds sets of cards)."""
    game, state = midgame("topple")
    here = hint_seed(game, state, "club")
    code = ("import random, json, sys; from pi_app.games import get_game;"
            "from pi_app.bots.hints import hint_seed; from test_hints import midgame;"
            "g, s = midgame('topple'); print(hint_seed(g, s, 'club'))")
    env = {**os.environ, "PYTHONHASHSEED": "12345",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, cwd=ROOT)
    assert int(out.stdout) == here


@pytest.mark.parametrize("name", ["topple", "manami", "tactiki"])
def test_a_hint_is_only_for_the_askers_turn(name: str) -> None:
    game, state = midgame(name)
    seat = game.to_move(state)
    assert seat is not None
    with pytest.raises(NotYourTurn):
        hint(game, state, 1 - seat)


def test_no_hint_once_the_game_is_over() -> None:
    game, state = midgame("manami", plies=10_000)
    assert game.is_over(state)
    with pytest.raises(NotYourTurn):
        hint(game, state, 0)


def test_the_hint_never_depends_on_hidden_ranks() -> None:
    game = get_game("tactiki")
    for state, twin in twins():
        assert hint_seed(game, state, "club") == hint_seed(game, twin, "club")
        assert hint(game, state, state.player) == hint(game, twin, twin.player)


def test_the_page_refuses_a_hint_for_the_other_players_turn(tmp_path: Path) -> None:
    table = Table(tmp_path, "manami", {})
    station, game = table.station, table.game
    seat = game.to_move(table.state)
    assert seat == 0
    with pytest.raises(ActionError, match="only for your own turn"):
        asyncio.run(station.feed.act("hint", seat=1))
    first = asyncio.run(station.feed.act("hint", seat=0))
    again = asyncio.run(station.feed.act("hint"))
    assert first["ok"] and first["move"] == again["move"]
    assert json.dumps(first)
