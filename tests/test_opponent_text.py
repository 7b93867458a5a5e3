"""The station's own move is shown under the text the follower takes it under.

The station restricts the follower to the move it shows (``Follower.expect_only(text)``) and
refuses any move of its seat whose text differs (``Station._as_shown``). The follower names each
position it can reach by the lowest text of the ways there, while ``Game.move_text`` names a way
as it is: a TacTiki turn with its steps the other way round, or a Manami walk from its other
end, reaches the same position under another text. Shown under that text, the station's move,
carried out exactly, was refused and shown again, over and over (found by the long soak with the
station's seat: ``tools.bench.longsoak --bots``).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from pi_app.board.inference import Position
from pi_app.board.tracker import view_key
from pi_app.games import get_game
from pi_app.referee.opponent import followed_text


def _positions(name: str, games: int, plies: int) -> list[Any]:
    game = get_game(name)
    out = []
    for seed in range(games):
        rng = random.Random(seed)
        state = game.new_game(rng)
        for _ in range(plies):
            if game.is_over(state) or game.to_move(state) is None:
                break
            out.append(state)
            state = game.apply(state, game.random_move(state, rng))
    return out


@pytest.mark.parametrize(("name", "games", "plies"), [("tactiki", 1, 3), ("manami", 6, 40)])
def test_every_way_is_shown_under_a_text_the_follower_takes(name: str, games: int,
                                                            plies: int) -> None:
    game = get_game(name)
    renamed = 0
    for state in _positions(name, games, plies):
        cells = tuple(game.expected_view(state))
        position = Position.build(game, state, cells)
        for way in game.ways(state):
            text = followed_text(game, state, way)
            key = view_key(game.placement_view(state, way), cells)
            if key == position.here:
                continue  # a decision the board does not show: asked for, not followed
            offered = {option.text for option in position.by_placement[key]}
            assert text in offered, (game.move_text(state, way), text, offered)
            renamed += text != game.move_text(state, way)
    assert renamed, "no position here names a way otherwise: the test would prove nothing"
