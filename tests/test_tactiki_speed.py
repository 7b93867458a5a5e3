"""TacTiki's quick random play draws the same turns and reaches the same positions as the plain
engine (issue 34): random play is what the benchmarks, soaks and playouts repeat by seed, so a
faster engine must not change one draw.

The reference below is the draw as it was written before the fast path (every step listed
from the columns, ``randrange``), and every position is checked against ``apply`` of a copy
of the move (a new object, so the kept result of the draw is not what answers).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_app.games import tactiki
from pi_app.games.base import IllegalMove
from pi_app.games.tactiki import GAME, PASS, START_FIELDS, Move, Reincarnate, Steps, TacState

OPTIONS: list[dict[str, object] | None] = [
    None, {"attack_frozen": True}, {"strict_statue": True},
    {"ranks": [1, 1, 1, 2, 3, 3, 5, 5, 5, 4]}, {"quiet_turns": 0}]


def reference_move(state: TacState, rng: random.Random) -> Move:
    """The draw of ``random_move`` before issue 34, on the plain step listing."""
    player, opts = state.player, state.options
    firsts = tactiki._step_list(state.columns, player, opts.attack_frozen)
    grave = state.graves[player]
    empty: list[int] = []
    ranks: tuple[int, ...] = ()
    if grave:
        empty = [f for f in START_FIELDS[player] if not state.columns[f]]
        if empty:
            ranks = opts.tables.ranks_in(grave)
    n = len(firsts) + len(ranks) * len(empty)
    if n == 0:
        return PASS
    k = rng.randrange(n)
    if k >= len(firsts):
        r, f = divmod(k - len(firsts), len(empty))
        return Reincarnate(ranks[r], empty[f])
    first = firsts[k]
    cols = list(state.columns)
    graves = (list(state.graves[0]), list(state.graves[1]))
    _, _, won = tactiki._step(cols, graves, state.revealed, *first, opts.tables.duel,
                              opts.strict_statue)
    if won:
        return Steps((first,))
    seconds = tactiki._step_list(cols, player, opts.attack_frozen)
    if not seconds:
        return Steps((first,))
    return Steps((first, seconds[rng.randrange(len(seconds))]))


def copy_of(move: Move) -> Move:
    """An equal move that is another object."""
    if isinstance(move, Steps):
        return Steps(tuple(move.steps))
    if isinstance(move, Reincarnate):
        return Reincarnate(move.rank, move.field)
    return move


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(OPTIONS))
def test_random_play_draws_and_reaches_what_the_plain_engine_does(
        seed: int, options: dict[str, object] | None) -> None:
    fast, slow = random.Random(seed), random.Random(seed)
    state = GAME.new_game(fast, options)
    assert GAME.new_game(slow, options) == state
    turns = 0
    while not GAME.is_over(state) and turns < 3000:
        move = GAME.random_move(state, fast)
        assert move == reference_move(state, slow)
        after = GAME.apply(state, move)
        assert after == GAME.apply(state, copy_of(move))
        state = after
        turns += 1
    assert fast.random() == slow.random()  # not one draw more or less


def test_apply_answers_by_the_rules_after_a_draw_it_does_not_keep() -> None:
    """The kept result answers only the very state and move of the draw: an illegal move in
    that state is still refused, another state still played by the rules."""
    rng = random.Random(3)
    state = GAME.new_game(rng)
    move = GAME.random_move(state, rng)
    other = GAME.apply(state, move)
    with pytest.raises(IllegalMove):
        GAME.apply(state, Steps(((0, 12),)))
    assert GAME.apply(other, GAME.legal_moves(other)[0]) != other


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 31, 32, 33, 100, 1000])
def test_below_is_randrange(n: int) -> None:
    a, b = random.Random(n), random.Random(n)
    assert [tactiki._below(a, n) for _ in range(200)] == [b.randrange(n) for _ in range(200)]
    assert a.random() == b.random()


def test_below_asks_another_generator_its_own_randrange() -> None:
    class Counting(random.Random):
        calls = 0

        def randrange(self, *args: object, **kwargs: object) -> int:
            Counting.calls += 1
            return 0

    assert tactiki._below(Counting(1), 10) == 0 and Counting.calls == 1


def test_step_tables_list_what_the_step_listing_lists() -> None:
    """Every row key of both players, with and without ``attack_frozen``, on random boards."""
    rng = random.Random(11)
    for _ in range(300):
        state = GAME.new_game(rng)
        for _ in range(rng.randrange(60)):
            if GAME.is_over(state):
                break
            state = GAME.apply(state, GAME.random_move(state, rng))
        m0, m1 = tactiki._masks(state.columns)
        for player, (own, enemy) in ((0, (m0, m1)), (1, (m1, m0))):
            for frozen in (False, True):
                assert list(tactiki._mask_steps(player, frozen, own, enemy)) == \
                    tactiki._step_list(state.columns, player, frozen)
