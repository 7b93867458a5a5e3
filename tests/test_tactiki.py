"""TacTiki engine: the rules text, every ruling of ``seeds/tactiki.md`` (tests name them R1…),
notation, JSON, records and the ``replay`` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from itertools import product
from pathlib import Path
from typing import Any

import pytest

from pi_app.games import IllegalMove, RecordError, get_game
from pi_app.games.tactiki import (
    FIELD_NAMES,
    GAME,
    Options,
    Pass,
    Reincarnate,
    Steps,
    TacState,
    player_view,
)
from pi_app.json_types import JSON
from pi_app.records import replay

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "pi_app" / "data" / "tactiki-example.tiki.json"

#: The strength table as the rules print it (independent of the engine's formula).
WINS = {5: {4, 3, 2}, 4: {3, 2, 1}, 3: {2, 1}, 2: {1}, 1: {5}}

#: The set-up of the docs/records.md example.
RECORD_SETUP = {"a1": [5, 3], "b1": [1, 4], "c1": [2, 2], "d1": [3, 5], "e1": [4, 1],
                "a5": [1, 2], "b5": [3, 4], "c5": [5, 5], "d5": [2, 3], "e5": [4, 1]}


def position(board: dict[str, str], *, player: int = 0, options: JSON | None = None,
             revealed: Sequence[str] = (), quiet: int = 0) -> TacState:
    """A position from a picture: field -> pieces bottom first as ``"T4 C5"`` (T = TIKI,
    C = TAC, then the rank). Each piece takes its rank's first free copy letter; pieces not
    placed lie in their owner's graveyard. Built through ``state_from_json`` on purpose."""
    opts = Options.from_json(options)
    free = [list(opts.tables.ids[:10]), list(opts.tables.ids[10:])]
    fields: dict[str, list[str]] = {name: [] for name in FIELD_NAMES}
    for name, text in board.items():
        for token in text.split():
            q = "TC".index(token[0])
            piece = next(p for p in free[q] if p[1] == token[1])
            free[q].remove(piece)
            fields[name].append(piece)
    return GAME.state_from_json({
        "game": "tactiki", "options": opts.to_json(), "board": fields, "graveyards": free,
        "player": player, "revealed": list(revealed), "quiet_turns": quiet, "winner": None})


def column(state: TacState, name: str) -> str:
    """A field's pieces bottom first as ``"T4 C5"``."""
    return " ".join(GAME.expected_view(state)[name])


def graveyard(state: TacState, player: int) -> list[str]:
    return GAME.state_to_json(state)["graveyards"][player]  # type: ignore[no-any-return]


def revealed(state: TacState) -> set[str]:
    return set(GAME.state_to_json(state)["revealed"])


def play(state: TacState, *texts: str) -> TacState:
    for text in texts:
        state = GAME.apply_text(state, text)
    return state


def record_start() -> TacState:
    return GAME.record_segments({"game": "tactiki", "setup": RECORD_SETUP, "moves": []})[0].start(
        None)


# -- combat --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "d"), list(product(range(1, 6), repeat=2)))
def test_combat_table_all_25_pairs(a: int, d: int) -> None:
    state = position({"c2": f"T{a}", "c3": f"C{d}", "a1": f"T{a}"})
    after = play(state, "c2-c3 a1-a2")
    attacker, defender = f"T{a}a", f"C{d}a"
    assert {attacker, defender} <= revealed(after)  # both ranks are shown (R9)
    if d in WINS[a]:
        assert column(after, "c3") == f"T{a}"
        assert defender in graveyard(after, 1)
    elif a in WINS[d]:
        assert column(after, "c3") == f"C{d}"
        assert attacker in graveyard(after, 0)
    else:
        assert a == d
        assert column(after, "c3") == f"C{d} T{a}"  # tie: both stay, attacker on top
        assert GAME.piece_ids(after)["c3"] == (defender, attacker)


def test_every_pair_of_different_ranks_has_one_winner() -> None:
    for a, d in product(range(1, 6), repeat=2):
        if a != d:
            assert (d in WINS[a]) != (a in WINS[d])


