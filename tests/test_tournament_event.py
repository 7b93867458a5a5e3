"""A whole event in the browser (issue 33's "done when"), from ``referee setup`` to final standings.

``tikiboard referee setup`` writes the broker's files and each board's join code; a real
mosquitto runs on them; the dashboard runs on the ``referee.toml`` it wrote. Two real station
daemons (simulated sensors, in-process) start unconfigured and are set up through their real
first-boot form in Chromium with the join code, and so reach the broker as their boards. Then,
in the referee's page: five players (so a bye), two planned rounds, round 1 paired and sent to
the stations, where OK (the station's own button pin) starts each game with the names in seat
order; the round clock, counted down on the station's page too; a wrong hand entry refused; a
forfeit; round 2 paired; a late correction of round 1 warned and confirmed; round 2's results;
the print view; the final standings, also at a phone's 390 px; the spectators' page.

``TIKI_SHOTS=docs/images pytest -n 0 tests/test_tournament_event.py`` also writes the
screenshots of docs/tournament.md (the ``tournament-*.png`` files in docs/images).

Results are entered by hand at the referee's page (the station games are started, not played
out): a station's own report is covered by ``test_tournament_dashboard``'s 16-player run.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import chromium_driver, request, wait_for
from test_first_boot import station_file
from test_tournament_dashboard import PASSWORD

from pi_app.cli import main as tikiboard
from pi_app.net.auth import hash_password
from pi_app.net.broker import BrokerProcess, free_port
from pi_app.net.dashboard import build_dashboard, load_config
from pi_app.referee.daemon import Hardware
from pi_app.referee.firstboot import load_for_run
from pi_app.referee.station import Station

pytestmark = pytest.mark.realtime

EVENT = "cup26"
BOARDS = ("b1", "b2")
PLAYERS = ["Ana", "Ben", "Caro", "Dan", "Eve"]
PIN = "tiki-pin-9"


class StationThread:
    """One real station daemon (``serve_configured``) in its own thread and event loop,
    through its first-boot set-up and the restart after it."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True)
        self.port = free_port()
        self.config, self.setup = load_for_run(station_file(folder, self.port))
        assert self.setup is not None
        self.stations: list[Station] = []
        self.parts: list[Hardware] = []
        self.loop = asyncio.new_event_loop()
        self.stop_event: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from pi_app.station_main import serve_configured

        async def main() -> None:
            self.stop_event = asyncio.Event()

            def ready(station: Station, hardware: Hardware) -> None:
                self.stations.append(station)
                self.parts.append(hardware)

            await serve_configured(self.config, self.setup, stop=self.stop_event,
                                   on_ready=ready)

        self.loop.run_until_complete(main())

    @property
    def station(self) -> Station:
        return self.stations[-1]

    def call(self, fn: Callable[[], Any]) -> Any:
        async def run() -> Any:
            return fn()
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    def press(self, button: str) -> None:
        """The station's button, on its own (mock) pin."""
        async def press() -> None:
            pin = self.parts[-1].buttons.buttons[button].pin
            pin.drive_low()
            await asyncio.sleep(0.08)
            pin.drive_high()
        asyncio.run_coroutine_threadsafe(press(), self.loop).result(10)

    def setting_up(self) -> bool:
        return bool(self.stations) and self.station.setup_code != ""

    def restarted(self) -> bool:
        return len(self.stations) > 1

    def offered(self, pairing: list[int]) -> bool:
        return (self.station.status.change or {}).get("pairing") == pairing

    def playing(self, names: list[str]) -> bool:
        return list(self.station.player_names()) == names and self.station.status.change is None

    def clocked(self) -> bool:
        return self.station.status.round_end is not None

    def round_minutes(self) -> int | None:
        return self.station.scene(self.station.clock()).round_minutes

    def stop(self) -> None:
        if self.stop_event is not None:
            self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(20)


@pytest.fixture
def own_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each station thread its own mock GPIO: two stations in one process would otherwise
    claim the same button pins of gpiozero's one mock pin factory."""
    from gpiozero import Button  # type: ignore[import-untyped]
    from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped]

    mine = threading.local()

    def button(*args: Any, pin_factory: Any = None, **kwargs: Any) -> Any:
        if pin_factory is None:
            if not hasattr(mine, "factory"):
                mine.factory = MockFactory()
            pin_factory = mine.factory
        return Button(*args, pin_factory=pin_factory, **kwargs)

    monkeypatch.setattr("pi_app.hw.buttons.Button", button)


