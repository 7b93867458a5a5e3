"""Screenshots of the station page for the README: ``python tests/station_shots.py DIR``.

For each game a simulated station (the real session, store and feed) finishes one game and
plays a second one to its middle; its page is served as the daemon serves it (past games from
its database, the address as a QR code) and photographed by headless Chromium at phone
(390x844) and desktop (1280x900) width. Writes ``page-GAME-{phone,desktop}.png``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from net_fixtures import ServerThread, chromium_driver

from pi_app.net.archive import GameArchive
from pi_app.net.simstation import SimStation
from pi_app.net.web import create_station_app

GAMES = {"topple": (["Ana", "Ben"], 30), "manami": (["Dai", "Emeka"], 24),
         "tactiki": (["Fatima", "Gus"], 30)}
SIZES = {"phone": (390, 844), "desktop": (1280, 900)}
ADDRESS = "http://192.168.1.40:8080/"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tiki-page-shots-"))
    driver = chromium_driver(work / "chromium")
    try:
        for number, (game, (players, moves)) in enumerate(GAMES.items(), start=1):
            sim = SimStation(work, f"table-{number}", seed=number, game=game, players=players)
            archive = GameArchive(sim.store.path)
            server = ServerThread(create_station_app(sim.feed, token=None, archive=archive,
                                                     address=ADDRESS)).start()
            try:
                server.call(sim.new_game)
                while sim.session is not None:      # one game to its end: a past game
                    server.call(sim.step)
                server.call(sim.new_game)
                for _ in range(moves):              # and the next one to its middle
                    server.call(sim.step)
                for size, (width, height) in SIZES.items():
                    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                        "width": width, "height": height, "deviceScaleFactor": 1,
                        "mobile": size == "phone"})
                    driver.get(server.url + "/")
                    driver.execute_script("return document.fonts.ready")
                    path = out / f"page-{game}-{size}.png"
                    driver.save_screenshot(str(path))
                    print(path)
            finally:
                server.stop()
                archive.close()
                sim.close()
    finally:
        driver.quit()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images"))