def test_tie_blocks_the_defender_until_uncovered_r14() -> None:
    state = play(position({"c2": "T3", "c3": "C3", "a1": "T1", "a5": "C1"}), "c2-c3 a1-a2")
    assert column(state, "c3") == "C3 T3"
    with pytest.raises(IllegalMove, match="The top piece on c3 is TIKI's"):
        GAME.apply_text(state, "c3-c2 a5-a4")
    state = play(state, "a5-a4 a4-a3")
    state = play(state, "c3-d3 d3-e3")  # the TIKI 3 moves away: the TAC 3 is free again
    state = play(state, "c3-c2 c2-b2")
    assert column(state, "b2") == "C3"


def test_rulebook_example_4_attacks_3_1_5() -> None:
    """A 4 attacking [3, 1, 5] (top to bottom) beats the 3 and the 1, then dies to the 5."""
    state = position({"c2": "T4", "c3": "C5 C1 C3", "a1": "T1"})
    after = play(state, "c2-c3 a1-a2")
    assert column(after, "c3") == "C5"
    assert sorted(graveyard(after, 1)) == sorted([*graveyard(state, 1), "C1a", "C3a"])
    assert "T4a" in graveyard(after, 0)
    assert {"T4a", "C3a", "C1a", "C5a"} <= revealed(after)


def test_combat_stops_part_way_on_a_tie() -> None:
    state = position({"c2": "T4", "c3": "C1 C4 C2", "a1": "T1"})
    after = play(state, "c2-c3 a1-a2")
    assert column(after, "c3") == "C1 C4 T4"
    assert "C2a" in graveyard(after, 1)
    assert "C1a" not in revealed(after)  # never compared


def test_combat_stops_part_way_on_a_loss() -> None:
    state = position({"c2": "T3", "c3": "C2 C4 C1", "a1": "T1"})
    after = play(state, "c2-c3 a1-a2")
    assert column(after, "c3") == "C2 C4"
    assert "C1a" in graveyard(after, 1) and "T3a" in graveyard(after, 0)
    assert "C2a" not in revealed(after)


def test_combat_stops_at_the_attackers_own_piece_r3() -> None:
    state = position({"c2": "T5", "c3": "T2 C3", "a1": "T1"})
    after = play(state, "c2-c3 a1-a2")
    assert column(after, "c3") == "T2 T5"
    assert "T2a" not in revealed(after)


def test_moving_onto_own_pieces_stacks_without_combat() -> None:
    state = play(position({"c2": "T4", "c3": "T1 C2 T3", "a1": "T1"}), "c2-c3 a1-a2")
    assert column(state, "c3") == "T1 C2 T3 T4"
    assert revealed(state) == set()


# -- statue --------------------------------------------------------------------------------------


def test_statue_on_the_first_step_ends_the_game_r5() -> None:
    state = position({"c5": "T1 T2 T3 T4", "c4": "T5", "a1": "T1"})
    won = GAME.apply_text(state, "c4-c5")
    assert GAME.winners(won) == (0,) and GAME.scores(won) == (1, 0)
    assert GAME.is_over(won) and GAME.to_move(won) is None
    assert GAME.legal_moves(won) == []
    with pytest.raises(IllegalMove, match="already completes a statue"):
        GAME.apply_text(state, "c4-c5 a1-a2")
    with pytest.raises(IllegalMove, match="game is over"):
        GAME.apply_text(won, "a1-a2 a2-a3")


def test_statue_on_the_second_step() -> None:
    state = position({"c5": "T1 T2 T3 T4", "c4": "T5", "a1": "T1"})
    won = GAME.apply_text(state, "a1-a2 c4-c5")
    assert GAME.winners(won) == (0,)
    assert column(won, "c5") == "T1 T2 T3 T4 T5"


def test_statue_by_tac_on_a_tiki_start_field() -> None:
    state = position({"b1": "C1 C2 C3 C4", "b2": "C5", "e5": "C1"}, player=1)
    won = GAME.apply_text(state, "b2-b1")
    assert GAME.winners(won) == (1,) and GAME.scores(won) == (0, 1)


def test_statue_after_combat_r5() -> None:
    state = position({"c5": "T1 T2 T3 T4 C2", "c4": "T5", "a1": "T1"})
    won = GAME.apply_text(state, "c4-c5")
    assert column(won, "c5") == "T1 T2 T3 T4 T5" and GAME.winners(won) == (0,)


