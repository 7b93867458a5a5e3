"""The referee dashboard and the tournament broker against hostile or broken peers.

Each test is one finding of the security review (issue 15) or the status contract (issue 16),
checked against the real thing: a real mosquitto with the files ``write_broker_config`` writes,
a real station (``referee.station.Station``) publishing through it, the dashboard served by
uvicorn over HTTP, its SQLite ledger on disk.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from net_fixtures import (
    EVENT,
    REFEREE,
    Broker,
    ServerThread,
    broker,
    request,
    running_dashboard,
    wait_for,
)
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from pi_app.board.equipment import registry_for
from pi_app.board.follower import GuidanceKind
from pi_app.net import topics
from pi_app.net.auth import Brake, CookieSigner, hash_password, verify_password
from pi_app.net.broker import (
    MAX_PACKET,
    MAX_PAYLOAD,
    BrokerProcess,
    TlsFiles,
    free_port,
    wait_connectable,
    write_broker_config,
)
from pi_app.net.dashboard import ConfigError, load_config
from pi_app.net.dashboard import main as referee_main
from pi_app.net.dashboard_app import create_dashboard_app
from pi_app.net.desk import SHOWN_AS, Desk, Incoming
from pi_app.net.ledger import Ledger
from pi_app.net.limits import StreamCap
from pi_app.net.mqtt import BrokerOptions, PublisherConfig, new_client, start_publisher
from pi_app.net.simstation import SimStation
from pi_app.readings import PresenceChanged, TagsSeen
from pi_app.referee.config import Config, parse_config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.feed import Phase, StationStatus
from pi_app.referee.feedback import PHASES
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore

pytestmark = pytest.mark.realtime

__all__ = ["broker"]
PASSWORD = "correct horse"


# -- helpers ---------------------------------------------------------------------------------------
class Peer:
    """A raw MQTT client as ``user`` under a chosen client id: what it was given, what it got."""

    def __init__(self, broker: Broker, user: str, client_id: str, *,
                 clean_start: bool = False, subscribe: str | None = None) -> None:
        self.messages: list[str] = []
        self.session_present: bool | None = None
        self.refused: str | None = None
        self.connected = threading.Event()
        self.client = new_client(client_id, broker.options(user))
        self.client.on_connect = self._connected
        self.client.on_message = lambda _c, _u, m: self.messages.append(m.topic)
        self.subscribe = subscribe
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = 3600
        self.client.connect("127.0.0.1", broker.port, clean_start=clean_start,
                            properties=props)
        self.client.loop_start()

    def _connected(self, client: mqtt.Client, _u: object, flags: mqtt.ConnectFlags,
                   rc: ReasonCode, _p: Properties | None) -> None:
        if rc.is_failure:
            self.refused = str(rc)
            return
        if self.session_present is None:
            self.session_present = flags.session_present
        if self.subscribe:
            client.subscribe(self.subscribe, qos=1)
        self.connected.set()

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def publish_once(broker: Broker, user: str, topic: str, payload: bytes, *,
                 retain: bool = False) -> tuple[int | None, str]:
    """One QoS 1 publish as ``user``: the PUBACK reason code (None: no PUBACK) and any error."""
    acks: list[int] = []
    gone: list[str] = []
    client = new_client(f"{user}-{os.urandom(3).hex()}", broker.options(user))
    client.on_publish = lambda _c, _u, _m, rc, _p: acks.append(rc.value)
    client.on_disconnect = lambda _c, _u, _f, rc, _p: gone.append(str(rc))
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        wait_for(client.is_connected, 5, "the connection")
        info = client.publish(topic, payload, qos=1, retain=retain)
        error = "" if info.rc == mqtt.MQTT_ERR_SUCCESS else mqtt.error_string(info.rc)
        if not error:
            wait_for(lambda: bool(acks or gone), 5, "a PUBACK or a disconnect")
    finally:
        client.disconnect()
        client.loop_stop()
    return (acks[0] if acks else None), error or ";".join(gone)


def real_station(tmp_path: Path, board: str) -> Station:
    """The real referee station on a simulated clock (driven as tests/test_referee.py does)."""
    config = Config(station=replace(StationConfig(), board=board, game="topple", seed=1,
                                    topple_cards="deal", data_dir=str(tmp_path)))
    return Station(config, EventStore(tmp_path / f"{board}.db"), registry_for("topple"),
                   clock=lambda: 0.0)


def lay_out(station: Station, t: float) -> None:
    view = station.session.game.expected_view(station.session.state)
    for cell in station.geometry.cells:
        names = view.get(cell.name, ())
        uids = [u for n in names for u in station.registry.uids_of(n)][:len(names)]
        if cell.reader is not None:
            station.step(TagsSeen(t, cell.reader, frozenset(uids)), t)
        if cell.presence is not None:
            station.step(PresenceChanged(t, cell.presence, bool(names)), t)


def row_status(port: int, board: str) -> str | None:
    rows = request(port, "GET", "/api/boards").json()
    return next((r["status"] for r in rows if r["board"] == board), None)


@pytest.fixture
def desk_app(tmp_path: Path) -> Iterator[tuple[Desk, ServerThread]]:
    """The dashboard's web app over a real ledger, without MQTT (messages handed in)."""
    desk = Desk(Ledger(tmp_path / "referee.sqlite"), EVENT)
    app = create_dashboard_app(desk, users={"alice": hash_password(PASSWORD)},
                               secret=os.urandom(32), brake=Brake(free=5),
                               streams=StreamCap(per_client=2, total=3))
    server = ServerThread(app).start()
    try:
        yield desk, server
    finally:
        server.stop()
        desk.ledger.close()


