"""Tiki on Manami island: hand-made exact cases, one or more per ruling of seeds/tiki-manami.md.

Positions are written as village -> owners bottom first (``{"b1": "10"}`` is a totem with a token
of player 1 under a token of player 0) on the layout of docs/records.md's example, drawn here with
row 3 at the top::

    3   0  +1   0        a3 b3 c3
    2  -1  +2  +1        a2 b2 c2
    1  +1   0  +1        a1 b1 c1
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_app.games import IllegalMove, RecordError, get_game
from pi_app.games.manami import (
    DEFAULT_TILES,
    GAME,
    NAMES,
    ManamiState,
    Move,
    Options,
)
from pi_app.records import load_record, replay

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "pi_app" / "data" / "manami-example.tiki.json"
LAYOUT = {"a1": 1, "b1": 0, "c1": 1, "a2": -1, "b2": 2, "c2": 1, "a3": 0, "b3": 1, "c3": 0}


def position(totems: dict[str, str] | None = None, *, held: tuple[int, int] = (0, 0),
             spoiled: int = 0, added: int = 0, turn: int = 0, shaman: str | None = None,
             tie_break: bool = False, **options: Any) -> ManamiState:
    """A position built through ``state_from_json``, so every invariant is checked.

    ``options`` are the game options (``tokens``, ``fruit``, ``quiet_limit``); the shaman variant
    is on exactly when ``shaman`` names an edge.
    """
    opts = {"tokens": 8, "fruit": 7, "shaman": shaman is not None, "quiet_limit": 200,
            **options}
    stacks = {name: [int(c) for c in (totems or {}).get(name, "")] for name in NAMES}
    on_board = [sum(s.count(p) for s in stacks.values()) for p in (0, 1)]
    data = {
        "villages": LAYOUT, "totems": stacks,
        "reserve": [opts["tokens"] - on_board[0], opts["tokens"] - on_board[1]],
        "fruit": list(held), "supply": opts["fruit"] + added - sum(held) - spoiled,
        "spoiled": spoiled, "added": added, "turn": turn, "resolve": [],
        "shaman_decisions": [], "shaman": shaman, "tie_break": tie_break, "quiet": 0,
        "over": False, "options": opts}
    return GAME.state_from_json(data)


def revalue(state: ManamiState, **values: int) -> ManamiState:
    """The same position with some village values changed."""
    data = GAME.state_to_json(state)
    return GAME.state_from_json({**data, "villages": {**data["villages"], **values}})


def play(state: ManamiState, *texts: str) -> ManamiState:
    for text in texts:
        state = GAME.apply_text(state, text)
    return state


def totems(state: ManamiState) -> dict[str, str]:
    """The non-empty villages as village -> owners bottom first."""
    return {name: "".join(map(str, s)) for name, s in zip(NAMES, state.stacks, strict=True) if s}


def illegal(state: ManamiState, text: str) -> str:
    with pytest.raises(IllegalMove) as caught:
        GAME.apply_text(state, text)
    return str(caught.value)


def record(moves: list[str], **extra: Any) -> dict[str, Any]:
    return {"game": "manami", "villages": LAYOUT, "first": 0, "moves": moves, **extra}


# -- placing and moving ----------------------------------------------------------------------------


def test_opening_position() -> None:
    state = GAME.setup([LAYOUT[n] for n in NAMES], first=1)
    assert GAME.to_move(state) == 1 and state.reserve == (8, 8) and state.supply == 7
    assert GAME.scores(state) == (0, 0) and GAME.winners(state) is None
    assert len(GAME.legal_moves(state)) == 9  # a place on each empty village


def test_place_creates_a_totem_and_the_turn_passes() -> None:
    state = play(position(), "place b2")
    assert totems(state) == {"b2": "0"} and state.reserve == (7, 8)
    assert GAME.to_move(state) == 1


def test_height_two_totem_sows_along_a_straight_path() -> None:
    """R5: the bottom token drops in the first village entered, the top one at the end."""
    state = play(position({"a1": "10", "b1": "0"}), "a1-b1-c1")
    assert totems(state) == {"b1": "01", "c1": "0"}
    assert GAME.to_move(state) == 1


def test_height_two_totem_sows_along_an_l_path() -> None:
    state = play(position({"a1": "10", "a2": "1"}), "a1-a2-b2")
    assert totems(state) == {"a2": "11", "b2": "0"}


def test_height_one_totem_moves_onto_a_totem() -> None:
    state = play(position({"b2": "0", "c2": "11"}, turn=0), "b2-c2")
    # c2 (+1) now holds three tokens with player 0 on top: influenced at once (R6).
    assert totems(state) == {} and state.fruit == (1, 0) and state.supply == 6
    assert state.reserve == (8, 8)


def test_a_move_must_be_exactly_as_long_as_the_totem() -> None:
    state = position({"b2": "10", "a1": "0"})
    assert illegal(state, "b2-c2") == ("The totem on b2 has 2 tokens, so it must move exactly "
                                       "2 villages")
    assert illegal(state, "a1-b1-c1") == ("The totem on a1 has 1 token, so it must move exactly "
                                          "1 village")


def test_straight_back_is_illegal_r4() -> None:
    state = position({"b2": "10"})
    assert illegal(state, "b2-c2-b2") == ("b2-c2-b2 goes straight back: a totem may turn but "
                                          "never return to the village it just left")
    play(state, "b2-c2-c3")  # turning is fine
    play(state, "b2-b1-a1")


def test_off_the_board_is_illegal_r3() -> None:
    state = position({"c1": "10", "a1": "0"})
    assert illegal(state, "c1-d1-d2") == ("'d1' is not a village: villages are a1 to c3, so a "
                                          "step there would leave the board")
    assert "not a village" in illegal(state, "a1-a0")
    assert "not neighbours" in illegal(state, "a1-b2")  # diagonal
    assert "not neighbours" in illegal(state, "a1-c1")  # a jump


def test_moving_a_totem_topped_by_the_opponent_is_illegal_r5() -> None:
    state = position({"a1": "01", "c3": "0"})
    assert illegal(state, "a1-b1-c1") == "The top token of the totem on a1 is your opponent's"
    assert illegal(state, "b2-b3") == "There is no totem on b2"


def test_placing_on_a_non_empty_village_is_illegal() -> None:
    state = position({"c3": "1"})
    assert illegal(state, "place c3") == ("c3 is not empty: a new totem goes on an empty "
                                          "village")


def test_placing_with_an_empty_reserve_is_illegal() -> None:
    state = position({"a1": "0", "b1": "0"}, tokens=2)
    assert "no token left" in illegal(state, "place c1")


# -- influence, resolve order and the end ----------------------------------------------------------


def two_villages() -> ManamiState:
    """Player 0 (3 fruit) has played b1-b2-c2: b2 (+2) has player 1 on top, c2 (+1) player 0."""
    return play(position({"b1": "10", "b2": "00", "c2": "11"}, held=(3, 2)), "b1-b2-c2")


def test_two_villages_wait_for_the_opponents_resolve_r6() -> None:
    state = two_villages()
    assert GAME.to_move(state) == 1 and state.pending == (4, 5)
    assert totems(state) == {"b2": "001", "c2": "110"}
    assert [GAME.move_text(state, m) for m in GAME.legal_moves(state)] == [
        "resolve b2 c2", "resolve c2 b2"]
    assert illegal(state, "place a1").startswith("First choose the order in which b2 and c2")
    assert "must name b2 and c2" in illegal(state, "resolve b2 a1")


def test_the_resolve_order_decides_who_wins_r8() -> None:
    """R8: the end is checked after each village, so the first one influenced can end it."""
    state = two_villages()
    p1_first = play(state, "resolve b2 c2")
    assert GAME.winners(p1_first) == (1,) and p1_first.fruit == (3, 4)
    assert totems(p1_first) == {"c2": "110"}  # not influenced: the game ended before it
    assert GAME.to_move(p1_first) is None and GAME.legal_moves(p1_first) == []
    p0_first = play(state, "resolve c2 b2")
    assert GAME.winners(p0_first) == (0,) and p0_first.fruit == (4, 2)
    assert totems(p0_first) == {"b2": "001"}


def test_both_villages_influenced_then_the_turn_passes_r17() -> None:
    state = play(position({"b1": "10", "b2": "00", "c2": "11"}), "b1-b2-c2", "resolve c2 b2")
    assert state.fruit == (1, 2) and state.supply == 4 and totems(state) == {}
    assert GAME.to_move(state) == 1 and state.reserve == (8, 8)


def test_resolve_out_of_turn_is_illegal_r6() -> None:
    assert "nothing to resolve" in illegal(position(), "resolve a1 b1")


def test_minus_one_with_fruit_in_hand_spoils_it_r9() -> None:
    state = play(position({"a1": "0", "a2": "11"}, held=(2, 0)), "a1-a2")
    assert state.fruit == (1, 0) and state.spoiled == 1 and state.supply == 5


def test_minus_one_with_no_fruit_spoils_one_from_the_supply_r9() -> None:
    state = play(position({"a1": "0", "a2": "11"}, held=(0, 2)), "a1-a2")
    assert state.fruit == (0, 2) and state.spoiled == 1 and state.supply == 4
    assert not state.over


def test_minus_one_emptying_the_supply_ends_the_game_r9() -> None:
    state = play(position({"a1": "0", "a2": "11"}, held=(0, 3), spoiled=3), "a1-a2")
    assert state.supply == 0 and state.over and GAME.winners(state) == (1,)


def test_a_gain_larger_than_the_supply_takes_what_is_left_r7() -> None:
    state = play(position({"b1": "0", "b2": "11"}, held=(1, 2), spoiled=3), "b1-b2")
    # supply was 1: +2 gives one fruit, the supply is empty; 2-2 is a tie, so R10 applies
    assert state.fruit == (2, 2) and state.tie_break and state.supply == 1
    state = play(position({"b1": "0", "b2": "11"}, held=(2, 1), spoiled=3), "b1-b2")
    assert state.fruit == (3, 1) and state.supply == 0 and GAME.winners(state) == (0,)


def test_four_fruit_wins_at_once() -> None:
    state = play(position({"b1": "1", "b2": "00"}, held=(0, 2), turn=1), "b1-b2")
    assert state.fruit == (0, 4) and state.supply == 3 and GAME.winners(state) == (1,)


def test_supply_running_out_on_a_tie_starts_the_tie_break_r10() -> None:
    state = play(position({"c1": "1", "c2": "00"}, held=(3, 2), spoiled=1, turn=1), "c1-c2")
    assert state.fruit == (3, 3) and not state.over and GAME.winners(state) is None
    assert state.tie_break and state.supply == 1 and state.spoiled == 0  # a spoiled one returned
    assert GAME.to_move(state) == 0


def test_tie_break_ends_on_the_next_gain_r10() -> None:
    state = position({"b1": "1", "b2": "00"}, held=(2, 2), spoiled=2, tie_break=True, turn=1)
    assert state.supply == 1
    won = play(state, "b1-b2")  # +2 with one fruit left: one gained, the tie is broken
    assert won.fruit == (2, 3) and won.supply == 0 and GAME.winners(won) == (1,)


def test_tie_break_ends_on_the_next_loss_r10() -> None:
    state = position({"a1": "1", "a2": "00"}, held=(3, 3), tie_break=True, turn=1)
    lost = play(state, "a1-a2")  # player 1 tops the -1 village and loses a fruit
    assert lost.fruit == (3, 2) and lost.spoiled == 1 and lost.supply == 1
    assert GAME.winners(lost) == (0,)


def test_tie_break_minus_one_without_fruit_changes_nothing_r10() -> None:
    state = position({"a1": "0", "a2": "11"}, held=(0, 0), spoiled=6, tie_break=True)
    after = play(state, "a1-a2")
    assert not after.over and after.tie_break and after.fruit == (0, 0)
    assert after.supply == 1 and after.spoiled == 6  # spoiled from the supply, then returned


def test_tie_with_nothing_spoiled_adds_a_fresh_fruit_r10() -> None:
    state = play(position({"c1": "1", "c2": "00"}, held=(3, 2), turn=1, fruit=6), "c1-c2")
    assert state.fruit == (3, 3) and state.tie_break and state.supply == 1
    assert state.spoiled == 0 and state.added == 1
    assert GAME.state_from_json(GAME.state_to_json(state)) == state


# -- the shaman variant ----------------------------------------------------------------------------


def test_shaman_set_up_is_the_second_players_second_entry_r14() -> None:
    start = GAME.setup([LAYOUT[n] for n in NAMES], 0, Options(shaman=True))
    state = play(start, "place b2")
    assert GAME.to_move(state) == 1 and state.deciders == (1,) and state.shaman == -1
    assert len(GAME.legal_moves(state)) == 12  # every edge; no stay
    assert "not on the board yet" in illegal(state, "shaman stay")
    assert illegal(state, "place a1") == ("First place the shaman between two neighbouring "
                                          "villages: shaman X/Y")
    state = play(state, "shaman b2/b1")
    assert GAME.state_to_json(state)["shaman"] == "b1/b2"
    assert GAME.to_move(state) == 1  # now their first move
    state = play(state, "place a1")
    assert GAME.to_move(state) == 0 and "may be moved only" in illegal(state, "shaman a1/a2")


def test_shaman_blocks_a_step_in_either_direction_r16() -> None:
    state = position({"b1": "0", "b2": "1", "c1": "10"}, shaman="b1/b2")
    blocked = "The shaman stands between b1 and b2: no totem may cross there"
    assert illegal(state, "b1-b2") == blocked
    assert illegal(state, "c1-b1-b2") == blocked  # on the second step
    play(state, "b1-a1")
    play(state, "c1-b1-a1")
    assert illegal(play(state, "place c3"), "b2-b1") == blocked  # the other way, player 1
    legal = {GAME.move_text(state, m) for m in GAME.legal_moves(state)}
    assert {"b1-a1", "c1-b1-a1", "c1-c2-b2"} <= legal and not {"b1-b2", "c1-b1-b2"} & legal


def test_shaman_moved_by_the_top_owner_after_a_zero_village_r15() -> None:
    # player 0 sows a1-b1-c1: b1 (0) gets player 1's token on top: player 1 decides
    state = play(position({"a1": "10", "b1": "00", "c3": "1"}, shaman="a2/a3"), "a1-b1-c1")
    assert totems(state) == {"c1": "0", "c3": "1"} and state.deciders == (1,)
    assert GAME.to_move(state) == 1
    assert len(GAME.legal_moves(state)) == 12  # eleven other edges and stay
    assert "First decide about the shaman" in illegal(state, "c3-b3")
    assert illegal(state, "shaman a3/a2") == ("The shaman already stands on a2/a3: write "
                                              "shaman stay to keep it there")
    assert "not neighbours" in illegal(state, "shaman a1/b2")
    moved = play(state, "shaman B2/B3")
    assert GAME.state_to_json(moved)["shaman"] == "b2/b3"
    assert GAME.to_move(moved) == 1  # R17: player 0 moved, so player 1 plays next
    stayed = play(state, "shaman stay")
    assert stayed.shaman == state.shaman and GAME.to_move(stayed) == 1


def test_shaman_decision_comes_after_the_resolve_r15() -> None:
    # b2 made a 0-village: b1-b2-c2 tops b2 (0) with player 1 and c2 (+1) with player 0
    state = revalue(position({"b1": "10", "b2": "00", "c2": "11"}, shaman="a1/a2"), b2=0)
    state = play(state, "b1-b2-c2")
    assert state.pending == (4, 5) and state.deciders == () and GAME.to_move(state) == 1
    assert illegal(state, "shaman stay").startswith("First choose the order")
    state = play(state, "resolve c2 b2")
    assert state.fruit == (1, 0) and state.deciders == (1,) and GAME.to_move(state) == 1
    state = play(state, "shaman stay")
    assert GAME.to_move(state) == 1 and state.turn == 1  # R17: player 0 moved


def test_two_zero_villages_give_two_decisions_in_order_r15() -> None:
    state = revalue(position({"a1": "10", "b1": "00", "c1": "11"}, shaman="b2/b3"), c1=0)
    state = play(state, "a1-b1-c1")  # b1 tops player 1, c1 tops player 0
    assert GAME.to_move(state) == 1 and state.pending == (1, 2)
    state = play(state, "resolve c1 b1")
    assert state.deciders == (0, 1) and GAME.to_move(state) == 0
    state = play(state, "shaman a1/a2")
    assert GAME.to_move(state) == 1 and state.deciders == (1,)
    state = play(state, "shaman stay")
    assert GAME.state_to_json(state)["shaman"] == "a1/a2" and GAME.to_move(state) == 1


def test_no_shaman_decision_once_the_game_is_over_r8_r15() -> None:
    # player 1 sows c1-b1-b2: b1 (0) tops player 0, b2 (+2) tops player 1, who holds two fruit
    state = play(position({"c1": "01", "b1": "00", "b2": "00"}, held=(0, 2), shaman="c2/c3",
                          turn=1), "c1-b1-b2")
    assert state.pending == (1, 4) and GAME.to_move(state) == 0
    zero_first = play(state, "resolve b1 b2")
    assert zero_first.over and zero_first.deciders == () and GAME.to_move(zero_first) is None
    assert GAME.winners(zero_first) == (1,) and totems(zero_first) == {}
    win_first = play(state, "resolve b2 b1")
    assert win_first.over and totems(win_first) == {"b1": "000"}


def test_no_shaman_decision_without_the_variant_r15() -> None:
    state = play(position({"b1": "11", "a1": "0"}), "a1-b1")
    assert totems(state) == {} and state.deciders == () and GAME.to_move(state) == 1


# -- pass and endless play -------------------------------------------------------------------------


def test_pass_only_when_nothing_else_is_legal_r11() -> None:
    # all eight tokens of player 0 lie under player 1's: no reserve, no totem to move
    stuck = {name: "01" for name in NAMES[:8]}
    state = position(stuck)
    assert state.reserve == (0, 0) and [GAME.move_text(state, m)
                                         for m in GAME.legal_moves(state)] == ["pass"]
    after = play(state, "pass")
    assert GAME.to_move(after) == 1 and after.quiet == 1
    assert "pass" not in [GAME.move_text(after, m) for m in GAME.legal_moves(after)]
    assert illegal(after, "pass") == "You can still place or move a totem, so you may not pass"


def test_quiet_limit_ends_an_endless_game_r12() -> None:
    state = position({"a1": "0", "c3": "1"}, held=(1, 0), spoiled=0, quiet_limit=4)
    state = play(state, "a1-b1", "c3-c2", "b1-a1")
    assert not state.over and state.quiet == 3
    state = play(state, "c2-c3")
    assert state.over and GAME.winners(state) == (0,) and GAME.to_move(state) is None


def test_quiet_limit_draw_r12_r13() -> None:
    draw = play(position({"a1": "0", "c3": "1"}, quiet_limit=2), "a1-b1", "c3-c2")
    assert draw.over and GAME.winners(draw) == (0, 1) and GAME.scores(draw) == (0, 0)


def test_quiet_count_restarts_when_fruit_moves_r12() -> None:
    state = play(position({"b1": "0", "b2": "11", "c3": "1"}, quiet_limit=3),
                 "place a1", "c3-c2", "b1-b2")  # b2 (+2) influenced on the third turn
    assert state.quiet == 0 and state.fruit == (2, 0) and not state.over
    state = play(state, "c2-c3", "a1-b1")
    assert state.quiet == 2 and not state.over
    assert play(state, "c3-c2").over


def test_a_zero_village_moves_no_fruit_so_the_turn_is_quiet_r12() -> None:
    state = play(position({"a1": "0", "b1": "11"}, quiet_limit=3), "place c3", "place a3")
    assert state.quiet == 2
    ended = play(state, "a1-b1")  # b1 (0) influenced: no fruit moved, third quiet turn
    assert totems(ended) == {"a3": "1", "c3": "0"} and ended.over
    assert GAME.winners(ended) == (0, 1)


def test_tie_break_minus_one_without_fruit_is_a_quiet_turn_r10_r12() -> None:
    state = position({"a1": "0", "a2": "11"}, held=(0, 0), spoiled=6, tie_break=True)
    assert play(state, "a1-a2").quiet == 1


def test_a_game_on_zero_villages_only_still_ends_r12() -> None:
    rng = random.Random(3)
    state = GAME.new_machine_game(rng, {"tiles": [0] * 9, "shaman": True})
    decisions = 0
    while not state.over:
        state = GAME.apply(state, GAME.random_move(state, rng))
        decisions += 1
    assert state.quiet == 200 and GAME.winners(state) == (0, 1) and decisions > 200


def test_no_quiet_limit_when_switched_off_r12() -> None:
    state = position({"a1": "0", "c3": "1"}, quiet_limit=None)
    for _ in range(60):
        state = play(state, "a1-b1", "c3-c2", "b1-a1", "c2-c3")
    assert not state.over and state.quiet == 240


def test_no_quiet_limit_by_default_the_rulebook_has_none_r12() -> None:
    """Issue 31: the printed rules end the game only on fruit, so an engine's game, a record
    without ``quiet_limit`` and the table all play without R12's limit; only games between
    machines (bots, soaks, benches) start from the 200 turns, which end random shuffling."""
    assert Options().quiet_limit is None
    assert GAME.new_game(random.Random(0)).options.quiet_limit is None
    assert replay(record([])).state.options.quiet_limit is None
    assert GAME.machine_defaults == {"quiet_limit": 200}
    assert GAME.new_machine_game(random.Random(0)).options.quiet_limit == 200
    assert GAME.table_defaults == {"quiet_limit": None}  # written out, for older replays
    state = position({"a1": "0", "c3": "1"}, quiet_limit=None)
    for _ in range(60):
        state = play(state, "a1-b1", "c3-c2", "b1-a1", "c2-c3")
    assert not state.over and state.quiet == 240


def test_the_machines_quiet_limit_is_two_hundred_turns_r12() -> None:
    state = position({"a1": "0", "c3": "1"}, quiet_limit=200)
    for _ in range(49):
        state = play(state, "a1-b1", "c3-c2", "b1-a1", "c2-c3")
    state = play(state, "a1-b1", "c3-c2", "b1-a1")
    assert not state.over and state.quiet == 199
    assert play(state, "c2-c3").over


# -- notation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "canonical"), [
    ("PLACE B2", "place b2"), ("  place   c3 ", "place c3"), ("A1-B1-B2", "a1-b1-b2"),
    ("b2-c2", "b2-c2"), ("Resolve C2 B1", "resolve c2 b1"), ("shaman B2/B1", "shaman b1/b2"),
    ("SHAMAN STAY", "shaman stay"), ("Pass", "pass"),
])
def test_notation_is_case_insensitive_and_printed_lower_case(text: str, canonical: str) -> None:
    state = position()
    move = GAME.parse_move(state, text)
    assert GAME.move_text(state, move) == canonical
    assert GAME.parse_move(state, canonical) == move


@pytest.mark.parametrize("text", [
    "", "jump b2", "place", "place b2 c2", "b2", "b2-", "-b2", "resolve b2", "shaman", "shaman b2",
    "shaman b2/b3/c3", "shaman b1-b2", "pass b2", "place d4", "b2-z9", "resolve b2 q1",
])
def test_unparseable_text_is_an_illegal_move(text: str) -> None:
    with pytest.raises(IllegalMove):
        GAME.parse_move(position(), text)


def test_unknown_move_text_reason_lists_the_notation() -> None:
    assert illegal(position(), "jump b2") == (
        "'jump b2' is not a Tiki move: write place X, X-Y, X-Y-Z, resolve X Y, shaman X/Y, "
        "shaman stay or pass")


def test_apply_refuses_malformed_move_values() -> None:
    state = position({"b2": "0"})
    for move in (Move("place", (9,)), Move("place", ()), Move("move", (4,)), Move("jump", (4,)),
                 Move("move", (-1, 4)), Move("shaman", (0, 8))):
        with pytest.raises(IllegalMove):
            GAME.apply(state, move)


# -- view, picture, JSON ---------------------------------------------------------------------------


def test_expected_view_lists_all_nine_villages_bottom_first() -> None:
    view = GAME.expected_view(position({"a1": "01", "c3": "1"}))
    assert list(view)[:9] == list(NAMES)
    assert len(view) == 21 and all(view[e] == () for e in list(view)[9:])  # no shaman
    assert view["a1"] == ("p0", "p1") and view["c3"] == ("p1",) and view["b2"] == ()


def test_placement_view_keeps_an_influenced_village_until_it_is_cleared() -> None:
    state = position({"b2": "0", "c2": "11"})
    move = GAME.parse_move(state, "b2-c2")
    placed = GAME.placement_view(state, move)
    assert placed["c2"] == ("p1", "p1", "p0") and placed["b2"] == ()
    assert GAME.expected_view(GAME.apply(state, move))["c2"] == ()  # the follow-up: clear it
    place = GAME.parse_move(state, "place a1")
    assert GAME.placement_view(state, place) == GAME.expected_view(GAME.apply(state, place))
    with pytest.raises(IllegalMove):
        GAME.placement_view(state, GAME.parse_move(state, "place b2"))


def test_placement_view_of_decisions_is_the_board_as_it_stands() -> None:
    state = two_villages()
    for move in GAME.legal_moves(state):  # resolve: the players then clear the villages
        assert GAME.placement_view(state, move) == GAME.expected_view(state)
    # The shaman is sensed on its edge: moving it is handling, staying is a decision.
    start = GAME.record_segments({"game": "manami", "options": {"shaman": True},
                                  "villages": dict.fromkeys(NAMES, 1),
                                  "moves": []})[0].start(None)
    placed = GAME.apply_text(start, "place a1")
    shaman = GAME.parse_move(placed, "shaman b1/b2")
    assert GAME.placement_view(placed, shaman)["b1/b2"] == ("shaman",)
    assert GAME.expected_view(GAME.apply(placed, shaman))["b1/b2"] == ("shaman",)
    assert GAME.transit_views(state, GAME.legal_moves(state)[0]) == []


def test_transit_views_of_a_totem_on_its_way() -> None:
    state = position({"a1": "10", "b1": "0", "c3": "1"})
    views = GAME.transit_views(state, GAME.parse_move(state, "a1-b1-c1"))
    assert [(v["a1"], v["b1"], v["c1"]) for v in views] == [
        ((), ("p0",), ()),                        # lifted
        ((), ("p0", "p1"), ()),                   # bottom token dropped, top one in hand
        ((), ("p0", "p1", "p0"), ()),             # the whole totem set down on b1 first
    ]
    single = GAME.transit_views(state, GAME.parse_move(state, "b1-b2"))
    assert len(single) == 1 and single[0]["b1"] == ()
    assert GAME.transit_views(state, GAME.parse_move(state, "place b2")) == []
    assert GAME.transit_views(state, GAME.parse_move(state, "c3-c2")) == []  # not legal


def test_pieces_are_every_token() -> None:
    assert sorted(GAME.pieces(position())) == ["p0"] * 8 + ["p1"] * 8
    assert GAME.pieces(position(tokens=3)) == ["p0", "p0", "p0", "p1", "p1", "p1"]


def test_setup_record_replays_to_the_same_opening() -> None:
    state = GAME.new_game(random.Random(4), {"shaman": True, "fruit": 9})
    written = GAME.setup_record(state)
    assert written["moves"] == [] and written["first"] == state.turn
    assert replay(json.loads(json.dumps(written))).state == state
    with pytest.raises(IllegalMove):
        GAME.setup_record(play(state, "place b2"))


def test_describe_draws_the_square() -> None:
    state = play(position({"b1": "10", "b2": "00", "c2": "11"}, held=(1, 2), spoiled=1,
                          shaman="a1/a2"), "b1-b2-c2")
    text = GAME.describe(state)
    lines = text.splitlines()
    assert lines[0] == "Tiki (Manami island), shaman variant"
    assert lines[2].split() == ["3", "0", ".", "+1", ".", "0", "."]
    assert lines[3].split() == ["2", "-1", ".", "+2", "001", "+1", "110"]
    assert "Fruit: Player 1 1, Player 2 2; supply 3; spoiled 1" in text
    assert "Shaman: between a1 and a2" in text
    assert "To move: Player 2 (resolve b2 c2 or resolve c2 b2)" in text
    assert "Game over: Player 2 wins" in GAME.describe(play(state, "resolve c2 b2"))
    assert "draw" in GAME.describe(play(position({"a1": "0"}, quiet_limit=1), "a1-b1"))
    decision = play(position({"a1": "0", "b1": "11"}, shaman="c2/c3"), "a1-b1")
    assert "To move: Player 1 (shaman X/Y or shaman stay)" in GAME.describe(decision)
    set_up = play(GAME.setup([0] * 9, 0, Options(shaman=True)), "place a1")
    assert "Shaman: not placed yet" in GAME.describe(set_up)
    assert "To move: Player 2 (place the shaman: shaman X/Y)" in GAME.describe(set_up)


def test_json_round_trip_mid_resolve_and_shaman() -> None:
    state = play(position({"b1": "10", "b2": "00", "c2": "11"}, shaman="a1/a2"), "b1-b2-c2")
    data = GAME.state_to_json(state)
    assert data["resolve"] == ["b2", "c2"] and data["shaman"] == "a1/a2"
    assert json.loads(json.dumps(data)) == data
    assert GAME.state_from_json(data) == state


def test_the_json_example_in_the_seeds_file_is_a_valid_state() -> None:
    text = (ROOT / "seeds" / "tiki-manami.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    state = GAME.state_from_json(json.loads(blocks[0]))
    assert GAME.state_to_json(state) == json.loads(blocks[0])


def _good_json() -> dict[str, Any]:
    return GAME.state_to_json(position({"a1": "01", "b2": "1"}, held=(1, 0)))


@pytest.mark.parametrize(("change", "words"), [
    ({"villages": {"a1": 1}}, "lacks village"),
    ({"villages": dict(LAYOUT, d4=1)}, "not a village"),
    ({"villages": dict(LAYOUT, a1=3)}, "worth -1, 0, 1 or 2"),
    ({"villages": dict(LAYOUT, a1=True)}, "worth -1, 0, 1 or 2"),
    ({"totems": {name: [] for name in NAMES}}, "tokens in reserve"),
    ({"totems": {**{name: [] for name in NAMES}, "a1": [0, 2]}}, "owner on a1"),
    ({"totems": {**{name: [] for name in NAMES}, "a1": [0, 1, 1, 0]}}, "at most three"),
    ({"reserve": [7]}, "two numbers"),
    ({"fruit": [2, 0]}, "add up"),
    ({"supply": -1}, "'supply'"),
    ({"turn": 2}, "'turn'"),
    ({"resolve": ["a1", "b2"]}, "does not hold three"),
    ({"resolve": ["a1"]}, "'resolve'"),
    ({"shaman": "a1/b2"}, "'shaman'"),
    ({"shaman": "a1/b1"}, "shaman variant only"),
    ({"shaman_decisions": [0]}, "shaman_decisions"),
    ({"over": "no"}, "'over'"),
    ({"options": {"tokens": 8, "fruit": 7, "shaman": False, "quiet_limit": 200, "x": 1}},
     "unknown manami option"),
    ({"options": []}, "'options'"),
])
def test_bad_json_state_raises_record_error(change: dict[str, Any], words: str) -> None:
    with pytest.raises(RecordError, match=re.escape(words)):
        GAME.state_from_json({**_good_json(), **change})


def test_bad_json_state_shapes_raise_record_error() -> None:
    bad: Any
    for bad in ([], {}, {**_good_json(), "quiet": None}):
        with pytest.raises(RecordError):
            GAME.state_from_json(bad)
    data = _good_json()
    del data["added"]
    with pytest.raises(RecordError, match="lacks 'added'"):
        GAME.state_from_json(data)


# -- set-up and options ----------------------------------------------------------------------------


def test_new_game_shuffles_the_default_tiles_and_repeats_with_a_seed_r1_r2() -> None:
    games = [GAME.new_game(random.Random(seed)) for seed in range(30)]
    assert all(sorted(g.values) == sorted(DEFAULT_TILES) for g in games)
    assert sorted(DEFAULT_TILES) == [-1, 0, 0, 0, 1, 1, 1, 1, 2]
    assert len({g.values for g in games}) > 20 and {g.turn for g in games} == {0, 1}
    assert GAME.new_game(random.Random(7)) == GAME.new_game(random.Random(7))


def test_new_game_options_r1() -> None:
    tiles = [2, 2, 2, 1, 1, 0, 0, -1, -1]
    state = GAME.new_game(random.Random(1), {"tiles": tiles, "tokens": 5, "fruit": 9,
                                             "shaman": True, "quiet_limit": None})
    assert sorted(state.values) == sorted(tiles) and state.reserve == (5, 5)
    assert state.supply == 9 and state.options == Options(5, 9, True, None)
    for bad in ({"tiles": [2] * 8}, {"tiles": [3] * 9}, {"tokens": 0}, {"fruit": "7"},
                {"shaman": 1}, {"quiet_limit": 0}, {"players": 2}):
        with pytest.raises(RecordError):
            GAME.new_game(random.Random(1), bad)


def test_registry_finds_the_engine() -> None:
    assert get_game("manami") is GAME and GAME.name == "manami"


# -- records and replay ----------------------------------------------------------------------------


def test_example_record_is_a_finished_legal_game() -> None:
    result = replay(load_record(EXAMPLE))
    assert result.ok and result.moves_applied == 17
    assert GAME.is_over(result.state) and GAME.winners(result.state) == (1,)
    assert result.to_json()["scores"] == [0, 4] and result.to_json()["winner"] == [1]


def test_record_first_player_and_unknown_fields() -> None:
    result = replay(record(["place b2"], first=1, players=["Ann", "Bob"], event="x"))
    assert result.ok and totems(result.state) == {"b2": "1"} and GAME.to_move(result.state) == 0


def test_record_with_the_shaman_variant_r14() -> None:
    result = replay(record(["place b2", "shaman a1/b1", "place a1", "a1-a2"],
                           options={"shaman": True}))
    assert not result.ok and result.error is not None
    assert result.error.to_json() == {
        "move": 3, "text": "a1-a2", "reason": "The top token of the totem on a1 is your "
                                              "opponent's"}
    assert totems(result.state) == {"a1": "1", "b2": "0"}


@pytest.mark.parametrize(("change", "words"), [
    ({"villages": None}, "'villages' must be an object"),
    ({"villages": {k: v for k, v in LAYOUT.items() if k != "c3"}}, "lacks village c3"),
    ({"villages": dict(LAYOUT, d1=0)}, "'d1', which is not a village"),
    ({"villages": dict(LAYOUT, b2=3)}, "village b2 is 3"),
    ({"villages": dict(LAYOUT, b2="2")}, "village b2 is '2'"),
    ({"first": 2}, "'first'"),
    ({"first": True}, "'first'"),
    ({"moves": "place b2"}, "'moves'"),
    ({"options": {"shamen": True}}, "unknown manami option 'shamen'"),
    ({"options": {"fruit": -1}}, "option 'fruit'"),
    ({"options": {"tiles": DEFAULT_TILES[:8]}}, "option 'tiles'"),
    ({"options": {"tiles": [2, 2, 1, 1, 1, 0, 0, 0, -1]}}, "not a layout of the tiles"),
    ({"options": 3}, "'options' must be an object"),
])
def test_bad_records_raise_record_error_r18(change: dict[str, Any], words: str) -> None:
    with pytest.raises(RecordError, match=re.escape(words)):
        replay({**record([]), **change})


def test_record_without_villages_or_moves_r18() -> None:
    for key in ("villages", "moves"):
        bad = record([])
        del bad[key]
        with pytest.raises(RecordError, match=f"needs '{key}'"):
            replay(bad)


def test_record_values_beyond_the_default_tile_set_are_accepted_r1() -> None:
    result = replay({**record(["place a1"]), "villages": dict.fromkeys(LAYOUT, 2)})
    assert result.ok and result.state.values == (2,) * 9


def test_replay_stops_at_the_first_illegal_move_with_the_position_before_it() -> None:
    result = replay(record(["place b2", "place b2", "place c2"]))
    assert result.error is not None and result.moves_applied == 1
    assert result.error.to_json() == {
        "move": 1, "text": "place b2",
        "reason": "b2 is not empty: a new totem goes on an empty village"}
    assert totems(result.state) == {"b2": "0"} and GAME.to_move(result.state) == 1


# -- the real command line -------------------------------------------------------------------------


def tikiboard(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, or ``python -m pi_app`` when it is not installed."""
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60,
                          check=False)