def test_statue_over_a_tied_enemy_piece_default_and_strict_r5() -> None:
    board = {"c5": "C3 T3 T1 T2 T4", "c4": "T5", "a1": "T1"}
    assert GAME.winners(GAME.apply_text(position(board), "c4-c5")) == (0,)
    strict = position(board, options={"strict_statue": True})
    after = GAME.apply_text(strict, "c4-c5 a1-a2")
    assert GAME.winners(after) is None
    exact = position({"c5": "T1 T2 T3 T4", "c4": "T5", "a1": "T1"},
                     options={"strict_statue": True})
    assert GAME.winners(GAME.apply_text(exact, "c4-c5")) == (0,)


def test_enemy_piece_above_breaks_the_statue_r5() -> None:
    state = position({"c5": "T1 T2 C3 T3 T4", "c4": "T5", "a1": "T1"})
    assert GAME.winners(GAME.apply_text(state, "c4-c5 a1-a2")) is None


def test_five_pieces_off_the_enemy_start_row_are_no_statue() -> None:
    state = position({"c4": "T1 T2 T3 T4", "b4": "T5", "a1": "T1"})
    assert GAME.winners(GAME.apply_text(state, "b4-c4 a1-a2")) is None


# -- frozen pieces -------------------------------------------------------------------------------


def test_a_piece_on_the_enemy_start_row_is_frozen() -> None:
    state = position({"b5": "T2", "a1": "T1"})
    with pytest.raises(IllegalMove, match="The piece on b5 is frozen on the enemy start row"):
        GAME.apply_text(state, "b5-a5 a1-a2")
    assert all(m.steps[0][0] != FIELD_NAMES.index("b5")
               for m in GAME.legal_moves(state) if isinstance(m, Steps))


def test_frozen_pieces_cannot_be_attacked_r4() -> None:
    state = position({"b5": "T2", "a5": "C3", "a1": "T1"}, player=1)
    with pytest.raises(IllegalMove, match="TIKI piece on b5 is frozen on your start row"):
        GAME.apply_text(state, "a5-b5 a5-a4")
    assert "a5-b5" not in " ".join(GAME.move_text(state, m) for m in GAME.legal_moves(state))


def test_attack_frozen_option_allows_it_r4() -> None:
    state = position({"b5": "T2", "a5": "C3", "a1": "T1"}, player=1,
                     options={"attack_frozen": True})
    after = GAME.apply_text(state, "a5-b5 b5-b4")
    assert "T2a" in graveyard(after, 0) and column(after, "b4") == "C3"


def test_own_pieces_may_stack_on_a_frozen_own_piece() -> None:
    state = play(position({"b5": "T2", "b4": "T3", "a1": "T1"}), "b4-b5 a1-a2")
    assert column(state, "b5") == "T2 T3"


def test_sideways_along_the_own_start_row_is_allowed_r2() -> None:
    state = play(record_start(), "a1-b1 b1-c1")
    assert column(state, "c1") == "T2 T2 T3"


# -- steps ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "reason"), [
    ("c1-c3 a1-a2", "c1 to c3 is two fields: a step goes one field"),
    ("c1-a1 a1-a2", "c1 to a1 is two fields: a step goes one field"),
    ("c1-d2 a1-a2", "c1 to d2 is diagonal: a step goes forward, left or right"),
    ("c1-e3 a1-a2", "c1 to e3 is not a step"),
    ("c1-c1 a1-a2", "goes nowhere"),
    ("c3-c4 a1-a2", "There is no piece on c3"),
    ("a5-a4 a1-a2", "The top piece on a5 is TAC's"),
    ("a1-a2 a2-a1", "Pieces never move backwards"),
])
def test_illegal_steps_say_why(text: str, reason: str) -> None:
    with pytest.raises(IllegalMove, match=reason):
        GAME.apply_text(record_start(), text)


def test_tac_moves_down_the_board() -> None:
    state = play(record_start(), "c1-c2 c2-c3", "a5-a4 b5-b4")
    assert column(state, "a4") == "C2" and column(state, "b4") == "C4"
    with pytest.raises(IllegalMove, match="backwards"):
        GAME.apply_text(play(state, "a1-a2 a2-a3"), "a4-a5 b5-b4")


