"""Screenshots of the referee dashboard for the READMEs: ``python tests/dashboard_shots.py DIR``.

A real mosquitto (the event's passwords and ACL) on a free loopback port, seven simulated
stations publishing through it (one game finished and confirmed, one finished and waiting for a
referee, one whose station then went away, one guiding a mismatch, one with a takeback), two
configured tables that never connected, the dashboard as ``tikiboard referee run`` builds it, and
headless Chromium at phone (390x844) and desktop (1280x900) width. Writes
``dashboard-overview-{phone,desktop}.png`` and ``dashboard-board-{phone,desktop}.png``.
"""

from __future__ import annotations

import getpass
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from net_fixtures import REFEREE, ServerThread, chromium_driver, wait_for

from pi_app.net.broker import BrokerProcess, free_port, write_broker_config
from pi_app.net.dashboard import DashboardConfig, build_dashboard
from pi_app.net.mqtt import BrokerOptions, Publisher, PublisherConfig, start_publisher
from pi_app.net.simstation import SimStation
from pi_app.referee.feed import StationStatus

EVENT = "open25"
TABLES = {"table-1": ("topple", ["Ana", "Ben"]), "table-2": ("tactiki", ["Chloé", "Dai"]),
          "table-3": ("manami", ["Emeka", "Fatima"]), "table-4": ("topple", ["Gus", "Hina"]),
          "table-5": ("manami", ["Ivo", "Jun"]), "table-6": ("topple", ["Kai", "Lea", "Mo"]),
          "table-7": ("tactiki", ["Noor", "Oli"])}
NEVER = ["table-8", "table-9"]
SIZES = {"phone": (390, 844), "desktop": (1280, 900)}


def _finish(sim: SimStation) -> None:
    assert sim.session is not None
    while sim.session is not None and not sim.session.game.is_over(sim.session.state):
        sim.step()
    sim.step()


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tiki-shots-"))
    port = free_port()
    boards = [*TABLES, *NEVER]
    files = write_broker_config(work / "broker", event=EVENT,
                                boards={b: f"pw-{b}" for b in boards}, referee_user=REFEREE,
                                referee_password="referee-pw", port=port,
                                user=getpass.getuser())
    broker = BrokerProcess(files.conf, "127.0.0.1", port, log=work / "mosquitto.out")
    broker.start()
    server: ServerThread | None = None
    publishers: dict[str, Publisher] = {}
    sims: dict[str, SimStation] = {}
    driver = chromium_driver(work / "chromium")
    try:
        config = DashboardConfig(event=EVENT, db=work / "referee.sqlite", broker=BrokerOptions(
            host="127.0.0.1", port=port, username=REFEREE, password="referee-pw"),
            secret=os.urandom(32), boards=tuple(boards))
        app, desk = build_dashboard(config)
        server = ServerThread(app).start()
        wait_for(desk.ready.is_set, 10, "the dashboard's subscription")
        for i, (board, (game, players)) in enumerate(TABLES.items()):
            sim = sims[board] = SimStation(work / "stations", board, seed=11 + i, game=game,
                                           players=players)
            publishers[board] = start_publisher(sim.feed, sim.store, PublisherConfig(
                EVENT, board, BrokerOptions(host="127.0.0.1", port=port, username=board,
                                            password=f"pw-{board}")))
            sim.new_game()
            for _ in range(8 + 3 * i):
                sim.step()
        one = sims["table-1"]
        assert one.session is not None
        one._stored(one.session.taken_back(1, one.session.history[-1][0]))
        one._stored(one.session.note("mismatch", {"fixes": ["move Nani from s2 to s1"]}))
        one._stored(one.session.note("in_sync", {}))
        one.show()
        for _ in range(3):
            one.step()
        for board in ("table-3", "table-5", "table-2"):
            _finish(sims[board])
        sims["table-4"]._stored(sims["table-4"].session.note(  # type: ignore[union-attr]
            "mismatch", {"fixes": ["put Kapu on s4"]}))
        sims["table-4"].show(StationStatus.MISMATCH)
        for board, sim in sims.items():
            publishers[board].wait_idle(10)
            last = sim.seq
            wait_for(lambda: desk.boards[board].last_seq == last, 10, board)  # noqa: B023
        server.call(lambda: desk.confirm("table-3", max(r.id for r in sims["table-3"].store
                                                        .games()), "alice"))
        publishers.pop("table-5").stop()  # its station went away after its game ended
        wait_for(lambda: desk.boards["table-5"].online is False, 10, "table-5 offline")
        time.sleep(0.5)
        for name, (width, height) in SIZES.items():
            driver.set_window_size(width, height)
            driver.get(server.url + "/")
            time.sleep(0.8)
            driver.save_screenshot(str(out / f"dashboard-overview-{name}.png"))
            driver.get(server.url + "/board/table-1")
            time.sleep(0.8)
            driver.save_screenshot(str(out / f"dashboard-board-{name}.png"))
        driver.get("about:blank")
    finally:
        driver.quit()
        for publisher in publishers.values():
            publisher.stop()
        for sim in sims.values():
            sim.close()
        if server is not None:
            server.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images"))
