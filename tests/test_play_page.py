"""``tikiboard play`` (issue 34): whole games on the page by taps against the bot, on a
phone-sized window, ending with the review's charts; bad input gets its reason and loses
nothing; the page never shows what the person's seat may not see."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import ServerThread, driver, request
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from pi_app.net.play import PlayGame, create_play_app

__all__ = ["driver"]


@pytest.mark.parametrize("name", ["topple", "manami", "tactiki"])
def test_a_whole_game_by_the_first_option_each_turn(name: str, tmp_path: Path) -> None:
    played = PlayGame.start(name, "beginner", frozenset({0}), 5, tmp_path)
    turns = 0
    while not played.game.is_over(played.state) and turns < 500:
        options = played.options()
        assert options and played.game.to_move(played.state) == 0
        played.play(options[0]["text"])
        turns += 1
    snap = played.snapshot()
    assert snap["over"] and snap["charts"] and "<svg" in snap["charts"][0]
    assert json.loads(Path(snap["saved"]).read_text())["game"] == name
    # the station's seat is never reviewed
    assert all(s["player"] == 0 for s in snap["review"]["slips"])


def test_bad_input_gets_the_reason_and_loses_nothing() -> None:
    played = PlayGame.start("manami", "beginner", frozenset({0}), 2)
    before = played.state
    with pytest.raises(Exception, match="not a move you can make now"):
        played.play("z9-z8")
    assert played.state == before


def test_the_page_hides_the_bots_ranks_until_the_end() -> None:
    played = PlayGame.start("tactiki", "beginner", frozenset({0}), 2)
    pieces = [p for col in played.view().values() for p in col]
    assert any(p.startswith("T") and p[1].isdigit() for p in pieces)  # own ranks shown
    assert {p for p in pieces if p.startswith("C")} == {"C?"}  # the bot's hidden


def test_a_tactiki_step_into_a_hidden_fight_is_made_alone_first() -> None:
    """The rest of the turn is offered once the fight has shown its ranks."""
    played = PlayGame.start("tactiki", "beginner", frozenset({0}), 2)
    for _ in range(200):
        looks = [o["text"] for o in played.options() if o["text"].endswith("then look")]
        if looks:
            break
        played.play(played.options()[0]["text"])
    assert looks, "no fight against unseen ranks came up"
    played.play(looks[0])
    assert played.first is not None and played.snapshot()["first"]
    step = looks[0].split(",")[0]
    # every option is a whole turn with that step (in the record's canonical order)
    assert played.options() and all(step in o["text"] for o in played.options())
    before = len(played.events)
    played.play(played.options()[0]["text"])
    assert played.first is None and len(played.events) > before


def test_the_actions_refuse_what_they_cannot_do(tmp_path: Path) -> None:
    server = ServerThread(create_play_app("manami", "beginner", frozenset({0}), 1,
                                          tmp_path)).start()
    try:
        assert request(server.port, "POST", "/move", "not json").status == 400
        snap = request(server.port, "POST", "/move", {"text": "nonsense"}).json()
        assert "not a move you can make now" in snap["error"] and snap["moves"] == []
        assert request(server.port, "GET", "/hint?seat=1").status == 409
        one = request(server.port, "GET", "/hint").json()
        assert one == request(server.port, "GET", "/hint").json() and one["text"]
    finally:
        server.stop()


def _state(browser: Any) -> dict[str, Any]:
    got: dict[str, Any] = browser.execute_script("return snap;")
    return got


@pytest.mark.parametrize("name", ["topple", "manami", "tactiki"])
def test_a_whole_game_by_taps_on_a_phone(driver: Any, name: str, tmp_path: Path) -> None:
    server = ServerThread(create_play_app(name, "beginner", frozenset({0}), 7,
                                          tmp_path)).start()
    try:
        driver.set_window_size(390, 844)
        driver.get(server.url + "/")
        wait = WebDriverWait(driver, 30)
        wait.until(lambda d: d.execute_script("return snap !== null;"))
        for _ in range(400):
            snap = _state(driver)
            if snap["over"]:
                break
            option = snap["options"][0]
            cells = option["lift"] + option["put"]
            if cells:  # tap the cell, then the move it offers
                cell = driver.find_element(By.CSS_SELECTOR, f'#board [data-cell="{cells[0]}"]')
                cell.click()
            buttons = [b for b in driver.find_elements(By.CSS_SELECTOR, "#options button.move")
                       if b.text == option["text"]]
            assert buttons, f"{option['text']} was not offered after tapping {cells}"
            mark = (len(snap["moves"]), snap["first"])
            buttons[0].click()

            def moved(d: Any, mark: tuple[int, bool] = mark) -> bool:
                now = _state(d)
                return (len(now["moves"]), now["first"]) != mark

            wait.until(moved)
            assert not _state(driver)["error"]
        assert _state(driver)["over"]
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#review .chart svg polyline"))
        assert "Game over" in driver.find_element(By.ID, "status").text
    finally:
        server.stop()
