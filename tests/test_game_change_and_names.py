"""Changing the game and naming the players, through the real daemon (issue 16).

Each test runs :func:`pi_app.referee.daemon.serve` on the simulated sensor board (the firmware's
own scanner behind a pty), with the station's page on a free port of 127.0.0.1, mock buttons
pressed as a hand would press them, and simulated hands on the pieces. What people see is read
back from where they see it: the page over HTTP, the OLED picture (searched for the words'
pixels), the exported record from the ``tikiboard export`` command.

A board is built for one geometry (its cells, sensors and LED strip), so a station offers only
the games its board plays: asking a Tiki Topple station for Manami is refused with a reason,
and the game goes on (it once swapped in Manami's 38-LED geometry on the 24-LED strip and failed
every redraw until a restart).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import request
from PIL import Image
from test_station_e2e import prefix, preload, record_steps

from pi_app.demo import DemoPlayers
from pi_app.net.broker import free_port, wait_connectable
from pi_app.referee import feedback as fb
from pi_app.referee.config import Config, Web
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.session import Session
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore
from pi_app.station_main import serve

pytestmark = pytest.mark.realtime

PIN = "424242"
AUTH = {"Authorization": f"Bearer {PIN}"}

Scenario = Callable[[Station, Hardware, DemoPlayers, int], Awaitable[None]]


def play_then_stop(port: int, play: Callable[[], Awaitable[None]], stop: asyncio.Event,
                   failures: list[BaseException]) -> asyncio.Future[None]:
    """Start ``play`` once the daemon's page answers on ``port``, then stop the daemon.

    Called from the daemon's ``on_ready``: the scenario runs in the daemon's own loop. A failure
    (an assertion too) is kept in ``failures`` for the test to raise after the daemon stopped,
    because raised inside the loop it would only end the task.
    """

    async def act() -> None:
        try:
            await asyncio.to_thread(wait_connectable, "127.0.0.1", port, 10)
            await play()
        except BaseException as exc:
            failures.append(exc)
        finally:
            stop.set()

    return asyncio.ensure_future(act())


def run_daemon(data_dir: Path, scenario: Scenario, **station: Any) -> None:
    """Run the daemon (Tiki Topple board, page on) until ``scenario`` returns."""
    port = free_port()
    config = Config(station=replace(StationConfig(), game="topple", seed=11, board="names",
                                    topple_cards="deal", data_dir=str(data_dir), **station),
                    web=Web(enabled=True, host="127.0.0.1", port=port, token=PIN))
    failures: list[BaseException] = []

    async def main() -> None:
        stop = asyncio.Event()

        def ready(station: Station, hardware: Hardware) -> None:
            hands = DemoPlayers(station, hardware, random.Random(3), pace=(0.05, 0.1))
            tasks.append(play_then_stop(port, lambda: scenario(station, hardware, hands, port),
                                        stop, failures))

        tasks: list[asyncio.Future[None]] = []
        await asyncio.wait_for(serve(config, stop=stop, on_ready=ready), timeout=120)

    asyncio.run(main())
    if failures:
        raise failures[0]


async def http(port: int, method: str, path: str, body: Any = None) -> Any:
    return await asyncio.to_thread(request, port, method, path, body,
                                   AUTH if method == "POST" else None)


async def until(check: Callable[[], bool], timeout: float, what: str) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def in_play(station: Station, hands: DemoPlayers) -> None:
    """The hands lay out the game's pieces; the station follows into play."""
    hands.players.lay_out(station.session.game.expected_view(station.session.state))
    await until(lambda: station.status.phase == "play", 10, "play")


