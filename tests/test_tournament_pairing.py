"""Each board gets its pairing from the referee (issue 33): round, table and the names in seat
order, retained on ``tiki/EVENT/pairing/BOARD``, so the players only press OK at the station.

Checked at each end and in between: the station offers the game and starts it with the names on
OK; the dashboard sends each board its table when boards are assigned and clears it when the
result is in; the real broker lets only the referee write a pairing and only its board read it.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import time
import urllib.request
from pathlib import Path

import pytest
from net_fixtures import EVENT, REFEREE, Broker, broker, wait_for
from test_net_broker import _publish_as
from test_station_bot import Table
from test_tournament_dashboard import App, login

from pi_app.net import topics
from pi_app.net.mqtt import PublisherConfig, new_client, start_publisher
from pi_app.net.schema import PairingPayload, PayloadError, read_pairing
from pi_app.net.simstation import SimStation
from pi_app.net.tournament_app import near_names
from pi_app.readings import ButtonPressed
from pi_app.referee import feedback as fb
from pi_app.referee.feed import Phase
from pi_app.tournament import director

__all__ = ["broker"]


def screen_text(image: object) -> bytes:
    """The OLED picture's bytes, to tell two screens apart."""
    return image.tobytes()  # type: ignore[attr-defined, no-any-return]


def test_the_station_offers_the_pairing_and_ok_starts_it_with_the_names(tmp_path: Path) -> None:
    table = Table(tmp_path, "manami", {})
    station = table.station
    before = station.session.game_id
    assert station.offer_pairing((2, 3, "manami", ("Ana", "Ben")), table.now)
    assert "round 2, table 3: Ana \u2013 Ben. OK starts it" in station.status.message
    assert station.session.game_id == before                  # waits for the table's OK
    table.step(ButtonPressed(table.now, "ok"))
    assert station.session.game_id != before
    assert list(station.store.game(station.session.game_id).players) == ["Ana", "Ben"]
    # withdrawn before OK: forgotten; a game this board cannot play: said, not offered
    assert station.offer_pairing((3, 1, "manami", ("Cai", "Dai")), table.now)
    assert station.offer_pairing(None, table.now) and station.status.change is None
    assert not station.offer_pairing((3, 1, "manami", ("Cai", "Dai", "Eve")), table.now)
    assert "cannot be played here" in station.status.message


def test_the_station_shows_the_round_clock_and_a_resent_pairing_is_not_offered_again(
        tmp_path: Path) -> None:
    """The pairing's ``ends_in`` is counted on the station's own clock: the OLED's header and
    the feed (the page counts down from it) say what is left, and time up once it is 0. The
    referee sends the pairing again when the clock changes: the game already on is kept."""
    table = Table(tmp_path, "manami", {})
    station = table.station
    assert station.offer_pairing((1, 2, "manami", ("Ana", "Ben")), table.now, ends_in=600)
    table.step(ButtonPressed(table.now, "ok"))
    game_id = station.session.game_id
    scene = station.scene(table.now + 1)
    assert scene.round_minutes == 10 and station.status.change is None
    assert station.snapshot(scene).round_left == 600
    assert station.offer_pairing((1, 2, "manami", ("Ana", "Ben")), table.now + 5, ends_in=900)
    assert station.status.change is None and station.session.game_id == game_id
    assert station.scene(table.now + 5 + 850).round_minutes == 1
    up = station.scene(table.now + 5 + 901)
    assert up.round_minutes == 0
    playing = dataclasses.replace(up, phase=Phase.PLAY, fixes=(), guidance_kind=None)
    assert fb.screen_name(playing) == "play"
    screens = {screen_text(fb.screen(dataclasses.replace(playing, round_minutes=m)))
               for m in (None, 0, 10)}
    assert len(screens) == 3                              # the header says the clock
    assert station.offer_pairing(None, table.now + 1000) and station.round_left(2000) is None
    assert station.scene(table.now + 1000).round_minutes is None


def test_a_pairing_put_off_with_back_is_offered_again_when_the_game_on_ends(
        tmp_path: Path) -> None:
    """BACK keeps the game on; the referee does not send the pairing again (it did not
    change), so the station offers it again itself once that game is over."""
    table = Table(tmp_path, "manami", {})
    station = table.station
    before = station.session.game_id
    assert station.offer_pairing((1, 2, "manami", ("Ana", "Ben")), table.now, ends_in=600)
    table.step(ButtonPressed(table.now, "back"))
    assert station.status.change is None and station.session.game_id == before
    station.render(table.now + 1)
    assert station.status.change is None                       # the game on goes on
    station.offer_draw(table.now + 2, agreed=1)                # the game on ends: a draw
    table.step(ButtonPressed(table.now + 3, "ok"))
    assert station.draw_agreed()
    station.render(table.now + 4)
    change = station.status.change
    assert change is not None and change.get("pairing") == [1, 2]
    assert station.round_left(table.now + 4) == pytest.approx(596, abs=1)
    table.step(ButtonPressed(table.now + 5, "back"))           # put off at a game over:
    station.render(table.now + 6)
    assert station.status.change is None                       # not offered in a loop


