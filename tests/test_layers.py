"""The layers the README states hold: import-linter checks the contracts in pyproject.toml
(``[tool.importlinter]``) over every import in ``pi_app`` and ``tikifw``, including the ones
inside functions, and the suite fails with its report.

A second test reads the contracts themselves, so the layering cannot be loosened quietly by
editing a contract away: each edge the design forbids must be in one.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

#: What each layer must never import (docs/design.md, README "Layout").
FORBIDDEN = {
    "pi_app.games": ["pi_app.readings", "pi_app.ids", "pi_app.records", "pi_app.board",
                     "pi_app.hw", "pi_app.sim", "pi_app.referee", "pi_app.net", "pi_app.commands"],
    "pi_app.readings": ["pi_app.board", "pi_app.hw", "pi_app.games"],
    "pi_app.ids": ["pi_app.referee", "pi_app.net"],
    "pi_app.board": ["pi_app.hw", "pi_app.net", "pi_app.referee", "pi_app.sim"],
    "pi_app.hw": ["pi_app.board", "pi_app.games", "pi_app.referee", "pi_app.net"],
    "pi_app.referee": ["pi_app.sim", "pi_app.net", "pi_app.commands", "pi_app.station_main",
                       "pi_app.demo"],
    "pi_app.records": ["pi_app.board", "pi_app.hw", "pi_app.referee", "pi_app.net"],
    "pi_app.bots": ["pi_app.board", "pi_app.hw", "pi_app.referee", "pi_app.net"],
    "pi_app.sim": ["pi_app.referee", "pi_app.net"],
    "pi_app.net": ["pi_app.hw", "pi_app.sim", "pi_app.station_main"],
    "tikifw": ["pi_app"],
    # The benches and the docs' renderer are not installed: the station must never need them.
    "pi_app": ["tools"],
}


def test_import_contracts_are_kept() -> None:
    run = subprocess.run([str(BIN / "lint-imports"), "--no-cache"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_forbidden_edge_is_in_a_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert set(config["root_packages"]) == {"pi_app", "tikifw", "tools"}
    for source, targets in FORBIDDEN.items():
        covered = {
            target
            for contract in config["contracts"]
            if contract["type"] == "forbidden" and source in contract["source_modules"]
            for target in contract["forbidden_modules"]}
        missing = [t for t in targets if t not in covered]
        assert not missing, f"no contract forbids {source} -> {missing}"
