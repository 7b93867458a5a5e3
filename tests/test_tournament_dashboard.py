"""The tournament on the referee dashboard (issue 16): every action over HTTP, and one whole
tournament in a browser.

HTTP tests run the dashboard's real app over a real ledger and tournament file, with station
messages handed to the desk as the subscriber would. The browser test runs everything for real:
mosquitto, the dashboard with its MQTT subscriber, 8 simulated stations publishing their games,
and headless Chromium driving the referee's page through 16 players and 4 Swiss rounds.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import (
    EVENT,
    Broker,
    ServerThread,
    broker,
    chromium_driver,
    request,
    running_dashboard,
    wait_for,
)

from pi_app.net import topics
from pi_app.net.auth import hash_password
from pi_app.net.dashboard_app import create_dashboard_app
from pi_app.net.desk import Desk, Incoming
from pi_app.net.ledger import Ledger
from pi_app.net.simstation import SimStation
from pi_app.net.tournament_app import TournamentDesk, parse_entries, tournament_routes
from pi_app.tournament import director
from pi_app.tournament.model import Result, Tournament
from pi_app.tournament.standings import standings

pytestmark = pytest.mark.realtime

__all__ = ["broker"]
PASSWORD = "correct horse battery"
EVIL = "<img src=x onerror=f()>"
ACTIONS = ["new", "players", "withdraw", "halfbye", "rounds", "pair", "boards", "confirm",
           "unconfirm", "hints"]


class Client:
    """A logged-in referee (cookie and CSRF token), or nobody."""

    def __init__(self, port: int, cookie: str = "", csrf: str = "") -> None:
        self.port, self.cookie, self.csrf = port, cookie, csrf

    def post(self, action: str, body: Any, csrf: bool = True) -> tuple[int, dict[str, Any]]:
        headers = {"Cookie": self.cookie} if self.cookie else {}
        if csrf and self.csrf:
            headers["X-CSRF-Token"] = self.csrf
        reply = request(self.port, "POST", f"/api/tournament/{action}", body, headers)
        return reply.status, reply.json()

    def get(self, path: str) -> Any:
        return request(self.port, "GET", path, headers={"Cookie": self.cookie} if self.cookie
                       else {})

    def ok(self, action: str, body: Any) -> None:
        status, data = self.post(action, body)
        assert status == 200, data


def login(port: int) -> Client:
    reply = request(port, "POST", "/login", f"username=alice&password={PASSWORD.replace(' ', '+')}",
                    {"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status == 303
    cookie = reply.headers["set-cookie"].split(";")[0]
    page = request(port, "GET", "/tournament", headers={"Cookie": cookie}).text
    match = re.search(r'<meta name="csrf" content="([^"]+)">', page)
    assert match, "the page carries the CSRF token"
    return Client(port, cookie, match.group(1))


class App:
    def __init__(self, tmp_path: Path) -> None:
        self.desk = Desk(Ledger(tmp_path / "referee.sqlite"), EVENT,
                         boards=["b1", "b2", "b3"])
        self.tdesk = TournamentDesk(self.desk, tmp_path / "tournament.sqlite")
        self.desk.result_listeners.append(self.tdesk.on_result)
        self.desk.ruling_listeners.append(self.tdesk.on_ruling)
        app = create_dashboard_app(self.desk, users={"alice": hash_password(PASSWORD)},
                                   secret=os.urandom(32), extra=tournament_routes(self.tdesk))
        self.server = ServerThread(app).start()

    def hand_in(self, board: str, leaf: str, payload: Any) -> None:
        incoming = Incoming(topics.topic(EVENT, board, leaf), json.dumps(payload).encode(), 0,
                            0, 0, time.time())
        self.server.call(lambda: self.desk.receive_all([incoming]))

    def station_game(self, board: str, game_id: int, players: list[str], seq: int,
                     winners: list[int] | None, scores: list[float]) -> None:
        """A station's game on ``board``: its header, then its result event."""
        self.hand_in(board, "game", {"game_id": game_id, "game": "manami", "setup": {},
                                     "board": board, "players": players})
        self.hand_in(board, "events", {"seq": seq, "game_id": game_id, "kind": "result",
                                       "board": board, "t": time.time(),
                                       "data": {"winners": winners, "scores": scores}})

    @property
    def t(self) -> Tournament:
        assert self.tdesk.tournament is not None
        return self.tdesk.tournament

    def result(self, table: int, round_number: int = 1) -> Result:
        result = self.t.rounds[round_number - 1].table(table).result
        assert result is not None
        return result

    def close(self) -> None:
        self.server.stop()
        self.tdesk.close()
        self.desk.ledger.close()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    running = App(tmp_path)
    try:
        yield running
    finally:
        running.close()