def test_the_same_piece_may_move_twice() -> None:
    state = play(record_start(), "c1-c2 c2-c3")
    assert column(state, "c3") == "T2" and column(state, "c1") == "T2"


def test_a_step_may_undo_the_first_r10() -> None:
    start = record_start()
    state = GAME.apply_text(start, "a1-b1 b1-a1")
    assert state.columns == start.columns and GAME.to_move(state) == 1


def test_one_step_only_when_no_second_step_is_possible() -> None:
    state = position({"c4": "T4", "a5": "T1 T1", "b5": "T2 T2", "d5": "T3 T3"})
    after = GAME.apply_text(state, "c4-c5")  # the piece freezes: nothing else can move
    assert GAME.to_move(after) == 1
    with pytest.raises(IllegalMove, match="You can still make a second step"):
        GAME.apply_text(state, "c4-b4")
    with pytest.raises(IllegalMove, match="You can still make a second step"):
        GAME.apply_text(record_start(), "c1-c2")


def test_second_step_after_the_first_piece_died_r6() -> None:
    state = position({"c3": "T2", "c4": "C5", "a1": "T1"})
    after = GAME.apply_text(state, "c3-c4 a1-a2")
    assert column(after, "c4") == "C5" and column(after, "a2") == "T1"
    with pytest.raises(IllegalMove, match="second step"):
        GAME.apply_text(state, "c3-c4")
    alone = position({"c3": "T2", "c4": "C5", "a5": "T1 T1"})
    assert column(GAME.apply_text(alone, "c3-c4"), "c4") == "C5"


def test_second_step_may_use_a_piece_the_first_uncovered_r6() -> None:
    state = position({"c5": "C1", "c4": "T3", "b4": "T4 T1", "a5": "T1 T2", "b5": "T2 T3",
                      "d5": "T4 T5", "e5": "T5"})
    # Only the b4 top and c4 can move; after b4-b5 the T4 under it is free.
    after = GAME.apply_text(state, "b4-b5 b4-a4")
    assert column(after, "a4") == "T4"


# -- reincarnation -------------------------------------------------------------------------------


def test_reincarnation_only_onto_an_empty_own_start_field_r13() -> None:
    state = position({"a1": "T5", "c2": "T4", "c1": "C2", "a5": "C1"})
    after = GAME.apply_text(state, "reincarnate 3 b1")
    assert GAME.piece_ids(after)["b1"] == ("T3a",)
    assert GAME.expected_view(after)["b1"] == ("T3",)
    assert GAME.to_move(after) == 1 and after.quiet == 0
    with pytest.raises(IllegalMove, match="a1 is not empty: reincarnate onto an empty start"):
        GAME.apply_text(state, "reincarnate 3 a1")
    with pytest.raises(IllegalMove, match="c1 is not empty"):  # a frozen TAC piece
        GAME.apply_text(state, "reincarnate 3 c1")
    with pytest.raises(IllegalMove, match="b2 is not one of your start fields"):
        GAME.apply_text(state, "reincarnate 3 b2")
    with pytest.raises(IllegalMove, match="b5 is not one of your start fields"):
        GAME.apply_text(state, "reincarnate 3 b5")


def test_reincarnation_needs_a_defeated_piece_of_that_rank() -> None:
    state = position({"a1": "T5 T5", "c2": "T4", "a5": "C1"})
    with pytest.raises(IllegalMove, match="You have no defeated 5 to reincarnate"):
        GAME.apply_text(state, "reincarnate 5 b1")
    with pytest.raises(IllegalMove, match="You have no defeated 3 to reincarnate"):
        GAME.apply_text(record_start(), "reincarnate 3 c1")


def test_reincarnation_brings_back_the_first_copy_r11() -> None:
    state = position({"a1": "T5", "c2": "T4", "a5": "C1"})  # T3a and T3b are both defeated
    after = GAME.apply_text(state, "reincarnate 3 e1")
    assert GAME.piece_ids(after)["e1"] == ("T3a",)
    assert "T3b" in graveyard(after, 0)