def message(board: str, leaf: str, payload: Any) -> Incoming:
    return Incoming(topics.topic(EVENT, board, leaf), json.dumps(payload).encode(), 0, 0, 0,
                    time.time())


def login(port: int, password: str = PASSWORD, timeout: float = 5.0) -> tuple[int, str]:
    reply = request(port, "POST", "/login",
                    f"username=alice&password={password.replace(' ', '+')}",
                    {"Content-Type": "application/x-www-form-urlencoded"}, timeout=timeout)
    return reply.status, reply.headers.get("set-cookie", "").split(";")[0]


# -- 1. nobody takes the dashboard's session -------------------------------------------------------
def test_a_station_cannot_take_the_dashboards_client_id_nor_its_queue(
        broker: Broker, tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        # Board t03's credentials (on every table) under each id the dashboard may use.
        intruders = [Peer(broker, user, cid, subscribe=f"tiki/{EVENT}/#")
                     for user, cid in (("t03", REFEREE), ("t02", f"tiki-referee-{EVENT}"))]
        station = SimStation(tmp_path / "s", "t04", seed=4)
        publisher = start_publisher(station.feed, station.store, PublisherConfig(
            EVENT, "t04", broker.options("t04"), retry_min=0.1, retry_max=0.3))
        try:
            for peer in intruders:
                assert peer.connected.wait(5), peer.refused
            for _ in range(12):
                station.step()
                time.sleep(0.05)
            assert publisher.wait_idle(10)
            last = station.events()[-1].id
            wait_for(lambda: dash.desk.boards.get("t04") is not None
                     and dash.desk.boards["t04"].last_seq == last, 10, "every event")
            got = dash.call(lambda: dash.desk.ledger.events("t04"))
            assert [e["seq"] for e in got] == [e.id for e in station.events()]
            assert dash.call(dash.desk.stats)["counts"].get("gaps", 0) == 0
            for peer in intruders:
                assert peer.session_present is False      # not the dashboard's session
                assert peer.messages == []                # and nothing of its queue
        finally:
            for peer in intruders:
                peer.stop()
            publisher.stop()
            station.close()


# -- 4. one status contract, through a real station ------------------------------------------------
def test_every_station_status_has_its_board_status() -> None:
    assert set(SHOWN_AS) == set(StationStatus)
    for phase in PHASES:
        assert isinstance(StationStatus.of_phase(phase), StationStatus)
    assert StationStatus.of_phase(Phase.PLAY) == "playing"
    assert StationStatus.of_phase(Phase.PLAY, GuidanceKind.MISMATCH) == "mismatch"


def test_a_real_station_shows_playing_then_mismatch_on_the_dashboard(
        broker: Broker, tmp_path: Path) -> None:
    station = real_station(tmp_path, "t10")
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        publisher = start_publisher(station.feed, station.store, PublisherConfig(
            EVENT, "t10", broker.options("t10")))
        port = dash.server.port
        try:
            lay_out(station, 1.0)
            station.step(None, 2.0)
            assert publisher.wait_idle(10)
            wait_for(lambda: row_status(port, "t10") == "playing", 10, "t10 playing")
            assert 'id="row-t10"' in request(port, "GET", "/").text
            s4 = station.geometry.cell("s4")
            assert s4.reader is not None and s4.presence is not None
            station.step(TagsSeen(3.0, s4.reader, frozenset()), 3.0)   # a tiki knocked off
            station.step(PresenceChanged(3.0, s4.presence, False), 3.0)
            for t in (3.5, 4.5, 5.5, 7.0):
                station.step(None, t)
            assert publisher.wait_idle(10)
            wait_for(lambda: row_status(port, "t10") == "mismatch", 10, "t10 mismatch")
            page = request(port, "GET", "/").text
            assert 'class="badge s-mismatch">mismatch' in page
            detail = request(port, "GET", "/api/board/t10").json()
            assert detail["station_status"] == "mismatch" and detail["guidance"]
        finally:
            publisher.stop()
            station.store.close()


# -- 3. a wrongly typed payload is dropped and counted ---------------------------------------------
def test_a_wrongly_typed_state_is_dropped_and_counted_not_a_500(
        broker: Broker, tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        good = SimStation(tmp_path / "g", "t06", seed=6)
        publisher = start_publisher(good.feed, good.store, PublisherConfig(
            EVENT, "t06", broker.options("t06")))
        try:
            good.step()
            good.step()
            assert publisher.wait_idle(10)
            bad_state = topics.encode({"board": "t07", "status": "playing", "moves": 5})
            assert publish_once(broker, "t07", topics.topic(EVENT, "t07", "state"),
                                bad_state)[0] == 0
            bad_event = topics.encode({"board": "t07", "seq": "one", "game_id": 1,
                                       "kind": "move", "data": {}})
            publish_once(broker, "t07", topics.topic(EVENT, "t07", "events"), bad_event)
            wait_for(lambda: dash.desk.boards.get("t07") is not None
                     and dash.desk.boards["t07"].malformed == 2, 10, "both counted")
            port = dash.server.port
            assert request(port, "GET", "/").status == 200
            rows = request(port, "GET", "/api/boards")
            assert rows.status == 200
            row = next(r for r in rows.json() if r["board"] == "t07")
            assert row["malformed"] == 2 and row["problem"] is None   # the reason: referees
            assert "seq" in (dash.desk.boards["t07"].problem or "")
            assert next(r for r in rows.json() if r["board"] == "t06")["status"] == "playing"
            stats = request(port, "GET", "/api/stats").json()
            assert stats["malformed"] == {"t07": 2}
            assert request(port, "GET", "/api/board/t07").status == 200
            assert "malformed 2" in request(port, "GET", "/").text
        finally:
            publisher.stop()
            good.close()


def test_a_bad_row_in_the_ledger_neither_breaks_a_restart_nor_the_export(
        tmp_path: Path) -> None:
    path = tmp_path / "referee.sqlite"
    desk = Desk(Ledger(path), EVENT)
    sim = SimStation(tmp_path / "s", "t08", seed=8, game="manami")
    sim.new_game()
    row = sim.store.games()[-1]
    messages = [message("t08", "game", {"board": "t08", "game_id": row.id, "game": row.game,
                                        "setup": row.setup, "players": row.players})]
    sim.feed.listen(lambda kind, p: messages.append(
        message("t08", "events", topics.event_payload("t08", p))) if kind == "event" else None)
    for _ in range(6):
        sim.step()
    desk.receive_all(messages)
    desk.ledger.close()
    # What an older dashboard (no schema) stored, or a hand edit: a bad state, a move with
    # no text, a row whose data is not JSON.
    db = sqlite3.connect(path)
    db.execute("INSERT OR REPLACE INTO latest VALUES ('t08', 'state', ?, 0)",
               (json.dumps({"status": "playing", "moves": 5}),))
    db.execute("UPDATE events SET data = ? WHERE board = 't08' AND seq = 3",
               (json.dumps({"txt": "x"}),))
    db.execute("UPDATE events SET data = 'not json' WHERE board = 't08' AND seq = 4")
    db.commit()
    db.close()

    again = Desk(Ledger(path), EVENT)
    app = create_dashboard_app(again, users={"alice": hash_password(PASSWORD)},
                               secret=os.urandom(32))
    server = ServerThread(app).start()
    try:
        assert request(server.port, "GET", "/").status == 200
        assert request(server.port, "GET", "/api/boards").json()[0]["malformed"] == 1
        _, cookie = login(server.port)
        export = request(server.port, "GET", "/export.json", headers={"Cookie": cookie})
        assert export.status == 200
        (record,) = export.json()
        assert any("event 3 (move)" in p for p in record["problems"])
        assert any("event 4 (move)" in p for p in record["problems"])
        kept = [e.data["text"] for e in sim.events() if e.kind == "move" and e.id not in (3, 4)]
        assert record["moves"] == kept
    finally:
        server.stop()
        again.ledger.close()
        sim.close()


# -- 2. login: the brake holds before the body, the hash runs off the loop
def test_thirty_slow_logins_get_five_tries(desk_app: tuple[Desk, ServerThread]) -> None:
    _, server = desk_app
    body = b"username=alice&password=wrong-guess"
    socks = []
    for _ in range(30):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        sock.sendall(b"POST /login HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/x-www-form-urlencoded\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:5])
        socks.append(sock)
    time.sleep(0.5)               # every request is in, its body not yet complete
    for sock in socks:
        with contextlib.suppress(OSError):    # already answered (429) and closed
            sock.sendall(body[5:])
    codes = []
    for sock in socks:
        reply = sock.recv(200)
        codes.append(int(reply.split()[1]))
        sock.close()
    assert codes.count(401) <= 5 and codes.count(429) >= 25, codes


def test_a_login_hash_does_not_stall_other_requests(tmp_path: Path) -> None:
    slow = hash_password(PASSWORD, iterations=4_000_000)   # about a second of PBKDF2
    began = time.monotonic()
    verify_password("wrong", slow)
    hashing = time.monotonic() - began
    desk = Desk(Ledger(tmp_path / "r.sqlite"), EVENT)
    server = ServerThread(create_dashboard_app(desk, users={"alice": slow},
                                               secret=os.urandom(32))).start()
    try:
        refused: list[int] = []
        # (as long as the hash takes on a busy machine: the figure is relative to ``hashing``)
        thread = threading.Thread(target=lambda: refused.append(
            login(server.port, "wrong", timeout=60)[0]))
        thread.start()
        time.sleep(min(0.15, hashing / 4))    # the login's hash is running now
        asked = time.monotonic()
        assert request(server.port, "GET", "/api/stats").status == 200
        answered = time.monotonic() - asked
        thread.join(90)
        assert answered < hashing / 3, (hashing, answered)
        assert refused == [401]
    finally:
        server.stop()
        desk.ledger.close()


def test_a_login_body_that_is_not_utf8_is_a_400(desk_app: tuple[Desk, ServerThread]) -> None:
    _, server = desk_app
    reply = request(server.port, "POST", "/login", b"username=\xff\xfe&password=\xc3",
                    {"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status == 400
    assert request(server.port, "POST", "/logout", b"csrf=\xff").status == 400


# -- 5. an empty cookie key stops the start --------------------------------------------------------
@pytest.mark.parametrize("key", ["", "   \n", "abcd", "zz" * 32])
def test_an_empty_or_short_cookie_key_refuses_to_start(tmp_path: Path, key: str,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    (tmp_path / "cookie.key").write_text(key)
    config = tmp_path / "referee.toml"
    config.write_text('event = "cup"\n[broker]\npassword = "x"\n[web]\n'
                      'secret_file = "cookie.key"\n')
    with pytest.raises(ConfigError, match="cookie key"):
        load_config(config)
    assert referee_main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "cookie key" in err and "Traceback" not in err
    with pytest.raises(ValueError, match="signing key"):
        CookieSigner(b"")
    (tmp_path / "cookie.key").unlink()         # the recovery the message names
    assert len(load_config(config).secret) == 32


# -- 6. log-out ends the session ------------------------------------------------------------------
def test_a_cookie_is_dead_after_logout_even_after_a_restart(tmp_path: Path) -> None:
    secret = os.urandom(32)
    users = {"alice": hash_password(PASSWORD)}
    desk = Desk(Ledger(tmp_path / "r.sqlite"), EVENT)
    server = ServerThread(create_dashboard_app(desk, users=users, secret=secret)).start()
    try:
        status, cookie = login(server.port)
        assert status == 303
        other_status, other = login(server.port)      # the same referee on a second device
        page = request(server.port, "GET", "/", headers={"Cookie": cookie}).text
        csrf = page.split('name="csrf" content="')[1].split('"')[0]
        assert request(server.port, "GET", "/export.json",
                       headers={"Cookie": cookie}).status == 200
        out = request(server.port, "POST", "/logout", f"csrf={csrf}",
                      {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
        assert out.status == 303
        assert request(server.port, "GET", "/export.json",
                       headers={"Cookie": cookie}).status == 401
        assert request(server.port, "GET", "/export.json",
                       headers={"Cookie": other}).status == 200   # only that session ended
    finally:
        server.stop()
        desk.ledger.close()
    desk = Desk(Ledger(tmp_path / "r.sqlite"), EVENT)
    server = ServerThread(create_dashboard_app(desk, users=users, secret=secret)).start()
    try:
        assert request(server.port, "GET", "/export.json",
                       headers={"Cookie": cookie}).status == 401
        assert request(server.port, "GET", "/export.json",
                       headers={"Cookie": other}).status == 200
    finally:
        server.stop()
        desk.ledger.close()
    assert other_status == 303


# -- 7. limits: body, live streams, MQTT message size ---------------------------------------------
def test_a_huge_request_body_is_refused_before_it_is_read(
        desk_app: tuple[Desk, ServerThread]) -> None:
    _, server = desk_app
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    sock.sendall(b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 150000000\r\n"
                 b"Content-Type: application/x-www-form-urlencoded\r\n\r\n" + b"a" * 1000)
    reply = sock.recv(200)
    sock.close()
    assert reply.startswith(b"HTTP/1.1 413"), reply
    chunked = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    chunked.sendall(b"POST /logout HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    try:
        for _ in range(100):
            chunked.sendall(b"4000\r\n" + b"a" * 0x4000 + b"\r\n")
    except OSError:
        pass                                    # the server stopped reading: fine
    assert chunked.recv(200).startswith(b"HTTP/1.1 413")
    chunked.close()


def _open_stream(port: int, source: str, path: str = "/api/stream") -> tuple[socket.socket, int]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return sock, int(sock.recv(100).split()[1])


def test_live_streams_are_capped_per_client_and_in_total(
        desk_app: tuple[Desk, ServerThread]) -> None:
    _, server = desk_app                      # StreamCap(per_client=2, total=3)
    a1, a2, a3 = (_open_stream(server.port, "127.0.0.1") for _ in range(3))
    assert (a1[1], a2[1], a3[1]) == (200, 200, 503)
    b1, b2 = (_open_stream(server.port, "127.0.0.2") for _ in range(2))
    assert (b1[1], b2[1]) == (200, 503)       # the total is reached
    a1[0].close()
    deadline = time.monotonic() + 5
    while True:                               # the server sees the close, the place is free
        again = _open_stream(server.port, "127.0.0.2")
        again[0].close()
        if again[1] == 200:
            break
        assert time.monotonic() < deadline, "a closed stream kept its place"
        time.sleep(0.05)
    for sock, _ in (a2, a3, b1, b2):
        sock.close()


def test_the_broker_refuses_an_oversized_message(broker: Broker, tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        topic = topics.topic(EVENT, "t09", "record")

        def record(size: int) -> bytes:
            head = {"game": "topple", "station_game_id": 1, "board": "t09", "pad": ""}
            return topics.encode({**head, "pad": "x" * (size - len(topics.encode(head)))})

        largest = record(MAX_PAYLOAD)
        assert len(largest) == MAX_PAYLOAD
        assert publish_once(broker, "t09", topic, largest)[0] == 0
        wait_for(lambda: dash.desk.boards.get("t09") is not None
                 and dash.desk.boards["t09"].record is not None, 5, "the largest record")
        code, error = publish_once(broker, "t09", topic, record(MAX_PACKET))
        assert code is None and error               # never acknowledged: the client is cut
        time.sleep(0.3)
        assert dash.desk.boards["t09"].record == json.loads(largest)
        assert dash.desk.boards["t09"].malformed == 0


# -- 8. a read never adds a board ------------------------------------------------------------------
def test_a_stream_for_an_unknown_board_adds_nothing(desk_app: tuple[Desk, ServerThread]) -> None:
    desk, server = desk_app
    sock, status = _open_stream(server.port, "127.0.0.1", "/api/stream?board=fake-1")
    sock.close()
    assert status == 404
    assert request(server.port, "GET", "/api/board/fake-2").status == 404
    assert "fake" not in request(server.port, "GET", "/").text
    assert desk.boards == {} and request(server.port, "GET", "/api/boards").json() == []


# -- 9. TLS: the clear listener stays on loopback; a station names its CA
def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "broker.crt", tmp_path / "broker.key"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.2",
         "-addext", "subjectAltName=IP:127.0.0.2"], capture_output=True, timeout=30, check=False)
    assert made.returncode == 0, made.stderr
    return cert, key


def _listening_ports(pid: int) -> set[tuple[str, int]]:
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    found = set()
    for line in out.splitlines():
        if f"pid={pid}," in line:
            address, port = line.split()[3].rsplit(":", 1)
            found.add((address, int(port)))
    return found


def test_with_tls_the_clear_listener_is_on_loopback_only_and_a_station_names_its_ca(
        tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    plain, secure = free_port(), free_port()
    # "127.0.0.2" stands for the venue LAN address (tests listen on loopback only).
    files = write_broker_config(tmp_path / "b", event=EVENT, boards={"t01": "pw-t01"},
                                referee_user=REFEREE, referee_password="r", port=plain,
                                bind="127.0.0.2", tls=TlsFiles(cert, key, secure),
                                user=getpass.getuser())
    process = BrokerProcess(files.conf, "127.0.0.2", secure)
    process.start()
    try:
        assert process.pid is not None
        assert _listening_ports(process.pid) == {("127.0.0.1", plain), ("127.0.0.2", secure)}
        assert wait_connectable("127.0.0.1", plain, 2)
        assert not wait_connectable("127.0.0.2", plain, 0.3)

        station_toml = tmp_path / "station.toml"
        station_toml.write_text(f'[station]\nboard = "t01"\n[mqtt]\nenabled = true\n'
                                f'host = "127.0.0.2"\nport = {secure}\nevent = "{EVENT}"\n'
                                'password = "pw-t01"\ntls_ca = "broker.crt"\n')
        from pi_app.referee.config import load_config as load_station_config

        config = load_station_config(station_toml)
        assert config.mqtt.tls_ca == "broker.crt"
        sim = SimStation(tmp_path / "s", "t01", seed=1)
        publisher = start_publisher(sim.feed, sim.store, PublisherConfig.from_station(config))
        try:
            for _ in range(3):
                sim.step()
            assert publisher.wait_idle(10), publisher.stats()
            assert sim.store.unpublished() == []
        finally:
            publisher.stop()
            sim.close()
    finally:
        process.stop()
    assert parse_config({"mqtt": {"tls_cert": "c.pem", "tls_key": "k.pem"}}).mqtt.tls_key


def test_the_broker_opens_no_listener_it_was_not_told_to(broker: Broker) -> None:
    assert broker.process.pid is not None
    assert _listening_ports(broker.process.pid) == {("127.0.0.1", broker.port)}


# -- 10. the ledger and the export are the owner's only -------------------------------------------
def test_the_ledger_and_the_export_are_created_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)                     # the usual umask: files 0644 unless made 0600
    try:
        _ledger_and_export(tmp_path)
    finally:
        os.umask(old)


def _ledger_and_export(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "referee.sqlite")
    ledger.add_gap("t01", 1, 2)
    ledger.commit()
    for name in ("referee.sqlite", "referee.sqlite-wal"):
        assert oct((tmp_path / name).stat().st_mode & 0o777) == "0o600", name
    ledger.close()
    config = tmp_path / "referee.toml"
    config.write_text('event = "cup"\ndb = "referee.sqlite"\n[broker]\npassword = "x"\n')
    assert referee_main(["export", "--config", str(config), "--out",
                         str(tmp_path / "out.json")]) == 0
    assert oct((tmp_path / "out.json").stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "cookie.key").stat().st_mode & 0o777) == "0o600"


def test_station_mqtt_options_take_the_ca_relative_to_the_config(tmp_path: Path) -> None:
    path = tmp_path / "station.toml"
    path.write_text('[mqtt]\ntls_ca = "ca.crt"\ntls_cert = "/abs/c.pem"\ntls_key = "k.pem"\n')
    from pi_app.referee.config import load_config as load_station_config

    options: BrokerOptions = PublisherConfig.from_station(load_station_config(path)).broker
    assert options.tls_ca == str(tmp_path / "ca.crt")
    assert options.tls_cert == "/abs/c.pem" and options.tls_key == str(tmp_path / "k.pem")


def test_x_forwarded_for_does_not_escape_the_login_brake(broker: Broker, tmp_path: Path) -> None:
    """The real ``tikiboard referee run``: a forwarding header that names a new client on every
    try must not reset the login brake (uvicorn trusts it from 127.0.0.1 unless told not to)."""
    from net_fixtures import REFEREE_PASSWORD, end_session

    end_session(broker, REFEREE)
    port = free_port()
    config = tmp_path / "referee.toml"
    config.write_text(
        f'event = "{EVENT}"\ndb = "referee.sqlite"\n'
        f'[web]\nhost = "127.0.0.1"\nport = {port}\n'
        f'[referees]\nalice = "{hash_password(PASSWORD, iterations=1000)}"\n'
        f'[broker]\nhost = "127.0.0.1"\nport = {broker.port}\nusername = "{REFEREE}"\n'
        f'password = "{REFEREE_PASSWORD}"\n', encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "pi_app", "referee", "run", "--config",
                             str(config)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        assert wait_connectable("127.0.0.1", port, timeout=20), "the dashboard did not listen"
        codes = []
        for i in range(10):
            reply = request(port, "POST", "/login", body="username=alice&password=wrong",
                            headers={"Content-Type": "application/x-www-form-urlencoded",
                                     "X-Forwarded-For": f"10.9.8.{i}"})
            codes.append(reply.status)
        assert codes.count(429) >= 4, codes
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=15)
    assert b"Traceback" not in out, out.decode(errors="replace")


def test_the_stats_window_takes_only_a_number(desk_app: tuple[Desk, ServerThread]) -> None:
    """``/api/stats?since=T`` (the load bench's window): a time in seconds, else a 400."""
    _, server = desk_app
    assert request(server.port, "GET", "/api/stats?since=1e9").status == 200
    for bad in ("yesterday", "", "1e9x"):
        assert request(server.port, "GET", f"/api/stats?since={bad}").status == 400