def test_a_whole_event_from_referee_setup_to_final_standings(tmp_path: Path,
                                                             own_pins: None) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    started = time.monotonic()
    folder = tmp_path / "event"
    broker_port = free_port()
    with pytest.raises(SystemExit) as done:
        tikiboard(["referee", "setup", "--dir", str(folder), "--event", EVENT, "--boards",
                   *BOARDS, "--port", str(broker_port)])
    assert done.value.code in (0, None)
    stations_file = json.loads((folder / "stations.json").read_text())
    assert all((folder / "join" / f"{b}.svg").exists() for b in BOARDS)
    conf = folder / "broker" / "mosquitto.conf"
    # as the test's user (run as root, mosquitto would drop to "mosquitto", who may not read
    # the test's files; the other broker tests write the same line)
    conf.write_text(conf.read_text() + f"user {getpass.getuser()}\n")
    mosquitto = BrokerProcess(conf, "127.0.0.1", broker_port, log=tmp_path / "mosquitto.out")
    mosquitto.start()
    toml = folder / "referee.toml"
    toml.write_text(toml.read_text() + f'alice = "{hash_password(PASSWORD)}"\n')
    app, desk = build_dashboard(load_config(toml))
    from net_fixtures import ServerThread

    dash = ServerThread(app).start()
    stations = {b: StationThread(tmp_path / b) for b in BOARDS}
    driver = chromium_driver(tmp_path / "chromium")
    wait = WebDriverWait(driver, 20, poll_frequency=0.05)

    def click(element_id: str) -> None:
        for _ in range(10):
            try:
                driver.find_element(By.ID, element_id).click()
                return
            except Exception:   # replaced by a refresh between finding and clicking
                time.sleep(0.05)
        raise AssertionError(f"#{element_id} not clickable")

    def enter(table_form: str, scores: tuple[int, ...], button: str) -> None:
        """Type the scores into a result form and press a winner button, in one go in the
        page (its live part is replaced after every ruling: a field found earlier may be
        gone)."""
        driver.execute_script(
            "const f = document.getElementById(arguments[0]);"
            "arguments[1].forEach((v, i) => {"
            "  const e = f.querySelector('[name=score-' + i + ']'); e.value = String(v);"
            "  e.dispatchEvent(new Event('input', {bubbles: true})); });"
            "document.getElementById(arguments[2]).click();", table_form, list(scores), button)

    def entered(table: int, _driver: Any) -> bool:
        return api()["rounds"][1]["pairings"][table - 1]["result"] is not None

    def text_of(element_id: str) -> str:
        """An element's text read in one go in the page (the live part is replaced often)."""
        text: str = driver.execute_script(
            "const e = document.getElementById(arguments[0]);"
            "return e ? e.textContent : '';", element_id)
        return text

    shots = os.environ.get("TIKI_SHOTS")

    def shot(name: str, size: tuple[int, int], element: str | None = None) -> None:
        """With ``TIKI_SHOTS=DIR``: a screenshot of the page (or one element) at ``size``,
        for docs/tournament.md; nothing otherwise."""
        if not shots:
            return
        driver.set_window_size(*size)
        time.sleep(0.3)
        path = str(Path(shots) / f"tournament-{name}.png")
        if element is None:
            driver.save_screenshot(path)
        else:
            driver.find_element(By.ID, element).screenshot(path)

    def said() -> str:
        text: str = driver.execute_script(
            "const r = document.getElementById('result'); return r ? r.textContent : '';")
        return text

    def bye(pairing: dict[str, Any]) -> bool:
        return len(pairing["seats"]) == 1

    def api() -> dict[str, Any]:
        data: dict[str, Any] = request(dash.port, "GET", "/api/tournament").json()
        tournament: dict[str, Any] = data["tournament"]
        return tournament

    try:
        # -- each station joins with its join code, through its first-boot form -------------
        for board, st in stations.items():
            wait_for(st.setting_up, 20, f"{board}'s set-up screen")
            assert st.setup is not None
            driver.get(f"http://127.0.0.1:{st.port}/setup")
            driver.find_element(By.ID, "code").send_keys(st.setup.code)
            driver.find_element(By.ID, "join").send_keys(stations_file[board]["join"])
            driver.find_element(By.CSS_SELECTOR, "#game option[value=manami]").click()
            driver.find_element(By.ID, "pin").send_keys(PIN)
            click("save")
            wait_for(st.restarted, 30, f"{board} to start again")
            assert st.station.config.station.board == board
            assert st.station.config.mqtt.enabled and st.station.config.mqtt.event == EVENT
        wait_for(lambda: all(desk.boards[b].state is not None for b in BOARDS), 20,
                 "both stations heard at the dashboard")

        # -- the referee: a tournament of five (a bye), two rounds ----------------------------
        driver.get(dash.url + "/login")
        driver.find_element(By.NAME, "username").send_keys("alice")
        driver.find_element(By.NAME, "password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "form button").click()
        wait.until(lambda d: d.find_elements(By.ID, "user"))
        driver.get(dash.url + "/tournament")
        driver.find_element(By.CSS_SELECTOR, "#new-game option[value=manami]").click()
        click("new-tournament")
        wait.until(lambda d: d.find_elements(By.ID, "new-players"))
        driver.find_element(By.ID, "new-players").send_keys("\n".join(PLAYERS))
        click("add-players")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#players tbody tr")) == 5)
        driver.find_element(By.ID, "planned-rounds").send_keys("2")
        click("plan-rounds")
        wait.until(lambda d: api()["planned"] == 2)

        def pair_and_start(number: int) -> list[list[str]]:
            """Pair round ``number``, put its tables on b1 and b2, press OK at each station."""
            click("pair")
            wait.until(lambda d: d.find_elements(By.ID, f"assign-{number}"))
            click("assign")
            wait.until(lambda d: len(api()["rounds"]) == number and all(
                p["board"] or bye(p) for p in api()["rounds"][number - 1]["pairings"]))
            t = api()
            names = {p["id"]: p["name"] for p in t["players"]}
            seated = []
            for p in t["rounds"][number - 1]["pairings"]:
                if bye(p):
                    continue
                st, want = stations[p["board"]], [names[s] for s in p["seats"]]
                wait_for(partial(st.offered, [number, p["table"]]), 20,
                         f"round {number}'s pairing at {p['board']}")
                st.press("ok")
                wait_for(partial(st.playing, want), 10, f"OK to start the game at {p['board']}")
                seated.append(want)
            return seated

        seated = pair_and_start(1)
        assert len(seated) == 2 and sum(map(bye, api()["rounds"][0]["pairings"])) == 1

        # the round clock: the dashboard counts down, and so does each station
        minutes = driver.find_element(By.ID, "clock-minutes")
        minutes.clear()
        minutes.send_keys("30")
        click("clock-start")
        wait.until(lambda d: "left" in text_of("round-clock"))
        for st in stations.values():
            wait_for(st.clocked, 10, "the round clock at the station")
            left = request(st.port, "GET", "/api/state").json()["snapshot"]["round_left"]
            assert 1700 < left <= 1800
            assert st.call(st.round_minutes) == 30

        shot("referee-desktop", (1280, 900))
        shot("result-form-phone", (390, 844), "table-1-1")
        if shots:
            first = next(iter(stations.values()))
            driver.get(f"http://127.0.0.1:{first.port}/")
            wait.until(lambda d: "left" in text_of("round-clock"))
            shot("station-clock-phone", (390, 844))
            driver.get(dash.url + "/tournament")
            driver.set_window_size(1200, 900)
            wait.until(lambda d: d.find_elements(By.ID, "correct-form-1-1"))

        # table 1 by hand: scores that contradict the winner are refused, then entered right
        enter("correct-form-1-1", (3, 5), "win-1-1-1")
        wait.until(lambda d: "most fruit wins" in said())
        assert api()["rounds"][0]["pairings"][0]["result"] is None   # nothing taken
        enter("correct-form-1-1", (3, 5), "win-1-1-2")
        wait.until(lambda d: said() == "Done.")
        # table 2: a forfeit, seat 1 came
        driver.execute_script(   # in one go: the live part is replaced after each ruling
            "document.querySelector('#forfeit-form-1-2 select').value = '1';"
            "document.getElementById('forfeit-1-2').click();")
        wait.until(lambda d: all(bye(p) or (p["result"] or {}).get("confirmed_by")
                                 for p in api()["rounds"][0]["pairings"]))

        pair_and_start(2)
        # a late correction of round 1: warned with round 2's tables, then confirmed
        enter("correct-form-1-1", (5, 3), "win-1-1-1")
        alert = wait.until(expected_conditions.alert_is_present())
        assert "round 2" in alert.text
        alert.accept()
        wait.until(lambda d: said() == "Done.")
        assert api()["rounds"][0]["pairings"][0]["result"]["winners"] == [0]
        for table, scores, button in ((1, (4, 4), "draw-2-1"), (2, (6, 2), "win-2-2-1")):
            enter(f"correct-form-2-{table}", scores, button)
            wait.until(partial(entered, table))
        wait.until(lambda d: "Final standings" in text_of("standings-section"))
        assert not driver.find_elements(By.ID, "pair")          # no round past the last
        cross = text_of("crosstable-section")
        assert "bye" in cross and "+" in cross                  # the bye and the forfeit

        # the final standings fit a phone
        driver.set_window_size(390, 844)
        driver.get(dash.url + "/tournament")
        wait.until(lambda d: d.find_elements(By.ID, "standings"))
        right = driver.execute_script(
            "return document.getElementById('standings').getBoundingClientRect().right")
        assert right <= 390, right
        rows = driver.execute_script(
            "return Array.from(document.querySelectorAll('#standings tbody tr'))"
            ".map((r) => r.innerText);")
        assert len(rows) == 5
        shot("standings-phone", (390, 844), "standings-section")
        driver.set_window_size(1200, 900)

        # the print view and the spectators' page
        printed = request(dash.port, "GET", "/tournament/print?round=2").text
        assert "<script" not in printed and all(n in printed for n in PLAYERS)
        results = request(dash.port, "GET", "/tournament/results.trf").text.split("\r\n")
        assert results[0] == f"012 {EVENT}" and len([r for r in results if r[:3] == "001"]) == 5
        watch = request(dash.port, "GET", "/watch").text
        if shots:
            driver.get(dash.url + "/tournament/print")
            shot("print", (1000, 1200))
            driver.get(dash.url + "/watch")
            shot("watch-phone", (390, 844))
        assert 'id="watch-b1"' in watch and 'id="watch-b2"' in watch
    finally:
        driver.quit()
        for st in stations.values():
            st.stop()
        dash.stop()
        mosquitto.stop()
    assert time.monotonic() - started < 90
