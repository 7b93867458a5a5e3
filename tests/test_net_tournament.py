"""Many stations, one real broker, the real dashboard: nothing lost, nothing twice, in order.

32 simulated stations play random games through the real session, store and publisher; the
broker is stopped and started again while they play; afterwards the dashboard's ledger holds
every event of every station exactly once, in each station's order, and its export holds every
game's record as the station itself would export it: in full once the game ended, in its public
form while it goes on (nothing hidden travels over MQTT during a game: ``pi_app.net.redact``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import Broker, broker, request, running_dashboard, wait_for

from pi_app.net.mqtt import Publisher, PublisherConfig, start_publisher
from pi_app.net.redact import public_data, public_record
from pi_app.net.simstation import SimStation

pytestmark = pytest.mark.realtime

STATIONS = 32
STEPS = 40

__all__ = ["broker"]


def _play(stations: list[SimStation], steps: int, lock: threading.Lock) -> None:
    for _ in range(steps):
        for station in stations:
            with lock:
                station.step()


def test_32_stations_survive_a_broker_restart(broker: Broker, tmp_path: Path) -> None:
    with running_dashboard(broker, tmp_path) as dash:
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        stations = [SimStation(tmp_path / "stations", f"t{i:02d}", seed=i)
                    for i in range(STATIONS)]
        publishers: list[Publisher] = []
        for station in stations:
            config = PublisherConfig("testcup", station.board, broker.options(station.board),
                                     retry_min=0.1, retry_max=0.5)
            publishers.append(start_publisher(station.feed, station.store, config))
        lock = threading.Lock()
        try:
            _play(stations, STEPS // 2, lock)
            broker.process.stop()           # the broker goes away mid-game ...
            _play(stations, 5, lock)         # ... the tables play on, events wait on disk
            time.sleep(0.3)
            broker.process.start()
            _play(stations, STEPS // 2 - 5, lock)
            for publisher in publishers:
                assert publisher.wait_idle(30), publisher.stats()
            stored = {s.board: s.events() for s in stations}
            wait_for(lambda: all(dash.desk.boards.get(b) is not None
                                 and dash.desk.boards[b].last_seq == ev[-1].id
                                 for b, ev in stored.items()), 30, "every event at the desk")
            assert all(p.stats().connections >= 2 for p in publishers)

            for station in stations:
                def ledger_events(board: str = station.board) -> list[dict[str, Any]]:
                    return dash.desk.ledger.events(board)

                got = dash.call(ledger_events)
                mine = stored[station.board]
                assert [e["seq"] for e in got] == [e.id for e in mine]   # all, once, in order
                games = {row.id: row.game for row in station.store.games()}
                assert [(e["kind"], e["data"], e["n"]) for e in got] == \
                    [(e.kind, public_data(games[e.game_id], e.kind, e.data), e.seq)
                     for e in mine]
            stats = dash.call(dash.desk.stats)
            assert stats["counts"].get("gaps", 0) == 0

            exported = request(dash.server.port, "GET", "/api/stats").json()
            assert exported["lag_ms"]["n"] >= sum(len(v) for v in stored.values())
            records = dash.call(dash.desk.export)
            by_key = {(r["board"], r["station_game_id"]): r for r in records}
            for station in stations:
                finished = {row.id for row in station.store.games() if row.result is not None}
                for own in station.export():
                    theirs = by_key[(station.board, own["station_game_id"])]
                    shown = own if own["station_game_id"] in finished else public_record(own)
                    assert {k: v for k, v in theirs.items()
                            if k not in ("event", "reported", "confirmed")} == shown
        finally:
            for publisher in publishers:
                publisher.stop()
            for station in stations:
                station.close()
