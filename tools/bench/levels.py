"""Level ratings: a round robin among the named levels and the random anchor, per game, rated
on one Elo-like scale with 95 % intervals; prints one JSON object.

``python -m tools.bench.levels --games N [--game tactiki ...] [--seed S]``
``python -m tools.bench.levels --merge FILE... [--markdown]`` (runs split by game or seed)

Who plays: ``random`` (the anchor, rated 0) and the named levels ``beginner``, ``casual`` (the
greedy level: the second anchor), ``club`` and ``strongest`` (:data:`pi_app.bots.levels.NAMED`),
every pair ``N`` games, the seats turning from game to game, game ``i`` of a pair dealt from
``random.Random(seed + i)``. Topple is rated at two players, the table a level plays one person
at. Each level plays with its own fixed playout budget, so a run repeats exactly.

The scale: the Bradley-Terry model (the logistic model behind Elo, 400 points for ten to one
odds) fitted by maximum likelihood to every game of the round robin, a draw counting half a
win to each side, with one drawn game added to every pair as a prior (without it a level that
won every game against another would be rated infinitely far above it). ``random`` is pinned
at 0; ``above_casual`` gives each rating against the greedy level's. The interval is the
2.5 and 97.5 percentiles of 400 bootstrap fits, each on the games of every pair resampled
with replacement. CPU: each level's seconds per decision over all its games (p50, p95; this
process's CPU time, which other work on a shared machine does not add to), and the Pi 4
estimate (five times as long: ``tools/bench/bots.py``'s figure for pure Python on a Pi 4).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

from pi_app.bots import NAMED_LEVELS
from pi_app.bots.base import Budget
from pi_app.bots.levels import NAMED, make_bot
from pi_app.bots.play import play_game
from pi_app.bots.selfplay import outcome
from pi_app.games import get_game

#: Who is rated, weakest first; ``random`` is the anchor at 0.
PLAYERS: tuple[str, ...] = ("random", *NAMED_LEVELS)
#: The games rated, each at the table a level plays one person at.
GAMES: tuple[str, ...] = ("topple", "manami", "tactiki")
#: A Raspberry Pi 4 runs pure Python about five times slower than this machine's x86 core.
PI_FACTOR = 5.0
BOOTSTRAP = 400


def play_round_robin(game_name: str, games: int, seed: int = 0) -> dict[str, Any]:
    """Every pair of :data:`PLAYERS` ``games`` games: the results (per game, from the first
    level's side: 1 win, 0.5 draw, 0 loss) and each level's seconds per decision."""
    game = get_game(game_name)
    options = {"players": 2} if len(game.player_counts) > 1 else None
    pairs: dict[str, list[float]] = {}
    seconds: dict[str, list[float]] = {name: [] for name in PLAYERS}
    start = time.process_time()
    for i, level in enumerate(PLAYERS):
        for other in PLAYERS[:i]:
            results: list[float] = []
            for g in range(games):
                seat = g % 2
                names = [level, other] if seat == 0 else [other, level]
                bots = [make_bot(game_name, name) for name in names]
                played = play_game(game, bots, random.Random(seed + g), Budget(), options,
                                   clock=time.process_time)
                kind = outcome(played.winners, seat)
                results.append(1.0 if kind == "win" else 0.5 if kind == "draw" else 0.0)
                seconds[level] += played.seconds[seat]
                seconds[other] += played.seconds[1 - seat]
            pairs[f"{level}:{other}"] = results
            print(f"{game_name} {level}:{other} {sum(results)}/{games}"
                  f" ({time.process_time() - start:.0f} s CPU)", file=sys.stderr, flush=True)
    return {"pairs": pairs, "seconds": seconds, "cpu_s": round(time.process_time() - start, 1)}


def fit(pairs: dict[str, list[float]], prior: float = 1.0) -> dict[str, float]:
    """Bradley-Terry ratings in Elo points (``random`` at 0) from each pair's results (from
    the first-named level's side), with ``prior`` drawn games added to every pair; fitted by
    the minorization-maximization iteration (Hunter 2004), which converges for this model."""
    names = sorted({n for key in pairs for n in key.split(":")}, key=PLAYERS.index)
    wins = dict.fromkeys(names, 0.0)
    meets: dict[tuple[str, str], float] = {}
    for key, results in pairs.items():
        a, b = key.split(":")
        score = sum(results) + prior / 2
        n = len(results) + prior
        wins[a] += score
        wins[b] += n - score
        meets[a, b] = meets[b, a] = n
    against: dict[str, list[tuple[str, float]]] = {i: [] for i in names}
    for (a, b), n in meets.items():
        against[a].append((b, n))
    gamma = dict.fromkeys(names, 1.0)
    for _ in range(2000):
        new = {}
        for i in names:
            g = gamma[i]
            new[i] = wins[i] / sum(n / (g + gamma[j]) for j, n in against[i])
        norm = new[names[0]]
        new = {k: v / norm for k, v in new.items()}
        done = max(abs(math.log(new[k] / gamma[k])) for k in names) < 1e-10
        gamma = new
        if done:
            break
    return {k: 400.0 * math.log10(v) for k, v in gamma.items()}


def rate(pairs: dict[str, list[float]], seed: int = 0) -> dict[str, dict[str, Any]]:
    """Each level's rating with its bootstrap 95 % interval (see the module's docstring)."""
    point = fit(pairs)
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {k: [] for k in point}
    for _ in range(BOOTSTRAP):
        again = {key: [r[rng.randrange(len(r))] for _ in r] for key, r in pairs.items()}
        for k, v in fit(again).items():
            samples[k].append(v)
    out = {}
    for k, v in point.items():
        ordered = sorted(samples[k])
        low = ordered[int(0.025 * len(ordered))]
        high = ordered[min(len(ordered) - 1, int(0.975 * len(ordered)))]
        out[k] = {"elo": round(v), "ci95": [round(low), round(high)],
                  "above_casual": round(v - point.get("casual", 0.0))}
    return out


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(game_name: str, played: dict[str, Any], seed: int) -> dict[str, Any]:
    """One game's ratings, pair scores and CPU figures, from :func:`play_round_robin`."""
    ratings = rate(played["pairs"], seed)
    levels = {}
    for name in PLAYERS:
        secs = played["seconds"][name]
        p50, p95 = _percentile(secs, 0.5), _percentile(secs, 0.95)
        levels[name] = {
            **ratings[name],
            "cpu_s_per_decision": {"p50": None if p50 is None else round(p50, 5),
                                   "p95": None if p95 is None else round(p95, 5),
                                   "decisions": len(secs)},
            "pi4_estimate_s_per_decision_p95": None if p95 is None else round(
                p95 * PI_FACTOR, 3)}
    return {"game": game_name, "players": 2, "levels": levels,
            "pairs": {k: {"games": len(r), "score": round(sum(r) / len(r), 3)}
                      for k, r in played["pairs"].items()},
            "results": played["pairs"], "cpu_s": played["cpu_s"]}