def test_every_action_needs_the_referee_login_and_the_csrf_token(app: App) -> None:
    nobody = Client(app.server.port)
    for action in ACTIONS:
        status, data = nobody.post(action, {"game": "manami"})
        assert (status, data["error"]) == (401, "log in as a referee first"), action
    referee = login(app.server.port)
    for action in ACTIONS:
        status, data = referee.post(action, {"game": "manami"}, csrf=False)
        assert (status, data["error"]) == (403, "missing or wrong CSRF token"), action
    assert app.tdesk.tournament is None                     # nothing was done
    assert nobody.get("/tournament/records.json").status == 401
    assert 'href="/tournament"' in nobody.get("/").text      # the overview links to it
    page = nobody.get("/tournament").text                   # the public page: no forms
    assert "No tournament yet" in page and "data-action" not in page


def test_a_round_through_the_api_with_clear_refusals(app: App, tmp_path: Path) -> None:
    referee = login(app.server.port)
    assert referee.post("players", {"names": "Ana"}) == (
        409, {"error": "no tournament yet: start one first"})
    status, data = referee.post("new", {"game": "chess"})
    assert status == 409 and "unknown game 'chess'" in data["error"]
    assert referee.post("new", b"{not json") == (400, {"error": "send a JSON object"})
    referee.ok("new", {"game": "manami", "seed": 3})
    status, data = referee.post("new", {"game": "manami"})
    assert status == 409 and "already running" in data["error"]

    status, data = referee.post("players", {"names": "Ana\n=SUM(A1)"})
    assert status == 409 and "formula" in data["error"]
    assert app.tdesk.tournament is not None and app.tdesk.tournament.players == ()  # all or none
    referee.ok("players", {"names": f"Ana, 1900\nBen\n{EVIL}\nDai, 1500\nEmeka"})
    status, data = referee.post("players", {"names": "ana"})
    assert status == 409 and "already entered" in data["error"]
    assert referee.post("players", {"names": 5})[0] == 400
    referee.ok("withdraw", {"player": "p5"})
    status, data = referee.post("withdraw", {"player": "p9"})
    assert status == 409 and "no player 'p9'" in data["error"]

    referee.ok("pair", {})
    t = app.tdesk.tournament
    assert t is not None and len(t.rounds) == 1
    tables = [p for p in t.rounds[0].pairings if not p.bye]
    assert len(tables) == 2 and all(len(p.seats) == 2 for p in tables)
    assert "p5" not in {pid for p in t.rounds[0].pairings for pid in p.seats}
    status, data = referee.post("boards", {"tables": {"1": "b1", "2": "b1"}})
    assert status == 409 and "board b1 is given to two tables" in data["error"]
    assert referee.post("boards", {"tables": ["b1"]}) == (
        400, {"error": 'send {"tables": {"1": "board-id", ...}}'})
    referee.ok("boards", {"tables": {"1": "b1", "2": "b2"}})

    # Table 1's station reports; table 2's station reports a game of other players.
    first = app.tdesk.tournament.rounds[0].table(1)
    names = [app.tdesk.tournament.player(pid).name for pid in first.seats]
    app.station_game("b1", 7, names, 1, [1], [2, 5])
    app.station_game("b2", 3, ["Zed", "Yan"], 1, [0], [4, 1])
    assert app.result(1).game_id == 7 and not app.result(1).confirmed
    assert app.t.rounds[0].table(2).result is None
    assert any("Zed, Yan" in n and "not taken" in n for n in app.tdesk.notices)
    assert {s["points"] for s in app.tdesk.as_json()["standings"]} == {0.0}  # not confirmed
    shown = referee.get("/tournament").text                  # the form shows seat 2 won
    form = re.search(r'id="correct-form-1-1".*?</form>', shown)
    assert form is not None
    assert re.search(rf'<span>{names[0]}</span> <input type="number" name="score-0"[^>]*'
                     rf'value="2">.*<span>{names[1]}</span> <input [^>]*value="5"', form[0])
    assert re.search(rf'id="win-1-1-2" data-winners="1" aria-pressed="true">{names[1]} won<',
                     form[0])
    assert 'id="win-1-1-1" data-winners="0" aria-pressed="false"' in form[0]
    assert 'id="draw-1-1" data-winners="" aria-pressed="false">Draw<' in form[0]

    status, data = referee.post("pair", {})
    assert status == 409 and "round 1 is not finished: table(s) 1, 2" in data["error"]
    status, data = referee.post("confirm", {"table": 2})
    assert status == 409 and "no reported result" in data["error"]
    assert referee.post("confirm", {"table": "two"}) == (
        400, {"error": "table is a whole number, not 'two'"})
    status, data = referee.post("confirm", {"table": 2, "scores": [1, 1], "winners": [5]})
    assert status == 409 and "the winners are seats 1 to 2" in data["error"]  # people's count
    referee.ok("confirm", {"table": 1})                       # as reported
    referee.ok("confirm", {"table": 2, "scores": [3, 3], "winners": []})  # ruled: a draw
    assert app.t.rounds[0].done and app.result(1).confirmed_by == "alice"
    ruling = app.desk.ledger.confirmation("b1", 7)             # the board's game ruled too
    assert ruling is not None and ruling["result"]["winners"] == [1]

    rows = list(csv.reader(io.StringIO(referee.get("/tournament/standings.csv").text)))
    assert rows[0][:4] == ["rank", "number", "name", "points"]
    by_name = {r[2]: r for r in rows[1:]}
    assert by_name[names[1]][3] == "1" and by_name[names[0]][3] == "0"
    assert by_name[EVIL][0]                                   # the name as typed, in CSV
    pairings = referee.get("/tournament/pairings.csv")
    assert pairings.headers["content-type"].startswith("text/csv")
    assert "confirmed" in pairings.text
    records = referee.get("/tournament/records.json").json()
    assert [(r["round"], r["table"], r["board"], r["game_id"]) for r in records] == [
        (1, 1, "b1", 7)]
    assert records[0]["seats"] == names and records[0]["record"]["confirmed"]

    page = referee.get("/tournament").text
    assert EVIL not in page and "&lt;img src=x" in page       # escaped everywhere
    assert 'id="pair"' in page and 'id="table-1-1"' in page
    live = referee.get(f"/tournament/live?v={app.tdesk.version}")
    assert live.status == 204                                 # nothing new: no body

    # The file holds it all: a restarted dashboard picks up where it stopped.
    path = tmp_path / "tournament.sqlite"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = TournamentDesk(app.desk, path)
    try:
        assert again.tournament == app.tdesk.tournament
    finally:
        again.close()


