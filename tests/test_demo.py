"""``tikiboard demo`` as a newcomer meets it (issue 16): it fits an 80 x 24 terminal with a
legend of the LEDs, deals a new game each run unless ``--seed`` (printed) is given, keeps its
database with ``--keep`` (exported and replayed afterwards), serves the page with ``--web``,
and says "draw" for a drawn game. Through the real station on the simulated board; short runs
(a few turns at a high ``--speed``).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from signal import SIGINT
from typing import Any

import pytest

from pi_app.demo import HEIGHT, WIDTH, DemoPlayers, frame_lines, outcome, visible
from pi_app.referee import feedback as fb
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationSection
from pi_app.referee.daemon import Hardware
from pi_app.referee.station import Station
from pi_app.station_main import serve

pytestmark = pytest.mark.realtime

ROOT = Path(__file__).resolve().parents[1]


def on_station(tmp_path: Path, game: str, turns: int,
               then: Callable[[Station, DemoPlayers], Any]) -> Any:
    """The real station plays ``turns`` turns of ``game``; ``then`` looks at it, still running."""
    config = Config(station=replace(StationSection(), game=game, seed=3,
                                    data_dir=str(tmp_path)))
    seen: dict[str, Any] = {}

    async def main() -> None:
        stop = asyncio.Event()
        done: list[asyncio.Future[None]] = []

        def ready(station: Station, hardware: Hardware) -> None:
            async def play() -> None:
                try:
                    hands = DemoPlayers(station, hardware, random.Random(3), pace=(0.05, 0.1))
                    await hands.play(turns)
                    seen["out"] = then(station, hands)
                finally:
                    stop.set()

            done.append(asyncio.ensure_future(play()))

        await asyncio.wait_for(serve(config, stop=stop, on_ready=ready), timeout=60)
        for task in done:
            task.result()

    asyncio.run(main())
    return seen["out"]


@pytest.mark.parametrize("game", ["topple", "manami", "tactiki"])
def test_the_frame_fits_80_by_24_with_a_legend(tmp_path: Path, game: str) -> None:
    def frames(station: Station, hands: DemoPlayers) -> tuple[list[str], list[str]]:
        return (frame_lines(station, hands.players, True, "t"),
                frame_lines(station, hands.players, False, "t"))

    coloured, plain = on_station(tmp_path, game, 1, frames)
    for lines in (coloured, plain):
        shown = [visible(line) for line in lines]
        assert len(shown) <= HEIGHT, "\n".join(shown)
        assert max(len(line) for line in shown) <= WIDTH, "\n".join(shown)
    text = "\n".join(plain)
    assert "LEDs (● = lit)" in text
    for signal in fb.SIGNALS.values():  # every word of the LED language is explained
        assert signal.label[:12] in text, signal.label
    assert "\x1b[38;2;" in "".join(coloured)       # lit LEDs in their colours
    assert "⠀" in text or any("\u2800" < ch <= "\u28ff" for ch in text)  # the OLED, in braille


def test_a_drawn_game_says_draw_and_winners_are_named_from_1(tmp_path: Path) -> None:
    def ends(station: Station, hands: DemoPlayers) -> tuple[str, str, str]:
        drawn = station.session.state._replace(draw=True)
        won = station.session.state._replace(winner=1)
        station.session.state = drawn
        said_draw = outcome(station), frame_lines(station, hands.players, False)[-1]
        station.session.state = won
        return said_draw[0], said_draw[1], outcome(station)

    said, line, winner = on_station(tmp_path, "tactiki", 1, ends)
    assert said == "draw" and line.startswith("result: draw")
    assert winner == "Player 2 won"


def demo(tmp_path: Path, *args: str, turns: int = 1,
         timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "pi_app", "demo", "--turns", str(turns),
                           "--speed", "20", *args], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=timeout, check=True)


def exported(tmp_path: Path, db: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / (db.stem + ".tiki.json")
    subprocess.run([sys.executable, "-m", "pi_app", "export", "--db", str(db), "--game", "1",
                    "--out", str(out)], cwd=tmp_path, env=env, check=True, timeout=30)
    replayed = subprocess.run([sys.executable, "-m", "pi_app", "replay", str(out)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30,
                              check=False)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    record: dict[str, Any] = json.loads(out.read_text())
    return record


def test_seed_repeats_a_deal_no_seed_deals_anew_and_keep_exports(tmp_path: Path) -> None:
    runs = {}
    for name, args in (("a", ("--seed", "4242")), ("b", ("--seed", "4242")), ("c", ()),
                       ("d", ())):
        db = tmp_path / f"{name}.db"  # the deal is made at the start: c and d play no turn
        done = demo(tmp_path, "--game", "manami", "--keep", str(db), *args,
                    turns=1 if args else 0)
        seed = re.search(r"^seed (\d+) \(tikiboard demo --game manami --seed \1 ", done.stdout,
                         re.M)
        assert seed is not None, done.stdout
        assert f"database kept in {db} (tikiboard export --db {db})" in done.stdout
        runs[name] = (int(seed.group(1)), exported(tmp_path, db))
    deal = {name: (record["villages"], record["first"]) for name, (_, record) in runs.items()}
    assert runs["a"][0] == runs["b"][0] == 4242
    assert deal["a"] == deal["b"]                              # --seed: the same deal
    assert runs["c"][0] != runs["d"][0]                        # no seed: a new one each run,
    assert deal["c"] != deal["d"]                              # and a different deal
    assert sorted(p.name for p in tmp_path.glob("a.db*")) == ["a.db"]  # one file, no -wal
    assert all(record["game"] == "manami" for _, record in runs.values())
    assert runs["a"][1]["moves"] and runs["a"][1]["moves"] == runs["b"][1]["moves"]
    with pytest.raises(subprocess.CalledProcessError):          # never over an existing file
        demo(tmp_path, "--keep", str(tmp_path / "a.db"))


def test_web_serves_the_station_page_while_the_demo_plays(tmp_path: Path) -> None:
    """The address and the PIN each on a line of their own (an 80-column terminal cut the
    PIN), and the page still served after the game, until Ctrl-C (issue 31)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "pi_app", "demo", "--game", "manami",
                             "--turns", "1", "--speed", "20", "--web"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        address = ""
        for line in proc.stdout:
            found = re.match(r"page: (http://127\.0\.0\.1:\d+/)$", line)
            if found:
                address = found.group(1)
                break
        assert address
        assert re.match(r"PIN \d{6} \(for the page's actions\)$", proc.stdout.readline())
        state: dict[str, Any] = {}
        deadline = time.monotonic() + 20
        while not state and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(address + "api/state", timeout=5) as reply:
                    state = json.loads(reply.read())
            except OSError:
                time.sleep(0.2)
        assert state["snapshot"]["game"] == "manami" and "<svg" in state["svg"]
        for line in proc.stdout:  # the game ends; the page stays
            if line.startswith("The page stays served until Ctrl-C"):
                break
        assert re.match(r"  PIN \d{6}$", [proc.stdout.readline(), proc.stdout.readline()][1])
        with urllib.request.urlopen(address + "api/state", timeout=5) as reply:
            assert json.loads(reply.read())["snapshot"]["game"] == "manami"
        proc.send_signal(SIGINT)  # Ctrl-C
        proc.stdout.read()
        assert proc.wait(60) == 0
    finally:
        proc.kill()


@pytest.mark.slow
def test_the_tactiki_demo_gets_past_its_set_up_read_at_the_boards_real_scan(
        tmp_path: Path) -> None:
    """At TacTiki's measured scan (about 1 s a cycle) the demo's hands put a stack's pieces back
    one a cycle, as the station asks: put back 0.3 s apart they were first seen in one scan
    again, the station asked again, and the demo never left its set-up (0 moves in 30 turns)."""
    import io

    from pi_app.demo import run_demo

    station = asyncio.run(run_demo("tactiki", seed=3, max_turns=3, speed=20,
                                   out=io.StringIO(), data_dir=tmp_path))
    assert station.status.reading is None
    assert len(station.session.history) >= 3