def test_a_reincarnated_piece_is_hidden_again_r9() -> None:
    state = position({"c2": "T4", "c3": "C5", "d2": "T3", "d3": "C4", "a5": "C1"})
    state = play(state, "c2-c3 d2-d3")  # the TIKI 4 and 3 both die: all four ranks revealed
    assert {"T4a", "T3a", "C5a", "C4a"} <= revealed(state)
    tac_sees = player_view(state, 1)
    assert sorted(p.rank for p in tac_sees.graveyards[0] if p.rank) == [3, 4]
    state = play(state, "a5-a4 a4-a3", "reincarnate 4 c1")
    assert "T4a" not in revealed(state)
    # The TIKI 3 left in the graveyard is hidden too: which piece came back is secret.
    assert "T3a" in graveyard(state, 0) and "T3a" not in revealed(state)
    assert {"C5a", "C4a"} <= revealed(state)  # TAC's pieces stay known
    tac_sees = player_view(state, 1)
    assert tac_sees.board[FIELD_NAMES.index("c1")][0].rank is None
    assert all(p.rank is None and p.piece is None for p in tac_sees.graveyards[0])
    assert player_view(state, 0).board[FIELD_NAMES.index("c1")][0].rank == 4
    assert player_view(state, 0).board[FIELD_NAMES.index("c3")][0].rank == 5


def test_reincarnation_is_allowed_instead_of_moving_r13() -> None:
    state = position({"a1": "T5", "c2": "T4", "a5": "C1"})
    moves = GAME.legal_moves(state)
    assert any(isinstance(m, Reincarnate) for m in moves)
    assert any(isinstance(m, Steps) for m in moves)


# -- pass and draw -------------------------------------------------------------------------------

ALL_TIKI_FROZEN = {"a5": "T1 T1", "b5": "T2 T2", "c5": "T3 T3", "d5": "T4 T4", "e5": "T5 T5"}


def test_pass_only_when_nothing_else_is_possible_r7() -> None:
    state = position({**ALL_TIKI_FROZEN, "c3": "C3"})
    assert GAME.legal_moves(state) == [Pass()]
    after = GAME.apply_text(state, "PASS")
    assert GAME.to_move(after) == 1 and not GAME.is_over(after)
    with pytest.raises(IllegalMove, match="You can still move a piece, so you cannot pass"):
        GAME.apply_text(after, "pass")
    assert GAME.move_text(state, Pass()) == "pass"


def test_reincarnation_is_compulsory_when_it_is_the_only_option_r7() -> None:
    board = {**ALL_TIKI_FROZEN, "e5": "T5", "c3": "C3"}
    state = position(board)
    with pytest.raises(IllegalMove, match="You can still reincarnate"):
        GAME.apply_text(state, "pass")
    assert all(isinstance(m, Reincarnate) for m in GAME.legal_moves(state))
    assert len(GAME.legal_moves(state)) == 5


def test_dead_position_is_a_draw_r8() -> None:
    all_tac_frozen = {"a1": "C1 C1", "b1": "C2 C2", "c1": "C3 C3", "d1": "C4 C4", "e1": "C5 C5"}
    state = position({**ALL_TIKI_FROZEN, **all_tac_frozen})
    after = GAME.apply_text(state, "pass")
    assert GAME.is_over(after) and GAME.winners(after) == () and GAME.scores(after) == (0, 0)
    assert GAME.to_move(after) is None and GAME.legal_moves(after) == []
    assert GAME.state_to_json(after)["winner"] == []


def test_quiet_turns_draw_and_reset_r8() -> None:
    options = {"quiet_turns": 3}
    state = position({"a2": "T1", "e4": "C1", "c2": "T3", "c4": "C2"}, options=options)
    state = play(state, "a2-b2 b2-a2")
    state = play(state, "e4-d4 d4-e4")
    assert state.quiet == 2 and not GAME.is_over(state)
    captured = GAME.apply_text(state, "c2-c3 c3-c4")  # the 3 beats the 2: progress
    assert captured.quiet == 0 and not GAME.is_over(captured)
    drawn = GAME.apply_text(state, "a2-b2 b2-a2")
    assert GAME.is_over(drawn) and GAME.winners(drawn) == ()
    assert "drawn" in GAME.describe(drawn)


def test_a_newly_frozen_piece_resets_the_quiet_count_r8() -> None:
    state = position({"a4": "T1", "e4": "C1", "c1": "T2"}, quiet=5)
    assert GAME.apply_text(state, "a4-a5 c1-c2").quiet == 0
    assert GAME.apply_text(state, "a4-b4 c1-c2").quiet == 6