def markdown(data: dict[str, Any]) -> str:
    """The level table for ``docs/levels.md``: per game, each level's rating and interval and
    its CPU per decision here and on a Pi 4."""
    lines = ["| game | level | Elo-like rating | 95 % interval | vs casual | CPU/decision p95 here"
             " | Pi 4 estimate |", "|---|---|---:|---|---:|---:|---:|"]
    for result in data["results"]:
        for name, level in result["levels"].items():
            cpu = level["cpu_s_per_decision"]["p95"]
            pi = level["pi4_estimate_s_per_decision_p95"]
            low, high = level["ci95"]
            lines.append(f"| {result['game']} | {name} | {level['elo']} | {low} to {high} | "
                         f"{level['above_casual']:+d} | "
                         f"{'-' if cpu is None else f'{cpu * 1000:.1f} ms'} | "
                         f"{'-' if pi is None else f'{pi * 1000:.0f} ms'} |")
    return "\n".join(lines)


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One output from runs split by ``--game`` or by ``--seed`` (other games of the same
    round robin): a game run in several parts is rated anew on all its games; its CPU figures
    are the largest part's (percentiles do not add up). Parts must not share games."""
    by_game: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for part in parts:
        for result in part["results"]:
            by_game.setdefault(result["game"], []).append((part, result))
    results = []
    for game_name, runs in by_game.items():
        spans = sorted((p["seed"], p["seed"] + p["games_per_pair"]) for p, _ in runs)
        for (_, end), (start, _) in itertools.pairwise(spans):
            if start < end:
                raise ValueError(f"{game_name}: two runs share games (seeds {spans})")
        pairs: dict[str, list[float]] = {}
        for _, result in runs:
            for key, scores in result["results"].items():
                pairs.setdefault(key, []).extend(scores)
        largest = max(runs, key=lambda run: run[0]["games_per_pair"])[1]
        ratings = rate(pairs, runs[0][0]["seed"] or 0)
        levels = {name: {**level, **ratings[name]} for name, level in largest["levels"].items()}
        results.append({**largest, "levels": levels, "results": pairs,
                        "pairs": {k: {"games": len(r), "score": round(sum(r) / len(r), 3)}
                                  for k, r in pairs.items()},
                        "cpu_s": round(sum(r["cpu_s"] for _, r in runs), 1),
                        "parts": [{"seed": p["seed"], "games_per_pair": p["games_per_pair"]}
                                  for p, _ in runs]})
    return {**parts[0], "games_per_pair": None, "seed": None, "results": results}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per pair")
    parser.add_argument("--game", choices=GAMES, action="append", help="only this game")
    parser.add_argument("--seed", type=int, default=0, help="game i is dealt from seed + i")
    parser.add_argument("--merge", nargs="+", help="join the JSON outputs of runs per game")
    parser.add_argument("--markdown", action="store_true",
                        help="with --merge: print the level table instead of JSON")
    args = parser.parse_args(argv)
    if args.merge:
        parts = [json.loads(Path(f).read_text()) for f in args.merge]
        merged = parts[0] if len(parts) == 1 else merge(parts)
        print(markdown(merged) if args.markdown else json.dumps(merged, indent=1))
        return
    results = [report(name, play_round_robin(name, args.games, args.seed), args.seed)
               for name in args.game or GAMES]
    print(json.dumps({
        "bench": "levels", "games_per_pair": args.games, "seed": args.seed,
        "levels": {name: NAMED[name].to_json() for name in NAMED_LEVELS},
        "machine": platform.machine(), "python": platform.python_version(),
        "note": "CPU shared with other work while measured: seconds are this process's CPU"
                " time, which that does not add to, but a busy machine's caches still slow it",
        "results": results}, indent=1))


if __name__ == "__main__":
    main()
