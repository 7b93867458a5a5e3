"""Rule options chosen at the table (issue 21): the Manami shaman-enters variant (R19), the
automatic limits off at the table but kept by the engines' defaults, a draw both players agree,
and options chosen by the page, MENU and the configuration, stored in the record."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pi_app.board.equipment import registry_for
from pi_app.games import RecordError, get_game
from pi_app.games.manami import GAME as MANAMI
from pi_app.games.manami import Options
from pi_app.readings import ButtonPressed
from pi_app.records import replay
from pi_app.referee.config import Config, ConfigError, parse_config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.feed import ActionError, Phase
from pi_app.referee.rule_options import check_options, labels, table_options
from pi_app.referee.session import Session
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore

# -- Tiki on Manami island: the shaman starts off the board (R19) -------------------------------

#: +2 on b2, 0 on a1, b1 and c1: a totem sown onto a1 at three tokens influences a 0-village.
VALUES = (0, 0, 0, 1, 2, 1, 1, -1, 1)
OFF = Options(shaman=True, shaman_off_board=True)


def _play(state: Any, *texts: str) -> Any:
    for text in texts:
        state = MANAMI.apply_text(state, text)
    return state


def test_r19_no_set_up_placement_the_second_player_moves_at_once() -> None:
    """R19: without the set-up placement of R14 the second player's first entry is a move."""
    state = _play(MANAMI.setup(VALUES, 0, OFF), "place a1")
    assert MANAMI.to_move(state) == 1 and state.shaman == -1
    assert all(m.kind != "shaman" for m in MANAMI.legal_moves(state))
    state = _play(state, "place c3")
    assert MANAMI.to_move(state) == 0
    # today's variant still asks for the placement: the option changes exactly that
    classic = _play(MANAMI.setup(VALUES, 0, Options(shaman=True)), "place a1")
    assert [m.kind for m in MANAMI.legal_moves(classic)] == ["shaman"] * 12


def _first_zero_village(seed: int) -> Any:
    """Random play with the variant up to the first decision a 0-village gives."""
    rng = random.Random(seed)
    state = MANAMI.setup(VALUES, 0, OFF)
    while not state.deciders:
        assert not MANAMI.is_over(state) and state.shaman == -1
        state = MANAMI.apply(state, MANAMI.random_move(state, rng))
    return state


def test_r19_a_zero_village_lets_its_top_owner_bring_the_shaman_in_or_leave_it_off() -> None:
    from pi_app.games.manami import PATH_EDGES

    state = _first_zero_village(7)
    decider = state.deciders[0]
    assert MANAMI.to_move(state) == decider and state.shaman == -1
    legal = {MANAMI.move_text(state, m) for m in MANAMI.legal_moves(state)}
    assert "shaman stay" in legal and "shaman b1/b2" in legal and len(legal) == 13
    assert "off the board" in MANAMI.describe(state)
    stayed = _play(state, "shaman stay")
    assert stayed.shaman == -1 and MANAMI.to_move(stayed) == 1 - state.turn  # R17
    entered = _play(state, "shaman b1/b2")
    assert MANAMI.state_to_json(entered)["shaman"] == "b1/b2"
    blocked = entered.shaman
    assert all(blocked not in PATH_EDGES[m.cells]
               for m in MANAMI.legal_moves(entered) if m.kind == "move")


def test_r19_random_games_keep_the_invariants_and_round_trip() -> None:
    """Property: in random games with the variant every state survives its JSON, the shaman
    never appears before a 0-village was influenced, and the record replays to the state."""
    for seed in range(40):
        rng = random.Random(seed)
        state = MANAMI.new_game(rng, {"shaman": True, "shaman_off_board": True})
        record = MANAMI.setup_record(state)
        assert record["options"]["shaman_off_board"] is True
        zero_seen = False
        while not MANAMI.is_over(state):
            if state.deciders:
                zero_seen = True
            assert state.shaman == -1 or zero_seen
            move = MANAMI.random_move(state, rng)
            record["moves"].append(MANAMI.move_text(state, move))
            state = MANAMI.apply(state, move)
            assert MANAMI.state_from_json(json.loads(json.dumps(
                MANAMI.state_to_json(state)))) == state
        assert replay(record).state == state


