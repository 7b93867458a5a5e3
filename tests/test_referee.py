"""The referee without hardware: configuration, the event store, sessions and the station's
promises (stored before confirmed; a store that fails is said, not hidden; an unplugged link is
shown), driven with exact times."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from pi_app.board.equipment import registry_for
from pi_app.board.follower import InSync
from pi_app.board.geometry import load_geometry
from pi_app.games import get_game
from pi_app.readings import ButtonPressed, LinkState, LinkStatus, PresenceChanged, TagsSeen
from pi_app.records import fold, replay
from pi_app.referee.config import DEFAULTS_TOML, Config, ConfigError, load_config, parse_config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.feed import Phase
from pi_app.referee.session import Session
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore, StoreError


def tikiboard(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60,
                          check=False)


# -- configuration -------------------------------------------------------------------------------
def test_the_documented_defaults_are_the_embedded_ones(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(DEFAULTS_TOML)
    config = load_config(path)
    assert replace(config, source="x") == replace(Config(), source="x")
    run = tikiboard("run", "--print-config")
    assert run.returncode == 0 and run.stdout == DEFAULTS_TOML


@pytest.mark.parametrize(("text", "key"), [
    ("[station]\ngame = 'chess'", "station.game"),
    ("[station]\nplayers = 7", "station.players"),
    ("[sensors]\nsource = 'usb'", "sensors.source"),
    ("[leds]\nbrightness = 'bright'", "leds.brightness"),
    ("[web]\nport = 0", "web.port"),
    ("[timing]\ngrace = true", "timing.grace"),
    ("[mqtt]\nhots = 'x'", "mqtt.hots"),
    ("[colours]\nx = 1", "[colours]"),
    ("station = 3", "[station]"),
    ("[station\n", "not valid TOML"),
])
def test_a_bad_config_stops_the_start_naming_the_key(tmp_path: Path, text: str,
                                                      key: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace("]", r"\]")):
        load_config(path)
    run = tikiboard("run", "--config", str(path))
    assert run.returncode == 2
    assert key in run.stderr and "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1


def test_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    run = tikiboard("run", "--config", str(tmp_path / "nope.toml"))
    assert run.returncode == 2 and "cannot read" in run.stderr


def test_ints_are_accepted_for_seconds() -> None:
    assert parse_config({"timing": {"grace": 2}}).timing.grace == 2.0


# -- store and sessions --------------------------------------------------------------------------
def test_events_fold_into_the_record_and_resume_the_game(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "s.db")
    game = get_game("manami")
    session = Session.new(store, "manami", rng=random.Random(3), board="t1",
                          players=["Ana", "<b>Ben</b>"])
    state = session.state
    texts = []
    rng = random.Random(4)
    for _ in range(6):
        move = game.random_move(state, rng)
        text = game.move_text(state, move)
        after = game.apply(state, move)
        session.moved(text, game.to_move(state), after)
        texts.append(text)
        state = after
    session.taken_back(2, session.history[-2][0])
    session.revised(texts[3], texts[3], session.state)  # a referee's ruling: same move
    store.close()
    store = EventStore(tmp_path / "s.db")
    resumed = Session.resume(store, store.unfinished())  # type: ignore[arg-type]
    assert resumed.moves() == texts[:4]
    assert resumed.state == replay(resumed.record).state
    exported = resumed.export()
    assert exported["players"] == ["Ana", "<b>Ben</b>"] and exported["board"] == "t1"
    assert replay(exported).ok


def test_fold_keeps_topple_rounds() -> None:
    setup = {"game": "topple", "rounds": [{"line": [], "cards": [], "moves": []}]}
    record = fold(setup, [("move", {"text": "a"}), ("deal", {"round": {"line": ["x"]}}),
                          ("move", {"text": "b"}), ("takeback", {"plies": 5})])
    assert [r["moves"] for r in record["rounds"]] == [["a"], []]


def test_a_read_only_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    store = EventStore(path)
    game_id = store.new_game("topple", {"game": "topple"})
    store.close()
    uri = f"file:{path}?mode=ro"
    broken = EventStore.__new__(EventStore)
    broken.path = path
    broken.clock = lambda: 0.0
    broken.db = sqlite3.connect(uri, uri=True, isolation_level=None)
    with pytest.raises(StoreError, match="could not store"):
        broken.append(game_id, "move", {"text": "up1 Nani"})


# -- the station, driven step by step ------------------------------------------------------------
def station_for(tmp_path: Path, game: str = "topple") -> Station:
    config = Config(station=replace(StationConfig(), game=game, seed=1, topple_cards="deal",
                                    data_dir=str(tmp_path)))
    store = EventStore(tmp_path / "tikiboard.db")
    return Station(config, store, registry_for(game), clock=lambda: 0.0)


def lay_out(station: Station, t: float,
            shown: Mapping[str, tuple[str, ...]] | None = None) -> None:
    """Every reader reports the pieces of ``shown`` (by default the current position)."""
    view = station.session.game.expected_view(station.session.state) if shown is None \
        else shown
    geometry = station.geometry
    for cell in geometry.cells:
        names = view.get(cell.name, ())
        uids = [u for n in names for u in station.registry.uids_of(n)][:len(names)]
        if cell.reader is not None:
            station.step(TagsSeen(t, cell.reader, frozenset(uids)), t)
        if cell.presence is not None:
            station.step(PresenceChanged(t, cell.presence, bool(names)), t)


def swap(station: Station, a: str, b: str, t: float) -> None:
    """Swap the tikis of two Topple slots, as the readers would report it."""
    geometry = station.geometry
    view = station.session.game.expected_view(station.session.state)
    uid = {c: station.registry.uids_of(view[c][0])[0] for c in (a, b)}
    station.step(TagsSeen(t, geometry.cell(a).reader or 0, frozenset({uid[b]})), t)
    station.step(TagsSeen(t + 0.01, geometry.cell(b).reader or 0, frozenset({uid[a]})), t)


def swap_and_rest(station: Station, t: float) -> None:
    """Swap the first two Topple tikis at ``t`` (an Up 1) and let the board rest 1.5 s."""
    swap(station, "s1", "s2", t)
    for dt in (0.3, 0.8, 1.5):
        station.step(None, t + dt)


def test_a_move_is_stored_before_it_is_confirmed(tmp_path: Path) -> None:
    station = station_for(tmp_path)
    lay_out(station, 1.0)
    station.step(None, 2.0)
    assert station.status.phase == "play"
    swap_and_rest(station, 3.0)  # Up 1 of the second tiki
    assert len(station.accepted_log) == 1
    store = EventStore(tmp_path / "tikiboard.db")
    moves = [e.data["text"] for e in store.events(station.session.game_id, ("move",))]
    assert moves == station.accepted_log


def test_a_failing_store_refuses_to_confirm_then_recovers(tmp_path: Path) -> None:
    station = station_for(tmp_path)
    lay_out(station, 1.0)
    station.step(None, 2.0)
    real_append = station.store.append

    def full(*args: object, **kwargs: object) -> object:
        raise StoreError("could not store: database or disk is full")

    station.store.append = full  # type: ignore[method-assign,assignment]
    swap_and_rest(station, 3.0)
    assert station.accepted_log == [] and "disk is full" in station.status.store_error
    assert station.scene(4.5).phase == "error"
    station.store.append = real_append  # type: ignore[method-assign]
    for t in (5.0, 5.5, 6.0):
        station.step(None, t)
    assert len(station.accepted_log) == 1 and station.status.store_error == ""


def test_an_unplugged_link_shows_offline_and_recovers(tmp_path: Path) -> None:
    station = station_for(tmp_path)
    lay_out(station, 1.0)
    station.step(LinkStatus(2.0, LinkState.DOWN, "device vanished"), 2.0)
    assert station.scene(2.0).phase == "offline"
    assert station.last_screen is not None
    station.step(LinkStatus(3.0, LinkState.UP, "up"), 3.0)
    assert station.scene(3.0).phase != "offline"


def test_game_over_ok_starts_a_new_game(tmp_path: Path) -> None:
    """MENU cycles what this board can play (a Manami board: Manami, for two; it never
    offers a game whose board it is not), OK starts it."""
    station = station_for(tmp_path, "manami")
    first = station.session.game_id
    station.status.phase = Phase.OVER
    station.step(ButtonPressed(1.0, "menu"), 1.0)
    assert (station.status.menu_game, station.status.menu_players) == ("manami", 2)
    station.step(ButtonPressed(2.0, "ok"), 2.0)
    assert station.session.game.name == "manami" and station.session.game_id != first
    assert station.store.game(first).finished


def test_outside_actions_undo_and_override(tmp_path: Path) -> None:
    import asyncio

    station = station_for(tmp_path)
    lay_out(station, 1.0)
    station.step(None, 2.0)
    swap_and_rest(station, 3.0)
    assert len(station.session.history) == 1
    before = station.session.history[-1][0]
    second = before.line[1]
    result = asyncio.run(station.feed.act("override", text=f"up1 {second}"))
    assert result["ok"]
    data = json.dumps(station.feed.snapshot)
    assert "up1" in data
    asyncio.run(station.feed.act("undo"))
    assert station.session.history == []


def test_geometry_loader_reports_bad_files(tmp_path: Path) -> None:
    from pi_app.board.geometry import GeometryError

    bad = tmp_path / "b.json"
    data = json.loads((Path(__file__).parent.parent / "hardware/boards/topple.json").read_text())
    data["cells"][1]["reader"] = data["cells"][0]["reader"]
    bad.write_text(json.dumps(data))
    with pytest.raises(GeometryError, match=r"cells\[1\] \(s2\)\.reader: reader 0 is used twice"):
        load_geometry(bad)


def test_a_restart_reads_whether_the_board_was_in_sync_after_the_last_move(
        tmp_path: Path) -> None:
    """The station notes ``in_sync`` when the board shows the position again; a station
    restarted after that note does not wait for the last move's follow-up, one restarted
    before it does (the follower decides which pictures are that follow-up)."""
    station = station_for(tmp_path)
    game, state = station.session.game, station.session.state
    move = game.legal_moves(state)[0]
    station.session.moved(game.move_text(state, move), 0, game.apply(state, move))

    def restarted() -> Station:
        return Station(station.config, EventStore(tmp_path / "tikiboard.db"),
                       registry_for("topple"), clock=lambda: 0.0)

    assert restarted()._since_last_move()[0] is False
    station._handle([InSync(1.0)], 1.0)
    assert restarted()._since_last_move()[0] is True
    later = station.session.state
    follow = game.legal_moves(later)[0]
    station.session.moved(game.move_text(later, follow), 1, game.apply(later, follow))
    assert restarted()._since_last_move()[0] is False


def test_a_toast_held_across_a_restart_is_undone_when_its_tiki_comes_back(
        tmp_path: Path) -> None:
    """A tiki held in a hand long enough reads as a Toast; the station is restarted before
    the hand puts it back. The restarted station knows from the store that the board alone
    decided that Toast, so the tiki coming back undoes it, as it would have without the
    restart (a station that forgot it would show the tiki as a mismatch to take off)."""
    station = station_for(tmp_path)
    lay_out(station, 1.0)
    station.step(None, 2.0)
    for t in (2.5, 4.5):  # two Up 1 cards: no Toast on a player's first turn
        swap_and_rest(station, t)
    s9 = station.geometry.cell("s9")
    assert s9.reader is not None and s9.presence is not None
    tiki = station.session.game.expected_view(station.session.state)["s9"][0]
    uid = station.registry.uids_of(tiki)[0]
    station.step(TagsSeen(7.0, s9.reader, frozenset()), 7.0)
    station.step(PresenceChanged(7.0, s9.presence, False), 7.0)
    for t in (7.5, 8.0, 8.6, 9.2):
        station.step(None, t)
    assert station.accepted_log[2:] == ["toast"]
    played = station.session.export()["rounds"][0]["moves"][:2]
    station.store.close()

    again = Station(station.config, EventStore(tmp_path / "tikiboard.db"),
                    registry_for("topple"), clock=lambda: 0.0)
    last = again._since_last_move()[1]
    assert last is not None and last.data["lifts_only"] and again._board_decided_last()
    lay_out(again, 10.0)
    again.step(None, 11.0)
    assert again.status.guidance is None
    again.step(TagsSeen(12.0, s9.reader, frozenset({uid})), 12.0)
    again.step(PresenceChanged(12.0, s9.presence, True), 12.0)
    for t in (12.3, 12.6, 13.0):
        again.step(None, t)
    assert again.status.prompt is None and again.status.guidance is None
    assert again.session.export()["rounds"][0]["moves"] == played


def test_a_move_taken_back_by_button_is_not_taken_again_after_a_restart(
        tmp_path: Path) -> None:
    """BACK, then the station restarts before the pieces are put back: the board still shows
    the move taken back, which is a legal move of the position. The store keeps what BACK left
    on the board, so the restarted station asks for the pieces back instead of taking the move
    again (a long soak's Topple game 1000008 did); once they are back, the move may be made."""
    station = station_for(tmp_path)
    lay_out(station, 1.0)
    station.step(None, 2.0)
    swap_and_rest(station, 2.5)
    assert len(station.accepted_log) == 1
    moved = station.session.game.expected_view(station.session.state)
    station.step(ButtonPressed(4.5, "back"), 4.5)
    taken = station.store.events(station.session.game_id, ("takeback",))[-1]
    assert taken.data["plies"] == 1 and len(taken.data["left"]) == 9
    station.store.close()

    again = Station(station.config, EventStore(tmp_path / "tikiboard.db"),
                    registry_for("topple"), clock=lambda: 0.0)
    lay_out(again, 10.0, moved)  # the board still shows the move taken back
    for t in (10.3, 10.8, 11.3, 12.0, 14.0):
        again.step(None, t)
    assert again.accepted_log == [] and again.status.guidance is not None
    assert [e.kind for e in again.store.events(again.session.game_id, ("move", "takeback"))] \
        == ["move", "takeback"]
    lay_out(again, 15.0)  # put back
    for t in (15.3, 16.0):
        again.step(None, t)
    assert again.status.guidance is None and again.accepted_log == []
    swap(again, "s1", "s2", 17.0)  # and the same move made again
    for t in (17.3, 18.0):
        again.step(None, t)
    assert len(again.accepted_log) == 1


#: Tiki Topple, two players, seed 1: thirteen cards of a round whose last card is a Toast.
ROUND_ENDS_ON_A_TOAST = ["up3 Eepo", "up2 Lokahi", "topple Hookipa", "topple Wikiwiki",
                         "up1 Akamai", "up3 Hookipa", "up1 Nui", "up1 Lokahi", "toast", "toast",
                         "toast", "up1 Hookipa", "up2 Nani"]


def test_a_round_ended_by_a_held_tiki_is_dealt_only_once_it_can_no_longer_be_undone(
        tmp_path: Path) -> None:
    """The last card of the round is a Toast, so a bottom tiki held in the air for the Toast
    wait ends the round. The next line is dealt only ``revise_window`` later: a tiki put back
    before that undoes the Toast and the round goes on; left off, the round is dealt."""
    first = station_for(tmp_path)
    game = first.session.game
    for text in ROUND_ENDS_ON_A_TOAST:
        state = first.session.state
        first.session.moved(text, game.to_move(state), game.apply_text(state, text))
    first.store.close()
    station = Station(first.config, EventStore(tmp_path / "tikiboard.db"),
                      registry_for("topple"), clock=lambda: 0.0)
    before = station.session.state
    lay_out(station, 1.0)
    station.step(None, 2.0)
    view = game.expected_view(before)
    bottom = station.geometry.cell([c for c in view if view[c]][-1])
    assert bottom.reader is not None and bottom.presence is not None
    uid = station.registry.uids_of(view[bottom.name][0])[0]

    def lift(t: float) -> None:
        station.step(TagsSeen(t, bottom.reader or 0, frozenset()), t)
        station.step(PresenceChanged(t, bottom.presence or 0, False), t)

    def wait(t0: float, t1: float) -> None:
        t = t0
        while t <= t1:
            station.step(None, t)
            t += 0.1

    lift(3.0)
    wait(3.1, 5.0)
    assert station.accepted_log == ["toast"] and game.to_move(station.session.state) is None
    assert station.status.message == "round over"
    station.step(TagsSeen(5.5, bottom.reader, frozenset({uid})), 5.5)
    station.step(PresenceChanged(5.5, bottom.presence, True), 5.5)
    wait(5.6, 9.0)
    assert station.session.state == before and station.status.message != "round over"
    assert len(station.session.export()["rounds"]) == 1

    lift(10.0)
    wait(10.1, 12.0)
    assert station.accepted_log[-1] == "toast" and station.status.phase != "setup"
    wait(12.1, 14.5)
    assert station.status.phase == "setup"
    rounds = station.session.export()["rounds"]
    assert len(rounds) == 2 and rounds[0]["moves"] == [*ROUND_ENDS_ON_A_TOAST, "toast"]


def test_topple_players_tap_their_own_secret_tiki_cards(tmp_path: Path) -> None:
    from pi_app.board.equipment import card_name
    from pi_app.games.topple_deck import deck

    config = Config(station=replace(StationConfig(), game="topple", seed=1,
                                    data_dir=str(tmp_path)))
    store = EventStore(tmp_path / "tikiboard.db")
    station = Station(config, store, registry_for("topple"), clock=lambda: 0.0)
    assert station.status.cards == [] and "P1: tap" in station.status.message
    lay_out(station, 1.0)
    station.step(None, 2.0)
    # A move before every player has a card is not played.
    swap_and_rest(station, 3.0)
    assert station.accepted_log == [] and station.scene(4.5).phase == "setup"
    swap(station, "s1", "s2", 5.0)  # put back
    pad = station.geometry.cell("card").reader
    assert pad is not None
    mine, yours = deck()[7], deck()[19]
    for t, card in ((6.0, mine), (7.0, yours)):
        uid = station.registry.uids_of(card_name(card))[0]
        station.step(TagsSeen(t, pad, frozenset({uid})), t)
        station.step(TagsSeen(t + 0.5, pad, frozenset()), t + 0.5)
    assert station.status.cards is None
    assert station.session.state.table.cards == (mine, yours)
    record = station.session.export()
    assert record["rounds"][0]["cards"] == [list(mine), list(yours)]
    assert replay(record).state == station.session.state
    # Resumed after a restart, the round does not ask again.
    again = Station(config, EventStore(tmp_path / "tikiboard.db"), registry_for("topple"),
                    clock=lambda: 0.0)
    assert again.status.cards is None and again.session.state == station.session.state


TACTIKI_STACKS = {"a1": [5, 3], "b1": [1, 4], "c1": [2, 2], "d1": [3, 5], "e1": [4, 1],
                  "a5": [1, 2], "b5": [3, 4], "c5": [5, 5], "d5": [2, 3], "e5": [4, 1]}


def _stack_tactiki(tmp_path: Path) -> tuple[Station, float, dict[str, set[str]]]:
    """A TacTiki station whose players stacked :data:`TACTIKI_STACKS`, bottom first; the time
    after the last piece, and the tag ids on each field."""
    config = Config(station=replace(StationConfig(), game="tactiki", seed=1,
                                    data_dir=str(tmp_path)))
    store = EventStore(tmp_path / "tikiboard.db")
    station = Station(config, store, registry_for("tactiki"), clock=lambda: 0.0)
    assert station.status.reading is not None and station.scene(0.0).phase == "setup"
    geometry = station.geometry
    used: set[str] = set()
    fields: dict[str, set[str]] = {}
    t = 1.0
    for field_name, ranks in TACTIKI_STACKS.items():
        owner = "T" if field_name.endswith("1") else "C"
        cell = geometry.cell(field_name)
        assert cell.reader is not None and cell.presence is not None
        on_field = fields.setdefault(field_name, set())
        for rank in ranks:  # bottom first: put down one after the other
            uid = next(u for u in station.registry.uids_of(f"{owner}{rank}") if u not in used)
            used.add(uid)
            on_field.add(uid)
            station.step(TagsSeen(t, cell.reader, frozenset(on_field)), t)
            station.step(PresenceChanged(t, cell.presence, True), t)
            station.step(None, t + 0.1)  # its contact has held closed: the piece is there
            t += 0.3
    return station, t, fields


def test_tactiki_set_up_by_the_players_is_read_bottom_first(tmp_path: Path) -> None:
    station, t, _ = _stack_tactiki(tmp_path)
    chosen = TACTIKI_STACKS
    assert station.status.reading is not None  # complete, but hands may still be on it
    station.step(None, t + 1.5)
    assert station.status.reading is None
    record = station.session.export()
    assert record["setup"] == chosen and record["moves"] == []
    # One game, its dealt set-up replaced by the stacks read: no closed game is left behind
    # with a set-up of the pieces on the board (issue 29: its record was public, ranks and all).
    assert [g.id for g in station.store.games()] == [1] and not station.store.game(1).finished
    assert station.store.game(1).setup["setup"] == chosen
    assert replay(record).state == station.session.state


def test_the_screen_never_names_a_tactiki_rank_while_the_game_is_on(tmp_path: Path) -> None:
    """The OLED faces both players: a piece knocked off its stack is asked back as ``T?``, and
    a move is shown as the engine's public text (which piece a reincarnation brought back is
    secret), never the rank its tag is registered with."""
    station, t, fields = _stack_tactiki(tmp_path)
    station.step(None, t + 1.5)
    assert station.status.reading is None
    reader = station.geometry.cell("b1").reader
    assert reader is not None
    top = next(u for u in fields["b1"] if station.registry.lookup(u) == "T4")
    station.step(TagsSeen(t + 2.0, reader, frozenset(fields["b1"] - {top})), t + 2.0)
    for dt in (2.5, 4.0, 6.0):
        station.step(None, t + dt)
    scene = station.scene(t + 6.0)
    assert scene.fixes, "the knocked piece is asked back"
    assert all(f.piece in ("T?", "C?") for f in scene.fixes), scene.fixes
    station.status.last_move = "reincarnate 3 c1"
    assert station.scene(t + 6.0).last_move == "reincarnate ? c1"


def test_stack_order_follows_arrival_and_removal() -> None:
    from pi_app.games import get_game
    from pi_app.referee.setup_reader import StackOrder, stacks_record

    def tactiki_setup(order: StackOrder, options: dict[str, object]) -> tuple[object, str]:
        return stacks_record(get_game("tactiki"), order, options)

    order = StackOrder()
    order.update({"a1": ("T5",)}, ["a1"])
    order.update({"a1": ("T3", "T5")}, ["a1"])
    assert order.order["a1"] == ["T5", "T3"]
    order.update({"a1": ("T3",)}, ["a1"])  # the 5 taken off again
    order.update({"a1": ("T3", "T5")}, ["a1"])
    assert order.order["a1"] == ["T3", "T5"]
    record, why = tactiki_setup(order, {})
    assert record is None and "ten start fields" in why
    order.update({"c3": ("C2",)}, ["c3"])
    assert "start rows" in tactiki_setup(order, {})[1]
