"""``python -m tools.bench.all``: every benchmark of the project, one JSON object.

Each benchmark runs as its own process (``python -m tools.bench.NAME``), so one does not warm
or load the next, and prints its own JSON object; this collects them under one roof with the
machine they ran on. ``--quick`` shortens every run (for a smoke check; the figures in the
README come from the full run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: The checkout: every bench runs as ``python -m tools.bench.NAME`` from here.
ROOT = Path(__file__).resolve().parents[2]

#: name -> (full arguments, quick arguments)
BENCHES: dict[str, tuple[list[str], list[str]]] = {
    "engines": (["--seconds", "3"], ["--seconds", "0.5"]),
    "accuracy": (["--moves", "2000"], ["--moves", "150"]),
    "hardware": (["--seconds", "2"], ["--seconds", "0.3"]),
    "fuzz_link": (["--frames", "1000000"], ["--frames", "50000"]),
    "station": (["--moves", "30", "--idle-seconds", "30"], ["--moves", "6", "--idle-seconds",
                                                           "3"]),
    "tournament": (["--seconds", "20"], ["--seconds", "4", "--stations", "16"]),
    "remote": (["--games", "3"], ["--games", "1"]),
    "remote_leds": (["--games", "2", "--turns", "200"], ["--games", "1", "--turns", "30"]),
    # the long run (1,000 games per game type) is ``python -m tools.bench.longsoak`` alone
    "longsoak": (["--games", "20"], ["--games", "1"]),
}


def machine() -> dict[str, Any]:
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            model = next((line.split(":", 1)[1].strip() for line in info
                          if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cpu": model or platform.machine(), "cores": os.cpu_count(),
            "python": platform.python_version(), "system": platform.platform()}


def run(name: str, args: list[str]) -> dict[str, Any]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", f"tools.bench.{name}", *args],
                          capture_output=True, text=True, timeout=1800, check=False, cwd=ROOT)
    took = round(time.monotonic() - start, 1)
    try:
        result: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"],
                "exit": proc.returncode, "seconds": took}
    result.pop("machine", None)
    result["seconds"] = took
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke check)")
    parser.add_argument("--only", choices=sorted(BENCHES), action="append",
                        help="only this benchmark (repeatable)")
    args = parser.parse_args(argv)
    results = {name: run(name, quick if args.quick else full)
               for name, (full, quick) in BENCHES.items() if not args.only or name in args.only}
    print(json.dumps({"benchmark": "all", "quick": args.quick, "machine": machine(),
                      "results": results}, indent=2))
    return 0 if all("error" not in r for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