def test_r19_needs_the_shaman_variant_and_is_absent_from_records_without_it() -> None:
    with pytest.raises(RecordError, match="needs 'shaman': true"):
        MANAMI.new_game(random.Random(0), {"shaman_off_board": True})
    with pytest.raises(RecordError, match="true or false"):
        MANAMI.new_game(random.Random(0), {"shaman": True, "shaman_off_board": 1})
    plain = MANAMI.setup_record(MANAMI.setup(VALUES, 0, Options(shaman=True)))
    assert plain["options"] == {"tokens": 8, "fruit": 7, "shaman": True, "quiet_limit": None}


# -- the limits: off at the table, kept by the engines' defaults -------------------------------

def test_records_without_options_play_the_rulebook() -> None:
    """Issue 31: a record without ``options`` replays by the rulebook, which has no limit on
    quiet turns; a record that names Manami's 200 quiet turns ends on the 200th."""
    record = {"game": "manami", "villages": dict(zip(
        ("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"), VALUES, strict=True)),
        "moves": ["place a1", "place c3"] + ["a1-b1", "c3-c2", "b1-a1", "c2-c3"] * 49
        + ["a1-b1", "c3-c2"]}
    assert replay(record).to_json()["finished"] is False
    assert replay(record).ok
    limited = {**record, "options": {"quiet_limit": 200}}
    assert replay(limited).to_json()["finished"] is True  # the 200th quiet turn ends it
    assert get_game("tactiki").new_game(random.Random(1)).options.quiet_turns == 0
    assert get_game("tactiki").new_machine_game(random.Random(1)).options.quiet_turns == 30


def test_the_table_writes_the_limits_off_into_every_new_record() -> None:
    assert table_options("manami", None, 2) == {"quiet_limit": None}
    assert table_options("tactiki", {}, 2) == {"quiet_turns": 0}
    assert table_options("tactiki", {"quiet_turns": 30}, 2) == {"quiet_turns": 30}
    assert table_options("topple", {"rounds": 8}, 3) == {"topple_bottom": False, "rounds": 8,
                                                         "players": 3}  # R1: sensors


def test_unknown_or_bad_options_are_refused_with_a_sentence() -> None:
    with pytest.raises(ValueError, match=r"no option 'shamen'.*shaman"):
        check_options("manami", {"shamen": True})
    with pytest.raises(ValueError, match="rounds"):
        check_options("topple", {"rounds": 0})
    with pytest.raises(ValueError, match="no option 'players'"):
        check_options("topple", {"players": 3})  # the players are chosen on their own


def test_labels_say_which_options_a_game_uses() -> None:
    assert labels("manami", {"shaman": True, "shaman_off_board": True, "quiet_limit": None}) \
        == ("shaman enters",)
    assert labels("manami", {}) == ()  # the rulebook's: no limit (issue 31)
    assert labels("manami", {"quiet_limit": 200}) == ("200-turn limit",)
    assert labels("tactiki", {}) == ()
    assert labels("tactiki", {"quiet_turns": 0, "strict_statue": True}) == ("strict statue",)
    assert labels("topple", {"players": 2, "rounds": 8, "topple_bottom": True}) == \
        ("8 rounds", "topple bottom")


def test_station_config_options_are_checked_against_the_game() -> None:
    config = parse_config({"station": {"game": "manami", "options": {"shaman": True}}})
    assert config.station.options == {"shaman": True}
    with pytest.raises(ConfigError, match=r"station\.options.*no option 'rounds'"):
        parse_config({"station": {"game": "manami", "options": {"rounds": 8}}})


# -- the station ---------------------------------------------------------------------------------

def _station(tmp_path: Path, game: str = "manami", **station: Any) -> Station:
    config = Config(station=replace(StationConfig(), game=game, seed=1, topple_cards="deal",
                                    tactiki_setup="deal", data_dir=str(tmp_path), **station))
    return Station(config, EventStore(tmp_path / "tikiboard.db"), registry_for(game),
                   clock=lambda: 0.0)


def _in_play(station: Station) -> None:
    from test_referee import lay_out

    lay_out(station, 1.0)
    station.step(None, 2.0)
    assert station.status.phase == "play"


