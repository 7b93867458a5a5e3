"""The station page and the dashboard over HTTP: live updates, PIN and login, escaping, secrets."""

from __future__ import annotations

import http.client
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import ServerThread, request

from pi_app.json_types import JSON
from pi_app.net import topics
from pi_app.net.auth import Brake, hash_password
from pi_app.net.dashboard_app import COOKIE, create_dashboard_app
from pi_app.net.desk import Desk, Incoming
from pi_app.net.ledger import Ledger
from pi_app.net.simstation import SimStation
from pi_app.net.web import create_station_app
from pi_app.referee.feed import ActionError

pytestmark = pytest.mark.realtime

EVIL = "<script>alert('x')//"  # a name fits NAME_MAX (24): longer ones are refused whole
PIN = "2468"


@pytest.fixture
def station(tmp_path: Path) -> Iterator[tuple[SimStation, ServerThread, list[JSON]]]:
    sim = SimStation(tmp_path, "table-1", seed=0, game="topple", players=[EVIL, "Ben"])
    calls: list[JSON] = []

    async def undo(**args: Any) -> JSON:
        calls.append({"undo": args})
        return {"undone": True}

    async def override(**args: Any) -> JSON:
        raise ActionError("that move is not legal here")

    sim.feed.handle("undo", undo)
    sim.feed.handle("override", override)
    server = ServerThread(create_station_app(sim.feed, token=PIN,
                                             brake=Brake(free=5))).start()
    server.call(sim.new_game)
    try:
        yield sim, server, calls
    finally:
        server.stop()
        sim.close()


def test_station_page_escapes_names_and_hides_secret_cards(
        station: tuple[SimStation, ServerThread, list[JSON]]) -> None:
    _, server, _ = station
    page = request(server.port, "GET", "/")
    assert page.status == 200
    assert EVIL not in page.text and "&lt;script&gt;alert(" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "<svg" in page.text and 'data-cell="s1"' in page.text
    state = request(server.port, "GET", "/api/state").json()
    assert state["snapshot"]["players"][0] == EVIL              # JSON carries it as data
    assert "record" not in state["snapshot"] and "cards" not in json.dumps(state)
    # The JSON embedded in the page cannot close its <script> element.
    embedded = re.search(r'id="initial">(.*?)</script>', page.text, re.S)
    assert embedded is not None and "</script" not in embedded.group(1)


def test_station_actions_need_the_pin(station: tuple[SimStation, ServerThread,
                                                     list[JSON]]) -> None:
    _, server, calls = station
    assert request(server.port, "POST", "/api/action/undo", {}).status == 401
    assert request(server.port, "POST", "/api/action/undo", {},
                   {"Authorization": "Bearer 1357"}).status == 403
    ok = request(server.port, "POST", "/api/action/undo", {}, {"Authorization": f"Bearer {PIN}"})
    assert ok.status == 200 and ok.json()["result"] == {"undone": True}
    assert calls == [{"undo": {}}]
    refused = request(server.port, "POST", "/api/action/override", {"text": "toast"},
                      {"X-Station-Token": PIN})
    assert refused.status == 409 and "not legal" in refused.json()["error"]
    assert request(server.port, "POST", "/api/action/reboot", {},
                   {"X-Station-Token": PIN}).status == 404
    for _ in range(5):
        request(server.port, "POST", "/api/action/undo", {}, {"X-Station-Token": "0000"})
    braked = request(server.port, "POST", "/api/action/undo", {}, {"X-Station-Token": PIN})
    assert braked.status == 429                                 # even the right PIN waits now
    assert request(server.port, "GET", "/api/action/undo").status == 405


def _sse_events(conn: http.client.HTTPResponse, count: int, timeout: float) -> list[JSON]:
    out: list[JSON] = []
    deadline = time.monotonic() + timeout
    data = ""
    while len(out) < count and time.monotonic() < deadline:
        line = conn.readline().decode()
        if line.startswith("data: "):
            data = line[6:]
        elif line == "\n" and data:
            out.append(json.loads(data))
            data = ""
    return out