def test_a_pairing_payload_reads_or_is_refused() -> None:
    good = json.dumps({"round": 1, "table": 2, "game": "manami", "players": ["A", "B"]})
    assert read_pairing(good.encode()) == PairingPayload(1, 2, "manami", ["A", "B"])
    assert read_pairing(b"") is None
    for bad in (b"[1]", b'{"round": 1}', json.dumps(
            {"round": 1, "table": 2, "game": "manami", "players": ["x" * 500, "B"]}).encode(),
            b'{"round": 1, "table": 2, "game": "manami", "players": []}'):
        with pytest.raises(PayloadError):
            read_pairing(bad)


def test_the_dashboard_sends_each_board_its_table_and_clears_it_once_played(
        tmp_path: Path) -> None:
    app = App(tmp_path)
    sent: list[tuple[str, PairingPayload | None]] = []
    try:
        app.tdesk.send_pairing = lambda board, p: sent.append((board, p))
        tdesk = app.tdesk
        tdesk.start(EVENT, "manami", 1)
        tdesk.apply(lambda t: director.add_players(t, ["Ana", "Ben", "Cai", "Dai"]))
        tdesk.apply(director.pair_next_round)
        assert sent == []                                      # no board yet
        tdesk.apply(lambda t: director.assign_boards(t, ["b1", "b2"]))
        t = app.t
        assert [(b, p.round, p.table, p.game, p.players) for b, p in sent if p] == [
            ("b1", 1, 1, "manami",
             [t.player(pid).name for pid in t.rounds[0].table(1).seats]),
            ("b2", 1, 2, "manami",
             [t.player(pid).name for pid in t.rounds[0].table(2).seats])]
        sent.clear()
        # the overview's round and table columns, on the page and in its live rows
        assert [(r["board"], r["round"], r["table"]) for r in app.desk.overview(False)] == [
            ("b1", 1, 1), ("b2", 1, 2), ("b3", None, None)]
        page = urllib.request.urlopen(app.server.url + "/").read().decode()
        assert re.search(r'id="row-b2".*?<td class="c-round">1</td><td class="c-table">2</td>',
                         page)
        tdesk.apply(lambda t: director.assign_boards(t, {1: "b1"}))   # nothing changed
        assert sent == []
        tdesk.apply(lambda t: director.report_result(t, "b1", 4, [5, 2], [0]))
        assert sent == [("b1", None)]                          # played: not offered again
        sent.clear()
        tdesk.push_pairings(everything=True)                   # as after reconnecting
        assert [(b, p is None) for b, p in sent] == [("b2", False)]
    finally:
        app.close()


@pytest.mark.realtime
def test_only_the_referee_writes_a_pairing_and_only_its_board_reads_it(
        broker: Broker, tmp_path: Path) -> None:
    mine, other = topics.pairing_topic(EVENT, "beta"), topics.pairing_topic(EVENT, "alpha")
    assert _publish_as(broker, "beta", mine, b'{"round": 1}') == (135, True)  # not its own
    payload = {"round": 1, "table": 4, "game": "manami", "players": ["Ana", "Ben"]}
    _retain(broker, mine, json.dumps(payload).encode())        # sent before the station is up
    _retain(broker, other, json.dumps({**payload, "table": 5}).encode())
    sim = SimStation(tmp_path, "beta", seed=3)
    told: list[PairingPayload | None] = []
    publisher = start_publisher(sim.feed, sim.store, PublisherConfig(
        EVENT, "beta", broker.options("beta"), retry_min=0.1, retry_max=0.5),
        on_pairing=told.append)
    try:
        wait_for(lambda: bool(told), 10, "the retained pairing at the station")
        assert told == [PairingPayload(1, 4, "manami", ["Ana", "Ben"])]  # its own only
        _retain(broker, mine, b"")
        wait_for(lambda: told[-1] is None, 5, "the pairing cleared")
    finally:
        publisher.stop()
        sim.close()
        _retain(broker, mine, b"")
        _retain(broker, other, b"")


def _retain(broker: Broker, topic: str, payload: bytes) -> None:
    """Publish retained as the referee, as the dashboard does (an empty payload clears)."""
    client = new_client(f"ref-{os.urandom(3).hex()}", broker.options(REFEREE))
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        info = client.publish(topic, payload, qos=1, retain=True)
        info.wait_for_publish(5)
        assert info.is_published()
    finally:
        client.disconnect()
        client.loop_stop()


