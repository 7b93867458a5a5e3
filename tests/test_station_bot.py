"""Playing against the station (issue 20): the station's seats and the hints, through the real
station, driven by simulated hands and sensors on exact times.

A seat the station plays shows its move on the LEDs (the cells to lift from and to put on, in
signals of their own) and on the screen in words; a person carries it out and the follower
checks it like any move; any other move, even a legal one, is a wrong execution, guided back.
A Topple seat of the station gets its Secret Tiki card from the station, stored like a tapped
card and shown on no public channel. Hints show the best move for the player to move and are
refused when the configuration locks them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_game_change_and_names import shows
from test_hidden_info import Facts

from pi_app.board.equipment import card_name, registry_for
from pi_app.board.fixes import Fix
from pi_app.board.follower import GuidanceKind
from pi_app.net.redact import public_event, public_snapshot
from pi_app.readings import ButtonPressed, HwEvent, TagsSeen
from pi_app.records import replay
from pi_app.referee import feedback as fb
from pi_app.referee.config import Config, ConfigError, parse_config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.feed import ActionError
from pi_app.referee.opponent import parse_bots
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore
from pi_app.sim.hands import Hands, PhysicalBoard
from pi_app.sim.sensors import SensorModel


class Table:
    """One station, its board, and the simulated hands and sensors of the people at it."""

    def __init__(self, tmp_path: Path, game: str, bots: dict[str, Any], **station: Any) -> None:
        config = Config(station=replace(StationConfig(), game=game, seed=5, topple_cards="deal",
                                        tactiki_setup="deal", data_dir=str(tmp_path),
                                        bots=bots, **station))
        self.now = 0.0
        self.station = Station(config, EventStore(tmp_path / "tikiboard.db"),
                               registry_for(game), clock=lambda: self.now)
        self.told: list[tuple[str, Any]] = []
        self.station.feed.listen(lambda kind, payload: self.told.append((kind, payload)))
        rng = random.Random(5)
        geometry = self.station.geometry
        self.board = PhysicalBoard(geometry, self.station.registry)
        self.sensors = SensorModel(geometry, rng)
        self.hands = Hands(rng, pace=(0.2, 0.2))
        self.board.set_view(self.game.expected_view(self.state))
        cells = {c: list(u) for c, u in self.board.cells.items()}
        self.deliver(self.sensors.lay_out(cells, 0.5))
        assert self.station.status.phase == "play"

    @property
    def game(self) -> Any:
        return self.station.session.game

    @property
    def state(self) -> Any:
        return self.station.session.state

    def wait_until(self, until: float) -> None:
        """Let time pass; a bot thinking on its worker is waited for, so times stay exact."""
        while (deadline := self.station.next_deadline(self.now)) is not None \
                and deadline <= until:
            self.station.opponent.wait()
            self.now = max(self.now, deadline)
            self.station.step(None, self.now)
        self.now = max(self.now, until)
        self.station.step(None, self.now)

    def deliver(self, events: list[Any], linger: float = 3.0) -> None:
        for event in events:
            self.wait_until(event.t)
            self.step(event)
        self.wait_until(self.now + linger)

    def step(self, event: HwEvent) -> None:
        self.station.step(event, self.now)

    def show(self, view: Any) -> None:
        """The hands change the board to ``view``, one piece at a time."""
        actions, _ = self.hands.change(self.board, view, self.now + 0.2)
        self.deliver(self.sensors.run(actions))

    def carry_out(self, move: Any) -> None:
        """The hands make ``move``: its placement, then any follow-up the station asks for."""
        state = self.state
        placement = self.game.placement_view(state, move)
        self.show(placement)
        final = self.game.expected_view(self.game.apply(state, move))
        if final != placement:
            self.show(final)

    def station_move(self) -> Any:
        """The move the station shows now (it has had time to think)."""
        self.wait_until(self.now + 0.1)
        shown = self.station.opponent.shown
        assert shown is not None and shown.kind == "station" and shown.state == self.state
        return shown

    def lit(self) -> dict[str, str]:
        """Cell -> the signal it shows now, once the last confirmation has faded."""
        self.wait_until(self.now + fb.CONFIRM_S)
        scene = self.station.scene(self.now)
        return {cell: lamp.signal.key for cell, lamp in fb.cell_signals(scene, self.now).items()}

    def frame_shows(self, cells: tuple[str, ...], key: str) -> bool:
        """The station's own LED frame shows ``key`` on every LED of ``cells``, at a moment
        its pattern is well lit."""
        signal = fb.SIGNALS[key]
        period = signal.pattern.period or 1.0
        phase = 0.05 if signal.pattern is not fb.Pattern.BREATHE else period / 2
        at = (int(self.now / period) + 1) * period + phase
        self.wait_until(at)
        colour = fb.colour_at(fb.Lamp(signal), at)
        leds = [led for cell in cells for led in self.station.geometry.cell(cell).leds]
        return colour != fb.OFF and all(self.station.last_frame[led] == colour for led in leds)


def test_the_station_shows_its_move_and_takes_it_when_carried_out(tmp_path: Path) -> None:
    table = Table(tmp_path, "manami", {"1": "search"})
    game, station = table.game, table.station
    assert game.to_move(table.state) == 0 and station.opponent.shown is None
    table.carry_out(game.legal_moves(table.state)[0])  # the person's move
    assert len(station.accepted_log) == 1 and game.to_move(table.state) == 1
    shown = table.station_move()
    assert game.is_legal(table.state, shown.move)
    assert shown.text == game.move_text(table.state, shown.move)
    lit = table.lit()
    assert shown.put and all(lit[c] == "station_put" for c in shown.put)
    assert all(lit[c] == "station_lift" for c in shown.lift)
    assert table.frame_shows(shown.put, "station_put")
    assert shows(station.last_screen, f"Station: {shown.text}")
    table.carry_out(shown.move)
    assert station.accepted_log[-1] == shown.text and game.to_move(table.state) == 0
    stored = [e.data["text"] for e in station.store.events(station.session.game_id, ("move",))]
    assert stored == station.accepted_log
    assert station.opponent.shown is None and "station_put" not in table.lit().values()


def test_a_wrong_execution_is_guided_back_and_the_move_shown_again(tmp_path: Path) -> None:
    table = Table(tmp_path, "manami", {"1": "search"})
    game, station = table.game, table.station
    table.carry_out(game.legal_moves(table.state)[0])
    shown = table.station_move()
    before = table.state
    other = next(m for m in game.legal_moves(before) if game.move_text(before, m) != shown.text)
    table.show(game.placement_view(before, other))  # legal, but not the station's move
    table.wait_until(table.now + 3.0)
    assert len(station.accepted_log) == 1 and table.state == before
    guidance = station.status.guidance
    assert guidance is not None and guidance.kind == "mismatch" and guidance.fixes
    assert fb.screen_name(station.scene(table.now)) == "guidance"
    assert not {"station_lift", "station_put"} & set(table.lit().values())
    table.show(game.expected_view(before))  # back as the guidance says
    assert station.status.guidance is None
    assert table.station_move() == shown
    assert all(table.lit()[c] == "station_put" for c in shown.put)
    table.carry_out(shown.move)
    assert station.accepted_log[-1] == shown.text


def test_a_tactiki_station_seat_plays_whole_two_step_turns(tmp_path: Path) -> None:
    """The station's TacTiki seat (the one to move first) decides its turn through
    ``play.decide`` (a fight's outcome seen before the second step), shows both steps, and
    the hands' execution (fights' losers removed as guided) is accepted."""
    table = Table(tmp_path, "tactiki", {"0": "search", "1": "greedy"})
    game, station = table.game, table.station
    for _ in range(4):
        before = table.state
        shown = table.station_move()
        assert len(shown.move.steps) == 2 and game.is_legal(before, shown.move)
        assert shown.lift and shown.put
        assert shows(station.last_screen, f"Station: {game.public_text(shown.text)}")
        table.carry_out(shown.move)
        assert station.accepted_log[-1] == shown.text
        assert table.state == game.apply(before, shown.move)
    assert len(station.accepted_log) == 4


def _stored_until(tmp_path: Path, bots: dict[str, Any], found: Any) -> Any:
    """Store a TacTiki game (the :class:`Table`'s configuration, so a station opened on the
    same database resumes it) played at random up to the first position for which
    ``found(station, state, ply, move)`` holds, ``move`` the random move from there; that
    move."""
    store = EventStore(tmp_path / "tikiboard.db")
    config = Config(station=replace(StationConfig(), game="tactiki", seed=5,
                                    tactiki_setup="deal", data_dir=str(tmp_path), bots=bots))
    station = Station(config, store, registry_for("tactiki"), clock=lambda: 0.0)
    session = station.session
    game, start = session.game, session.state
    for seed in range(20):
        rng, state = random.Random(seed), start
        moves: list[str] = []
        while not game.is_over(state) and len(moves) < 600:
            move = game.random_move(state, rng)
            if found(station, state, len(moves), move):
                for text in moves:
                    here = session.state
                    session.moved(text, game.to_move(here),
                                  game.apply(here, game.parse_move(here, text)))
                station.opponent.close()
                store.close()
                return move
            moves.append(game.move_text(state, move))
            state = game.apply(state, move)
    raise AssertionError("no game here reaches the position wanted")


def _leaves_the_station_a_pass(station: Station, state: Any, ply: int, move: Any) -> bool:
    """Seat 0's ``move`` leaves seat 1 only a pass."""
    game = station.session.game
    after = game.apply(state, move)
    return game.to_move(state) == 0 and not game.is_over(after) \
        and game.to_move(after) == 1 \
        and [game.move_text(after, m) for m in game.legal_moves(after)] == ["pass"]