def test_station_stream_shows_each_move(station: tuple[SimStation, ServerThread,
                                                       list[JSON]]) -> None:
    sim, server, _ = station
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", "/api/stream")
        reply = conn.getresponse()
        assert reply.headers["content-type"].startswith("text/event-stream")
        first = _sse_events(reply, 1, 5)[0]
        assert first["snapshot"]["moves"] == []
        server.call(sim.step)
        moved = _sse_events(reply, 1, 5)[0]
        assert len(moved["snapshot"]["moves"]) == 1 and "<svg" in moved["svg"]
    finally:
        conn.close()


# -- the dashboard without a broker: messages go straight into the desk ------------------------
def _message(board: str, leaf: str, payload: JSON, mid: int = 0) -> Incoming:
    return Incoming(topics.topic("cup", board, leaf), topics.encode(payload), mid, 1, 1,
                    time.time())


@pytest.fixture
def desk_server(tmp_path: Path) -> Iterator[tuple[Desk, ServerThread]]:
    desk = Desk(Ledger(tmp_path / "ref.sqlite"), "cup")
    users = {"alice": hash_password("correct horse", iterations=1000)}
    server = ServerThread(create_dashboard_app(desk, users=users, secret=b"k" * 32)).start()
    try:
        yield desk, server
    finally:
        server.stop()
        desk.ledger.close()


def _feed_game(desk: Desk, server: ServerThread, tmp_path: Path, game: str,
               steps: int) -> SimStation:
    """A simulated station's messages, delivered to the desk as the subscriber would."""
    sim = SimStation(tmp_path / game, f"b-{game}", seed=1, game=game, players=[EVIL, "Ben"])
    sim.new_game()
    messages: list[Incoming] = []

    def grab(kind: str, payload: JSON) -> None:
        if kind == "event":
            messages.append(_message(sim.board, "events", topics.event_payload(sim.board,
                                                                               payload)))
        else:
            messages.append(_message(sim.board, "state",
                                     {k: v for k, v in payload.items() if k != "record"}))
            messages.append(_message(sim.board, "record", {**payload["record"],
                                     "station_game_id": payload["game_id"]}))

    sim.feed.listen(grab)
    row = sim.store.games()[-1]
    messages.append(_message(sim.board, "game", {"game_id": row.id, "game": row.game,
                                                 "setup": row.setup, "players": row.players}))
    for _ in range(steps):
        sim.step()
    messages.append(_message(sim.board, "status", {"online": True}))
    server.call(lambda: desk.receive_all(messages))
    return sim


def _login(server: ServerThread, password: str = "correct horse") -> tuple[int, str]:
    reply = request(server.port, "POST", "/login",
                    f"username=alice&password={password.replace(' ', '+')}",
                    {"Content-Type": "application/x-www-form-urlencoded"})
    cookie = reply.headers.get("set-cookie", "")
    return reply.status, cookie.split(";")[0]