def test_contradictions_refused_late_corrections_warned_rulings_taken_back_and_shown(
        app: App) -> None:
    """Issue 33: "scores 3 5, winner seat 1" is refused with the rule; correcting round 1 after
    round 2 was paired names the round 2 tables it touches and waits for a second word; a
    ruling can be taken back; the page lists every ruling with who made it."""
    referee = login(app.server.port)
    referee.ok("new", {"game": "manami", "seed": 1})
    referee.ok("players", {"names": "Ana\nBen\nCai\nDai"})
    referee.ok("pair", {})
    status, data = referee.post("confirm", {"table": 1, "scores": [3, 5], "winners": [0]})
    assert status == 409 and "make seat 2 the winner, not seat 1" in data["error"]
    assert "most fruit wins" in data["error"] and app.t.rounds[0].table(1).result is None
    for table in (1, 2):
        referee.ok("confirm", {"table": table, "scores": [5, 3], "winners": [0]})
    referee.ok("pair", {})
    before = app.t
    status, data = referee.post("confirm", {"table": 1, "round": 1, "scores": [3, 5],
                                            "winners": [1]})
    assert status == 409 and data["late"] == [[2, 1], [2, 2]] and app.t == before
    assert "round 2 table 1, round 2 table 2" in data["error"]
    referee.ok("confirm", {"table": 1, "round": 1, "scores": [3, 5], "winners": [1],
                           "late": True})
    assert app.result(1).winners == (1,) and app.t.rounds[1] == before.rounds[1]
    assert referee.post("unconfirm", {"table": 2, "round": 1})[1]["late"]
    referee.ok("unconfirm", {"table": 2, "round": 1, "late": True})
    assert app.t.rounds[0].table(2).result is None               # entered by hand: gone
    status, data = referee.post("unconfirm", {"table": 2, "round": 1})
    assert status == 409 and "no confirmed result to take back" in data["error"]
    page = referee.get("/tournament").text
    trail = re.findall(r'<tr data-action="(\w+)"><td>[\d:]+</td><td>(\d)</td><td>(\d)</td>'
                       r"<td>alice</td><td>([^<]+)</td><td>([^<]+)</td>", page)
    assert trail == [("unconfirm", "1", "2", "taken back", "5 : 3"),
                     ("confirm", "1", "1", "confirmed (corrected)", "3 : 5"),
                     ("confirm", "1", "2", "confirmed (corrected)", "5 : 3"),
                     ("confirm", "1", "1", "confirmed (corrected)", "5 : 3")]
    assert 'id="unconfirm-1-1"' in page and 'id="unconfirm-1-2"' not in page