def test_quiet_turns_zero_switches_the_count_off_r8() -> None:
    state = position({"a2": "T1", "e4": "C1"}, options={"quiet_turns": 0}, quiet=500)
    assert not GAME.is_over(GAME.apply_text(state, "a2-b2 b2-a2"))


# -- ids, views, canonical text ------------------------------------------------------------------


def test_ids_follow_the_record_order_r11() -> None:
    view = GAME.piece_ids(record_start())
    assert len(view) == 25 and set(view) == set(FIELD_NAMES)
    assert view["a1"] == ("T5a", "T3a") and view["b1"] == ("T1a", "T4a")
    assert view["c1"] == ("T2a", "T2b") and view["d1"] == ("T3b", "T5b")
    assert view["e1"] == ("T4b", "T1b")
    assert view["a5"] == ("C1a", "C2a") and view["c5"] == ("C5a", "C5b")
    assert view["e5"] == ("C4b", "C1b")
    assert all(view[f"{c}{r}"] == () for c in "abcde" for r in "234")


def test_player_view_shows_own_ranks_and_no_enemy_ranks_at_the_start_r9() -> None:
    state = record_start()
    for me in (0, 1):
        view = player_view(state, me)
        for col in view.board:
            for seen in col:
                if seen.owner == me:
                    assert seen.rank is not None and seen.piece is not None
                else:
                    assert seen.rank is None and seen.piece is None
        text = json.dumps(view.to_json())
        enemy = "C" if me == 0 else "T"
        assert f'"{enemy}' not in text  # no enemy id anywhere


def test_canonical_text_for_swapped_steps_r12() -> None:
    state = record_start()
    one = GAME.parse_move(state, "b1-b2 a1-a2")
    two = GAME.parse_move(state, "A1-A2 B1-B2")
    assert GAME.apply(state, one) == GAME.apply(state, two)
    assert GAME.move_text(state, one) == GAME.move_text(state, two) == "a1-a2 b1-b2"
    texts = [GAME.move_text(state, m) for m in GAME.legal_moves(state)]
    assert "a1-a2 b1-b2" in texts and "b1-b2 a1-a2" not in texts
    assert len(texts) == len(set(texts))


def test_canonical_text_for_two_paths_r12() -> None:
    state = play(record_start(), "a1-a2 b1-b2", "e5-e4 e4-e3")
    via_c2 = GAME.parse_move(state, "b2-c2 c2-c3")
    assert GAME.move_text(state, via_c2) == "b2-b3 b3-c3"


def test_every_do_nothing_turn_has_one_text_r12() -> None:
    state = record_start()
    bounce = GAME.parse_move(state, "d1-e1 e1-d1")
    assert GAME.move_text(state, bounce) == "a1-b1 b1-a1"


def test_illegal_move_keeps_its_own_text() -> None:
    state = record_start()
    assert GAME.move_text(state, Steps(((2, 12),))) == "c1-c3"
    assert GAME.move_text(state, Reincarnate(3, 2)) == "reincarnate 3 c1"


# -- notation ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "", "   ", "c1c2", "c1-c2-c3", "c1-c2 c2-c3 c3-c4", "f1-f2", "c0-c1", "reincarnate",
    "reincarnate x c1", "reincarnate 3", "reincarnate 3 z9", "pass now", "toast", "c1-",
])
def test_unreadable_entries_are_illegal_moves(text: str) -> None:
    with pytest.raises(IllegalMove):
        GAME.parse_move(record_start(), text)


def test_input_is_case_insensitive_output_lower_case() -> None:
    state = record_start()
    move = GAME.parse_move(state, "  C1-C2   C2-C3 ")
    assert GAME.move_text(state, move) == "c1-c2 c2-c3"
    assert GAME.parse_move(state, "Reincarnate 3 C1") == Reincarnate(3, 2)


def test_moves_are_small_hashable_values() -> None:
    state = record_start()
    moves = GAME.legal_moves(state)
    assert len(set(moves)) == len(moves)
    assert hash(state) == hash(GAME.state_from_json(GAME.state_to_json(state)))


# -- JSON state ----------------------------------------------------------------------------------


