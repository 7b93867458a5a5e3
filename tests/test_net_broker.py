"""The real broker enforces who may say what: ACL per board, passwords, the last will."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from net_fixtures import EVENT, REFEREE, Broker, broker, running_dashboard, wait_for
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from pi_app.net import topics
from pi_app.net.broker import acl_text, write_broker_config
from pi_app.net.mqtt import PublisherConfig, new_client, start_publisher
from pi_app.net.simstation import SimStation

pytestmark = pytest.mark.realtime

__all__ = ["broker"]
ROOT = Path(__file__).resolve().parent.parent


class Listener:
    """A referee-side raw subscriber that records every message it gets."""

    def __init__(self, broker: Broker, user: str = REFEREE, password: str | None = None) -> None:
        self.messages: list[tuple[str, bytes]] = []
        self.ready = threading.Event()
        self.refused: list[str] = []
        self.client = new_client(f"listener-{os.urandom(3).hex()}",
                                 broker.options(user, password))
        self.client.on_message = self._message
        self.client.on_subscribe = self._subscribed
        self.client.on_connect = self._connected
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()

    def _message(self, _c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        self.messages.append((message.topic, bytes(message.payload)))

    def _subscribed(self, _c: mqtt.Client, _u: object, _mid: int, codes: list[ReasonCode],
                    _p: Properties) -> None:
        self.refused.extend(str(c) for c in codes if c.is_failure)
        self.ready.set()

    def _connected(self, client: mqtt.Client, _u: object, _f: mqtt.ConnectFlags,
                   rc: ReasonCode, _p: Properties | None) -> None:
        if rc.is_failure:
            self.refused.append(str(rc))
        else:
            client.subscribe(f"tiki/{EVENT}/#", qos=1)

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def listener(broker: Broker) -> Iterator[Listener]:
    listening = Listener(broker)
    assert listening.ready.wait(5)
    yield listening
    listening.stop()


def _publish_as(broker: Broker, user: str, topic: str, payload: bytes) -> tuple[int, bool]:
    """Publish once as ``user``; returns the PUBACK reason code value and whether it failed."""
    acks: list[tuple[int, bool]] = []
    done = threading.Event()
    client = new_client(f"raw-{user}-{os.urandom(3).hex()}", broker.options(user))

    def on_publish(_c: mqtt.Client, _u: object, _mid: int, rc: ReasonCode,
                   _p: Properties) -> None:
        acks.append((rc.value, rc.is_failure))
        done.set()

    client.on_publish = on_publish
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        client.publish(topic, payload, qos=1).wait_for_publish(5)
        assert done.wait(5)
    finally:
        client.disconnect()
        client.loop_stop()
    return acks[0]


def test_acl_lets_a_station_write_only_under_its_own_board(broker: Broker,
                                                           listener: Listener) -> None:
    own = topics.topic(EVENT, "alpha", "events")
    other = topics.topic(EVENT, "beta", "events")
    assert _publish_as(broker, "alpha", own, b'{"mine": 1}')[1] is False
    assert _publish_as(broker, "alpha", other, b'{"forged": 1}') == (135, True)  # not authorised
    assert _publish_as(broker, "alpha", f"tiki/{EVENT}/other", b'{"x": 1}')[1] is True
    wait_for(lambda: any(t == own for t, _ in listener.messages), 5, "alpha's own message")
    time.sleep(0.2)
    assert not any(b"forged" in p for _, p in listener.messages)


def test_a_station_reads_nothing(broker: Broker) -> None:
    station = Listener(broker, "alpha")
    try:
        assert station.ready.wait(5)
        _publish_as(broker, "beta", topics.topic(EVENT, "beta", "events"), b'{"secret": 1}')
        time.sleep(0.3)
        assert station.messages == []
    finally:
        station.stop()


def test_wrong_credentials_are_refused(broker: Broker, tmp_path: Path) -> None:
    intruder = Listener(broker, REFEREE, "not-the-password")
    try:
        wait_for(lambda: bool(intruder.refused), 5, "the broker's refusal")
        assert "Not authorized" in intruder.refused[0] or "Bad user" in intruder.refused[0]
        assert not intruder.ready.is_set()
    finally:
        intruder.stop()
    station = SimStation(tmp_path, "alpha", seed=3)
    config = PublisherConfig(EVENT, "alpha", broker.options("alpha", "guess"), retry_min=0.1,
                             retry_max=0.2)
    publisher = start_publisher(station.feed, station.store, config)
    try:
        for _ in range(3):
            station.step()
        wait_for(lambda: "refused the connection" in (publisher.stats().last_error or ""), 5,
                 "the publisher to report the refusal")
        assert publisher.stats().marked == 0
        assert len(station.store.unpublished()) == len(station.events())   # kept for later
    finally:
        publisher.stop()
        station.close()


def test_a_station_publishing_as_another_board_is_refused_and_keeps_its_events(
        broker: Broker, listener: Listener, tmp_path: Path) -> None:
    station = SimStation(tmp_path, "beta", seed=4)
    # Board "beta" logs in with alpha's name and password: the ACL refuses beta's topics.
    config = PublisherConfig(EVENT, "beta", broker.options("alpha"), retry_min=0.1,
                             retry_max=0.2)
    publisher = start_publisher(station.feed, station.store, config)
    try:
        for _ in range(4):
            station.step()
        wait_for(lambda: "refused" in (publisher.stats().last_error or ""), 5, "a refusal")
        assert publisher.stats().marked == 0
        assert len(station.store.unpublished()) == len(station.events())
        time.sleep(0.2)
        beta = topics.board_prefix(EVENT, "beta")
        assert not any(t.startswith(beta) and json.loads(p).get("board") == "beta"
                       and t.endswith("/events") for t, p in listener.messages)
    finally:
        publisher.stop()
        station.close()


STATION_SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pi_app.net.mqtt import BrokerOptions, PublisherConfig, start_publisher
    from pi_app.net.simstation import SimStation
    port, directory = int(sys.argv[1]), Path(sys.argv[2])
    station = SimStation(directory, "t39", seed=39)
    options = BrokerOptions(port=port, username="t39", password="pw-t39")
    publisher = start_publisher(station.feed, station.store,
                                PublisherConfig("testcup", "t39", options))
    for _ in range(3):
        station.step()
    publisher.wait_idle(10)
    print("ready", flush=True)
    time.sleep(60)
""")