def test_near_misses_in_the_names_go_to_the_referee_and_a_swap_is_not_taken(
        tmp_path: Path) -> None:
    assert near_names("  chloe ", "Chloé") and near_names("Benn", "Ben")
    assert near_names("Fatimah", "Fatima") and not near_names("Bo", "Al")
    assert not near_names("Ana", "Ivo") and not near_names("Zed", "Yan")
    app = App(tmp_path)
    try:
        tdesk = app.tdesk
        tdesk.start(EVENT, "manami", 1)
        tdesk.apply(lambda t: director.add_players(t, ["Ana Lima", "Benedikt", "Cai", "Dai"]))
        tdesk.apply(director.pair_next_round)
        tdesk.apply(lambda t: director.assign_boards(t, ["b1", "b2"]))
        t = app.t
        one = [t.player(pid).name for pid in t.rounds[0].table(1).seats]
        two = [t.player(pid).name for pid in t.rounds[0].table(2).seats]
        slip = [one[0].lower(), one[1] + "x"]
        app.station_game("b1", 3, slip, 1, [0], [5, 2])
        assert app.result(1).game_id == 3 and not app.result(1).confirmed   # taken, waiting
        assert any("differ slightly" in n and "check before confirming" in n
                   for n in tdesk.notices)
        app.station_game("b2", 4, two[::-1], 1, [0], [5, 2])
        assert app.t.rounds[0].table(2).result is None
        assert any("another seat order" in n and "not taken" in n for n in tdesk.notices)
    finally:
        app.close()


def test_the_round_clock_is_shown_sent_to_the_boards_and_rulings_after_time_are_marked(
        tmp_path: Path) -> None:
    app = App(tmp_path)
    sent: list[tuple[str, PairingPayload | None]] = []
    try:
        app.tdesk.send_pairing = lambda board, p: sent.append((board, p))
        referee = login(app.server.port)
        referee.ok("new", {"game": "manami", "seed": 1})
        referee.ok("players", {"names": "Ana\nBen\nCai\nDai"})
        referee.ok("pair", {})
        referee.ok("boards", {"tables": {"1": "b1", "2": "b2"}})
        assert all(p is not None and p.ends_in is None for _b, p in sent)
        status, data = referee.post("clock", {"minutes": 601})
        assert status == 409 and "1 to 600 minutes" in data["error"]
        sent.clear()
        referee.ok("clock", {"minutes": 30})
        assert sorted(b for b, _p in sent) == ["b1", "b2"]        # the boards hear of it
        assert all(p is not None and 1790 < (p.ends_in or 0) <= 1800 for _b, p in sent)
        page = referee.get("/tournament").text
        left = re.search(r'id="round-clock" data-left="(\d+)"', page)
        assert left is not None and 1790 < int(left.group(1)) <= 1800
        assert re.search(r'id="clock-left">(29:5\d|30:00) left<', page)
        # the time ran out a minute ago: the page says so, and a ruling now is "after time"
        app.tdesk.apply(lambda t: director.set_round_clock(t, 1, time.time() - 120))
        page = referee.get("/tournament").text
        assert "time is up: the referee rules the tables still playing" in page
        referee.ok("confirm", {"table": 1, "scores": [5, 2], "winners": [0]})
        assert "confirmed (corrected) (after time)" in referee.get("/tournament").text
        referee.ok("clock", {"minutes": None})                    # stopped
        assert 'id="round-clock"' not in referee.get("/tournament").text
    finally:
        app.close()


def test_the_print_view_has_the_pairings_a_card_a_table_and_the_standings(
        tmp_path: Path) -> None:
    app = App(tmp_path)
    try:
        referee = login(app.server.port)
        assert referee.get("/tournament/print").status == 404        # no tournament yet
        referee.ok("new", {"game": "manami", "seed": 1})
        referee.ok("players", {"names": "Ana\nBen\n<b>Cai</b>\nDai\nEve"})
        referee.ok("pair", {})
        referee.ok("boards", {"tables": {"1": "b1", "2": "b2"}})
        page = referee.get("/tournament/print")
        assert page.status == 200 and "<script" not in page.text and "<form" not in page.text
        text = page.text
        assert "<b>Cai</b>" not in text and "&lt;b&gt;Cai&lt;/b&gt;" in text
        assert text.count('class="card"') == 2                      # the bye has no card
        t = app.t
        first = t.rounds[0].table(1)
        card = text.split('class="card"')[1]
        assert "Table 1 \u00b7 b1" in card and all(
            f"{n}. {html.escape(t.player(pid).name)}" in card
            for n, pid in enumerate(first.seats, 1))
        assert 'id="standings"' in text and 'href="/static/print.css"' in text
        assert referee.get("/static/print.css").status == 200
        assert referee.get("/tournament/print?round=x").status == 400
    finally:
        app.close()