def _namesakes_put(game: Any, state: Any, move: Any) -> list[str]:
    """The fields a step of ``move`` puts a piece on that already hold one of its name (the
    sensors tell pieces by owner and rank only)."""
    before, after = game.expected_view(state), game.placement_view(state, move)
    return [c for c in after if len(after[c]) > len(before.get(c, ()))
            and after[c][-1] in before.get(c, ())]


def _station_puts_on_a_namesake(station: Station, state: Any, ply: int, move: Any) -> bool:
    """Seat 1, the station's, chooses here a turn that puts a piece on its namesake."""
    game, opponent = station.session.game, station.opponent
    if game.to_move(state) != 1:
        return False
    opponent.want("station", game, state, ply)
    opponent.wait()
    shown = opponent.want("station", game, state, ply)
    assert shown is not None
    return bool(_namesakes_put(game, state, shown.move))


def test_a_station_turn_onto_a_namesake_is_lit_as_put_and_taken(tmp_path: Path) -> None:
    """A station's TacTiki turn that puts a piece on a column already holding one of its
    name lit that field as one to lift from (cells were compared by the pieces' names), and
    a turn of two such steps had no field to put on (``put`` empty, seen by the two-step test
    above). The field is lit to put on, and the turn carried out is the station's move."""
    bots = {"1": "greedy"}
    _stored_until(tmp_path, bots, _station_puts_on_a_namesake)
    table = Table(tmp_path, "tactiki", bots)
    game, station = table.game, table.station
    before = table.state
    shown = table.station_move()
    namesakes = _namesakes_put(game, before, shown.move)
    assert namesakes and set(namesakes) <= set(shown.put) and shown.lift
    assert not set(shown.lift) & set(shown.put)
    lit = table.lit()
    assert all(lit[c] == "station_put" for c in shown.put)
    assert all(lit[c] == "station_lift" for c in shown.lift)
    table.carry_out(shown.move)
    assert station.accepted_log[-1] == shown.text
    assert table.state == game.apply(before, shown.move)


