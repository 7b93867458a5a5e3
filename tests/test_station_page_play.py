"""Playing from the station page (issues 20 and 21), through the real daemon and headless Chromium.

* Rule options and an agreed draw: a player picks the players and the rule options on the page
  (each game's own, with the OLED's words), starts the game, and later offers a draw that
  another press on the page accepts (the page counts one player per press, as OK does).
  The stored record holds the options, the OLED and the page say them, and the result stored
  is the agreed draw.
* The station's seats: a seat the station's bot plays is stored in the game's record
  (``station_seats``), so a restarted daemon plays it again and the page shows it.
* The post-game review: after the game, the page names each player's moves where the bot's
  evaluation dropped most; a game where one player toppled their own 9-point tiki from the top
  is reviewed with that move named.

Each test runs :func:`pi_app.station_main.serve` on the simulated sensor board (the firmware's
own scanner behind a pty) with its page on a free port of 127.0.0.1, simulated hands on the
pieces, and a browser on the page. What people see is read where they see it: the page in the
browser, the OLED picture, the stored database.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import driver, request
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from test_game_change_and_names import (
    PIN,
    errors,
    in_play,
    run_daemon,
    shows,
    tikiboard,
    until,
)
from test_review import blunder_game
from test_station_e2e import record_steps

from pi_app.demo import DemoPlayers
from pi_app.referee import feedback as fb
from pi_app.referee.daemon import Hardware
from pi_app.referee.session import Session
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore

pytestmark = [pytest.mark.realtime, pytest.mark.slow]

__all__ = ["driver"]


# -- the browser, from the daemon's loop -----------------------------------------------------------
async def in_browser(fn: Callable[[], Any]) -> Any:
    """Run a blocking Selenium call off the daemon's loop (the page it reads is served there)."""
    return await asyncio.to_thread(fn)


def text(browser: Any, css: str, wanted: Callable[[str], bool], timeout: float = 10) -> str:
    """The text of ``css`` once ``wanted`` holds for it (the page redraws: a stale element is
    looked up again)."""
    seen: list[str] = []

    def read(_: Any) -> bool:
        seen[:] = [browser.find_element(By.CSS_SELECTOR, css).text]
        return wanted(seen[0])

    try:
        WebDriverWait(browser, timeout, ignored_exceptions=(StaleElementReferenceException,)) \
            .until(read)
    except TimeoutException:
        raise AssertionError(f"{css} never as wanted: it says {seen}") from None
    return seen[0]


def open_page(browser: Any, port: int) -> None:
    browser.get(f"http://127.0.0.1:{port}/")
    WebDriverWait(browser, 10).until(lambda b: b.find_element(By.ID, "pin"))
    browser.find_element(By.ID, "pin").send_keys(PIN)


def press(browser: Any, button: str) -> str:
    """Press a page button; the page's answer line (``Done.`` or the reason it was refused)."""
    browser.execute_script("document.getElementById('result').textContent = ''")
    browser.find_element(By.ID, button).click()
    return text(browser, "#result", bool)