def test_a_vanished_station_shows_offline_and_a_stopped_one_too(broker: Broker,
                                                                 tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        proc = subprocess.Popen([sys.executable, "-c", STATION_SCRIPT, str(broker.port),
                                 str(tmp_path)], stdout=subprocess.PIPE, cwd=ROOT)
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == b"ready"
            wait_for(lambda: dash.desk.boards.get("t39") is not None
                     and dash.desk.boards["t39"].online is True, 5, "t39 online")
            os.kill(proc.pid, signal.SIGKILL)      # power cut: no goodbye, the will speaks
            proc.wait(5)
            wait_for(lambda: dash.desk.boards["t39"].online is False, 10, "t39 offline")
            assert dash.call(lambda: dash.desk.summary("t39", True))["status"] == "offline"
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(5)

        station = SimStation(tmp_path / "b", "t38", seed=38)
        publisher = start_publisher(station.feed, station.store, PublisherConfig(
            EVENT, "t38", broker.options("t38")))
        station.step()
        assert publisher.wait_idle(10)
        wait_for(lambda: dash.desk.boards.get("t38") is not None
                 and dash.desk.boards["t38"].online is True, 5, "t38 online")
        publisher.stop()
        station.close()
        wait_for(lambda: dash.desk.boards["t38"].online is False, 5, "t38 offline")


def test_a_move_stored_while_the_publisher_looks_away_is_not_called_idle(
        broker: Broker, tmp_path: Path) -> None:
    """``wait_idle`` right after a move is stored must wait for that move: the publishing
    thread's last verdict ("nothing left") was given before the move. Holding the
    publisher's lock keeps its thread from looking again, as a busy machine would (a CI run
    with two test workers showed the stale verdict: the move was still unpublished)."""
    station = SimStation(tmp_path / "s", "t37", seed=37)
    publisher = start_publisher(station.feed, station.store, PublisherConfig(
        EVENT, "t37", broker.options("t37")))
    try:
        assert publisher.wait_idle(10), publisher.stats()
        with publisher._cond:  # the thread cannot take another look until this is released
            for _ in range(20):  # a step may only deal or set up; a move comes within a few
                station.step()
                if station.store.unpublished():
                    break
            assert station.store.unpublished() != []
            assert not publisher.wait_idle(0)
        assert publisher.wait_idle(10), publisher.stats()
        assert station.store.unpublished() == []
    finally:
        publisher.stop()
        station.close()


def test_broker_files_say_what_the_docs_say(tmp_path: Path) -> None:
    files = write_broker_config(tmp_path, event="cup", boards={"t1": "a", "t2": "b"},
                                referee_user="ref", referee_password="r")
    acl = files.acl.read_text()
    assert acl == acl_text("cup", "ref")
    assert "pattern write tiki/cup/board/%u/state" in acl and "topic read tiki/cup/#" in acl
    assert "%u/#" not in acl  # a station writes its leaves only (issue 29)
    passwd = files.passwd.read_text()
    assert "t1:$7$" in passwd and ":a\n" not in passwd          # hashed, never in clear
    conf = files.conf.read_text()
    assert "allow_anonymous false" in conf and "persistence true" in conf
    assert oct(files.passwd.stat().st_mode & 0o777) == "0o600"
    with pytest.raises(ValueError):
        write_broker_config(tmp_path, event="cup", boards={"a/#": "x"}, referee_user="ref",
                            referee_password="r")
    assert mqtt.MQTTv5 == 5


def test_tls_listener_carries_a_station(tmp_path: Path) -> None:
    """A station publishes over TLS (verifying the broker's certificate) with its password."""
    import getpass

    from pi_app.net.broker import BrokerProcess, TlsFiles, free_port
    from pi_app.net.mqtt import BrokerOptions

    def self_signed(name: str) -> tuple[Path, Path]:
        cert, key = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
        made = subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out", str(cert),
             "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            capture_output=True, timeout=30, check=False)
        assert made.returncode == 0, made.stderr
        return cert, key

    cert, key = self_signed("broker")
    stranger, _ = self_signed("stranger")
    plain, secure = free_port(), free_port()
    files = write_broker_config(tmp_path / "b", event=EVENT, boards={"alpha": "pw-alpha"},
                                referee_user=REFEREE, referee_password="r", port=plain,
                                tls=TlsFiles(cert, key, secure), user=getpass.getuser(),
                                log=tmp_path / "tls.log")
    process = BrokerProcess(files.conf, "127.0.0.1", secure)
    process.start()
    station = SimStation(tmp_path / "s", "alpha", seed=5)
    options = BrokerOptions(port=secure, username="alpha", password="pw-alpha",
                            tls_ca=str(cert))
    publisher = start_publisher(station.feed, station.store,
                                PublisherConfig(EVENT, "alpha", options))
    try:
        for _ in range(3):
            station.step()
        assert publisher.wait_idle(10), publisher.stats()
        assert station.store.unpublished() == []
        # Trusting another CA, the station refuses the broker's certificate: nothing is sent.
        other = SimStation(tmp_path / "o", "alpha", seed=6)
        blind = start_publisher(other.feed, other.store, PublisherConfig(
            EVENT, "alpha", BrokerOptions(port=secure, username="alpha", password="pw-alpha",
                                          tls_ca=str(stranger))))
        other.step()
        wait_for(lambda: "CERTIFICATE_VERIFY_FAILED" in (blind.stats().last_error or ""), 5,
                 "a TLS failure")
        assert blind.stats().marked == 0
        blind.stop()
        other.close()
    finally:
        publisher.stop()
        station.close()
        process.stop()


def test_the_daemon_wiring(broker: Broker, tmp_path: Path) -> None:
    """What pi_app/referee/daemon.py calls: one call each, with its own Config."""
    from net_fixtures import request

    from pi_app.net.broker import free_port, wait_connectable
    from pi_app.net.web import start_station_server
    from pi_app.referee.config import Config, Mqtt, Web
    from pi_app.referee.config import Station as StationSection

    port = free_port()
    config = Config(station=StationSection(board="t36"),
                    web=Web(enabled=True, host="127.0.0.1", port=port, token="4242"),
                    mqtt=Mqtt(enabled=True, port=broker.port, event=EVENT, password="pw-t36"))
    sim = SimStation(tmp_path, "t36", seed=36)

    async def main() -> tuple[int, int, bool]:
        task = start_station_server(sim.feed, None, config)
        publisher = start_publisher(sim.feed, sim.store, config)
        sim.step()
        sim.step()
        idle = await asyncio.to_thread(publisher.wait_idle, 10)
        # the page server starts in the background: wait until it listens (a loaded machine)
        await asyncio.to_thread(wait_connectable, "127.0.0.1", port, 10)
        page = await asyncio.to_thread(request, port, "GET", "/")
        refused = await asyncio.to_thread(request, port, "POST", "/api/action/undo", {})
        for running in (task, publisher):
            running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return page.status, refused.status, idle

    try:
        assert asyncio.run(main()) == (200, 401, True)
        assert sim.store.unpublished() == []
    finally:
        sim.close()
