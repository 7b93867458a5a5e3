"""The referee locks hints at every station of a tournament (issue 20: "off in tournament mode,
the referee can lock it"), from the dashboard's tournament page, through the real broker.

The lock is one retained message, ``tiki/EVENT/locks``, that only the referee may write and
every station reads (the broker's ACL). A station told "locked" refuses hints on the button and
the page and puts out a hint already lit; a payload that does not read keeps the lock it had.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import EVENT, REFEREE, Broker, broker, password_of, running_dashboard, wait_for
from test_net_broker import _publish_as
from test_station_bot import Table
from test_tournament_dashboard import PASSWORD, login

from pi_app.board.equipment import registry_for
from pi_app.net import topics
from pi_app.net.auth import hash_password
from pi_app.net.mqtt import PublisherConfig, new_client, start_publisher
from pi_app.net.schema import LocksPayload
from pi_app.net.simstation import SimStation
from pi_app.readings import ButtonPressed
from pi_app.referee.config import Config, Mqtt, Web
from pi_app.referee.config import Station as StationSection
from pi_app.referee.daemon import Notices
from pi_app.referee.feed import ActionError
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore
from pi_app.station_main import start_network

__all__ = ["broker"]
LOCKS = topics.locks_topic(EVENT)


def test_a_lock_puts_out_the_lit_hint_and_refuses_the_next(tmp_path: Path) -> None:
    table = Table(tmp_path, "manami", {})
    station = table.station
    table.step(ButtonPressed(table.now, "ok"))
    table.wait_until(table.now + 0.5)
    assert station.opponent.shown is not None and "hint" in table.lit().values()
    station.lock_hints("alice", table.now)
    assert station.opponent.shown is None and "hint" not in table.lit().values()
    with pytest.raises(ActionError, match="locked by the referee"):
        asyncio.run(station.feed.act("hint"))
    table.step(ButtonPressed(table.now, "ok"))
    table.wait_until(table.now + 0.5)
    assert station.opponent.shown is None
    assert "locked by the referee" in station.status.message
    station.lock_hints(None, table.now)  # allowed again
    table.step(ButtonPressed(table.now, "ok"))
    table.wait_until(table.now + 0.5)
    assert station.opponent.shown is not None and station.opponent.shown.kind == "hint"


def test_a_hint_being_thought_out_when_the_lock_comes_is_not_shown(tmp_path: Path) -> None:
    table = Table(tmp_path, "manami", {})
    station = table.station
    table.step(ButtonPressed(table.now, "ok"))  # asked; the worker thinks
    station.lock_hints("alice", table.now)
    table.wait_until(table.now + 1.0)
    assert station.opponent.shown is None and "hint" not in table.lit().values()


@pytest.mark.realtime
def test_only_the_referee_may_write_the_locks(broker: Broker) -> None:
    assert _publish_as(broker, "alpha", LOCKS, b'{"hints": true}') == (135, True)
    assert _publish_as(broker, REFEREE, LOCKS, b"")[1] is False  # cleared: all allowed


@pytest.mark.realtime
def test_a_station_reads_the_locks_and_keeps_them_on_a_garbled_message(
        broker: Broker, tmp_path: Path) -> None:
    sim = SimStation(tmp_path, "beta", seed=3)
    told: list[LocksPayload] = []
    publisher = start_publisher(sim.feed, sim.store, PublisherConfig(
        EVENT, "beta", broker.options("beta"), retry_min=0.1, retry_max=0.5),
        on_locks=told.append)
    try:
        wait_for(lambda: publisher.stats().connected, 10, "the station to connect")
        assert _publish_as(broker, REFEREE, LOCKS, json.dumps(
            {"hints": False, "by": "alice"}).encode())[1] is False
        wait_for(lambda: bool(told) and not told[-1].hints, 5, "the lock at the station")
        assert told[-1].by == "alice"
        assert _publish_as(broker, REFEREE, LOCKS, b'{"hints": "maybe"}')[1] is False
        wait_for(lambda: publisher.stats().last_error is not None, 5, "the garbled lock noted")
        assert "kept as they were" in str(publisher.stats().last_error)
        assert not told[-1].hints  # still locked
    finally:
        publisher.stop()
        sim.close()
        _publish_as(broker, REFEREE, LOCKS, b"")


@pytest.mark.realtime
def test_the_referee_locks_hints_at_a_real_station_from_the_tournament_page(
        broker: Broker, tmp_path: Path) -> None:
    """The dashboard's switch → the broker → the station daemon's network wiring → OK refused;
    a station that connects later gets the retained lock too; allowed again, hints come back."""
    users = {"alice": hash_password(PASSWORD)}
    board = "t07"
    config = Config(station=StationSection(board=board, game="manami", seed=5,
                                           data_dir=str(tmp_path / "station")),
                    web=Web(enabled=False),
                    mqtt=Mqtt(enabled=True, port=broker.port, event=EVENT,
                              password=password_of(board)))
    (tmp_path / "station").mkdir()
    station = Station(config, EventStore(tmp_path / "station" / "tikiboard.db"),
                      registry_for("manami"))
    try:
        with running_dashboard(broker, tmp_path, referees=users) as dash:
            wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
            referee = login(dash.server.port)
            assert "Hints at the tables: allowed" in referee.get("/tournament").text
            status, data = referee.post("hints", {"locked": "yes"})
            assert status == 400, data

            async def locked_at_station() -> str | None:
                tasks = start_network(config, station, station.store, Notices(station))
                try:
                    for _ in range(200):
                        if station.referee_lock is not None:
                            break
                        await asyncio.sleep(0.05)
                    return station.referee_lock
                finally:
                    for task in tasks:
                        task.cancel()

            referee.ok("hints", {"locked": True})
            page = referee.get("/tournament").text
            assert "locked by alice" in page and "Allow hints" in page
            # The station starts after the lock was set: the retained message reaches it.
            assert asyncio.run(locked_at_station()) == "alice"
            with pytest.raises(ActionError, match="locked by the referee"):
                asyncio.run(station.feed.act("hint"))

            referee.ok("hints", {"locked": False})
            assert "Hints at the tables: allowed" in referee.get("/tournament").text
            assert _retained(broker) == {"hints": True, "by": None}
    finally:
        station.store.close()
        _publish_as(broker, REFEREE, LOCKS, b"")


def _retained(broker: Broker) -> dict[str, Any]:
    """The locks the broker keeps, as a station reading them now would get them."""
    got: list[bytes] = []
    client = new_client(f"probe-{os.urandom(3).hex()}", broker.options("t08"))
    client.on_message = lambda _c, _u, message: got.append(bytes(message.payload))
    client.on_connect = lambda c, _u, _f, _rc, _p: c.subscribe(LOCKS, qos=1)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        wait_for(lambda: bool(got), 5, "the retained locks")
    finally:
        client.disconnect()
        client.loop_stop()
    data: dict[str, Any] = json.loads(got[-1])
    return {k: data[k] for k in ("hints", "by")}

