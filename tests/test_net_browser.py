"""Headless Chromium (Debian's, through /usr/bin/chromedriver) on both pages.

Few and fast: one browser for the module; the station page shows a move the moment it is
stored and refuses an action without the PIN; the dashboard shows a move that travelled
store -> publisher -> mosquitto -> subscriber -> desk -> server-sent events.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from net_fixtures import (
    EVENT,
    Broker,
    ServerThread,
    broker,
    driver,
    running_dashboard,
    wait_for,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from pi_app.json_types import JSON
from pi_app.net.mqtt import PublisherConfig, start_publisher
from pi_app.net.simstation import SimStation
from pi_app.net.web import create_station_app

pytestmark = pytest.mark.realtime

__all__ = ["broker", "driver"]
EVIL = "<img src=x onerror=f()>"  # within NAME_MAX (24): longer names are refused whole


def _count(driver: Any, css: str) -> int:
    return len(driver.find_elements(By.CSS_SELECTOR, css))


def _cell(driver: Any, row: str, index: int) -> str | None:
    """One cell's text, read in one go in the page (rows are replaced as updates come)."""
    text: str | None = driver.execute_script(
        "const r = document.getElementById(arguments[0]);"
        "return r ? r.children[arguments[1]].textContent : null;", row, index)
    return text


def test_station_page_is_live_and_refuses_actions_without_pin(driver: Any,
                                                              tmp_path: Path) -> None:
    sim = SimStation(tmp_path, "table-9", seed=2, game="topple", players=[EVIL, "Ben"])
    undone: list[JSON] = []

    async def undo(**args: Any) -> JSON:
        undone.append(args)
        return {}

    sim.feed.handle("undo", undo)
    server = ServerThread(create_station_app(sim.feed, token="97531")).start()
    try:
        server.call(sim.new_game)
        driver.get(server.url + "/")
        wait = WebDriverWait(driver, 10)
        wait.until(lambda d: d.find_element(By.ID, "players").text.startswith(EVIL))
        assert driver.execute_script("return window.__pwned === undefined")
        assert _count(driver, "#players img") == 0                 # text, not markup
        before = _count(driver, "#moves li")
        server.call(sim.step)
        wait.until(lambda d: _count(d, "#moves li") == before + 1)  # live, no reload
        assert _count(driver, "#picture svg rect[data-cell]") >= 9
        assert not driver.find_element(By.ID, "round-clock").is_displayed()  # no clock
        server.call(lambda: sim.feed.update({**sim.feed.snapshot, "round_left": 125}))
        wait.until(lambda d: d.find_element(By.ID, "round-clock").text in (
            "Round clock: 2:05 left", "Round clock: 2:04 left"))   # counted down on the page
        server.call(lambda: sim.feed.update({**sim.feed.snapshot, "round_left": 0}))
        wait.until(lambda d: "time is up" in d.find_element(By.ID, "round-clock").text)

        driver.find_element(By.ID, "undo").click()                  # no PIN typed
        wait.until(lambda d: "PIN" in d.find_element(By.ID, "result").text)
        driver.find_element(By.ID, "pin").send_keys("11111")
        driver.find_element(By.ID, "undo").click()
        wait.until(lambda d: "wrong PIN" in d.find_element(By.ID, "result").text)
        assert undone == []
        pin = driver.find_element(By.ID, "pin")
        pin.clear()
        pin.send_keys("97531")
        driver.find_element(By.ID, "undo").click()
        wait.until(lambda d: d.find_element(By.ID, "result").text == "Done.")
        assert undone == [{}]
    finally:
        driver.get("about:blank")                                   # close the event stream
        server.stop()
        sim.close()


def test_dashboard_shows_a_published_move_live(driver: Any, broker: Broker,
                                               tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        sim = SimStation(tmp_path / "s", "t37", seed=37, game="manami", players=[EVIL, "Ben"])
        publisher = start_publisher(sim.feed, sim.store, PublisherConfig(
            EVENT, "t37", broker.options("t37")))
        try:
            sim.step()
            sim.step()
            wait_for(lambda: "t37" in dash.desk.boards
                     and dash.desk.boards["t37"].state is not None, 10, "t37 at the desk")
            driver.get(dash.server.url + "/")
            wait = WebDriverWait(driver, 10)
            wait.until(lambda d: _count(d, "#row-t37") == 1)
            assert EVIL in str(_cell(driver, "row-t37", 5))
            assert _count(driver, "#row-t37 img") == 0              # text, not markup
            moves = int(_cell(driver, "row-t37", 7) or 0)
            sim.step()                                              # a move at table t37
            wait.until(lambda d: _cell(d, "row-t37", 7) == str(moves + 1))

            driver.get(dash.server.url + "/board/t37")
            wait.until(lambda d: _count(d, "#picture svg") == 1)
            assert _count(driver, "#confirm-form") == 0             # no login, no rulings
            shown = _count(driver, "#moves li")
            sim.step()
            wait.until(lambda d: _count(d, "#moves li") == shown + 1)
        finally:
            driver.get("about:blank")
            publisher.stop()
            sim.close()