# -- rule options and an agreed draw ---------------------------------------------------------------
def test_rule_options_and_an_agreed_draw_from_the_page(tmp_path: Path, driver: Any,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    seen: dict[str, Any] = {}

    async def scenario(station: Station, hardware: Hardware, hands: DemoPlayers,
                       port: int) -> None:
        first = station.session.game_id

        def choose() -> None:
            open_page(driver, port)
            # Topple's options only, with the OLED's words; Manami's and TacTiki's are for
            # their own boards.
            boxes = driver.find_elements(By.CSS_SELECTOR, "fieldset.rules")
            seen["boxes"] = {b.get_attribute("data-game"): [
                i.get_attribute("data-option") for i in b.find_elements(By.TAG_NAME, "input")]
                for b in boxes}
            box = driver.find_element(By.CSS_SELECTOR, 'fieldset.rules[data-game="topple"]')
            seen["labels"] = box.text
            driver.find_element(By.ID, "new-players").send_keys("Ana, Ben, Caro")
            box.find_element(By.CSS_SELECTOR, 'input[data-option="rounds"]').send_keys("5")
            box.find_element(By.CSS_SELECTOR, 'input[data-option="topple_bottom"]').click()
            seen["start"] = press(driver, "new")

        await in_browser(choose)
        await until(lambda: station.session.game_id != first, 5, "the page's new game")
        seen["options"] = station.store.game(station.session.game_id).setup["options"]
        await in_play(station, hands)
        await asyncio.sleep(0.3)
        seen["oled_words"] = station.options_words()
        seen["oled"] = shows(station.last_screen, fb.fit(station.options_words(), 128))
        seen["title"] = await in_browser(lambda: text(driver, "#title", lambda t: "·" in t))

        # Acting needs the PIN, on the draw as on every action.
        seen["no_pin"] = (await asyncio.to_thread(
            request_raw, port, "/api/action/draw_accept", None)).status
        seen["wrong_pin"] = (await asyncio.to_thread(
            request_raw, port, "/api/action/draw_accept", "000000x")).status
        seen["accept_first"] = await in_browser(lambda: press(driver, "draw-accept"))

        seen["offer"] = await in_browser(lambda: press(driver, "draw-offer"))
        seen["offered"] = await in_browser(
            lambda: text(driver, "#waiting", lambda t: "draw is offered" in t))
        seen["prompt"] = station.status.prompt
        seen["offer_again"] = await in_browser(lambda: press(driver, "draw-offer"))
        seen["still_on"] = station.store.game(station.session.game_id).finished
        # The page is one player: accepting its own offer is refused, and the other
        # player's agreement is the station's OK, at the table (issue 29).
        seen["accept"] = await in_browser(lambda: press(driver, "draw-accept"))
        seen["still_on_2"] = station.store.game(station.session.game_id).finished
        await hands.press("ok")
        await until(lambda: station.store.game(station.session.game_id).finished, 5,
                    "the agreed draw")
        seen["over"] = await in_browser(
            lambda: text(driver, "#waiting", lambda t: t.startswith("Game over")))
        seen["result"] = station.store.game(station.session.game_id).result
        seen["game_id"] = station.session.game_id

    run_daemon(tmp_path, scenario)
    # A Topple board offers Topple's options, each with the OLED's word.
    assert seen["boxes"] == {"topple": ["rounds", "topple_bottom"]}
    assert seen["start"] == "Done."
    assert "rounds" in seen["labels"] and "topple bottom" in seen["labels"]
    assert seen["options"] == {"rounds": 5, "topple_bottom": True, "players": 3}
    assert seen["oled_words"] == "5 rounds, topple bottom"
    assert seen["oled"]
    assert seen["title"] == "Tiki Topple · 5 rounds, topple bottom"
    assert (seen["no_pin"], seen["wrong_pin"]) == (401, 403)
    assert "no draw is offered" in seen["accept_first"]
    assert seen["offer"] == "Done." and seen["offer_again"] == "Done."
    assert seen["offered"] == "A draw is offered: 1 of 2 players agree."
    assert seen["prompt"] is not None and seen["prompt"].kind == "draw"
    assert not seen["still_on"]  # offering twice is still one player
    assert "OK on the station" in seen["accept"] and not seen["still_on_2"]
    assert seen["over"] == "Game over: a draw."
    assert seen["result"]["draw_agreed"] is True and seen["result"]["winners"] == []
    exported = tikiboard("export", "--db", str(tmp_path / "tikiboard.db"),
                         "--game", str(seen["game_id"]))
    record = json.loads(exported.stdout)
    assert record["options"] == seen["options"] and record["draw_agreed"] is True
    assert errors(caplog) == []


def request_raw(port: int, path: str, pin: str | None) -> Any:
    return request(port, "POST", path, {}, None if pin is None
                   else {"Authorization": f"Bearer {pin}"})


# -- the station's seats, kept over a restart ------------------------------------------------------
def test_a_station_seat_is_stored_with_the_game_and_shown_after_a_restart(
        tmp_path: Path, driver: Any, caplog: pytest.LogCaptureFixture) -> None:
    seen: dict[str, Any] = {}

    async def first(station: Station, hardware: Hardware, hands: DemoPlayers,
                    port: int) -> None:
        before = station.session.game_id

        def choose() -> None:
            open_page(driver, port)
            driver.find_element(By.ID, "new-players").send_keys("Ana, Ben")
            Select(driver.find_element(By.ID, "new-bot-seat")).select_by_value("1")
            Select(driver.find_element(By.ID, "new-bot-level")).select_by_value("greedy")
            seen["start"] = press(driver, "new")

        await in_browser(choose)
        await until(lambda: station.session.game_id != before, 5, "the page's new game")
        seen["game_id"] = station.session.game_id
        await hands.play(3)  # the station's seat moves too: the hands carry its moves out
        seen["moves"] = list(station.session.moves())
        seen["levels"] = dict(station.opponent.levels)

    async def after_restart(station: Station, hardware: Hardware, hands: DemoPlayers,
                            port: int) -> None:
        seen["resumed"] = (station.session.game_id, list(station.session.moves()))
        seen["levels_after"] = dict(station.opponent.levels)

        def read() -> None:
            open_page(driver, port)
            seen["row"] = text(driver, "#players", lambda t: "station" in t)

        await in_browser(read)

    run_daemon(tmp_path, first)
    run_daemon(tmp_path, after_restart)  # configured with no station seat
    assert seen["start"] == "Done."
    assert seen["levels"] == {1: "greedy"}
    assert len(seen["moves"]) >= 2
    assert seen["resumed"] == (seen["game_id"], seen["moves"])
    assert seen["levels_after"] == {1: "greedy"}  # the stored game's seat, not the config's
    assert "Ben (the station, greedy)" in seen["row"]
    assert "Ana (the station" not in seen["row"]
    out = tmp_path / "seat.tiki.json"
    exported = tikiboard("export", "--db", str(tmp_path / "tikiboard.db"),
                         "--game", str(seen["game_id"]), "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    record = json.loads(out.read_text())
    assert record["station_seats"] == {"1": "greedy"}
    replayed = tikiboard("replay", str(out), "--json")  # the record format stays valid
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["ok"] is True
    assert errors(caplog) == []


# -- the post-game review --------------------------------------------------------------------------
def test_after_the_game_the_page_names_the_move_that_threw_a_tiki_away(
        tmp_path: Path, driver: Any, caplog: pytest.LogCaptureFixture) -> None:
    """Ana toppled her own 9-point tiki from the top of the line to the bottom; every other
    move was the evaluation's best. The hands play the game's last move, the station ends the
    game, and the page's review names Ana's move, with the move the bot liked better."""
    start, steps, at, blunder = blunder_game(0)
    store = EventStore(tmp_path / "tikiboard.db")
    session = Session.new(store, "topple", state=start, board="names", players=["Ana", "Ben"])
    cut = max(i for i, (kind, _) in enumerate(steps) if kind == "move")
    record_steps(session, start, steps[:cut])  # all but the last move
    store.close()
    seen: dict[str, Any] = {}

    async def scenario(station: Station, hardware: Hardware, hands: DemoPlayers,
                       port: int) -> None:
        await hands.play(4)  # the last move, by hand
        await until(lambda: station.status.phase == "over", 10, "game over")
        seen["moves"] = station.session.moves()

        def read() -> None:
            open_page(driver, port)
            seen["review"] = text(driver, "#review", lambda t: "Ana, move" in t)

        await in_browser(read)
        seen["busy"] = station.postgame.busy()

    run_daemon(tmp_path, scenario)
    assert seen["moves"][at - 1] == blunder
    lines = seen["review"].splitlines()
    ana = [line for line in lines if line.startswith("Ana")]
    assert ana[0].startswith(f"Ana, move {at}: {blunder} (better: "), lines
    assert not seen["busy"]
    assert errors(caplog) == []