def test_the_station_takes_its_seats_forced_pass_without_refusing_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """When the station's seat can only pass, the follower takes the pass at once (nothing to
    carry out, ``Acceptance.FORCED``), before the station has thought out its move. It is the
    station's move whatever the bot would say: it was refused as "not the station's move"
    (shown: none yet) and taken only once the bot had answered (the long soak's log)."""
    bots = {"1": "greedy"}
    move = _stored_until(tmp_path, bots, _leaves_the_station_a_pass)
    table = Table(tmp_path, "tactiki", bots)
    game, station = table.game, table.station
    assert game.to_move(table.state) == 0 and len(station.accepted_log) == 0
    stored = len(station.session.history)
    caplog.set_level(logging.INFO, logger="pi_app.referee.station")
    table.carry_out(move)  # the person's move; the station's seat then has only a pass
    assert not [r for r in caplog.records if "not the station's move" in r.getMessage()]
    assert station.accepted_log[-1] == "pass" and game.to_move(table.state) == 0
    events = station.store.events(station.session.game_id, ("move",))
    assert [e.data.get("how") for e in events][stored + 1:] == ["forced"]
    assert station.status.guidance is None and station.opponent.shown is None


def test_a_topple_station_seat_draws_its_own_secret_card(tmp_path: Path) -> None:
    """The people tap their cards (in seat order, the station's seat skipped); the station
    then draws its seat's card from the cards no one holds, stores it like a tapped card
    (the record replays) and no public channel shows it while the round is on."""
    config = Config(station=replace(StationConfig(), game="topple", seed=5, players=3,
                                    data_dir=str(tmp_path), bots={"1": "greedy"}))
    station = Station(config, EventStore(tmp_path / "tikiboard.db"), registry_for("topple"),
                      clock=lambda: 0.0)
    told: list[tuple[str, Any]] = []
    station.feed.listen(lambda kind, payload: told.append((kind, payload)))
    assert station.status.cards == [] and "P1: tap" in station.status.message
    from pi_app.games.topple_deck import deck

    pad = station.geometry.cell("card").reader
    assert pad is not None
    theirs = [deck()[7], deck()[19]]
    for t, card in ((1.0, theirs[0]), (2.0, theirs[1])):
        uid = station.registry.uids_of(card_name(card))[0]
        station.step(TagsSeen(t, pad, frozenset({uid})), t)
        station.step(TagsSeen(t + 0.5, pad, frozenset()), t + 0.5)
        if card == theirs[0]:
            assert "P3: tap" in station.status.message  # P2 is the station's
    assert station.status.cards is None
    cards = station.session.state.table.cards
    mine = cards[1]
    assert (cards[0], cards[2]) == tuple(theirs) and mine is not None and mine not in theirs
    stored = [e for e in station.store.events(station.session.game_id, ("cards",))]
    assert stored[-1].data["cards"] == [list(c) for c in cards if c is not None]
    assert replay(station.session.export()).state == station.session.state
    public = [public_snapshot(p) if kind == "status" else public_event("topple", p)
              for kind, p in told]
    assert Facts(cards={mine}).search([e.to_json() for e in stored], "stored")
    assert not Facts(cards={mine}).search(public, "public"), "the station's card leaked"
    assert not Facts(cards={mine}).search(json.dumps(public), "public")