def test_state_json_round_trip_and_format() -> None:
    state = play(record_start(), "c1-c2 c2-c3", "a5-a4 b5-b4")
    data = GAME.state_to_json(state)
    assert json.loads(json.dumps(data)) == data
    assert GAME.state_from_json(data) == state
    assert data["to_move"] == 0 and data["winner"] is None and len(data["board"]) == 25


def _bad(change: dict[str, Any]) -> JSON:
    data = GAME.state_to_json(record_start())
    data.update(change)
    return data


@pytest.mark.parametrize("data", [
    _bad({"board": {}}),
    _bad({"board": None}),
    _bad({"graveyards": [[]]}),
    _bad({"graveyards": [["C1a"], []]}),
    _bad({"player": 2}),
    _bad({"player": True}),
    _bad({"winner": 0}),
    _bad({"winner": [3]}),
    _bad({"to_move": 1}),
    _bad({"revealed": ["X9z"]}),
    _bad({"quiet_turns": -1}),
    _bad({"options": {"ranks": [1, 2]}}),
    _bad({"options": {"strict_statue": "yes"}}),
    _bad({"game": "topple"}),
])
def test_bad_state_json_is_a_record_error(data: JSON) -> None:
    with pytest.raises(RecordError):
        GAME.state_from_json(data)


def test_state_json_with_a_piece_twice_or_missing() -> None:
    data = GAME.state_to_json(record_start())
    data["board"]["c3"] = ["T5a"]
    with pytest.raises(RecordError, match="twice"):
        GAME.state_from_json(data)
    data = GAME.state_to_json(record_start())
    data["board"]["a1"] = ["T5a"]
    with pytest.raises(RecordError, match="T3a is neither"):
        GAME.state_from_json(data)
    with pytest.raises(RecordError):
        GAME.state_from_json([])  # type: ignore[arg-type]


# -- records -------------------------------------------------------------------------------------


def test_record_segments_and_unknown_fields() -> None:
    record = {"game": "tactiki", "event": "club night", "options": {"colour": "red"},
              "setup": RECORD_SETUP, "moves": ["c1-c2 c2-c3", "a5-a4 b5-b4", "A1-A2 B1-B2"]}
    segments = GAME.record_segments(record)
    assert len(segments) == 1 and segments[0].where == {}
    result = replay(record)
    assert result.ok and result.moves_applied == 3
    assert result.to_json()["winner"] is None and result.to_json()["scores"] == [0, 0]
    assert get_game("tactiki") is GAME


def test_setup_keys_are_case_insensitive() -> None:
    setup = {k.upper(): v for k, v in RECORD_SETUP.items()}
    state = GAME.record_segments({"game": "tactiki", "setup": setup, "moves": []})[0].start(None)
    assert state == record_start()


@pytest.mark.parametrize(("setup", "reason"), [
    (None, "needs a 'setup' object"),
    ({k: v for k, v in RECORD_SETUP.items() if k != "c5"}, "TAC's start field c5 is missing"),
    ({**RECORD_SETUP, "c3": [1, 2]}, "'c3' is not a start field"),
    ({**RECORD_SETUP, "a1": [5, 3, 1]}, "a1 must hold exactly two ranks"),
    ({**RECORD_SETUP, "a1": [6, 3]}, "a1 must hold exactly two ranks"),
    ({**RECORD_SETUP, "a1": [True, 3]}, "a1 must hold exactly two ranks"),
    ({**RECORD_SETUP, "a1": [1, 3]}, "TIKI's pieces must have the ranks 1, 1, 2, 2"),
    ({**RECORD_SETUP, "A1": [5, 3]}, "a1 is given twice"),
])
def test_bad_setups_are_record_errors(setup: Any, reason: str) -> None:
    record = {"game": "tactiki", "setup": setup, "moves": []}
    with pytest.raises(RecordError, match=reason):
        GAME.record_segments(record)


def test_setup_must_match_the_ranks_option_r1() -> None:
    ranks = [1, 1, 1, 2, 2, 2, 3, 3, 4, 5]
    setup = {"a1": [1, 1], "b1": [1, 2], "c1": [2, 2], "d1": [3, 3], "e1": [4, 5],
             "a5": [5, 4], "b5": [3, 3], "c5": [2, 2], "d5": [2, 1], "e5": [1, 1]}
    record = {"game": "tactiki", "options": {"ranks": ranks}, "setup": setup, "moves": []}
    state = GAME.record_segments(record)[0].start(None)
    assert GAME.piece_ids(state)["b1"] == ("T1c", "T2a")
    with pytest.raises(RecordError, match="ranks 1, 1, 2, 2, 3, 3"):
        GAME.record_segments({**record, "options": {}})