def test_taking_back_a_station_result_takes_back_its_boards_ruling(app: App) -> None:
    """The table's result came from b1's game 7: "Take back" leaves it waiting for a referee
    at the tournament and on the board's page alike (the ledger appends the take-back)."""
    referee = login(app.server.port)
    referee.ok("new", {"game": "manami"})
    referee.ok("players", {"names": "Ana\nBen"})
    referee.ok("pair", {})
    referee.ok("boards", {"tables": {"1": "b1"}})
    seated = [app.t.player(p).name for p in app.t.rounds[0].table(1).seats]
    app.station_game("b1", 7, seated, 1, [1], [2, 5])
    referee.ok("confirm", {"table": 1})
    assert app.desk.ledger.confirmation("b1", 7) is not None
    referee.ok("unconfirm", {"table": 1})
    assert app.result(1).game_id == 7 and not app.result(1).confirmed   # waits again
    assert app.desk.ledger.confirmation("b1", 7) is None
    assert ("b1", 7) not in app.desk.ledger.confirmations()
    assert app.server.call(lambda: app.desk.summary("b1", True))["confirmed"] is None
    referee.ok("confirm", {"table": 1})                         # and it can be ruled again
    ruling = app.desk.ledger.confirmation("b1", 7)
    assert ruling is not None and ruling["result"]["winners"] == [1]


