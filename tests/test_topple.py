"""Tiki Topple: exact cases from the rulebook and every card's legality edges, ruling by ruling."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from pi_app.games import IllegalMove, RecordError
from pi_app.games.topple import (
    GAME,
    GROUPS,
    HAND_2P,
    HAND_34P,
    TIKIS,
    Move,
    ToppleState,
    score_card,
)
from pi_app.games.topple_deck import deck, draw_cards, printed_cards
from pi_app.records import parse_record, replay

LINE = ["Hookipa", "Kapu", "Eepo", "Nui", "Lokahi", "Akamai", "Nani", "Wikiwiki", "Huhu"]
CARDS2 = [["Hookipa", "Lokahi", "Nani"], ["Wikiwiki", "Hookipa", "Akamai"]]


def record(moves: list[str], players: int = 2, **extra: Any) -> dict[str, Any]:
    cards = [CARDS2[0], CARDS2[1], ["Lokahi", "Wikiwiki", "Hookipa"],
             ["Akamai", "Huhu", "Hookipa"]][:players]
    rnd = {"line": LINE, "cards": cards, "first": 0, "moves": moves}
    return {"game": "topple", "options": {"players": players, **extra}, "rounds": [rnd]}


def start(players: int = 2, **extra: Any) -> ToppleState:
    state: ToppleState = replay(record([], players, **extra)).state
    return state


def play(state: ToppleState, *texts: str) -> ToppleState:
    for text in texts:
        state = GAME.apply_text(state, text)
    return state


# -- the rulebook --------------------------------------------------------------------------------
def test_rulebook_scoring_example() -> None:
    """Final line Lokahi, Hookipa, Akamai: players A-D score 5, 7, 11 and 2."""
    line = ["Lokahi", "Hookipa", "Akamai"]
    cards = [("Hookipa", "Lokahi", "Nani"), ("Wikiwiki", "Hookipa", "Akamai"),
             ("Lokahi", "Wikiwiki", "Hookipa"), ("Akamai", "Huhu", "Hookipa")]
    assert [score_card(line, c) for c in cards] == [5, 7, 11, 2]


def test_bundled_rulebook_record_replays_to_the_rulebook_scores() -> None:
    from pi_app.cli import example_record

    result = replay(parse_record(example_record("topple")))
    assert result.ok
    assert list(result.state.line) == ["Lokahi", "Hookipa", "Akamai"]
    assert result.to_json()["scores"] == [5, 7, 11, 2]
    assert result.to_json()["finished"] is False  # one round of four


def test_hands_per_player_count() -> None:
    assert sum(HAND_2P) == 7 and sum(HAND_34P) == 6
    assert start(2).hands == (HAND_2P, HAND_2P)
    assert start(4).hands == (HAND_34P,) * 4


# -- Tiki Up -------------------------------------------------------------------------------------
def test_up_moves_exactly_n_and_shifts_the_passed_tikis_down() -> None:
    s = play(start(), "up3 Lokahi")
    assert s.line == ("Hookipa", "Lokahi", "Kapu", "Eepo", "Nui", "Akamai", "Nani", "Wikiwiki",
                      "Huhu")
    s = play(s, "up1 Kapu")
    assert s.line[:3] == ("Hookipa", "Kapu", "Lokahi")


@pytest.mark.parametrize(("text", "ok"), [
    ("up1 Kapu", True), ("up2 Kapu", False), ("up3 Kapu", False),   # 2nd in line
    ("up2 Eepo", True), ("up3 Eepo", False),                         # 3rd
    ("up3 Nui", True),                                               # 4th
    ("up1 Hookipa", False),                                          # the top tiki
])
def test_up_near_the_top(text: str, ok: bool) -> None:
    if ok:
        play(start(), text)
    else:
        with pytest.raises(IllegalMove, match="above it"):
            play(start(), text)


def test_a_card_is_spent_for_the_round() -> None:
    s = play(start(), "up3 Lokahi", "up1 Nui")  # player 0, then player 1
    with pytest.raises(IllegalMove, match="no Tiki Up 3 card left"):
        play(s, "up3 Nani")
    s = play(s, "up1 Nani", "up1 Huhu", "up1 Nani")  # now both players have used both Up 1s
    with pytest.raises(IllegalMove, match="no Tiki Up 1 card left"):
        play(s, "up1 Eepo")
    assert Move("up1", "Eepo") not in GAME.legal_moves(s)


# -- Tiki Topple ---------------------------------------------------------------------------------
def test_topple_moves_to_the_bottom() -> None:
    s = play(start(), "topple Hookipa")  # R13: the top tiki may be toppled
    assert s.line == (*LINE[1:], "Hookipa")


def test_r1_the_rulebook_allows_topple_on_the_bottom_tiki() -> None:
    """Issue 31: Gamewright's Tiki Topple takes "any active tiki", so a record without the
    option plays it: the card is spent and the line stays."""
    s = play(start(), "topple Huhu")
    assert list(s.line) == LINE and s.hands[0][3] == 0
    assert Move("topple", "Huhu") in GAME.legal_moves(start())
    assert GAME.new_game(random.Random(0)).table.topple_bottom is True


def test_r1_the_house_rule_bans_topple_on_the_bottom_tiki() -> None:
    with pytest.raises(IllegalMove, match="already at the bottom"):
        play(start(topple_bottom=False), "topple Huhu")
    assert Move("topple", "Huhu") not in GAME.legal_moves(start(topple_bottom=False))


def test_r1_the_table_and_the_machines_keep_the_ban() -> None:
    """A Topple of the bottom tiki moves nothing, so the station's sensors cannot see it: the
    table and the simulated tables (and the bots measured with them) keep the ban."""
    assert GAME.table_defaults == {"topple_bottom": False}
    assert GAME.machine_defaults == {"topple_bottom": False}
    assert GAME.new_machine_game(random.Random(0)).table.topple_bottom is False


# -- Tiki Toast ----------------------------------------------------------------------------------
def test_r6_toast_barred_on_each_players_own_first_turn() -> None:
    s = start(3)
    with pytest.raises(IllegalMove, match="first turn"):
        play(s, "toast")
    s = play(s, "up1 Kapu")
    with pytest.raises(IllegalMove, match="first turn"):  # player 1's first turn, not the round's
        play(s, "toast")
    s = play(s, "up1 Eepo", "up1 Nui")
    s = play(s, "toast")  # player 0's second turn
    assert s.line == ("Kapu", "Eepo", "Nui", "Hookipa", "Lokahi", "Akamai", "Nani", "Wikiwiki")


def test_r9_toast_may_name_the_bottom_tiki_only() -> None:
    s = play(start(), "up1 Kapu", "up1 Eepo")
    assert play(s, "toast Huhu") == play(s, "toast")
    with pytest.raises(IllegalMove, match="bottom tiki, Huhu"):
        play(s, "toast Nani")
    assert GAME.move_text(s, GAME.parse_move(s, "TOAST huhu")) == "toast"


def test_a_toasted_tiki_cannot_be_moved() -> None:
    s = play(start(), "up1 Kapu", "up1 Eepo", "toast")
    with pytest.raises(IllegalMove, match="toasted"):
        play(s, "up1 Huhu")


# -- the end of a round --------------------------------------------------------------------------
def _toast_run(players: int) -> ToppleState:
    """Play Up 1 on the 2nd tiki once each, then Toasts only, until the round ends."""
    s = start(players)
    for _ in range(players):
        s = play(s, f"up1 {s.line[1]}")
    while s.turn is not None and GAME.is_legal(s, Move("toast")):
        s = play(s, "toast")
    return s


@pytest.mark.parametrize("players", [3, 4])
def test_r7_round_ends_when_the_sixth_tiki_is_removed(players: int) -> None:
    s = _toast_run(players)
    assert len(s.line) == 3 and s.turn is None
    assert any(any(h) for h in s.hands)  # cards left in hand are not played
    with pytest.raises(IllegalMove, match="round is over"):
        play(s, "up1 " + s.line[1])


def test_two_player_round_ends_when_all_cards_are_played() -> None:
    s = start(2)
    rng = random.Random(3)
    n = 0
    while s.turn is not None:
        s = GAME.apply(s, GAME.random_move(s, rng))
        n += 1
    assert n == 14 and len(s.line) >= 5
    assert s.table.round_scores[0] == tuple(score_card(s.line, c) for c in (
        ("Hookipa", "Lokahi", "Nani"), ("Wikiwiki", "Hookipa", "Akamai")))


def test_play_after_the_game_has_ended_is_illegal() -> None:
    rng = random.Random(5)
    s = GAME.new_game(rng)
    while not GAME.is_over(s):
        s = GAME.deal(s, rng) if s.turn is None else GAME.apply(s, GAME.random_move(s, rng))
    with pytest.raises(IllegalMove, match="game is over"):
        GAME.apply(s, Move("up1", s.line[1]))
    with pytest.raises(IllegalMove):
        GAME.deal(s, rng)


# -- whole games: rounds, starters, tie-breaks ---------------------------------------------------
ALL_CARDS = [["Hookipa", "Lokahi", "Nani"], ["Wikiwiki", "Hookipa", "Akamai"],
             ["Lokahi", "Wikiwiki", "Hookipa"], ["Akamai", "Huhu", "Hookipa"]]


def _round(first: int, n: int, same_cards: bool = False, **extra: Any) -> dict[str, Any]:
    cards = [ALL_CARDS[0]] * n if same_cards else ALL_CARDS[:n]
    return {"line": LINE, "cards": cards, "first": first, "moves": [], **extra}


def _play_out(rec: dict[str, Any], seed: int) -> dict[str, Any]:
    """Fill every round's moves with random legal play, round by round."""
    rng = random.Random(seed)
    for rnd in rec["rounds"]:
        state = replay(rec).state
        texts = []
        while state.turn is not None:
            move = GAME.random_move(state, rng)
            texts.append(GAME.move_text(state, move))
            state = GAME.apply(state, move)
        rnd["moves"] = texts
    return rec