def shows(image: Image.Image | None, text: str) -> bool:
    """True when ``text`` is drawn somewhere on the 1-bit screen ``image``, in the station's
    font, small or big, ink on dark or dark on ink (as the screen draws names)."""
    assert image is not None
    pixels = image.load()
    assert pixels is not None
    rows = ["".join("1" if pixels[x, y] else "0" for x in range(image.width))
            for y in range(image.height)]
    for scale in (1, 2):
        mask = fb.text_mask(text, scale)
        bits = mask.load()
        assert bits is not None
        ink = ["".join("1" if bits[x, y] else "0" for x in range(mask.width))
               for y in range(mask.height)]
        for pattern in (ink, [r.translate(str.maketrans("01", "10")) for r in ink]):
            for top in range(image.height - mask.height + 1):
                start = rows[top].find(pattern[0])
                while start >= 0:
                    if all(rows[top + i][start:start + mask.width] == pattern[i]
                           for i in range(1, mask.height)):
                        return True
                    start = rows[top].find(pattern[0], start + 1)
    return False


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]


def tikiboard(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60,
                          check=False)


# -- changing the game ---------------------------------------------------------------------------
def test_the_page_refuses_a_game_this_board_cannot_play_and_refereeing_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seen: dict[str, Any] = {}

    async def scenario(station: Station, hardware: Hardware, hands: DemoPlayers,
                       port: int) -> None:
        await in_play(station, hands)
        first = station.session.game_id
        page = (await http(port, "GET", "/")).body.decode()
        games = re.search(r'<select id="new-game">(.*?)</select>', page, re.S)
        assert games is not None
        seen["options"] = sorted(set(re.findall(r'<option value="(\w+)"', games.group(1))))
        refused = await http(port, "POST", "/api/action/new_game", {"game": "manami"})
        seen["status"], seen["error"] = refused.status, refused.body.decode()
        # The game goes on: two more moves by hand, confirmed; the strip keeps its length.
        before = len(station.accepted_log)
        await hands.play(2)
        seen["game"] = (station.session.game.name, station.session.game_id == first)
        seen["moves"] = len(station.accepted_log) - before
        seen["leds"] = (len(station.last_frame), station.geometry.led_count)

    run_daemon(tmp_path, scenario)
    assert seen["options"] == ["topple"]  # the page offers only what this board plays
    assert seen["status"] == 409
    assert "Tiki Topple" in seen["error"] and "Manami" in seen["error"]
    assert "board" in seen["error"]
    assert seen["game"] == ("topple", True)
    assert seen["moves"] >= 1
    assert seen["leds"] == (24, 24)
    assert errors(caplog) == []


