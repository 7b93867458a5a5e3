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
from pi_app.games import get_game, tactiki
from pi_app.referee.opponent import followed_text, move_cells


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


def test_a_piece_put_on_a_stack_with_its_namesake_is_shown_as_put() -> None:
    """The cells the station lights for its move: sensors name a TacTiki piece by owner and
    rank, so a piece put on a column already holding one of its name (a T3 onto a column with
    a T3) left nothing "new" there when cells were compared by names; the cell was lit as one
    to lift from, and a turn of two such steps had no cell to put on at all (the station seat's
    test saw ``put`` empty once the search bot chose such turns). Whatever the fights do, the
    hands first put each stepping piece on its step's field, so the last step's field is a
    cell to put on (unless it reads as before)."""
    game = get_game("tactiki")
    namesakes = 0
    for state in _positions("tactiki", 2, 30):
        before = game.expected_view(state)
        for way in game.ways(state):
            after = game.placement_view(state, way)
            if after == before:
                continue  # a step there and back: nothing on the board to show
            if not isinstance(way, tactiki.Steps):
                continue  # a piece brought back: not a step
            lift, put = move_cells(game, state, way)
            dst = tactiki.FIELD_NAMES[way.steps[-1][1]]
            if after[dst] == before[dst]:
                continue  # a namesake left it and another came: the sensors see no change
            assert dst in put and not set(lift) & set(put), (game.move_text(state, way),
                                                              lift, put)
            namesakes += after[dst][-1] in before[dst]
    assert namesakes, "no step here lands on a namesake: the test would prove nothing"