def test_r4_start_moves_one_seat_each_round() -> None:
    rec: dict[str, Any] = {"game": "topple", "options": {"players": 3},
                           "rounds": [_round(2, 3), _round(0, 3)]}
    rec["rounds"] = rec["rounds"][:1]
    _play_out(rec, 9)
    rec["rounds"].append(_round(0, 3))
    result = replay(rec)
    assert result.ok and result.state.turn == 0 and result.state.table.first == 0
    rec["rounds"][1]["first"] = 1
    bad = replay(rec)
    assert not bad.ok and bad.error is not None
    assert bad.error.where == {"round": 1, "move": 0} and "Player 1 starts" in bad.error.reason


def test_r4_later_rounds_default_to_the_rotation() -> None:
    rec: dict[str, Any] = _play_out({"game": "topple", "rounds": [_round(1, 2)]}, 4)
    rec["rounds"].append({k: v for k, v in _round(0, 2).items() if k != "first"})
    assert replay(rec).state.turn == 0


def test_round_scoring_and_totals_over_four_rounds() -> None:
    rec: dict[str, Any] = {"game": "topple", "rounds": [_round(i % 2, 2) for i in range(4)]}
    result = replay(_play_out(rec, 12))
    assert result.ok and GAME.is_over(result.state) != (result.state.winners is None)
    per_round = result.state.table.round_scores
    assert len(per_round) == 4
    for r, rnd in enumerate(rec["rounds"]):
        partial = replay({**rec, "rounds": rec["rounds"][:r + 1]}).state
        line = partial.line
        assert per_round[r] == tuple(score_card(line, tuple(c)) for c in rnd["cards"])
    assert list(result.state.table.totals) == [sum(r[p] for r in per_round) for p in (0, 1)]