def write(tmp_path: Path, content: Any) -> str:
    path = tmp_path / "game.tiki.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_cli_replays_the_example_record() -> None:
    run = tikiboard("replay", str(EXAMPLE), "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["ok"] is True and out["error"] is None and out["finished"] is True
    assert out["scores"] == [0, 4] and out["winner"] == [1]
    assert GAME.state_from_json(out["state"]) == replay(load_record(EXAMPLE)).state


def test_cli_illegal_moves_exit_1_with_the_position_before(tmp_path: Path) -> None:
    moves = ["place b2", "place a1", "b2-c2", "a1-a2", "c2-b2-a2"]
    run = tikiboard("replay", write(tmp_path, record(moves)), "--json")
    assert run.returncode == 1, run.stderr
    out = json.loads(run.stdout)
    assert out["ok"] is False and out["finished"] is False and out["winner"] is None
    assert out["error"] == {"move": 4, "text": "c2-b2-a2", "reason": "The totem on c2 has 1 "
                            "token, so it must move exactly 1 village"}
    before = GAME.state_from_json(out["state"])
    assert totems(before) == {"c2": "0", "a2": "1"} and GAME.to_move(before) == 0


@pytest.mark.parametrize(("moves", "index", "words"), [
    (["place b2", "place c2", "b2-c2-b2"], 2, "The totem on b2 has 1 token"),
    (["place a1", "place b1", "a1-b1", "place a2", "b1-c1-b1"], 4, "straight back"),
    (["place c1", "place a1", "c1-d1"], 2, "would leave the board"),
    (["place b2", "place a1", "place a2", "a2-b2"], 3, "your opponent's"),
    (["place b2", "resolve b2 c2"], 1, "nothing to resolve"),
    (["place b2", "pass"], 1, "may not pass"),
    (["place b2", "hop"], 1, "is not a Tiki move"),
])
def test_cli_reports_each_kind_of_illegal_move(tmp_path: Path, moves: list[str], index: int,
                                               words: str) -> None:
    run = tikiboard("replay", write(tmp_path, record(moves)), "--json")
    assert run.returncode == 1, run.stderr
    error = json.loads(run.stdout)["error"]
    assert error["move"] == index and error["text"] == moves[index] and words in error["reason"]


@pytest.mark.parametrize("content", [
    record([], villages={"a1": 1}),
    record([], options={"shamen": True}),
    record([], first=3),
    {**record([]), "moves": [7]},
    "{\"game\": \"manami\"",
])
def test_cli_bad_records_exit_2(tmp_path: Path, content: Any) -> None:
    run = tikiboard("replay", write(tmp_path, content), "--json")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