def test_planned_rounds_a_half_point_bye_a_forfeit_and_the_crosstable(app: App) -> None:
    """Issue 33: a beginning and an end, through the API and the page."""
    referee = login(app.server.port)
    referee.ok("new", {"game": "manami", "seed": 1, "rounds": 1})
    referee.ok("players", {"names": "Ana\nBen\nCai\nDai\nEve"})
    page = referee.get("/tournament").text
    assert "not started" in page and "round 0" not in page
    referee.ok("halfbye", {"player": "p5"})
    assert referee.post("halfbye", {"player": "p5", "wanted": "yes"})[0] == 400
    referee.ok("pair", {})
    halves = [p for p in app.t.rounds[0].pairings if p.half]
    assert [p.seats for p in halves] == [("p5",)]
    status, data = referee.post("confirm", {"table": 1, "forfeit": True, "winners": [0, 1]})
    assert status == 409 and "the seat whose player came" in data["error"]
    referee.ok("confirm", {"table": 1, "forfeit": True, "winners": [1]})
    referee.ok("confirm", {"table": 2, "scores": [4, 4], "winners": []})
    status, data = referee.post("pair", {})
    assert status == 409 and "round 1 was the last of the 1 planned" in data["error"]
    page = referee.get("/tournament").text
    assert "Final standings" in page and 'id="pair"' not in page
    assert "round <span id=\"round-number\">1</span> of 1" in page
    assert "0-1 forfeit" in page and "\u00bd bye" in page
    first = app.t.rounds[0].table(1)
    came, absent = (app.t.number(pid) for pid in first.seats[::-1])
    assert re.search(f'id="cross-{came}">.*?<td>\\+{absent}</td>', page)
    assert re.search(f'id="cross-{absent}">.*?<td>-{came}</td>', page)
    assert re.search(r'id="cross-5">.*?<td>½ bye</td><td>0.5</td>', page)
    referee.ok("rounds", {"rounds": 2})                           # one more round after all
    assert 'id="pair"' in referee.get("/tournament").text
    status, data = referee.post("rounds", {"rounds": 0})
    assert status == 409 and "1 to 60 rounds" in data["error"]


def test_a_tables_status_comes_from_its_station(app: App) -> None:
    """Issue 33: an offline station's table said "playing"."""
    referee = login(app.server.port)
    referee.ok("new", {"game": "manami", "seed": 1})
    referee.ok("players", {"names": "Ana\nBen\nCai\nDai\nEve\nFay"})
    referee.ok("pair", {})
    referee.ok("boards", {"tables": {"1": "b1", "2": "b2", "3": "b3"}})
    app.hand_in("b1", "status", {"online": True, "board": "b1"})
    app.hand_in("b2", "status", {"online": False, "board": "b2"})   # its last will

    def statuses() -> list[str]:
        page = referee.get("/tournament").text
        return [re.search(f'id="table-1-{n}" data-status="([^"]+)"', page).group(1)  # type: ignore[union-attr]
                for n in (1, 2, 3)]
    assert statuses() == ["playing", "offline", "never connected"]
    app.hand_in("b2", "status", {"online": True, "board": "b2"})
    assert statuses()[1] == "playing"


def test_a_late_or_wrong_result_becomes_a_notice_not_a_crash(app: App) -> None:
    referee = login(app.server.port)
    referee.ok("new", {"game": "manami"})
    app.station_game("b1", 1, ["A", "B"], 1, [0], [1, 0])    # before any round: ignored
    referee.ok("players", {"names": "Ana\nBen"})
    referee.ok("pair", {})
    referee.ok("boards", {"tables": {"1": "b3"}})
    seated = [app.t.player(p).name for p in app.t.rounds[0].table(1).seats]
    app.station_game("b3", 4, seated, 1, None, [0, 0])       # ended without winners
    assert app.t.rounds[0].table(1).result is None
    assert "ended without winners or scores" in app.tdesk.notices[0]
    app.station_game("b3", 5, seated, 2, [0], [1.0, 0])        # a whole float is a score
    assert app.result(1).scores == (1, 0)
    ruled = request(app.server.port, "POST", "/api/board/b3/confirm", {"game_id": 5},
                    {"Cookie": referee.cookie, "X-CSRF-Token": referee.csrf})
    assert ruled.status == 200                                # ruled on the board's page ...
    assert app.result(1).confirmed_by == "alice"              # ... the table follows
    app.station_game("b3", 6, seated, 3, [1], [0, 1])       # after the referee confirmed
    assert "already has a confirmed result" in app.tdesk.notices[0]
    assert app.result(1).winners == (0,)
    page = referee.get("/tournament").text
    assert 'id="notices"' in page