def test_r3_tie_break_round_by_the_tied_players_then_shared_win() -> None:
    # Identical cards make every round a tie (a record may carry any cards, R2).
    rec: dict[str, Any] = {"game": "topple",
                           "rounds": [_round(i % 2, 2, same_cards=True) for i in range(4)]}
    result = replay(_play_out(rec, 3))
    assert result.ok
    totals = result.state.table.totals
    assert totals[0] == totals[1]
    assert not GAME.is_over(result.state) and result.state.turn is None
    # The tie-break round: both tied, seven cards each (R3), started by the next seat (R4).
    rec["rounds"].append(_round(0, 2, same_cards=True, players=[0, 1]))
    started = replay(rec).state
    assert started.hands == (HAND_2P, HAND_2P) and started.turn == 0
    result = replay(_play_out(rec, 3))
    assert result.ok
    assert GAME.is_over(result.state) and GAME.winners(result.state) == (0, 1)  # shared win
    more = replay({**rec, "rounds": [*rec["rounds"], _round(1, 2)]})
    assert more.error is not None and "game is over" in more.error.reason


def test_r3_only_the_tied_leaders_play_the_tie_break() -> None:
    s = start(3)
    table = s.table
    # Force a finished regular game with players 0 and 2 tied for the lead.
    from dataclasses import replace as dc_replace

    table = dc_replace(table, rounds=1, round_scores=((9, 2, 9),), totals=(9, 2, 9))
    state = ToppleState(table, s.line, s.hands, (True,) * 3, None)
    from pi_app.games.topple import RoundSetup, next_round_seats, start_round

    assert next_round_seats(state) == (0, 2)
    rng = random.Random(1)
    dealt = GAME.deal(state, rng)
    assert dealt.table.seats == (0, 2)
    assert dealt.hands == (HAND_2P, (0, 0, 0, 0, 0), HAND_2P)  # seven cards when two are tied
    assert dealt.turn == 2  # the first tied player after seat 1 (R4)
    with pytest.raises(IllegalMove, match="tied players 0, 2"):
        start_round(state, RoundSetup(tuple(LINE), tuple(deck()[:3]), 1, (0, 1, 2)))