def test_hints_show_a_legal_move_for_the_player_to_move(tmp_path: Path) -> None:
    table = Table(tmp_path, "manami", {})
    game, station = table.game, table.station
    table.step(ButtonPressed(table.now, "ok"))  # OK with nothing to confirm: a hint
    table.wait_until(table.now + 0.5)
    shown = station.opponent.shown
    assert shown is not None and shown.kind == "hint" and shown.seat == 0
    assert game.is_legal(table.state, shown.move)
    lit = table.lit()
    assert all(lit[c] == "hint" for c in shown.put) and shown.put
    assert table.frame_shows(shown.put, "hint")
    assert shows(station.last_screen, f"Hint: {shown.text}")
    table.carry_out(game.legal_moves(table.state)[-1])  # any move: the hint is gone
    assert station.opponent.shown is None
    answer = asyncio.run(station.feed.act("hint"))  # the page's action
    assert answer["seat"] == 1 and answer["ok"]
    assert game.is_legal(table.state, game.parse_move(table.state, answer["move"]))
    assert "hint" in table.lit().values()


@pytest.mark.parametrize("game", ["tactiki", "topple"])
def test_the_page_hint_is_refused_where_ranks_or_cards_are_hidden(tmp_path: Path,
                                                                   game: str) -> None:
    """The page cannot tell who asks: on your turn the opponent could have the station search
    over your hidden ranks or card (issue 29). In a game with hidden information the page's
    hint is refused, naming the way that works (OK at the table)."""
    table = Table(tmp_path, game, {})
    station = table.station
    with pytest.raises(ActionError, match="OK button"):
        asyncio.run(station.feed.act("hint"))
    assert station.opponent.shown is None and not station.opponent.thinking()


def test_hints_are_refused_when_locked(tmp_path: Path) -> None:
    table = Table(tmp_path, "manami", {}, hints=False)
    station = table.station
    with pytest.raises(ActionError, match="hints are off"):
        asyncio.run(station.feed.act("hint"))
    table.step(ButtonPressed(table.now, "ok"))
    table.wait_until(table.now + 0.5)
    assert station.opponent.shown is None and not station.opponent.thinking()
    assert "hints are off" in station.status.message


