"""``python -m tools.bench.all`` runs the benchmarks and prints one JSON object (a quick smoke
run), from the checkout: the benches are not part of the installed package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_bench_prints_one_json_object_with_units_and_machine() -> None:
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-m", "tools.bench.all", "--quick", "--only",
                          "engines"], capture_output=True, text=True, timeout=300, check=False,
                         cwd=root)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["machine"]["cores"] >= 1 and data["machine"]["python"]
    engines = data["results"]["engines"]
    assert engines["unit"].startswith("per second")
    for game in ("topple", "manami", "tactiki"):
        assert engines["figures"][game]["games_per_s"] > 0
