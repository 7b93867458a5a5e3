"""What a referee reads on the dashboard (issue 16): the event log in words, a result that
stays when its board goes offline, tables configured but never connected, and how fresh each
feed is, robust to a station whose clock is off.

Against the real thing: mosquitto with the event's ACL, stations publishing through it (the
simulated station's real session, store and publisher, or a raw MQTT client under a board's
credentials where a station's clock must be wrong), the dashboard served by uvicorn over HTTP,
and headless Chromium where it is about what a person sees.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import (
    EVENT,
    REFEREE,
    Broker,
    Dashboard,
    ServerThread,
    broker,
    driver,
    end_session,
    request,
    running_dashboard,
    wait_for,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from pi_app.net import topics
from pi_app.net.dashboard import DashboardConfig, build_dashboard, load_config
from pi_app.net.dashboard import main as referee_main
from pi_app.net.eventlog import Skew, feed_text
from pi_app.net.mqtt import PublisherConfig, new_client, start_publisher
from pi_app.net.simstation import SimStation

pytestmark = pytest.mark.realtime

__all__ = ["broker", "driver"]
CLOCK = re.compile(r"^\d\d:\d\d:\d\d ")


def _play_to_end(sim: SimStation) -> None:
    sim.new_game()
    assert sim.session is not None
    while not sim.session.game.is_over(sim.session.state):
        sim.step()
    sim.step()  # the result is stored and published


def _row(page: str, board: str) -> str:
    match = re.search(rf'<tr id="row-{re.escape(board)}".*?</tr>', page, re.S)
    assert match, f"no row for {board}"
    return html.unescape(re.sub(r"<[^>]+>", "|", match.group(0)))


def _log(page: str) -> list[str]:
    match = re.search(r'<ul id="events"[^>]*>(.*?)</ul>', page, re.S)
    assert match, "no event log"
    return [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", match.group(1), re.S)]


@contextlib.contextmanager
def _station(broker: Broker, directory: Path, board: str, game: str,
             players: list[str]) -> Iterator[SimStation]:
    sim = SimStation(directory, board, seed=7, game=game, players=players)
    publisher = start_publisher(sim.feed, sim.store, PublisherConfig(
        EVENT, board, broker.options(board), retry_min=0.1, retry_max=0.5))
    try:
        yield sim
    finally:
        publisher.wait_idle(10)
        publisher.stop()
        sim.close()


def _caught_up(dash: Dashboard, sim: SimStation) -> None:
    wait_for(lambda: sim.board in dash.desk.boards
             and dash.desk.boards[sim.board].last_seq == sim.seq, 10, "every event at the desk")
    time.sleep(0.2)  # the state that follows the last event


def test_event_log_reads_as_words_with_names_and_numbers_from_one(broker: Broker,
                                                                  tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        with _station(broker, tmp_path / "s", "t20", "topple", ["Ana", "Ben"]) as sim:
            sim.new_game()
            for _ in range(6):
                sim.step()
            assert sim.session is not None
            session, engine = sim.session, sim.session.game
            # a takeback, a mismatch and its fix, as the station stores them
            assert len(session.history) >= 2
            standing = len(session.moves())
            sim._stored(session.taken_back(2, session.history[-2][0]))
            sim._stored(session.note("mismatch", {"fixes": ["put Nani on s3"]}))
            sim._stored(session.note("in_sync", {}))
            sim.show()
            sim.step()
            sim.step()
            _caught_up(dash, sim)
            page = request(dash.server.port, "GET", "/board/t20")
            assert page.status == 200
            lines = _log(page.text)
            detail = request(dash.server.port, "GET", "/api/board/t20").json()
            while not engine.is_over(session.state):
                sim.step()
            sim.step()
            _caught_up(dash, sim)
            final = _log(request(dash.server.port, "GET", "/board/t20").text)
            result = sim.store.game(session.game_id).result
    assert lines and all(CLOCK.match(line) for line in lines), lines
    words = [CLOCK.sub("", line) for line in lines]
    assert not any("{" in w or '"' in w for w in words), words   # no raw JSON
    assert result is not None
    winner = ["Ana", "Ben"][result["winners"][0]]
    scores = "\u2013".join(str(s) for s in result["scores"])
    assert CLOCK.sub("", final[0]) == f"result: {winner} won {scores}"   # newest first
    assert "takeback 2 moves" in words
    assert "mismatch: put Nani on s3" in words and "mismatch resolved" in words
    # moves numbered from 1 for people, with the mover's name
    moves = [w for w in words if w.startswith("move ")]
    assert moves and all(re.fullmatch(r"move \d+: (Ana|Ben) \u2014 \S.*", w) for w in moves)
    # after the takeback of two, the next move is numbered on from what still stands
    ordered = list(reversed(words))
    back = ordered.index("takeback 2 moves")
    next_move = next(w for w in ordered[back:] if w.startswith("move "))
    assert next_move.startswith(f"move {standing - 1}:"), (standing, next_move)
    assert ordered[back - 1].startswith(f"move {standing}:"), ordered[back - 1]
    assert [e["line"] for e in reversed(detail["events_tail"])] == lines


def test_offline_board_keeps_its_confirmed_result_across_a_restart(broker: Broker,
                                                                  tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        with _station(broker, tmp_path / "s", "t21", "manami", ["Ana", "Ben"]) as sim:
            _play_to_end(sim)
            _caught_up(dash, sim)
            assert sim.session is None
            game_id = max(row.id for row in sim.store.games())
            dash.call(lambda: dash.desk.confirm("t21", game_id, "alice"))
            result = sim.store.game(game_id).result
        # the publisher's clean stop: the station is offline
        wait_for(lambda: dash.desk.boards["t21"].online is False, 10, "t21 offline")
        gone = time.time()
        row = _row(request(dash.server.port, "GET", "/").text, "t21")
    time.sleep(2.0)
    assert result is not None
    winner = ["Ana", "Ben"][result["winners"][0]] if result["winners"] else "draw"
    assert "|offline|" in row and "confirmed: " in row and winner in row, row
    with running_dashboard(broker, tmp_path) as dash:  # the same ledger, a new process
        page = request(dash.server.port, "GET", "/").text
        rows = request(dash.server.port, "GET", "/api/boards").json()
    row = _row(page, "t21")
    assert "|offline|" in row and f"confirmed: {winner}" in row, row
    summary = next(r for r in rows if r["board"] == "t21")
    assert summary["last_result"]["confirmed"] and summary["last_result"]["game_id"] == game_id
    # the broker hands the retained offline status over again: news of then, not of now
    assert summary["heard_s"] >= time.time() - gone - 0.5, summary["heard_s"]
    assert re.search(r"\|last heard \d s ago\|", row), row


def test_configured_boards_are_listed_never_connected(broker: Broker, tmp_path: Path) -> None:
    setup = tmp_path / "tour"
    assert referee_main(["setup", "--dir", str(setup), "--event", EVENT, "--boards",
                         "t22", "t23", "t24", "--port", str(broker.port)]) == 0
    loaded = load_config(setup / "referee.toml")
    assert loaded.boards == ("t22", "t23", "t24")          # from what setup wrote
    end_session(broker, REFEREE)
    config = DashboardConfig(event=EVENT, db=tmp_path / "referee.sqlite",
                             broker=broker.options(REFEREE), secret=os.urandom(32),
                             boards=loaded.boards)
    app, desk = build_dashboard(config)
    server = ServerThread(app).start()
    try:
        wait_for(desk.ready.is_set, 10, "the dashboard's subscription")
        with _station(broker, tmp_path / "s", "t23", "manami", ["Ana", "Ben"]) as sim:
            sim.step()
            sim.step()
            wait_for(lambda: desk.boards["t23"].last_seq == sim.seq, 10, "t23 at the desk")
            time.sleep(0.2)
            page = request(server.port, "GET", "/").text
            never = request(server.port, "GET", "/board/t24")
            rows = {r["board"]: r for r in request(server.port, "GET", "/api/boards").json()}
    finally:
        server.stop()
    for board in ("t22", "t24"):
        row = _row(page, board)
        assert "|never connected|" in row, row
        assert rows[board]["status"] == "never" and rows[board]["feed"] == "never connected"
    assert "never connected" not in _row(page, "t23")
    assert rows["t23"]["feed"] == "live"
    assert never.status == 200 and "never connected" in never.text
    assert "t99" not in rows                                # a read never adds a board


def test_config_lists_boards_itself_or_refuses_a_bad_one(tmp_path: Path) -> None:
    config = tmp_path / "referee.toml"
    config.write_text(f'event = "{EVENT}"\nboards = ["b1", "b2", "b1"]\n', encoding="utf-8")
    assert load_config(config).boards == ("b1", "b2")
    config.write_text(f'event = "{EVENT}"\nboards = ["a/b"]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="boards"):
        load_config(config)
    config.write_text(f'event = "{EVENT}"\n', encoding="utf-8")
    assert load_config(config).boards == ()                 # none listed, no stations.json


def _raw_station(broker: Broker, board: str) -> Any:
    client = new_client(board, broker.options(board))
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    wait_for(client.is_connected, 5, f"{board} to connect")
    return client


def _send(client: Any, board: str, leaf: str, payload: dict[str, Any]) -> None:
    info = client.publish(f"tiki/{EVENT}/board/{board}/{leaf}", json.dumps(payload),
                          qos=topics.QOS, retain=leaf != "events")
    info.wait_for_publish(5)


def test_feed_freshness_ignores_a_station_clock_an_hour_off(broker: Broker,
                                                            tmp_path: Path) -> None:
    """A station whose clock is an hour behind is live, not "3600000 ms" late; an event that
    waited 30 s on the station shows as 30 s behind; a station gone says when it was heard."""
    board, off = "t25", -3600.0
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        client = _raw_station(broker, board)
        try:
            _send(client, board, "status", {"board": board, "online": True,
                                            "t": time.time() + off})
            _send(client, board, "game", {"board": board, "game_id": 1, "game": "manami",
                                          "setup": {}, "players": ["Ana", "Ben"]})
            for seq in (1, 2, 3):
                _send(client, board, "events", {
                    "board": board, "seq": seq, "game_id": 1, "n": seq,
                    "t": time.time() + off, "kind": "in_sync", "data": {}})
                time.sleep(0.05)
            wait_for(lambda: dash.desk.boards[board].last_seq == 3, 10, "three events")
            row = _row(request(dash.server.port, "GET", "/").text, board)
            assert "|live|" in row, row
            _send(client, board, "events", {
                "board": board, "seq": 4, "game_id": 1, "n": 4,
                "t": time.time() + off - 30, "kind": "in_sync", "data": {}})
            wait_for(lambda: dash.desk.boards[board].last_seq == 4, 10, "the late event")
            row = _row(request(dash.server.port, "GET", "/").text, board)
            assert re.search(r"\|(29|30|31) s behind\|", row), row
            log = _log(request(dash.server.port, "GET", f"/board/{board}").text)
            shown = time.strftime("%H:%M", time.localtime())  # the station's an hour off
            assert any(line.startswith(shown) for line in log[1:]), log
            _send(client, board, "status", {"board": board, "online": False,
                                            "t": time.time() + off})
            wait_for(lambda: dash.desk.boards[board].online is False, 10, "offline")
            row = _row(request(dash.server.port, "GET", "/").text, board)
            assert re.search(r"\|last heard \d s ago\|", row), row
        finally:
            client.disconnect()
            client.loop_stop()


def test_feed_words() -> None:
    skew = Skew()
    for delay in (0.004, 0.002, 0.003):
        skew.add(1000.0, 1000.0 - 7200 + delay)  # station two hours ahead
    assert skew.behind() == pytest.approx(0.001)
    assert feed_text(heard=None, online=None, behind=None, now=0) == "never connected"
    assert feed_text(heard=100, online=True, behind=0.5, now=110) == "live"
    assert feed_text(heard=100, online=True, behind=3.2, now=110) == "3 s behind"
    assert feed_text(heard=100, online=True, behind=0, now=400) == "live \u00b7 quiet 5 min"
    assert feed_text(heard=100, online=False, behind=0, now=400) == "last heard 5 min ago"


# -- what a person sees ---------------------------------------------------------------------------
def _text(driver: Any, css: str) -> str:
    found: str = driver.execute_script(
        "const n = document.querySelector(arguments[0]); return n ? n.textContent : '';", css)
    return found


def test_browser_shows_words_not_json_and_keeps_them_live(driver: Any, broker: Broker,
                                                          tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        with _station(broker, tmp_path / "s", "t26", "topple", ["Ana", "Ben"]) as sim:
            sim.new_game()
            for _ in range(3):
                sim.step()
            _caught_up(dash, sim)
            driver.set_window_size(390, 844)
            driver.get(dash.server.url + "/")
            wait = WebDriverWait(driver, 10)
            wait.until(lambda d: _text(d, "#row-t26 .feed") == "live")
            driver.get(dash.server.url + "/board/t26")
            wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#events li")) >= 3)
            sim.step()
            sim.step()
            wait.until(lambda d: re.match(r"\d\d:\d\d:\d\d move \d+: (Ana|Ben) \u2014 ",
                                          _text(d, "#events li")))
            lines = driver.execute_script(  # read in one go: the list is replaced live
                "return Array.from(document.querySelectorAll('#events li'), (n) => n.textContent)")
            assert not any("{" in line for line in lines), lines
            assert _text(driver, "#feed") == "live"
            # nothing wider than the phone's screen but the overview's own scrolling box
            width = driver.execute_script("return document.documentElement.scrollWidth")
            assert width <= 390, width
        driver.get("about:blank")


def test_referee_rules_a_result_by_player_numbers_from_one(driver: Any, broker: Broker,
                                                           tmp_path: Path) -> None:
    from pi_app.net.auth import hash_password

    with running_dashboard(broker, tmp_path,
                           referees={"alice": hash_password("alice-pw-1")}) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        with _station(broker, tmp_path / "s", "t27", "manami", ["Ana", "Ben"]) as sim:
            _play_to_end(sim)
            _caught_up(dash, sim)
            game_id = max(row.id for row in sim.store.games())
        driver.set_window_size(1280, 900)
        driver.get(dash.server.url + "/login")
        driver.find_element(By.NAME, "username").send_keys("alice")
        driver.find_element(By.NAME, "password").send_keys("alice-pw-1")
        driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button").click()
        wait = WebDriverWait(driver, 10)
        wait.until(lambda d: _text(d, "#user") == "alice")
        driver.get(dash.server.url + "/board/t27")
        wait.until(lambda d: _text(d, "#last-result").startswith("to confirm: "))
        driver.find_element(By.ID, "correct-winners").send_keys("2")   # Ben, player 2
        driver.find_element(By.ID, "correct-note").send_keys("seen at the table")
        driver.find_element(By.ID, "correct").click()
        wait.until(lambda d: _text(d, "#result") == "Done.")
        ruling = dash.desk.ledger.confirmation("t27", game_id)
        assert ruling is not None and ruling["result"]["winners"] == [1]
        wait.until(lambda d: _text(d, "#last-result").startswith("confirmed: Ben won"))
        assert _text(driver, "#confirmed") == "Ruled by alice: seen at the table"
        driver.get("about:blank")
