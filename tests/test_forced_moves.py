"""Moves nobody chooses: one definition (``Game.forced_move`` / ``Game.advance_forced``).

The follower takes them by itself (its own inference over the position's pictures), BACK steps
over them, the simulated table and the demo's players expect them. These tests pin the engine's
helper on the positions the rules force (a TacTiki pass, Manami's resolve either way round, a
Topple round's end where nobody moves) and check the follower, which decides from its own
precomputed pictures, takes exactly the move the helper names and nothing where it names none.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from test_board_manami_tactiki import FORCED_PASS, RESOLVE_EITHER_WAY, manami

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Acceptance, Follower, MoveAccepted, takeback_plies
from pi_app.board.geometry import load_geometry
from pi_app.games import get_game
from pi_app.records import replay


def forced_pass_state() -> Any:
    result = replay({"game": "tactiki", **FORCED_PASS})
    assert result.ok, result.error
    return result.state


def topple_round_end() -> Any:
    """A Topple position after a round's last move: nobody is to move, the game goes on."""
    game = get_game("topple")
    rng = random.Random(3)
    state = game.new_game(rng)
    while game.to_move(state) is not None:
        state = game.apply(state, game.random_move(state, rng))
    assert not game.is_over(state)
    return state


def test_a_pass_nobody_chooses_is_forced() -> None:
    game = get_game("tactiki")
    state = forced_pass_state()
    move = game.forced_move(state)
    assert move is not None and game.move_text(state, move) == "pass"
    after, count = game.advance_forced(state)
    assert count >= 1 and game.forced_move(after) is None
    assert game.advance_forced(state, limit=1) == (game.apply(state, move), 1)


def test_manamis_resolve_either_way_is_forced_under_its_lowest_text() -> None:
    game = get_game("manami")
    state = manami(RESOLVE_EITHER_WAY)
    move = game.forced_move(state)
    assert move is not None and game.move_text(state, move) == "resolve a3 b3"
    # both orders reach one position: the helper's pick is the follower's canonical one
    assert game.apply(state, move) == game.apply_text(state, "resolve a3 b3")


def test_a_topple_round_end_forces_nothing_the_station_deals() -> None:
    game = get_game("topple")
    state = topple_round_end()
    assert game.forced_move(state) is None
    assert game.advance_forced(state) == (state, 0)


def test_a_real_choice_is_not_forced() -> None:
    for name in ("topple", "manami", "tactiki"):
        game = get_game(name)
        state = game.new_game(random.Random(1))
        assert game.forced_move(state) is None, name
        assert game.advance_forced(state) == (state, 0)


def test_back_steps_over_the_forced_moves_the_helper_names() -> None:
    """takeback_plies counts the forced moves after the last chosen one."""
    game = get_game("manami")
    before = manami(RESOLVE_EITHER_WAY[:-1])
    forced = manami(RESOLVE_EITHER_WAY)
    history = [(before, RESOLVE_EITHER_WAY[-1]), (forced, "resolve a3 b3")]
    assert takeback_plies(game, history) == 2
    assert takeback_plies(game, history[:1]) == 1


def positions(name: str, seeds: range, forced_only: bool) -> list[Any]:
    """Positions of random play; ``forced_only``: just those with a forced move, and the
    position before each (a choice, for the other side of the comparison)."""
    game = get_game(name)
    out: list[Any] = []
    for seed in seeds:
        rng = random.Random(seed)
        state, before = game.new_game(rng), None
        while not game.is_over(state):
            if game.to_move(state) is None:
                state = game.deal(state, rng)
                continue
            if not forced_only or game.forced_move(state) is not None:
                out += [state] if before is None or not forced_only else [before, state]
            before, state = state, game.apply(state, game.random_move(state, rng))
    return out


@pytest.mark.parametrize("name, seeds", [("manami", range(20)), ("tactiki", range(2))])
def test_the_follower_takes_exactly_the_forced_move_the_engine_names(
        name: str, seeds: range) -> None:
    """The follower decides from its own pictures of the position; the engine's helper from
    the rules. Were they to disagree, BACK would step over a move the station did not take by
    itself (or leave one it would take again), and the simulated players would count phantoms."""
    game = get_game(name)
    found = positions(name, seeds, forced_only=True)
    forced = [s for s in found if game.forced_move(s) is not None]
    assert forced and len(forced) < len(found)  # both kinds were seen
    for state in found[:40]:
        move = game.forced_move(state)
        follower = Follower(game, state, load_geometry(name), registry_for(name))
        taken = [o for o in follower.prepare(0.0)
                 if isinstance(o, MoveAccepted) and o.how is Acceptance.FORCED]
        if move is None:
            assert taken == []
            continue
        assert taken and taken[0].text == game.move_text(state, move)
        reached = follower.history[1][0] if len(follower.history) > 1 else follower.state
        assert reached == game.apply(state, move)