def test_a_new_station_game_has_the_limits_off_and_shows_the_configured_variant(
        tmp_path: Path) -> None:
    station = _station(tmp_path, options={"shaman": True, "shaman_off_board": True})
    assert station.session.record["options"]["quiet_limit"] is None
    assert station.session.state.options.shaman_off_board
    assert station.options_words() == "shaman enters"
    assert station.snapshot(station.scene(0.0)).options == ["shaman enters"]
    assert station.scene(0.0).options == "shaman enters"


@pytest.mark.parametrize(("language", "words"), [
    ("en", "6 rounds, topple bottom"), ("fr", "6 manches, {bottom}"),
    ("nl", "6 rondes, {bottom}"), ("it", "6 round, {bottom}")])
def test_the_screen_says_the_options_in_the_stations_language(
        tmp_path: Path, language: str, words: str) -> None:
    """The options' words come from the engine (which knows no languages) with their values,
    and the station says them in its players' language; the record keeps the options, not
    words."""
    from pi_app.i18n import translator

    bottom = translator(language).gettext("topple bottom")
    station = _station(tmp_path, game="topple", language=language,
                       options={"rounds": 6, "topple_bottom": True})
    assert station.scene(0.0).options == words.format(bottom=bottom)
    assert station.session.record["options"]["rounds"] == 6
    # The feed carries them in every language, for each viewer of the page.
    said = station.snapshot(station.scene(0.0)).option_words
    assert said[language] == words.format(bottom=bottom) and set(said) == {"en", "nl", "fr", "it"}


def test_the_page_chooses_options_and_unknown_ones_change_nothing(tmp_path: Path) -> None:
    station = _station(tmp_path, game="topple")
    first = station.session.game_id
    with pytest.raises(ActionError, match="no option 'rounds_'"):
        asyncio.run(station.feed.act("new_game", game="topple", options={"rounds_": 6}))
    assert station.session.game_id == first and not station.store.game(first).finished
    out = asyncio.run(station.feed.act("new_game", game="topple", players=3,
                                       options={"rounds": 6, "topple_bottom": True}))
    assert out["ok"]
    assert station.session.record["options"] == {"players": 3, "rounds": 6,
                                                 "topple_bottom": True}
    assert station.options_words() == "6 rounds, topple bottom"


def test_menu_at_game_over_cycles_the_presets_and_ok_plays_the_chosen_one(
        tmp_path: Path) -> None:
    station = _station(tmp_path)
    station.status.phase = Phase.OVER
    seen = []
    for t in range(1, 5):
        station.step(ButtonPressed(float(t), "menu"), float(t))
        seen.append((station.status.menu_preset, station.scene(float(t)).options))
    assert seen == [(1, "shaman"), (2, "shaman enters"), (0, ""), (1, "shaman")]
    station.step(ButtonPressed(5.0, "menu"), 5.0)
    station.step(ButtonPressed(6.0, "ok"), 6.0)
    assert station.session.record["options"]["shaman_off_board"] is True
    assert station.session.record["options"]["quiet_limit"] is None


def _export(station: Station) -> dict[str, Any]:
    """The game as ``tikiboard export`` writes it: rebuilt from the store's events."""
    return Session.resume(station.store, station.store.game(station.session.game_id)).export()


def test_both_players_agree_a_draw_with_the_buttons(tmp_path: Path) -> None:
    station = _station(tmp_path, game="topple")
    _in_play(station)
    station.step(ButtonPressed(3.0, "menu"), 3.0)
    assert station.status.prompt is not None and station.status.prompt.kind == "draw"
    assert station.scene(3.0).phase == "prompt"
    station.step(ButtonPressed(4.0, "ok"), 4.0)  # one player agrees: not over yet
    assert station.status.phase == "play" and not station.store.game(
        station.session.game_id).finished
    station.step(ButtonPressed(5.0, "ok"), 5.0)  # the other one too
    assert station.status.phase == "over" and station.draw_agreed()
    row = station.store.game(station.session.game_id)
    assert row.finished and row.result is not None and row.result["winners"] == []
    assert station.scene(5.0).winners == ()
    record = _export(station)
    assert record["draw_agreed"] is True
    out = replay(record).to_json()
    assert out["finished"] is True and out["winner"] == [] and out["ok"]
    # a reader that does not know the field reads the game as unfinished, as before
    del record["draw_agreed"]
    assert replay(record).to_json()["finished"] is False