def test_a_topple_round_seats_tables_and_counts_total_points(app: App) -> None:
    referee = login(app.server.port)
    referee.ok("new", {"game": "topple"})
    referee.ok("players", {"names": "\n".join(f"P{i}" for i in range(1, 8))})
    referee.ok("pair", {})
    tables = app.t.rounds[0].pairings
    assert sorted(len(p.seats) for p in tables) == [3, 4]      # 7 players: a 4 and a 3
    four = next(p for p in tables if len(p.seats) == 4)
    status, data = referee.post("confirm", {"table": four.table, "scores": [9, 4],
                                            "winners": [0]})
    assert status == 409 and "has 4 players: give 4 whole scores" in data["error"]
    for p in tables:                                          # no station: entered by hand
        scores = [10 + i for i in range(len(p.seats))]
        referee.ok("confirm", {"table": p.table, "scores": scores,
                               "winners": [len(p.seats) - 1]})
    lines = app.tdesk.as_json()["standings"]
    assert lines[0]["points"] == 13 and lines[0]["wins"] == 1  # the 4th seat's 13 points
    assert sorted(line["points"] for line in lines) == [10, 10, 11, 11, 12, 12, 13]
    page = referee.get("/tournament").text
    assert "Bh-1" not in page                                 # Topple: no Buchholz
    assert page.count('data-status="confirmed by alice (entered by hand)"') == 2


def test_the_add_players_box_reads_names_and_ratings() -> None:
    assert parse_entries("Ana, 1850\n\n  Ben  \nSmith, Jo\n") == [
        ("Ana", 1850), ("Ben", None), ("Smith, Jo", None)]
    with pytest.raises(ValueError, match="at least one name"):
        parse_entries("\n \n")


# -- the whole tournament in a browser ------------------------------------------------------------
PLAYERS = ["Ana", "Ben", "Chloé", "Dai", "Emeka", "Fatima", "Gus", "Hina", "Ivo", "Jun",
           "Kofi", "Lena", "Mia", "Noor", "Omar", EVIL]
STATIONS = [f"t{i:02d}" for i in range(8)]
ROUNDS = 4


def _play_to_the_end(sims: dict[str, SimStation], seats: dict[str, list[str]]) -> None:
    """Each board's station plays one game with the table's names in seat order."""
    for board, names in seats.items():
        sim = sims[board]
        sim.fixed_players = names
        sim.session = None
        finished = sim.games_finished
        while sim.games_finished == finished:
            sim.step()


def _station_result(sim: SimStation) -> tuple[int, list[int], list[int]]:
    """The last finished game's id, scores and winners, from the station's own store."""
    result = [g.result for g in sim.store.games() if g.result is not None][-1]
    row = [g for g in sim.store.games() if g.result is not None][-1]
    return row.id, list(result["scores"]), list(result["winners"])


def _status(driver: Any, element_id: str) -> str:
    """A row's ``data-status``, read in one go in the page (the live part is replaced as
    results come in, so an element found earlier may be gone)."""
    value: str | None = driver.execute_script(
        "const e = document.getElementById(arguments[0]);"
        "return e ? e.dataset.status : null;", element_id)
    return value or ""