def test_moves_must_be_a_list() -> None:
    with pytest.raises(RecordError, match="'moves' list"):
        GAME.record_segments({"game": "tactiki", "setup": RECORD_SETUP})


def test_replay_stops_at_the_first_illegal_move() -> None:
    record = {"game": "tactiki", "setup": RECORD_SETUP,
              "moves": ["c1-c2 c2-c3", "a5-a4 b5-b4", "c3-c5 a1-a2", "b1-b2 a1-a2"]}
    result = replay(record)
    assert not result.ok and result.error is not None
    assert result.error.to_json() == {"move": 2, "text": "c3-c5 a1-a2",
                                      "reason": "c3 to c5 is two fields: a step goes one field"}
    assert result.state == play(record_start(), "c1-c2 c2-c3", "a5-a4 b5-b4")


def test_example_record_is_a_legal_game() -> None:
    record = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    result = replay(record)
    assert result.ok and GAME.is_over(result.state)
    texts = record["moves"]
    # The example is written in canonical text.
    state = GAME.record_segments(record)[0].start(None)
    for text in texts:
        move = GAME.parse_move(state, text)
        assert GAME.move_text(state, move) == text
        state = GAME.apply(state, move)


def test_describe_draws_the_board() -> None:
    text = GAME.describe(record_start())
    lines = text.splitlines()
    assert lines[1].startswith("5") and lines[5].startswith("1")
    assert "T5T3" in lines[5] and "C1C2" in lines[1]
    assert "TIKI to move" in text and "defeated: none" in text


# -- the command line ----------------------------------------------------------------------------


def _cli(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_app", "replay", str(path), "--json"],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)


def test_cli_replay_legal_record(tmp_path: Path) -> None:
    done = _cli(EXAMPLE)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["ok"] is True and out["error"] is None and out["finished"] is True
    assert out["winner"] in ([0], [1]) and sorted(out["scores"]) == [0, 1]
    assert out["state"]["game"] == "tactiki"


def test_cli_replay_illegal_move(tmp_path: Path) -> None:
    path = tmp_path / "bad.tiki.json"
    moves = ["c1-c2 c2-c3", "a5-a4 b5-b4", "c3-c4"]
    path.write_text(json.dumps({"game": "tactiki", "setup": RECORD_SETUP, "moves": moves}))
    done = _cli(path)
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert out["ok"] is False and out["finished"] is False and out["winner"] is None
    assert out["error"] == {"move": 2, "text": "c3-c4",
                            "reason": "You can still make a second step, so the turn needs two"
                                      " steps"}
    assert out["state"] == GAME.state_to_json(play(record_start(), *moves[:2]))


def test_cli_replay_bad_setup(tmp_path: Path) -> None:
    path = tmp_path / "bad-setup.tiki.json"
    setup = {**RECORD_SETUP, "a1": [1, 3]}
    path.write_text(json.dumps({"game": "tactiki", "setup": setup, "moves": []}))
    done = _cli(path)
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "TIKI's pieces must have the ranks" in done.stderr


def test_defaults_are_the_rulebook_r4_r8() -> None:
    """Issue 31: a game with no options plays the printed rules. Frozen pieces cannot be
    attacked ("neither by you nor by any action of your opponent", R4) and nothing ends a game
    on quiet turns (R8 (a) is the referee's, not the rulebook's); both are options, named as
    house rules. Only games between machines start with the 30-turn count."""
    import random

    options = GAME.new_game(random.Random(0)).options
    assert options.attack_frozen is False and options.strict_statue is False
    assert options.quiet_turns == 0
    assert replay({"game": "tactiki", "setup": GAME.setup_record(
        GAME.new_game(random.Random(0)))["setup"], "moves": []}).state.options.quiet_turns == 0
    assert GAME.machine_defaults == {"quiet_turns": 30}
    assert GAME.new_machine_game(random.Random(0)).options.quiet_turns == 30
