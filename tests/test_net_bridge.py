"""An event over two venues (issue 33): each venue's mosquitto bridges to the central broker.

Two real mosquitto on loopback, configured by :func:`pi_app.net.broker.write_broker_config`:
the venue's with a :class:`~pi_app.net.broker.Bridge` to the centre, the centre's with that
venue's bridge user. A station talks only to its venue's broker; its events reach the referee
on the central broker, and the referee's pairing for it comes back through the bridge. The
venue's bridge credentials may write only that venue's boards at the centre.
"""

from __future__ import annotations

import getpass
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from net_fixtures import EVENT, REFEREE, REFEREE_PASSWORD, wait_for
from test_net_broker import _publish_as

from pi_app.net import topics
from pi_app.net.broker import Bridge, BrokerProcess, free_port, write_broker_config
from pi_app.net.mqtt import BrokerOptions, PublisherConfig, new_client, start_publisher
from pi_app.net.schema import PairingPayload
from pi_app.net.simstation import SimStation

pytestmark = pytest.mark.realtime

VENUE_BOARDS = {"alpha": "pw-alpha", "beta": "pw-beta"}
OTHER_BOARDS = {"gamma": "pw-gamma"}
BRIDGE = "venue-a"


class Pair:
    def __init__(self, central: int, venue: int, venue_broker: BrokerProcess) -> None:
        self.central, self.venue, self.venue_broker = central, venue, venue_broker

    def as_(self, port: int, user: str, password: str) -> BrokerOptions:
        return BrokerOptions(host="127.0.0.1", port=port, username=user, password=password)


@pytest.fixture
def brokers(tmp_path: Path) -> Iterator[Pair]:
    central_port, venue_port = free_port(), free_port()
    central = write_broker_config(
        tmp_path / "central", event=EVENT, boards={**VENUE_BOARDS, **OTHER_BOARDS},
        referee_user=REFEREE, referee_password=REFEREE_PASSWORD, port=central_port,
        log=tmp_path / "central.log", user=getpass.getuser(),
        bridges={BRIDGE: ("pw-bridge", list(VENUE_BOARDS))})
    venue = write_broker_config(
        tmp_path / "venue", event=EVENT, boards=VENUE_BOARDS, referee_user=REFEREE,
        referee_password="local-referee", port=venue_port, log=tmp_path / "venue.log",
        user=getpass.getuser(),
        bridge=Bridge("127.0.0.1", central_port, BRIDGE, "pw-bridge"))
    processes = [BrokerProcess(central.conf, "127.0.0.1", central_port),
                 BrokerProcess(venue.conf, "127.0.0.1", venue_port)]
    for process in processes:
        process.start()
    try:
        yield Pair(central_port, venue_port, processes[1])
    finally:
        for process in processes:
            if process.pid is not None:
                process.stop()


def _listen(options: BrokerOptions, port: int, pattern: str) -> tuple[mqtt.Client, list[str]]:
    got: list[str] = []
    ready = threading.Event()
    client = new_client(f"{options.username}-{os.urandom(3).hex()}", options)
    client.on_message = lambda _c, _u, message: got.append(message.topic)
    client.on_subscribe = lambda *_a: ready.set()
    client.on_connect = lambda c, *_a: c.subscribe(pattern, qos=1)
    client.connect("127.0.0.1", port)
    client.loop_start()
    assert ready.wait(10)
    return client, got


def test_a_venue_station_reaches_the_central_referee_and_its_pairing_comes_back(
        brokers: Pair, tmp_path: Path) -> None:
    referee, seen = _listen(brokers.as_(brokers.central, REFEREE, REFEREE_PASSWORD),
                            brokers.central, topics.event_filter(EVENT))
    sim = SimStation(tmp_path / "s", "alpha", seed=2)
    told: list[PairingPayload | None] = []
    publisher = start_publisher(sim.feed, sim.store, PublisherConfig(
        EVENT, "alpha", brokers.as_(brokers.venue, "alpha", "pw-alpha"), retry_min=0.1,
        retry_max=0.5), on_pairing=told.append)
    try:
        wait_for(lambda: publisher.stats().connected, 10, "the station at its venue")
        for _ in range(5):
            sim.step()
        wait_for(lambda: topics.topic(EVENT, "alpha", "events") in seen, 20,
                 "the station's events at the central broker, through the bridge")
        pairing = {"round": 2, "table": 1, "game": "manami", "players": ["Ana", "Ben"]}
        info = referee.publish(topics.pairing_topic(EVENT, "alpha"),
                               json.dumps(pairing).encode(), qos=1, retain=True)
        info.wait_for_publish(5)
        wait_for(lambda: bool(told) and told[-1] is not None, 20,
                 "the referee's pairing at the venue's station, through the bridge")
        assert told[-1] == PairingPayload(2, 1, "manami", ["Ana", "Ben"])
    finally:
        publisher.stop()
        sim.close()
        referee.disconnect()
        referee.loop_stop()


def test_a_venues_bridge_may_write_only_its_own_boards_at_the_centre(brokers: Pair) -> None:
    class Central:
        port = brokers.central

        @staticmethod
        def options(user: str) -> BrokerOptions:
            return brokers.as_(brokers.central, user, "pw-bridge")
    # The venue's bridge is connected under this user, and a client's id is its user name:
    # with the venue up, its bridge and this test would take the session from each other.
    brokers.venue_broker.stop()
    own = topics.topic(EVENT, "beta", "events")
    other = topics.topic(EVENT, "gamma", "events")
    assert _publish_as(Central, BRIDGE, other, b"{}") == (135, True)  # type: ignore[arg-type]
    assert _publish_as(Central, BRIDGE, own, b"{}")[1] is False  # type: ignore[arg-type]


def test_remote_play_crosses_the_bridge_for_the_venues_boards_only(brokers: Pair) -> None:
    """A board at the venue plays a remote game whose authority is at the centre: its proposal
    goes out through the bridge, the authority's answer comes back; the bridge's credentials
    cannot send a proposal for another venue's board."""
    authority, heard = _listen(brokers.as_(brokers.central, REFEREE, REFEREE_PASSWORD),
                               brokers.central, f"tiki/{EVENT}/remote/+/up")
    alpha, answers = _listen(brokers.as_(brokers.venue, "alpha", "pw-alpha"), brokers.venue,
                             topics.remote_down_topic(EVENT, "alpha"))
    try:
        up = topics.remote_up_topic(EVENT, "alpha")
        wait_for(lambda: (alpha.publish(up, b'{"hello": 1}', qos=1), up in heard)[1], 20,
                 "alpha's proposal at the central authority, through the bridge")
        down = topics.remote_down_topic(EVENT, "alpha")
        wait_for(lambda: (authority.publish(down, b'{"sync": 1}', qos=1), down in answers)[1],
                 20, "the authority's answer at alpha, through the bridge")
    finally:
        for client in (authority, alpha):
            client.disconnect()
            client.loop_stop()

    class Central:
        port = brokers.central

        @staticmethod
        def options(user: str) -> BrokerOptions:
            return brokers.as_(brokers.central, user, "pw-bridge")
    brokers.venue_broker.stop()   # (its bridge holds the session of the bridge's user name)
    other = topics.remote_up_topic(EVENT, "gamma")
    assert _publish_as(Central, BRIDGE, other, b"{}") == (135, True)  # type: ignore[arg-type]
    assert _publish_as(Central, BRIDGE, up, b"{}")[1] is False  # type: ignore[arg-type]