def test_r10_a_round_before_the_last_one_is_over() -> None:
    rec: dict[str, Any] = {"game": "topple", "rounds": [_round(0, 2), _round(1, 2)]}
    rec["rounds"][0]["moves"] = ["up1 Kapu"]
    result = replay(rec)
    assert not result.ok and result.error is not None
    assert result.error.where == {"round": 1, "move": 0}
    assert "not over" in result.error.reason
    assert result.state.line[0] == "Kapu"  # the position before the error


def test_r10_tie_break_round_without_a_tie_is_illegal() -> None:
    rec: dict[str, Any] = {}
    for seed in range(20):
        rec = _play_out({"game": "topple", "rounds": [_round(i % 2, 2) for i in range(4)]}, seed)
        if GAME.is_over(replay(rec).state):
            break
    rec["rounds"].append(_round(0, 2, players=[0, 1]))
    bad = replay(rec)
    assert bad.error is not None and "game is over" in bad.error.reason
    assert bad.error.where == {"round": 4, "move": 0}


# -- notation and set-up validation --------------------------------------------------------------
@pytest.mark.parametrize(("text", "match"), [
    ("", "empty move"), ("up4 Nani", "not an action card"), ("jump", "not an action card"),
    ("up1 Bob", "no tiki called 'Bob'"), ("up1", "write 'up1 NAME'"),
    ("topple Nani Huhu", "write 'topple NAME'"), ("toast Nani Huhu", "takes no tiki name"),
])
def test_bad_move_texts(text: str, match: str) -> None:
    with pytest.raises(IllegalMove, match=match):
        GAME.parse_move(start(), text)


def test_notation_is_case_insensitive_and_prints_canonically() -> None:
    s = start()
    move = GAME.parse_move(s, "  UP2   eepo ")
    assert move == Move("up2", "Eepo") and GAME.move_text(s, move) == "up2 Eepo"


@pytest.mark.parametrize(("change", "match"), [
    ({"options": {"players": 5}}, "2, 3 or 4 players"),
    ({"options": {"players": 3}}, "3 players need 3 Secret Tiki cards"),
    ({"options": {"players": 1}}, "2, 3 or 4 players"),
    ({"options": {"players": "2"}}, "2, 3 or 4"),
    ({"options": {"rounds": 0}}, "options.rounds"),
    ({"options": {"topple_bottom": "yes"}}, "true or false"),
    ({"options": []}, "'options' must be an object"),
    ({"rounds": []}, "non-empty 'rounds'"),
    ({"rounds": [{"line": LINE, "cards": CARDS2, "moves": "up1 Kapu"}]}, "'moves' must be a list"),
    ({"rounds": [{"line": LINE[:8], "cards": CARDS2}]}, "each of the nine tikis exactly once"),
    ({"rounds": [{"line": [*LINE[:8], "Bob"], "cards": CARDS2}]}, "no tiki called 'Bob'"),
    ({"rounds": [{"line": LINE, "cards": [CARDS2[0], ["Nani", "Nani", "Huhu"]]}]},
     "three different tikis"),
    ({"rounds": [{"line": LINE, "cards": [CARDS2[0], ["Nani", "Huhu"]]}]}, "three tiki names"),
    ({"rounds": [{"line": LINE, "cards": CARDS2, "first": 2}]}, "round 0 first"),
])
def test_malformed_records_are_record_errors(change: dict[str, Any], match: str) -> None:
    rec = {**record([]), **change}
    with pytest.raises(RecordError, match=match):
        replay(rec)


def test_r8_any_line_order_is_accepted_from_a_record() -> None:
    rec = record([])
    rec["rounds"][0]["line"] = sorted(TIKIS)  # not grouped by symbol
    assert replay(rec).ok