def test_back_withdraws_the_offer_and_play_goes_on(tmp_path: Path) -> None:
    station = _station(tmp_path, game="topple")
    _in_play(station)
    station.step(ButtonPressed(3.0, "menu"), 3.0)
    station.step(ButtonPressed(4.0, "back"), 4.0)
    assert station.status.prompt is None and station.status.phase == "play"
    assert station.session.history == []  # BACK withdrew the offer, it took nothing back


def test_the_page_offers_a_draw_but_only_the_station_ok_agrees(tmp_path: Path) -> None:
    station = _station(tmp_path, game="topple")
    _in_play(station)
    out = asyncio.run(station.feed.act("draw"))
    assert out["ok"] and station.status.phase == "play"  # one phone cannot end the game
    asyncio.run(station.feed.act("draw"))  # nor by asking twice
    assert not station.draw_agreed()
    station.step(ButtonPressed(3.0, "ok"), 3.0)
    assert station.draw_agreed() and station.status.phase == "over"
    with pytest.raises(ActionError, match="no game in play"):
        asyncio.run(station.feed.act("draw"))


def test_a_record_with_a_bad_draw_field_is_refused() -> None:
    example = Path(__file__).parents[1] / "pi_app/data/manami-example.tiki.json"
    record = json.loads(example.read_text(encoding="utf-8"))
    with pytest.raises(RecordError, match="draw_agreed"):
        replay({**record, "draw_agreed": "yes"})


@pytest.mark.realtime
def test_the_page_over_http_chooses_options_shows_them_and_offers_a_draw(
        tmp_path: Path) -> None:
    """The real page: an unknown option is a 409 with its sentence and changes nothing; known
    ones start the game and the page names them; a draw from the page waits for the station."""
    from net_fixtures import ServerThread, request

    from pi_app.net.web import create_station_app

    station = _station(tmp_path)
    server = ServerThread(create_station_app(station.feed, token="2468")).start()
    auth = {"Authorization": "Bearer 2468"}
    try:
        first = station.session.game_id
        bad = request(server.port, "POST", "/api/action/new_game",
                      {"game": "manami", "options": {"shamen": True}}, auth)
        assert bad.status == 409 and "no option 'shamen'" in bad.json()["error"]
        assert request(server.port, "POST", "/api/action/new_game",
                       {"options": "shaman"}, auth).status == 400
        assert station.session.game_id == first
        ok = request(server.port, "POST", "/api/action/new_game",
                     {"game": "manami", "options": {"shaman": True, "shaman_off_board": True}},
                     auth)
        assert ok.status == 200 and station.session.game_id != first
        page = request(server.port, "GET", "/")
        assert "Tiki (Manami island) · shaman enters" in page.text
        state = request(server.port, "GET", "/api/state").json()
        assert state["snapshot"]["options"] == ["shaman enters"]
        server.call(lambda: _in_play(station))
        assert request(server.port, "POST", "/api/action/draw", {}).status == 401
        offered = request(server.port, "POST", "/api/action/draw", {}, auth)
        assert offered.status == 200 and not station.draw_agreed()
        server.call(lambda: station.step(ButtonPressed(3.0, "ok"), 3.0))
        assert station.draw_agreed()
        assert request(server.port, "GET", "/api/state").json()["snapshot"]["winners"] == []
    finally:
        server.stop()


def test_a_draw_agreed_as_a_topple_round_ends_deals_no_next_round(tmp_path: Path) -> None:
    """A round's last card, decided by the board, leaves the deal ``revise_window`` away; a
    draw agreed in that time ends the game, so the deal must not come."""
    station = _station(tmp_path, game="topple")
    _in_play(station)
    game, rng = station.session.game, random.Random(5)
    while game.to_move(station.session.state) is not None:  # play the round to its end
        before = station.session.state
        move = game.random_move(before, rng)
        station.session.moved(game.move_text(before, move), game.to_move(before),
                              game.apply(before, move))
    station.follower.reset(station.session.state, list(station.session.history))
    station._after_move(3.0, board_decided=True)  # as the station does after that move
    assert station._deal_at is not None and station._deal_at > 3.0
    asyncio.run(station.feed.act("draw"))
    station.step(ButtonPressed(3.1, "ok"), 3.1)
    assert station.draw_agreed()
    station.step(None, 200.0)
    assert station.store.events(station.session.game_id, ("deal",)) == []
    assert replay(_export(station)).to_json()["finished"] is True
