"""``tikiboard diag``: bounded, useful output with the simulated board and mocks, clear failures
for a bad pin map or a missing sensor board."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_app.commands.diag import register
from pi_app.hw.pinmap import PINMAP
from pi_app.readings import (
    ButtonPressed,
    HardwareFault,
    PresenceChanged,
    Snapshot,
    TagsSeen,
    apply_reading,
)

pytestmark = pytest.mark.realtime


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="tikiboard")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["diag", *argv])
    code: int = args.func(args)
    return code


def test_sim_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    png = tmp_path / "screen.png"
    start = time.monotonic()
    assert run("--sim", "--seconds", "0.6", "--json", "--game", "manami", "--png", str(png)) == 0
    assert time.monotonic() - start < 5
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["link_up"] and report["selftest"]["readers"] == [0] * 9
    assert report["leds"]["frames"] == 4 + 38 + 1
    assert report["leds"]["max_ma"] <= 2000
    assert report["buttons"]["pressed"] == ["ok", "back", "menu"]
    cells = {c["cell"]: c for c in report["cells"]}
    assert cells["a1"]["tags"] == ["04A1B2C3D4E5F6"] and cells["a1"]["presence"] is True
    assert len(cells["b1"]["tags"]) == 2 and cells["a1/b1"]["tags"] is None
    assert report["counters"]["frames_good"] > 3 and report["counters"]["frames_bad"] == 0
    assert png.exists()
    assert [(s["step"], s["result"]) for s in report["steps"]] == [
        ("sensor board answers", "PASS"), ("every reader answers", "PASS"),
        ("presence chain", "PASS"), ("no reader faults while watching", "PASS"),
        ("each cell reads only its own tags", "PASS"), ("LED test", "PASS"),
        ("display test", "PASS"), ("button test", "PASS")]


def test_the_steps_name_what_failed(capsys: pytest.CaptureFixture[str]) -> None:
    """A missing sensor board fails its step and skips the readers'; the parts diag did not run
    are SKIP, and the exit status says something failed."""
    assert run("--port", "/dev/null/none", "--seconds", "0.2", "--no-leds", "--no-display",
               "--no-buttons") == 1
    out = capsys.readouterr().out
    assert "FAIL  sensor board answers" in out
    assert "SKIP  every reader answers: no sensor board" in out
    assert "SKIP  LED test" in out and "PASS  no reader faults while watching" in out


def test_sim_text_view(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--sim", "--seconds", "0.4", "--no-leds", "--no-display", "--no-buttons") == 0
    out = capsys.readouterr().out
    assert "link up: tikifw" in out and "self-test: 10/10 readers answer" in out
    assert "s1     cell  R0     present   04A1B2C3D4E5F6" in out
    assert "link: frames_good" in out


def test_bad_pin_map(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "pinmap.json"
    bad.write_text(PINMAP.read_text().replace('"back": 6', '"back": 5'))
    assert run("--sim", "--pinmap", str(bad)) == 2
    err = capsys.readouterr().err
    assert "pi.buttons.back: GPIO 5 is already used by pi.buttons.ok" in err


def test_missing_sensor_board(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    start = time.monotonic()
    code = run("--port", str(tmp_path / "no-such-device"), "--seconds", "0.3", "--json",
               "--no-leds", "--no-display", "--no-buttons")
    assert code == 1 and time.monotonic() - start < 4
    report = json.loads(capsys.readouterr().out)
    assert report["link_up"] is False and report["counters"]["open_failures"] >= 1


def test_module_entry_point() -> None:
    run_ = subprocess.run([sys.executable, "-m", "pi_app.commands.diag", "--sim", "--seconds",
                           "0.3", "--no-leds", "--no-display", "--no-buttons", "--game",
                           "tactiki"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert run_.returncode == 0, run_.stderr
    assert "e5     cell  R24" in run_.stdout


def test_hardware_never_imports_the_rules() -> None:
    """Hardware speaks in channels and indexes; rules and inference live elsewhere."""
    banned = ("pi_app.games", "pi_app.board.tracker", "pi_app.board.inference",
              "pi_app.referee")
    root = Path(__file__).resolve().parent.parent
    for path in [*(root / "pi_app" / "hw").glob("*.py"), root / "tools/bench/hardware.py"]:
        for line in path.read_text().splitlines():
            words = line.split()
            if words[:1] in (["import"], ["from"]) and len(words) > 1:
                assert not words[1].startswith(banned), f"{path.name} imports {words[1]}"


def test_apply_reading_keeps_the_raw_picture_diag_and_hil_check_share() -> None:
    """Changes update one entry, a snapshot replaces the picture (a reader it no longer lists
    is gone), a fault or a button changes nothing; the same dicts stay in place."""
    tags: dict[int, frozenset[str]] = {}
    presence: dict[int, bool] = {}
    apply_reading(TagsSeen(0.0, 4, frozenset({"04AA"})), tags, presence)
    apply_reading(PresenceChanged(0.1, 2, True), tags, presence)
    apply_reading(HardwareFault(0.2, "reader", 4, False, "no answer"), tags, presence)
    apply_reading(ButtonPressed(0.3, "ok"), tags, presence)
    assert tags == {4: frozenset({"04AA"})} and presence == {2: True}
    picture = (tags, presence)
    apply_reading(Snapshot(0.4, (frozenset(), frozenset({"04BB"})), (False,)), tags, presence)
    assert tags == {0: frozenset(), 1: frozenset({"04BB"})} and presence == {0: False}
    assert picture[0] is tags and picture[1] is presence