def test_r14_player_count_defaults_to_the_cards_dealt() -> None:
    rec = record([], 3)
    del rec["options"]
    assert replay(rec).state.table.players == 3


def test_unknown_record_fields_are_ignored() -> None:
    rec = {**record(["up1 Kapu"]), "event": "club night", "names": ["Ana", "Ben"]}
    rec["rounds"][0]["clock"] = 12
    assert replay(rec).ok


# -- the station's deal and the deck -------------------------------------------------------------
def test_r2_deck_table() -> None:
    cards = deck()
    assert len(cards) == 27 and len({frozenset(c) for c in cards}) == 27
    group_of = {t: i for i, g in enumerate(GROUPS) for t in g}
    assert all(sorted(group_of[t] for t in c) == [0, 1, 2] for c in cards)
    assert {("Hookipa", "Lokahi", "Nani"), ("Wikiwiki", "Hookipa", "Akamai"),
            ("Lokahi", "Wikiwiki", "Hookipa"), ("Akamai", "Huhu", "Hookipa"),
            ("Nani", "Hookipa", "Nui")} == set(printed_cards())
    assert printed_cards() <= set(cards)


def test_deal_sets_up_by_symbol_group_and_is_seedable() -> None:
    a = GAME.new_game(random.Random(42), {"players": 3})
    b = GAME.new_game(random.Random(42), {"players": 3})
    assert a == b
    group_of = {t: i for i, g in enumerate(GROUPS) for t in g}
    for k in range(3):
        assert len({group_of[t] for t in a.line[3 * k:3 * k + 3]}) == 1
    assert len({c for c in a.table.cards}) == 3 and all(c in deck() for c in a.table.cards)
    lines = {GAME.new_game(random.Random(seed)).line for seed in range(40)}
    assert len(lines) > 30


def test_r5_cards_are_not_dealt_twice_until_the_pile_runs_out() -> None:
    rng = random.Random(2)
    s = GAME.new_game(rng, {"players": 4, "rounds": 9})
    seen = [c for c in s.table.cards if c is not None]
    reshuffled = False
    while not GAME.is_over(s):
        if s.turn is None:
            s = GAME.deal(s, rng)
            fresh = [c for c in s.table.cards if c is not None]
            if len(seen) + len(fresh) <= 27:
                assert not set(fresh) & set(seen)  # no card comes twice while the pile lasts
            else:
                reshuffled = True
            seen += fresh
            continue
        s = GAME.apply(s, GAME.random_move(s, rng))
    assert reshuffled and len(seen) == 36
    assert len(draw_cards(random.Random(1), 3, frozenset(deck()[:26]))) == 3  # pile of 1: reshuffle


def test_expected_view_names_the_nine_slots() -> None:
    s = play(start(), "up1 Kapu", "up1 Eepo", "toast")
    view = GAME.expected_view(s)
    assert list(view) == [f"s{i}" for i in range(1, 10)]
    assert view["s1"] == ("Kapu",) and view["s9"] == ()
    assert [v[0] for v in view.values() if v] == list(s.line)


def test_state_json_is_plain_json() -> None:
    s = play(start(4), "up1 Kapu")
    text = json.dumps(GAME.state_to_json(s))
    assert GAME.state_from_json(json.loads(text)) == s
    with pytest.raises(RecordError):
        GAME.state_from_json({"players": 2})


def test_tapped_cards_keep_the_discards_as_a_replay_of_the_record_does() -> None:
    """The station's position after the players tap their cards (``with_cards``) equals the
    position a replay builds from the record's round with those cards (``start_round``), also
    when a tapped card was dealt in an earlier round (the deck gathered again). They once
    differed in the discards, so a stored game replayed to another position than the one played
    (tests/test_station_e2e.py, Topple)."""
    from pi_app.games import get_game
    from pi_app.games.topple import RoundSetup, start_round, with_cards

    game = get_game("topple")
    rng = random.Random(4)
    state = game.new_game(rng, {"players": 2})
    first_cards = tuple(c for c in state.table.cards if c is not None)
    while state.turn is not None:
        state = game.apply(state, game.random_move(state, rng))
    before = state
    dealt = game.deal(before, rng)
    for tapped in ((first_cards[0], dealt.table.cards[1]),      # one card seen before
                   tuple(c for c in dealt.table.cards if c is not None)):  # as dealt
        live = with_cards(dealt, tapped)
        setup = RoundSetup(dealt.line, tuple(tapped), dealt.table.first, dealt.table.seats)
        assert live == start_round(before, setup)