def _click(driver: Any, element_id: str) -> None:
    """Click a button found afresh (a refresh between finding and clicking is retried)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    for _ in range(5):
        try:
            driver.find_element(By.ID, element_id).click()
            return
        except StaleElementReferenceException:
            time.sleep(0.05)
    raise AssertionError(f"#{element_id} kept being replaced")


def every_table(number: int, status: str) -> Callable[[Any], bool]:
    """A wait: every table of round ``number`` has this status on the page."""
    return lambda d: all(_status(d, f"table-{number}-{t}") == status for t in range(1, 9))


def one_table(number: int, table: int, status: str) -> Callable[[Any], bool]:
    return lambda d: _status(d, f"table-{number}-{table}").startswith(status)


def _page_standings(driver: Any) -> list[list[str]]:
    rows: list[list[str]] = driver.execute_script(
        "return Array.from(document.querySelectorAll('#standings tbody tr'))"
        ".map((r) => Array.from(r.children).map((c) => c.textContent));")
    return rows


def test_a_16_player_tournament_on_8_stations_from_the_referees_page(
        broker: Broker, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from pi_app.net.mqtt import PublisherConfig, start_publisher
    from pi_app.tournament.export import number_text

    started = time.monotonic()
    users = {"alice": hash_password(PASSWORD)}
    with running_dashboard(broker, tmp_path, referees=users) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        sims = {b: SimStation(tmp_path / "stations", b, seed=i, game="manami")
                for i, b in enumerate(STATIONS)}
        publishers = [start_publisher(s.feed, s.store, PublisherConfig(
            EVENT, b, broker.options(b), retry_min=0.1, retry_max=0.5)) for b, s in sims.items()]
        driver = chromium_driver(tmp_path / "chromium")
        port = dash.server.port

        def api() -> dict[str, Any]:
            data: dict[str, Any] = request(port, "GET", "/api/tournament").json()
            return data

        try:
            wait_for(lambda: set(STATIONS) <= set(dash.desk.boards), 15, "8 stations heard")
            wait = WebDriverWait(driver, 30, poll_frequency=0.05)
            driver.get(dash.server.url + "/login")
            driver.find_element(By.NAME, "username").send_keys("alice")
            driver.find_element(By.NAME, "password").send_keys(PASSWORD)
            driver.find_element(By.CSS_SELECTOR, "form button").click()
            wait.until(lambda d: d.find_elements(By.ID, "user"))
            driver.get(dash.server.url + "/tournament")
            driver.find_element(By.CSS_SELECTOR, "#new-game option[value=manami]").click()
            driver.find_element(By.ID, "new-tournament").click()
            wait.until(lambda d: d.find_elements(By.ID, "new-players"))
            driver.find_element(By.ID, "new-players").send_keys("\n".join(PLAYERS))
            driver.find_element(By.ID, "add-players").click()
            wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#players tbody tr"))
                       == 16)
            assert driver.execute_script("return window.__pwned === undefined")
            assert not driver.find_elements(By.CSS_SELECTOR, "#players img")  # text, not markup

            expected = director.add_players(director.new_tournament(EVENT, "manami"), PLAYERS)
            met: set[frozenset[str]] = set()
            for number in range(1, ROUNDS + 1):
                _click(driver, "pair")
                wait.until(every_table(number, "no board"))
                _click(driver, "assign")   # suggested: t00, t01, ... in order
                wait.until(every_table(number, "playing"))
                served = api()["tournament"]["rounds"][number - 1]["pairings"]
                expected = director.pair_next_round(expected)   # the same draw, recomputed
                assert [tuple(p["seats"]) for p in served] == [
                    p.seats for p in expected.rounds[-1].pairings]
                expected = director.assign_boards(expected, STATIONS)
                seats: dict[str, list[str]] = {}
                for p in served:
                    pair = frozenset(p["seats"])
                    assert pair not in met, f"{pair} met twice"
                    met.add(pair)
                    names = [expected.player(pid).name for pid in p["seats"]]
                    row = driver.execute_script(
                        "return document.getElementById(arguments[0]).textContent;",
                        f"table-{number}-{p['table']}")
                    assert " \u2013 ".join(f"{n} ({expected.number(pid)})" for n, pid in
                                            zip(names, p["seats"], strict=True)) in row
                    seats[p["board"]] = names
                _play_to_the_end(sims, seats)
                wait.until(every_table(number, "to confirm"))
                for table in range(1, 9):
                    board = STATIONS[table - 1]
                    game_id, scores, winners = _station_result(sims[board])
                    expected = director.report_result(expected, board, game_id, scores, winners)
                    if number == 2 and table == 1:            # the referee corrects one
                        form = driver.find_element(By.ID, f"correct-form-{number}-{table}")
                        # the other seat won: scores and winner change together (issue 33)
                        if len(winners) == 1:
                            scores, winners = scores[::-1], [1 - winners[0]]
                        else:
                            scores, winners = [scores[0] + 1, scores[1]], [0]
                        for seat, value in enumerate(scores):  # a field per seat
                            field = form.find_element(By.NAME, f"score-{seat}")
                            field.clear()                     # it shows the reported result
                            field.send_keys(str(value))
                        _click(driver, f"win-{number}-{table}-{winners[0] + 1}")
                        expected = director.confirm_result(expected, table, "alice",
                                                           scores=scores, winners=winners)
                    else:
                        _click(driver, f"confirm-{number}-{table}")
                        expected = director.confirm_result(expected, table, "alice")
                    wait.until(one_table(number, table, "confirmed by alice"))
                assert driver.find_element(By.ID, "round-number").text == str(number)

            assert len(met) == ROUNDS * 8                      # no pair met twice
            served_tournament = api()["tournament"]
            corrected = served_tournament["rounds"][1]["pairings"][0]["result"]
            assert corrected["corrected"] is True
            page = _page_standings(driver)
            want = [[str(s.rank), str(s.number), s.name, number_text(s.points),
                     number_text(s.buchholz_cut1), number_text(s.buchholz),
                     number_text(s.sonneborn_berger), str(s.wins), str(s.draws), str(s.losses),
                     str(s.games), ""] for s in standings(expected)]
            assert page == want
            assert sum(float(r[3]) for r in page) == ROUNDS * 8   # one point a game

            download: dict[str, Any] = driver.execute_async_script(
                "const done = arguments[0];"
                "fetch('/tournament/standings.csv', {credentials: 'same-origin'})"
                ".then(async (r) => done({status: r.status, text: await r.text(),"
                " disposition: r.headers.get('content-disposition')}));")
            assert download["status"] == 200 and "attachment" in download["disposition"]
            rows = list(csv.reader(io.StringIO(download["text"])))
            assert [r[2] for r in rows[1:]] == [s.name for s in standings(expected)]
            assert driver.find_element(By.ID, "standings-csv").get_attribute("download") \
                is not None
        finally:
            driver.quit()
            for publisher in publishers:
                publisher.stop()
            for sim in sims.values():
                sim.close()
    assert time.monotonic() - started < 90


def test_a_result_and_a_ruling_read_their_winners_and_scores_alike(app: App) -> None:
    """A station's result and a referee's ruling of it go through one reading (whole-float
    scores are the tournament's whole numbers; no winners or no scores is a notice)."""
    referee = login(app.server.port)
    referee.ok("new", {"game": "manami"})
    referee.ok("players", {"names": "Ana\nBen"})
    referee.ok("pair", {})
    referee.ok("boards", {"tables": {"1": "b2"}})
    seated = [app.t.player(p).name for p in app.t.rounds[0].table(1).seats]
    app.station_game("b2", 7, seated, 1, [1], [2.0, 5.0])
    assert app.result(1).scores == (2, 5) and not app.result(1).confirmed
    app.server.call(lambda: app.tdesk.on_ruling("b2", 7, {"result": {"winners": [0]}}))
    assert "the ruling has no winners or scores" in app.tdesk.notices[0]
    app.server.call(lambda: app.tdesk.on_ruling(
        "b2", 7, {"referee": "bob", "result": {"winners": [0], "scores": [6.0, 5.0]}}))
    assert (app.result(1).scores, app.result(1).winners) == ((6, 5), (0,))
    assert app.result(1).confirmed_by == "bob"
