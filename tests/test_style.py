"""The code stays ruff- and mypy-clean: the suite fails on the first lint or type error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)


def test_ruff_clean() -> None:
    run = _run(str(BIN / "ruff"), "check", "--no-cache", ".")
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_strict_clean() -> None:
    run = _run(str(BIN / "mypy"))
    assert run.returncode == 0, run.stdout + run.stderr


def test_rules_never_import_hardware() -> None:
    """The engines are pure: no I/O, clocks or hardware modules (docs/design.md)."""
    banned = ("serial", "gpiozero", "neopixel", "board", "luma", "paho", "sqlite3", "socket",
              "time", "asyncio", "pi_app.hw", "pi_app.board", "pi_app.referee", "pi_app.net")
    for path in (ROOT / "pi_app" / "games").glob("*.py"):
        for line in path.read_text().splitlines():
            words = line.split()
            if words[:1] in (["import"], ["from"]) and len(words) > 1:
                module = words[1]
                assert not any(module == b or module.startswith(b + ".") for b in banned), \
                    f"{path.name} imports {module}"