def test_dashboard_login_confirm_and_export(desk_server: tuple[Desk, ServerThread],
                                            tmp_path: Path) -> None:
    desk, server = desk_server
    sim = _feed_game(desk, server, tmp_path, "manami", 400)    # a whole game, ended
    assert sim.games_finished >= 1
    board = sim.board
    assert _login(server, "wrong")[0] == 401
    status, cookie = _login(server)
    assert status == 303 and cookie.startswith(f"{COOKIE}=")
    page = request(server.port, "GET", f"/board/{board}", headers={"Cookie": cookie})
    found = re.search(r'<meta name="csrf" content="([^"]+)"', page.text)
    assert found is not None
    csrf = found.group(1)
    game_id = sim.store.games()[0].id
    body = {"game_id": game_id}
    path = f"/api/board/{board}/confirm"
    assert request(server.port, "POST", path, body).status == 401
    assert request(server.port, "POST", path, body, {"Cookie": cookie}).status == 403
    assert request(server.port, "POST", path, body,
                   {"Cookie": cookie, "X-CSRF-Token": "x" * 43}).status == 403
    forged = cookie[:-3] + ("AAA" if not cookie.endswith("AAA") else "BBB")
    assert request(server.port, "POST", path, body,
                   {"Cookie": forged, "X-CSRF-Token": csrf}).status == 401
    ok = request(server.port, "POST", path, body, {"Cookie": cookie, "X-CSRF-Token": csrf})
    assert ok.status == 200, ok.text
    assert ok.json()["ruling"]["referee"] == "alice"
    ruled = request(server.port, "POST", path, {"game_id": game_id, "winners": [1],
                                                "note": "board bumped"},
                    {"Cookie": cookie, "X-CSRF-Token": csrf}).json()["ruling"]
    assert ruled["result"]["winners"] == [1] and ruled["result"]["corrected"] in (True, False)

    assert request(server.port, "GET", "/export.json").status == 401
    export = request(server.port, "GET", "/export.json", headers={"Cookie": cookie})
    assert export.status == 200 and "attachment" in export.headers["content-disposition"]
    records = export.json()
    first = next(r for r in records if r["station_game_id"] == game_id)
    own = sim.export()[0]
    assert first["moves"] == own["moves"] and first["villages"] == own["villages"]
    assert first["confirmed"]["result"]["winners"] == [1]
    assert first["confirmed"]["note"] == "board bumped"
    assert first["reported"] is not None


def test_dashboard_escapes_names_and_hides_ranks_from_the_public(
        desk_server: tuple[Desk, ServerThread], tmp_path: Path) -> None:
    desk, server = desk_server
    sim = _feed_game(desk, server, tmp_path, "tactiki", 6)
    for path in ("/", f"/board/{sim.board}"):
        page = request(server.port, "GET", path)
        assert page.status == 200
        assert EVIL not in page.text and "&lt;script&gt;" in page.text
    public = request(server.port, "GET", f"/api/board/{sim.board}").json()
    text = json.dumps({k: public[k] for k in ("view", "moves_list", "svg", "events_tail")})
    assert not re.search(r"\b[TC][1-5]\b", text), "a hidden rank leaked"
    assert public.get("record") is None
    _, cookie = _login(server)
    full = request(server.port, "GET", f"/api/board/{sim.board}",
                   headers={"Cookie": cookie}).json()
    assert re.search(r"\b[TC][1-5]\b", json.dumps(full["view"]))
    assert full["record"]["setup"]


def test_desk_drops_repeats_and_reports_gaps(tmp_path: Path) -> None:
    desk = Desk(Ledger(tmp_path / "d.sqlite"), "cup")

    def event(seq: int) -> Incoming:
        return _message("t1", "events", {"board": "t1", "seq": seq, "game_id": 1, "n": seq,
                                         "t": time.time(), "kind": "move",
                                         "data": {"text": f"m{seq}"}})

    desk.receive_all([event(1), event(2), event(2), event(1), event(3)])
    assert [e["seq"] for e in desk.ledger.events("t1")] == [1, 2, 3]
    assert desk.counts["duplicates"] == 2 and desk.counts.get("gaps", 0) == 0
    desk.receive_all([event(6)])
    assert desk.counts["gaps"] == 1
    assert desk.ledger.gaps()[0]["first"] == 4 and desk.ledger.gaps()[0]["last"] == 5
    desk.ledger.close()
    again = Desk(Ledger(tmp_path / "d.sqlite"), "cup")        # a restarted dashboard
    again.receive_all([event(6), event(7)])
    assert [e["seq"] for e in again.ledger.events("t1")] == [1, 2, 3, 6, 7]
    again.ledger.close()
