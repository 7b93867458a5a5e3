"""``tikiboard bench`` runs the benchmarks and prints one JSON object (a quick smoke run)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_bench_prints_one_json_object_with_units_and_machine() -> None:
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    run = subprocess.run([*cmd, "bench", "--quick", "--only", "engines"], capture_output=True,
                         text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["machine"]["cores"] >= 1 and data["machine"]["python"]
    engines = data["results"]["engines"]
    assert engines["unit"].startswith("per second")
    for game in ("topple", "manami", "tactiki"):
        assert engines["figures"][game]["games_per_s"] > 0
