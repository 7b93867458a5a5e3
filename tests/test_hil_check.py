"""hardware/hil_check.py against the simulated firmware over a pty, with a robot "maker" that
does what it is told on the simulated board: a sound board passes every step, and each board
fault the script is there for (a neighbour reading the tag, presence closing under a hovering
piece, a stack losing a tag, a dead reader) fails the step that should catch it."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pi_app.board.geometry import load_geometry
from pi_app.hw.simfirmware import SimFirmware

pytestmark = pytest.mark.realtime

SCRIPT = Path(__file__).resolve().parent.parent / "hardware" / "hil_check.py"


@cache
def hil() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hil_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["hil_check"] = module
    spec.loader.exec_module(module)
    return module


class Robot:
    """Moves pieces on the simulated board as instructed; ``faults`` makes it a bad board."""

    def __init__(self, sim: SimFirmware, game: str, *faults: str) -> None:
        self.sim, self.geo, self.faults = sim, load_geometry(game), set(faults)
        self.told: list[str] = []
        self.serial = 0

    def uid(self) -> str:
        self.serial += 1
        return f"E00401000000{self.serial:04X}"

    def __call__(self, ins: Any) -> None:
        self.told.append(ins.text)
        cell = self.geo.cell(ins.cell)
        reader, sensor = cell.reader, cell.presence
        if ins.action in ("place", "hover", "stack"):
            count = ins.count if ins.action == "stack" else 1
            if reader is not None:
                uids = [self.uid() for _ in range(count)]
                if ins.action == "stack" and "stack" in self.faults:
                    uids = uids[:-1]  # the top tag is never read
                self.sim.set_tags(reader, uids)
                if "neighbour" in self.faults:
                    self.sim.set_tags((reader + 1) % self.geo.reader_count, uids)
            if sensor is not None:
                self.sim.set_presence(sensor, ins.action != "hover" or "hover" in self.faults)
        else:
            if reader is not None:
                self.sim.set_tags(reader, [])
                if "neighbour" in self.faults:
                    self.sim.set_tags((reader + 1) % self.geo.reader_count, [])
            if sensor is not None:
                self.sim.set_presence(sensor, False)


@pytest.fixture
def manami() -> Iterator[SimFirmware]:
    geo = load_geometry("manami")
    with SimFirmware(geo.reader_count, geo.presence_count, board="manami",
                     scan_period_ms=20) as sim:
        yield sim


ARGS = ["--game", "manami", "--cells", "b2,a1/b1", "--hold", "0.3", "--timeout", "3"]


def run(sim: SimFirmware, robot: Robot, *extra: str) -> int:
    code: int = hil().main([*ARGS, "--port", sim.path, *extra], operator=robot)
    return code


def test_a_sound_board_passes_every_step(manami: SimFirmware, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    robot = Robot(manami, "manami")
    assert run(manami, robot, "--json", str(tmp_path / "r.json")) == 0
    out = capsys.readouterr().out
    assert "0 failed" in out and "FAIL" not in out
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    assert {(r["step"], r["cell"]) for r in results} >= {
        ("selftest", None), ("cells", "b2"), ("cells", "a1/b1"), ("height", "b2"),
        ("height", "a1/b1"), ("stacks", "b2"), ("cycle", None)}
    assert any("4 mm of card on b2" in t for t in robot.told)
    assert any("stack of 3" in t for t in robot.told)


@pytest.mark.parametrize(("fault", "step", "why"), [
    ("neighbour", "cells", "also read by R5"),
    ("hover", "height", "closes 4 mm above the surface"),
    ("stack", "stacks", "2 of 3 tags read"),
])
def test_each_fault_fails_its_step(manami: SimFirmware, fault: str, step: str, why: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert run(manami, Robot(manami, "manami", fault), "--steps", step, "--timeout", "1") == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if f"FAIL  {step}" in x and "b2" in x)
    assert why in line, out


def test_a_cycle_slower_than_the_board_file_fails(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35: the board files carry a modelled cycle; the Pico's own SCAN_TIMES is the
    authority. A board that reports 1 s against Manami's file fails, with the figure to set."""
    geo = load_geometry("manami")
    with SimFirmware(geo.reader_count, geo.presence_count, board="manami",
                     reader_ms=120.0) as slow:
        for reader in range(geo.reader_count):  # a piece on every village: all read each cycle
            slow.set_tags(reader, [f"E004010000000{reader:03X}"])
        assert run(slow, Robot(slow, "manami"), "--steps", "cycle") == 1
    out = capsys.readouterr().out
    assert "FAIL  cycle" in out and "set scan_period_s to" in out


def test_a_dead_reader_fails_the_selftest(manami: SimFirmware,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    manami.fail_reader(4)
    assert run(manami, Robot(manami, "manami"), "--steps", "selftest") == 1
    assert "FAIL  selftest" in capsys.readouterr().out


def test_bad_arguments_and_no_board(tmp_path: Path) -> None:
    robot: Any = print
    assert hil().main(["--game", "manami", "--cells", "z9"], operator=robot) == 2
    assert hil().main(["--game", "manami", "--steps", "dance"], operator=robot) == 2
    assert hil().main(["--game", "manami", "--port", str(tmp_path / "none"),
                       "--timeout", "0.5"], operator=robot) == 2
