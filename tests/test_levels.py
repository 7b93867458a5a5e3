"""Named levels, TacTiki's information-set tree, and the level ratings (issue 34).

The tree must never read what its seat may not see: for two full positions that differ only
in the ranks of enemy pieces the seat has not seen, every level chooses the same move (the
first step of it, where the step starts a fight whose outcome then shows the difference).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from pi_app.bots import ALL_LEVELS, NAMED_LEVELS
from pi_app.bots.base import Budget
from pi_app.bots.levels import NAMED, make_bot
from pi_app.bots.mcts import depth, grow
from pi_app.bots.models import MODELS, TREE_MODELS
from pi_app.bots.play import decide
from pi_app.bots.views import seat_view
from pi_app.games import tactiki
from pi_app.games.tactiki import GAME, TacState
from tools.bench.levels import fit, markdown, rate

BUDGET = Budget(playouts=20)


def position(seed: int, plies: int) -> TacState:
    rng = random.Random(seed)
    state = GAME.new_game(rng)
    for _ in range(plies):
        if GAME.is_over(state):
            break
        state = GAME.apply(state, GAME.random_move(state, rng))
    return state


def hidden_twin(state: TacState) -> TacState | None:
    """``state`` with two of the enemy's unseen pieces of different ranks swapped: the same
    view for the player to move, other ranks where it cannot look. None when there are none."""
    seat = state.player
    ranks = state.options.tables.piece_rank
    unseen = [p for col in state.columns for p in col
              if p // tactiki.PIECES_PER_PLAYER != seat and not state.revealed >> p & 1]
    for a in unseen:
        for b in unseen:
            if ranks[a] < ranks[b]:
                def swap(p: int, a: int = a, b: int = b) -> int:
                    return b if p == a else a if p == b else p

                columns = tuple(tuple(swap(p) for p in col) for col in state.columns)
                return state._replace(columns=columns)
    return None


def twins() -> list[tuple[TacState, TacState]]:
    out = []
    for seed, plies in ((1, 0), (2, 6), (3, 14), (4, 22), (5, 30)):
        state = position(seed, plies)
        twin = hidden_twin(state)
        if twin is not None and not GAME.is_over(state):
            out.append((state, twin))
    return out


def cheat(state: TacState) -> Any:
    """The move a bot that read the real ranks would choose: the evaluation's best on the
    full state."""
    model = MODELS["tactiki"]
    return max(GAME.ways(state), key=lambda m: model.evaluate(GAME.apply(state, m), state.player))


def test_the_twins_tell_a_cheat_from_a_fair_bot() -> None:
    """The positions are such that reading the hidden ranks changes the choice: a bot that
    cheated would fail the test below."""
    assert any(cheat(state) != cheat(twin) for state, twin in twins())


@pytest.mark.parametrize("level", ALL_LEVELS)
def test_no_level_reads_the_hidden_ranks(level: str) -> None:
    pairs = twins()
    assert len(pairs) >= 4
    bot = make_bot("tactiki", level)
    for state, twin in pairs:
        assert state != twin
        assert seat_view(GAME, state, state.player) == seat_view(GAME, twin, twin.player)
        a = decide(GAME, state, bot, random.Random(9), BUDGET)
        b = decide(GAME, twin, bot, random.Random(9), BUDGET)
        if isinstance(a, tactiki.Steps) and isinstance(b, tactiki.Steps):
            # The second step is chosen after the first step's fight has shown its ranks.
            assert a.steps[0] == b.steps[0]
            view = seat_view(GAME, state, state.player)
            if view.unforeseen_step(a) is None:
                assert a == b
        else:
            assert a == b


def test_the_tree_looks_past_the_seats_own_turn() -> None:
    """The flat look holds the seat's two steps; the tree the replies below them too."""
    state = position(2, 6)
    view = seat_view(GAME, state, state.player)
    flat, _ = grow(MODELS["tactiki"], view, random.Random(1), Budget(playouts=60))
    tree, _ = grow(TREE_MODELS["tactiki"], view, random.Random(1), Budget(playouts=60))
    assert depth(flat) == 2
    assert depth(tree) >= 4


@pytest.mark.parametrize("level", NAMED_LEVELS)
def test_a_named_level_repeats_by_its_seed(level: str) -> None:
    for game_name, state in (("tactiki", position(3, 10)),):
        bot = make_bot(game_name, level)
        first = decide(GAME, state, bot, random.Random(4), Budget())
        assert decide(GAME, state, bot, random.Random(4), Budget()) == first


def test_named_levels_are_documented_and_unknown_ones_refused() -> None:
    assert tuple(NAMED) == NAMED_LEVELS
    for spec in NAMED.values():
        assert spec.words and spec.method in ("greedy", "search")
        if spec.method == "search":
            assert {g for g, _ in spec.playouts} == {"topple", "manami", "tactiki"}
    with pytest.raises(ValueError, match="no bot level"):
        make_bot("tactiki", "grandmaster")


def test_fit_orders_by_results_and_stays_finite() -> None:
    pairs = {"beginner:random": [1.0] * 10, "casual:random": [1.0] * 10,
             "casual:beginner": [1.0] * 7 + [0.0] * 3}
    ratings = fit(pairs)
    assert ratings["random"] == 0
    assert 0 < ratings["beginner"] < ratings["casual"] < 2000
    even = fit({"beginner:random": [1.0, 0.0] * 5})
    assert abs(even["beginner"]) < 1e-6


def test_rate_gives_an_interval_around_the_rating_and_a_table() -> None:
    pairs = {"beginner:random": [1.0] * 6 + [0.0] * 4, "casual:random": [1.0] * 9 + [0.5],
             "casual:beginner": [1.0] * 6 + [0.0] * 4}
    rated = rate(pairs)
    for name in ("beginner", "casual"):
        low, high = rated[name]["ci95"]
        assert low <= rated[name]["elo"] <= high and low < high
    levels: dict[str, Any] = {
        name: {**r, "cpu_s_per_decision": {"p95": 0.001}, "pi4_estimate_s_per_decision_p95": 0.005}
        for name, r in rated.items()}
    table = markdown({"results": [{"game": "tactiki", "levels": levels}]})
    assert "| tactiki | casual |" in table and "5 ms" in table


def test_merge_pools_runs_of_one_game_and_refuses_shared_games() -> None:
    from tools.bench.levels import merge

    def part(seed: int, scores: list[float]) -> dict[str, Any]:
        cpu = {"cpu_s_per_decision": {"p95": 0.001}, "pi4_estimate_s_per_decision_p95": 0.005}
        levels = {n: dict(cpu) for n in ("random", "beginner")}
        return {"seed": seed, "games_per_pair": len(scores), "results": [
            {"game": "manami", "levels": levels, "results": {"beginner:random": scores},
             "cpu_s": 1.0}]}

    merged = merge([part(0, [1.0, 1.0]), part(2, [0.0, 1.0])])
    result = merged["results"][0]
    assert result["results"]["beginner:random"] == [1.0, 1.0, 0.0, 1.0]
    assert result["pairs"]["beginner:random"] == {"games": 4, "score": 0.75}
    assert result["levels"]["beginner"]["elo"] == round(fit({"beginner:random": [1, 1, 0, 1]})[
        "beginner"])
    with pytest.raises(ValueError, match="share games"):
        merge([part(0, [1.0, 1.0]), part(1, [0.0, 1.0])])
