"""Bot strength: each level against the lower ones, per game; prints one JSON object.

``python -m tools.bench.bots --games N [--search-games M] [--budget 300 | --budget 0.2s]
[--game topple:2 ...] [--pair search:greedy ...] [--seed S]``

For each game (Topple with 2, 3 and 4 seats, Manami, TacTiki) and each pair of levels, the
stronger level takes one seat and the weaker the others, the seat turning from game to game;
game ``i`` of a pair is dealt from ``random.Random(i)``. Reported per pair: games, wins, draws
(shared wins included), losses, the score ``(wins + draws / 2) / games`` with its 95 % Wilson
interval, the seconds per decision of the stronger level (p50, p95: this process's CPU time on
this machine, which other work sharing it does not inflate as it does the wall clock) and the
CPU seconds the pair took. ``--budget`` is the search level's budget per decision: a playout count
(repeatable exactly) or seconds with an ``s`` suffix. ``--merge FILE...`` joins the outputs of
runs split by ``--game`` or ``--pair``, or by ``--seed`` (games ``S .. S+N-1``): results of the
same pair at the same budget from runs over different games are pooled into one (counts added,
the interval computed anew; ``parts`` keeps each run's seed, games, commit and seconds per
decision), so a long pair can be run in pieces as time allows.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
from pathlib import Path
from typing import Any

from pi_app.bots import LEVELS
from pi_app.bots.selfplay import TABLES, parse_budget, play_pair, wilson


def _commit() -> str | None:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                             capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return None
    return out.stdout.strip() or None


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One output from several runs: a pair run in more than one part (same budget, other
    seeds) is pooled; a pair run twice over the same games is an error (it would count them
    twice)."""
    merged = dict(parts[0])
    pooled: dict[tuple[Any, ...], dict[str, Any]] = {}
    for part in parts:
        for result in part["results"]:
            key = (result["game"], result["players"], result["level"], result["opponent"],
                   part["budget"])
            run = {"seed": part.get("seed", 0), "games": result["games"],
                   "commit": part.get("commit"),
                   "seconds_per_decision": result["seconds_per_decision"]}
            if key not in pooled:  # each result names its budget: split runs may differ
                pooled[key] = {**result, "budget": part["budget"], "parts": [run]}
                continue
            into = pooled[key]
            for earlier in into["parts"]:
                if earlier["seed"] < run["seed"] + run["games"] and \
                        run["seed"] < earlier["seed"] + earlier["games"]:
                    raise ValueError(f"{key}: runs from seed {earlier['seed']} and "
                                     f"{run['seed']} share games")
            for name in ("games", "wins", "draws", "losses", "cpu_s"):
                into[name] = round(into[name] + result[name], 1) if name == "cpu_s" \
                    else into[name] + result[name]
            into["parts"].append(run)
            score = into["wins"] + into["draws"] / 2
            into["score"] = round(score / into["games"], 4)
            into["ci95"] = [round(x, 4) for x in wilson(score, into["games"])]
            decisions = [p["seconds_per_decision"]["decisions"] for p in into["parts"]]
            into["seconds_per_decision"] = into["parts"][decisions.index(max(decisions))][
                "seconds_per_decision"]  # the largest part's: percentiles do not add up
    merged["results"] = list(pooled.values())
    merged["parts"] = [{k: v for k, v in part.items() if k != "results"} for part in parts]
    return merged


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games per pair")
    parser.add_argument("--search-games", type=int,
                        help="games per pair that involves the search level (default --games)")
    parser.add_argument("--budget", default="300",
                        help="search budget per decision: playouts (300) or seconds (0.2s)")
    parser.add_argument("--game", action="append",
                        help="only this table, as topple:2 or manami (repeatable)")
    parser.add_argument("--pair", action="append",
                        help="only this pair, as search:greedy (repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="game i is dealt from seed + i")
    parser.add_argument("--merge", nargs="+", help="join the JSON outputs of split runs")
    args = parser.parse_args(argv)
    if args.merge:
        try:
            merged = merge([json.loads(Path(f).read_text()) for f in args.merge])
        except (OSError, ValueError, KeyError) as error:
            parser.error(f"--merge: {error}")
        print(json.dumps(merged, indent=1))
        return
    tables = TABLES
    if args.game:
        wanted = {(g.split(":")[0], int(g.split(":")[1]) if ":" in g else 2) for g in args.game}
        tables = tuple(t for t in TABLES if t in wanted)
    budget = parse_budget(args.budget)
    commit = _commit()  # now, while the code on disk is the code loaded
    search_games = args.games if args.search_games is None else args.search_games
    results = []
    for game_name, players in tables:
        for i, level in enumerate(LEVELS):
            for opponent in LEVELS[:i]:
                if args.pair and f"{level}:{opponent}" not in args.pair:
                    continue
                n = search_games if "search" in (level, opponent) else args.games
                results.append(play_pair(game_name, players, level, opponent, n, budget,
                                         args.seed))
    print(json.dumps({
        "bench": "bots", "commit": commit, "budget": args.budget, "seed": args.seed,
        "machine": platform.machine(), "python": platform.python_version(),
        "pi4_scaling": "a Raspberry Pi 4 runs pure Python about 4-6x slower than this x86 core:"
                       " multiply seconds_per_decision by 5",
        "results": results}, indent=1))


if __name__ == "__main__":
    main()
