"""Issue 30's targets, measured: rest to acceptance, decision time and questions, as JSON.

Run ``python -m tools.bench.latency [--moves N] [--tables N] [--game NAME] [--seed S]``.

For each game it plays the accuracy bench's varied players at zero, low and default noise
(:mod:`tools.bench.accuracy`, about ``--moves`` moves each) and ``--tables`` generated tables
(:mod:`tools.bench.generated`), and prints, per run, the figures the issue sets targets for,
each beside its target and whether it is met:

* ``rest_to_accept_s``: from the last piece at rest to acceptance, median (target at most
  0.5 s) and p95 (at most 1.5 s), over every move the board decided (at once, rested or
  settled; not the ones a question decided), at the board file's scan period;
* ``decision_ms_p99``: wall-clock time per event fed to the follower, p99 (at most 1 ms; this
  machine's figure, not a Pi's);
* ``questions_per_100``: questions asked per 100 moves made (at most 3);
* ``phantom`` and ``missed`` (0).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from typing import Any

from pi_app.games import GAME_NAMES
from tools.bench import accuracy, generated

#: The issue's targets: (figure, the most it may be).
TARGETS = {
    "rest_p50_s": 0.5,
    "rest_p95_s": 1.5,
    "decision_ms_p99": 1.0,
    "questions_per_100": 3.0,
    "phantom": 0,
    "missed": 0,
}


def judged(figures: dict[str, Any]) -> dict[str, Any]:
    """``figures`` with ``met``: each target's figure and whether it is within the target."""
    met = {
        name: {
            "value": figures[name],
            "target": most,
            "met": figures[name] is not None and figures[name] <= most,
        }
        for name, most in TARGETS.items()
    }
    return {**figures, "met": all(m["met"] for m in met.values()), "targets": met}


def from_accuracy(report: dict[str, Any]) -> dict[str, Any]:
    rest = report["rest_to_accept_s"]
    return judged(
        {
            "moves": report["moves_made"],
            "rest_p50_s": rest["p50"],
            "rest_p95_s": rest["p95"],
            "decision_ms_p99": report["decision_ms"]["p99"],
            "questions_per_100": round(100 * report["prompts"] / max(report["moves_made"], 1), 2),
            "phantom": report["phantom"],
            "missed": report["missed"],
        }
    )


def from_generated(report: dict[str, Any]) -> dict[str, Any]:
    rest = report["rest_to_accept_s"]
    return judged(
        {
            "moves": report["moves_made"],
            "rest_p50_s": rest["p50"],
            "rest_p95_s": rest["p95"],
            "decision_ms_p99": report["decision_ms"]["p99"],
            "questions_per_100": report["prompts_per_100"],
            "phantom": report["phantom"],
            "missed": report["missed"],
        }
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=300, help="moves per noise level")
    parser.add_argument("--tables", type=int, default=20, help="generated tables per game")
    parser.add_argument("--game", choices=GAME_NAMES, action="append")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {}
    for name in args.game or GAME_NAMES:
        runs: dict[str, Any] = {}
        for label, noisy, scale in (
            ("zero", False, 1.0),
            ("low", True, accuracy.LOW),
            ("default", True, 1.0),
        ):
            runs[f"varied-{label}"] = from_accuracy(
                accuracy.run(
                    name, args.moves, args.seed, noisy=noisy, players="varied", scale=scale
                )
            )
        runs["generated"] = from_generated(generated.run(name, args.tables, args.seed, 30))
        figures[name] = runs
    print(
        json.dumps(
            {
                "benchmark": "latency",
                "seed": args.seed,
                "moves": args.moves,
                "tables": args.tables,
                "machine": {
                    "cpu": platform.processor() or platform.machine(),
                    "python": platform.python_version(),
                },
                "met": all(r["met"] for g in figures.values() for r in g.values()),
                "figures": figures,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
