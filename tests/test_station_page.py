"""The station page as players read it (issue 16): Manami's village values and fruit supply,
the set-up's pieces still to place and a wrong move's cells on the picture, the move list that
follows the latest move, past games listed and downloadable, and the page's address as a QR
code on the page and on the OLED's game-over screen (the station's idle screen).

A real :class:`~pi_app.referee.station.Station` (real follower, real SQLite store) is driven
step by step with the readers' events, and its feed is served by the real page on a free port
of 127.0.0.1; what a person sees is read in headless Chromium or from the OLED picture.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import ServerThread, driver, request
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_referee import lay_out, swap

from pi_app.board.equipment import registry_for
from pi_app.net.archive import GameArchive
from pi_app.net.redact import public_record, public_snapshot
from pi_app.net.simstation import SimStation
from pi_app.net.web import create_station_app, qr_svg
from pi_app.readings import TagsSeen
from pi_app.referee import feedback as fb
from pi_app.referee.address import page_address
from pi_app.referee.config import Config, Web
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.feed import Phase
from pi_app.referee.qr import qr_code, qr_text
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore

pytestmark = pytest.mark.realtime

__all__ = ["driver"]
ADDRESS = "http://192.168.178.100:8080/"


def make_station(tmp_path: Path, game: str) -> Station:
    config = Config(station=replace(StationConfig(), game=game, seed=5, topple_cards="deal",
                                    players=("Ana", "Ben"), data_dir=str(tmp_path)))
    return Station(config, EventStore(tmp_path / "tikiboard.db"), registry_for(game),
                   clock=lambda: 0.0)


class Page:
    """The real page over ``station``'s feed and database, on its own thread's loop."""

    def __init__(self, station: Station, tmp_path: Path) -> None:
        self.station = station
        self.archive = GameArchive(tmp_path / "tikiboard.db")
        self.server = ServerThread(create_station_app(
            station.feed, token="97531864", archive=self.archive, address=ADDRESS,
            geometry=station.geometry)).start()
        self.step(station.render, 0.0)  # the daemon's first redraw: the feed's first snapshot

    def step(self, fn: Any, *args: Any) -> Any:
        """Run ``fn`` on the server's loop (the feed's queues belong to it)."""
        return self.server.call(lambda: fn(*args))

    def get(self, path: str) -> Any:
        return request(self.server.port, "GET", path)

    def state(self) -> Any:
        return json.loads(self.get("/api/state").body)

    def stop(self) -> None:
        self.server.stop()
        self.archive.close()


@pytest.fixture
def topple(tmp_path: Path) -> Iterator[Page]:
    page = Page(make_station(tmp_path, "topple"), tmp_path)
    try:
        yield page
    finally:
        page.stop()


def _svg_cells(svg: str, cls: str) -> set[str]:
    return set(re.findall(r'data-cell="([^"]+)" class="' + cls + '"', svg))


# -- Manami: village values and the fruit supply --------------------------------------------------
def test_manami_village_values_and_fruit_supply_are_on_the_page(tmp_path: Path) -> None:
    station = make_station(tmp_path, "manami")
    page = Page(station, tmp_path)
    try:
        truth = station.session.game.state_to_json(station.session.state)
        data = page.state()
        island = data["snapshot"]["island"]
        assert island == {"villages": truth["villages"], "supply": truth["supply"],
                          "spoiled": truth["spoiled"]}
        # The picture prints each village's value on its tile.
        for village, value in truth["villages"].items():
            label = "+" + str(value) if value > 0 else ("\u2212" + str(-value) if value < 0
                                                        else "0")
            assert f'class="value" data-cell="{village}">{label}</text>' in data["svg"]
        html = page.get("/").body.decode()
        assert f"Fruit in the supply: {truth['supply']} · spoiled: 0" in html
        # Public while the game is on (nothing of Manami is hidden, but the field is listed).
        assert public_snapshot(station.feed.snapshot)["island"] == island
    finally:
        page.stop()


def test_other_games_have_no_island_facts(topple: Page) -> None:
    data = topple.state()
    assert "island" not in data["snapshot"]
    assert 'class="value"' not in data["svg"]


# -- the picture: pieces still to place, a wrong move's cells -------------------------------------
def test_setup_draws_the_pieces_still_to_place_as_outlines(topple: Page) -> None:
    station = topple.station
    view = station.session.game.expected_view(station.session.state)
    placed = {c: p for c, p in view.items() if c in ("s1", "s2", "s3")}
    topple.step(lay_out, station, 1.0, placed)           # three tikis of nine on the board
    for t in (1.5, 3.0, 5.0):                            # past the grace: the station guides
        topple.step(station.step, None, t)
    data = topple.state()
    snap = data["snapshot"]
    assert snap["status"] == "setup"
    to_place = {c for c, p in view.items() if p and c not in placed and c.startswith("s")}
    assert {m["cell"] for m in snap["marks"] if m["kind"] == "place"} == to_place
    assert data["svg"].count('class="ghost"') == len(to_place)
    assert data["svg"].count('class="piece"') == len(placed)   # the placed ones drawn solid
    topple.step(lay_out, station, 6.0)                  # the rest put on: no outline is left
    for t in (6.5, 8.0, 10.0):
        topple.step(station.step, None, t)
    data = topple.state()
    assert data["snapshot"]["status"] == "playing"
    assert 'class="ghost"' not in data["svg"] and 'class="marked"' not in data["svg"]


def test_a_wrong_move_marks_the_cells_the_guidance_names(topple: Page) -> None:
    station = topple.station
    topple.step(lay_out, station, 1.0)
    topple.step(station.step, None, 2.0)
    assert station.status.phase == "play"
    topple.step(swap, station, "s1", "s9", 3.0)          # no legal move swaps those two
    for t in (3.5, 5.0, 7.0):
        topple.step(station.step, None, t)
    data = topple.state()
    snap = data["snapshot"]
    assert snap["status"] == "mismatch"
    named = {c for m in snap["marks"] for c in (m["cell"], m["to"]) if c}
    assert named == {"s1", "s9"}
    assert all(c in " ".join(snap["guidance"]) for c in named)
    assert _svg_cells(data["svg"], "marked") == named


# -- past games: the list and the records ---------------------------------------------------------
def tikiboard(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60,
                          check=False)


def test_past_games_are_listed_and_unfinished_ones_download_public(topple: Page,
                                                                     tmp_path: Path) -> None:
    station = topple.station
    topple.step(lay_out, station, 1.0)
    topple.step(station.step, None, 2.0)
    topple.step(swap, station, "s1", "s2", 3.0)          # Up 1, accepted
    for t in (3.3, 3.8, 4.5):
        topple.step(station.step, None, t)
    assert len(station.accepted_log) == 1
    first = station.session.game_id
    topple.step(station.new_game, "topple", 5.0, ["Caro", "Dai", "Eve"])
    second = station.session.game_id

    listing = json.loads(topple.get("/games").body)
    assert [g["id"] for g in listing] == [second, first]          # newest first
    old, new = listing[1], listing[0]
    assert (old["game"], old["players"], old["state"], old["moves"]) == \
        ("topple", ["Ana", "Ben"], "abandoned", 1)
    assert (new["players"], new["state"], new["moves"]) == (["Caro", "Dai", "Eve"],
                                                            "in play", 0)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", old["date"])

    # An abandoned game: its public record (nobody revealed its cards at the table, and they
    # may still be in the players' hands), where `tikiboard export` on the station has them.
    reply = topple.get(f"/games/{first}/record.json")
    assert reply.status == 200 and "attachment" in reply.headers["content-disposition"]
    cli = tikiboard("export", "--db", str(tmp_path / "tikiboard.db"), "--game", str(first))
    assert cli.returncode == 0, cli.stderr
    assert json.loads(reply.body) == public_record(json.loads(cli.stdout))
    assert "cards" not in json.dumps(json.loads(reply.body))
    assert "cards" in cli.stdout

    # The game in play: its public record only (no Secret Tiki card).
    live = json.loads(topple.get(f"/games/{second}/record.json").body)
    assert live["players"] == ["Caro", "Dai", "Eve"]
    assert all("cards" not in r for r in live["rounds"])
    assert topple.get("/games/999/record.json").status == 404

    # The page lists them, each with its link.
    html = topple.get("/").body.decode()
    assert f'href="/games/{first}/record.json"' in html and "abandoned" in html
    assert f'href="/games/{second}/record.json" download>public record' in html


def test_a_tactiki_game_in_play_downloads_without_its_ranks(tmp_path: Path) -> None:
    sim = SimStation(tmp_path, "table-4", seed=3, game="tactiki", players=["Ana", "Ben"])
    sim.new_game()
    for _ in range(6):
        sim.step()
    archive = GameArchive(sim.store.path)
    try:
        assert sim.session is not None
        live = archive.record(sim.session.game_id)
        whole = sim.session.export()
        assert any(rank is not None for field in whole["setup"].values() for rank in field)
        assert all(rank is None for field in live["setup"].values() for rank in field)
        assert live["moves"] == [sim.session.game.public_text(m) for m in whole["moves"]]
    finally:
        archive.close()
        sim.close()


def test_a_page_without_a_database_lists_no_games(tmp_path: Path) -> None:
    sim = SimStation(tmp_path, "table-2", seed=1, game="manami")
    server = ServerThread(create_station_app(sim.feed, token=None)).start()
    try:
        assert json.loads(request(server.port, "GET", "/games").body) == []
        assert request(server.port, "GET", "/games/1/record.json").status == 404
    finally:
        server.stop()


# -- the page's address as a QR code ---------------------------------------------------------------
def test_the_page_address_is_the_public_url_or_the_lan_address() -> None:
    web = Web(enabled=True, host="0.0.0.0", port=8123)
    assert page_address(Config(web=replace(web, public_url="http://table-7.local/"))) == \
        "http://table-7.local/"
    assert page_address(Config(web=replace(web, host="192.168.5.9"))) == \
        "http://192.168.5.9:8123/"
    lan = page_address(Config(web=web))
    assert re.fullmatch(r"http://\d+\.\d+\.\d+\.\d+:8123/", lan) and "//0.0.0.0" not in lan


def test_the_qr_code_carries_the_address_and_is_on_the_page(topple: Page) -> None:
    code = qr_code(ADDRESS)
    assert qr_text(ADDRESS) == ADDRESS.upper()          # case-blind: alphanumeric mode
    assert code.mode == "alphanumeric" and code.version == 2 and not code.is_micro
    assert qr_text("http://host/table-1?x=1") == "http://host/table-1?x=1"  # a path keeps case
    html = topple.get("/").body.decode()
    assert qr_svg(ADDRESS) in html and f'id="address-text">{ADDRESS}<' in html


def test_the_game_over_screen_draws_the_qr_code_of_the_address(tmp_path: Path) -> None:
    station = make_station(tmp_path, "topple")
    station.page_url = ADDRESS                    # as the daemon sets it when the page is on
    station.status.phase = Phase.OVER
    image = station.screen_image(0.0)
    matrix = [list(row) for row in qr_code(ADDRESS).matrix]
    side = len(matrix) * 2 + 4
    x0, y0 = image.width - side, image.height - side
    pixels = image.load()
    assert pixels is not None
    drawn = [[not pixels[x0 + 2 + 2 * c, y0 + 2 + 2 * r] for c in range(len(matrix))]
             for r in range(len(matrix))]
    assert drawn == [[bool(m) for m in row] for row in matrix]
    assert all(pixels[x0, y] for y in range(y0, image.height))   # the lit quiet zone
    plain = fb.screen(replace(station.scene(0.0), page_url=""))
    assert plain.tobytes() != image.tobytes()          # no address: no code


# -- in the browser --------------------------------------------------------------------------------
def test_in_the_browser_manami_values_supply_and_the_qr_code(driver: Any,
                                                             tmp_path: Path) -> None:
    page = Page(make_station(tmp_path, "manami"), tmp_path)
    try:
        driver.set_window_size(390, 844)
        driver.get(page.server.url + "/")
        wait = WebDriverWait(driver, 10)
        wait.until(lambda d: d.find_element(By.ID, "island").text ==
                   "Fruit in the supply: 7 · spoiled: 0")
        assert len(driver.find_elements(By.CSS_SELECTOR, "#picture svg text.value")) == 9
        code = driver.find_element(By.CSS_SELECTOR, "#address svg")
        assert code.is_displayed() and code.size["width"] >= 100
        assert driver.find_element(By.ID, "address-text").text == ADDRESS
    finally:
        driver.set_window_size(1200, 900)
        page.stop()


def test_in_the_browser_the_move_list_follows_the_latest_move(driver: Any,
                                                              tmp_path: Path) -> None:
    sim = SimStation(tmp_path, "table-5", seed=4, game="topple", players=["Ana", "Ben"])
    server = ServerThread(create_station_app(sim.feed, token=None)).start()
    try:
        server.call(sim.new_game)
        driver.get(server.url + "/")
        wait = WebDriverWait(driver, 10)

        def shown() -> int:
            return len(driver.find_elements(By.CSS_SELECTOR, "#moves li"))

        def at_end(d: Any) -> bool:
            return bool(d.execute_script(
                "const m = document.getElementById('moves');"
                "return m.scrollHeight > m.clientHeight + 20 &&"
                " m.scrollTop + m.clientHeight >= m.scrollHeight - 2;"))

        def played() -> int:
            return len(sim.feed.snapshot.get("moves") or [])

        for _ in range(400):  # bounded: a new game would start the list again
            if played() >= 40:
                break
            server.call(sim.step)
        assert played() >= 40
        wait.until(lambda d: shown() == played())
        wait.until(at_end)                                   # scrolled to the newest move
        before = shown()
        server.call(sim.step)
        wait.until(lambda d: shown() != before)
        wait.until(at_end)                                   # and follows the next one
    finally:
        server.stop()


def test_in_the_browser_set_up_outlines_and_a_wrong_move_marked(driver: Any,
                                                                topple: Page) -> None:
    station = topple.station
    driver.get(topple.server.url + "/")
    wait = WebDriverWait(driver, 10)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#picture svg rect[data-cell]"))
    topple.step(station.step, TagsSeen(1.0, 0, frozenset()), 1.0)
    for t in (2.0, 4.0, 6.0):
        topple.step(station.step, None, t)
    pieces = sum(1 for c, p in station.session.game.expected_view(
        station.session.state).items() for _ in p if c.startswith("s"))
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#picture svg .ghost"))
               == pieces)                                    # all nine still to place
    # The list is redrawn when the page's state changes: read it inside a wait that shrugs off
    # a row replaced between finding it and reading its text.
    rows = WebDriverWait(driver, 10, ignored_exceptions=[StaleElementReferenceException]).until(
        lambda d: [r.text for r in d.find_elements(By.CSS_SELECTOR, "#games tr")])
    assert len(rows) == 1 and "public record" in rows[0]  # the game in play

    topple.step(lay_out, station, 7.0)
    topple.step(station.step, None, 8.0)
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#picture svg .ghost"))
    topple.step(swap, station, "s2", "s8", 9.0)              # no legal move does this
    for t in (9.5, 11.0, 13.0):
        topple.step(station.step, None, t)
    wait.until(lambda d: {e.get_attribute("data-cell") for e in d.find_elements(
        By.CSS_SELECTOR, "#picture svg .marked")} == {"s2", "s8"})
    assert "s2" in driver.find_element(By.ID, "guidance").text


# -- through the real daemon -----------------------------------------------------------------------
def test_the_daemon_serves_past_games_and_shows_its_address(tmp_path: Path) -> None:
    """The daemon hands its game database to the page (read on the page's own connection)
    and its address to the screen; a game replaced by a new one (the station's OK confirms
    the page's new game) downloads as its public record."""
    from test_game_change_and_names import http, in_play, run_daemon

    seen: dict[str, Any] = {}

    async def scenario(station: Station, hardware: Any, hands: Any, port: int) -> None:
        await in_play(station, hands)
        await hands.play(1)
        first = station.session.game_id
        seen["address"] = (station.page_url, f"http://127.0.0.1:{port}/")
        seen["page"] = (await http(port, "GET", "/")).body.decode()
        seen["live"] = json.loads((await http(port, "GET", f"/games/{first}/record.json")).body)
        started = await http(port, "POST", "/api/action/new_game", {"players": ["Eve", "Fay"]})
        assert started.status == 200, started.body
        assert "asked" in json.loads(started.body)["result"]  # a game on: the table's OK decides
        assert station.session.game_id == first
        await hands.press("ok")
        for _ in range(100):
            if station.session.game_id != first:
                break
            await asyncio.sleep(0.02)
        seen["games"] = json.loads((await http(port, "GET", "/games")).body)
        seen["old"] = json.loads((await http(port, "GET", f"/games/{first}/record.json")).body)
        seen["moves"] = list(station.accepted_log)

    run_daemon(tmp_path, scenario, players=("Ana", "Ben"))
    page_url, expected = seen["address"]
    assert page_url == expected and qr_svg(expected) in seen["page"]
    assert all("cards" not in r for r in seen["live"]["rounds"])     # in play: public
    assert [g["state"] for g in seen["games"]] == ["in play", "abandoned"]
    assert seen["games"][1]["moves"] == len(seen["moves"]) >= 1
    # Abandoned: public only (its cards may still be in the players' hands, issue 29).
    assert seen["old"]["players"] == ["Ana", "Ben"]
    assert all("cards" not in r for r in seen["old"]["rounds"])