def test_menu_then_ok_at_game_over_starts_a_game_this_board_plays(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A Tiki Topple game ended before a restart; at game over MENU picks the next player
    count (the board plays Topple only: 2, 3, 4 players), OK starts it with the configured
    names, and nothing fails on the way."""
    start, steps = prefix("topple", seed=3, keep=0)
    preload(tmp_path, "topple", start, steps)
    seen: dict[str, Any] = {}

    async def scenario(station: Station, hardware: Hardware, hands: DemoPlayers,
                       port: int) -> None:
        await until(lambda: station.status.phase == "over", 10, "game over")
        ended = station.session.game_id
        await hands.press("menu")
        await until(lambda: station.status.menu_game != "", 5, "MENU to pick the next game")
        await asyncio.sleep(0.2)
        seen["menu"] = shows(station.last_screen, "Tiki Topple, 3 pl.")
        await hands.press("ok")
        await until(lambda: station.session.game_id != ended, 5, "OK to start a game")
        await asyncio.sleep(0.5)  # a few redraws of the new game's set-up
        table = getattr(station.session.state, "table", None)  # Topple's; None: another game
        seen["game"] = (station.session.game.name, table and table.players)
        seen["players"] = list(station.feed.snapshot["players"])
        seen["leds"] = (len(station.last_frame), station.geometry.led_count)
        await in_play(station, hands)
        seen["screen"] = [shows(station.last_screen, n) for n in ("Ana", "Ben", "Caro")]

    run_daemon(tmp_path, scenario, players=("Ana", "Ben", "Caro"))
    assert seen["menu"]
    assert seen["game"] == ("topple", 3)
    assert seen["players"] == ["Ana", "Ben", "Caro"]
    assert seen["leds"] == (24, 24)
    assert seen["screen"] == [True, True, True]
    assert errors(caplog) == []


# -- the players' names ---------------------------------------------------------------------------
def test_names_from_the_page_reach_the_screen_the_page_and_the_record(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def scenario(station: Station, hardware: Hardware, hands: DemoPlayers,
                       port: int) -> None:
        await in_play(station, hands)
        for bad in ({"players": ["A", "B", "C", "D", "E"]}, {"players": ["Ana", "x" * 25]},
                    {"players": ["Ana", "ana"]}, {"players": "Ana"}):
            reply = await http(port, "POST", "/api/action/new_game", {"game": "topple", **bad})
            seen.setdefault("refused", []).append(
                (reply.status, json.loads(reply.body).get("error", "")))
        seen["unchanged"] = station.session.state.table.players
        reply = await http(port, "POST", "/api/action/new_game",
                           {"game": "topple", "players": [" Ana ", "Ben", "Caro  "]})
        assert reply.status == 200, reply.body
        seen["game_id"] = station.session.game_id
        seen["count"] = station.session.state.table.players
        await until(lambda: station.status.phase == "setup", 5, "the new game's set-up")
        await hands.settle_board()  # the hands put the new deal's pieces down
        await until(lambda: station.status.phase == "play", 10, "play")
        await asyncio.sleep(0.3)
        mover = station.session.game.to_move(station.session.state)
        assert mover is not None
        seen["mover"] = mover
        seen["screen"] = {n: shows(station.last_screen, n) for n in ("Ana", "Ben", "Caro")}
        seen["to_move"] = shows(station.last_screen, ["Ana", "Ben", "Caro"][mover] + " to move")
        state = json.loads((await http(port, "GET", "/api/state")).body)["snapshot"]
        seen["snapshot"] = state["players"]
        seen["page"] = (await http(port, "GET", "/")).body.decode()

    run_daemon(tmp_path, scenario)
    statuses = [s for s, _ in seen["refused"]]
    # Not names at all: refused by the page's body check (400) or by the station (409).
    assert statuses[:3] == [409, 409, 409] and statuses[3] in (400, 409), seen["refused"]
    words = " | ".join(e for _, e in seen["refused"])
    assert "2 to 4 players, not 5" in words and "at most 24 characters" in words
    assert "two players are called" in words
    assert seen["unchanged"] == 2
    assert seen["count"] == 3
    assert seen["snapshot"] == ["Ana", "Ben", "Caro"]
    assert seen["screen"] == {"Ana": True, "Ben": True, "Caro": True}
    assert seen["to_move"]
    name = ["Ana", "Ben", "Caro"][seen["mover"]]
    assert f"<td>{name} ◀</td>" in seen["page"] and f"{name} to move." in seen["page"]
    assert "player 0" not in seen["page"].lower()
    exported = tikiboard("export", "--db", str(tmp_path / "tikiboard.db"),
                         "--game", str(seen["game_id"]))
    assert exported.returncode == 0, exported.stderr
    record = json.loads(exported.stdout)
    assert record["players"] == ["Ana", "Ben", "Caro"]
    assert record["options"]["players"] == 3  # docs/records.md: the count; names beside it


def test_the_winner_is_named_on_the_screen_the_page_and_in_the_replay(tmp_path: Path) -> None:
    """A named game that ended: the station's game-over screen, its page and ``tikiboard
    replay`` of the exported record all say who won by name."""
    start, steps = prefix("topple", seed=3, keep=0)
    store = EventStore(tmp_path / "tikiboard.db")
    names = ["Ana", "Ben"]
    Session.new(store, "topple", state=start, board="names", players=names)
    store.close()
    preload_moves(tmp_path, steps)
    seen: dict[str, Any] = {}

    async def scenario(station: Station, hardware: Hardware, hands: DemoPlayers,
                       port: int) -> None:
        await until(lambda: station.status.phase == "over", 10, "game over")
        await asyncio.sleep(0.3)
        winners = station.session.game.winners(station.session.state)
        assert winners
        seen["winners"] = winners
        seen["screen"] = shows(station.last_screen, f"{names[winners[0]]} wins!")
        seen["page"] = (await http(port, "GET", "/")).body.decode()

    run_daemon(tmp_path, scenario)
    winner = names[seen["winners"][0]]
    assert len(seen["winners"]) == 1
    assert seen["screen"]
    assert f"Game over: {winner} won." in seen["page"]
    out = tmp_path / "game.tiki.json"
    assert tikiboard("export", "--db", str(tmp_path / "tikiboard.db"), "--game", "1",
                     "--out", str(out)).returncode == 0
    replayed = tikiboard("replay", str(out))
    assert f"result: {winner} won" in replayed.stdout, replayed.stdout
    assert "player 0" not in replayed.stdout


def preload_moves(data_dir: Path, steps: list[tuple[str, Any]]) -> None:
    """Add ``steps`` to the stored game 1 (as :func:`test_station_e2e.preload` does)."""
    store = EventStore(data_dir / "tikiboard.db")
    row = store.unfinished()
    assert row is not None
    session = Session.resume(store, row)
    record_steps(session, session.state, steps)
    store.close()


def test_the_players_key_takes_a_count_or_names_checked_like_the_page(tmp_path: Path) -> None:
    from pi_app.referee.config import ConfigError, load_config

    path = tmp_path / "station.toml"
    path.write_text('[station]\nplayers = [" Ana ", "Ben", "Caro"]\n')
    station = load_config(path).station
    assert (station.player_names, station.player_count) == (("Ana", "Ben", "Caro"), 3)
    for text, why in (('game = "manami"\nplayers = ["Ana", "Ben", "Caro"]', "for 2 players"),
                      ('players = ["Ana", ""]', "empty"), ("players = [1, 2]", "list of names"),
                      ('players = ["Ana", "ANA"]', "two players are called")):
        path.write_text(f"[station]\n{text}\n")
        with pytest.raises(ConfigError, match=f"station.players: .*{why}"):
            load_config(path)
    run = tikiboard("run", "--config", str(path))
    assert run.returncode == 2 and "station.players" in run.stderr
    assert "Traceback" not in run.stderr


def test_an_unfinished_game_of_another_board_is_closed_not_played_on_this_one(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The configuration now names a Topple board; the database still holds an unfinished
    Manami game (from before). The station starts a Topple game on its 24-LED board and
    closes the Manami one unfinished, its moves kept for ``tikiboard export``."""
    from pi_app.board.equipment import registry_for

    store = EventStore(tmp_path / "tikiboard.db")
    old = Session.new(store, "manami", rng=random.Random(1), board="names").game_id
    config = Config(station=replace(StationConfig(), game="topple", topple_cards="deal",
                                    data_dir=str(tmp_path)))
    station = Station(config, store, registry_for("topple"), clock=lambda: 0.0)
    station.render(0.0)
    assert station.games == ("topple",) and station.session.game.name == "topple"
    assert store.game(old).finished and store.game(old).result is None
    assert len(station.last_frame) == 24
    assert any("cannot play" in r.getMessage() for r in caplog.records)


def test_a_failing_led_strip_is_logged_once_and_refereeing_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The strip refuses every frame (as it refused a frame of the wrong length): the daemon
    says so once, with the reason, and the screen, the page and the moves go on."""
    seen: dict[str, Any] = {}

    async def scenario(station: Station, hardware: Hardware, hands: DemoPlayers,
                       port: int) -> None:
        def broken(frame: Any) -> None:
            raise ValueError(f"an LED frame needs 23 colours, got {len(frame)}")

        hardware.leds.show = broken
        await in_play(station, hands)
        before = len(station.accepted_log)
        await hands.play(3)
        seen["moves"] = len(station.accepted_log) - before
        seen["page"] = json.loads((await http(port, "GET", "/api/state")).body)["snapshot"]

    run_daemon(tmp_path, scenario)
    assert seen["moves"] >= 2
    assert seen["page"]["moves"]  # the page followed
    said = errors(caplog)  # once, not on every redraw
    assert len(said) == 1 and "LEDs cannot show the game" in said[0], said
    assert "23 colours" in said[0]