def test_bots_are_checked_in_the_configuration_and_on_the_page(tmp_path: Path) -> None:
    assert parse_config({"station": {"bots": {"1": "search"}}}).station.bots == {"1": "search"}
    for bad, why in (({"x": "search"}, "not a number"), ({"1": "genius"}, "no level"),
                     ({"7": "random"}, "no seat")):
        with pytest.raises(ConfigError, match=why):
            parse_config({"station": {"bots": bad}})
    with pytest.raises(ValueError, match="a person"):
        parse_bots({"0": "random", "1": "random"}, 2)
    table = Table(tmp_path, "manami", {})
    station = table.station
    answer = asyncio.run(station.feed.act("new_game", game="manami", bots={"0": "greedy"}))
    assert answer["ok"] and station.opponent.levels == {0: "greedy"}
    with pytest.raises(ActionError, match="a person"):
        asyncio.run(station.feed.act("new_game", game="manami",
                                     bots={"0": "greedy", "1": "greedy"}))
    assert station.opponent.levels == {0: "greedy"}


def test_the_page_takes_bots_and_the_hint_action(tmp_path: Path) -> None:
    from pi_app.net.web import BadAction, action_args

    assert action_args(b'{"game": "manami", "bots": {"1": "search"}}')["bots"] == {"1": "search"}
    with pytest.raises(BadAction, match="bots"):
        action_args(b'{"bots": ["search"]}')
    table = Table(tmp_path, "manami", {})
    assert "hint" in table.station.feed.actions


@pytest.mark.realtime
def test_demo_vs_bot_has_the_hands_carry_out_the_station_moves(tmp_path: Path) -> None:
    """``tikiboard demo --vs-bot``: through the real daemon, the hands play P1 and carry out
    P2's moves as the station shows them (the station takes no other move for its seat)."""
    import io

    from pi_app.demo import run_demo

    out = io.StringIO()
    station = asyncio.run(run_demo("manami", seed=3, max_turns=6, speed=8.0, out=out,
                                   data_dir=tmp_path, illegal=0.0, takeback=0.0,
                                   vs_bot="greedy"))
    assert station.opponent.levels == {1: "greedy"}
    assert len(station.accepted_log) >= 5, out.getvalue()
    store = EventStore(tmp_path / "tikiboard.db")
    players = [e.data["player"] for e in store.events(station.session.game_id, ("move",))]
    store.close()
    assert 1 in players and 0 in players


def test_the_new_signals_differ_in_pattern_from_what_shares_the_board() -> None:
    """The station's move and a hint are lit only while the board shows the position, so
    only a fading confirmation can share the board with them: the pattern alone tells each
    apart, for a player who sees no colour."""
    for keys in (("confirm", "station_lift", "station_put"), ("confirm", "hint")):
        patterns = [fb.SIGNALS[k].pattern for k in keys]
        assert len(set(patterns)) == len(patterns), keys
    fix = fb.Scene(shown_kind="station", shown_put=("a1",),
                   fixes=(Fix("place", "p1", "b1"),), guidance_kind=GuidanceKind.MISMATCH)
    assert "a1" not in fb.cell_signals(fix, 5.0)


@pytest.mark.parametrize(("game_name", "playouts"), [("tactiki", 15), ("manami", 300)])
def test_the_station_thinks_at_the_budget_its_strength_was_measured_at(
        monkeypatch: pytest.MonkeyPatch, game_name: str, playouts: int) -> None:
    """TacTiki's search at the generic 300 playouts would take some 8 s a move on a Pi, where
    the 1 s cap would decide how far it looks, a strength nobody measured: each game's budget is
    the bench's (README, Bots), capped at a second."""
    from pi_app.games import get_game
    from pi_app.referee import opponent

    asked: list[Any] = []
    monkeypatch.setattr(opponent, "think", lambda *args: asked.append(args[-1]))
    game = get_game(game_name)
    station = opponent.Opponent({0: "search"}, seed=1)
    try:
        station.want("station", game, game.new_game(random.Random(1)), 0)
        station.wait()
    finally:
        station.close()
    assert [(b.playouts, b.seconds) for b in asked] == [(playouts, 1.0)]
