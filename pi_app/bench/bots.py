"""Bot strength: each level against the lower ones, per game; prints one JSON object.

``python -m pi_app.bench.bots --games N [--search-games M] [--budget 300 | --budget 0.2s]
[--game topple:2 ...]``

For each game (Topple with 2, 3 and 4 seats, Manami, TacTiki) and each pair of levels, the
stronger level takes one seat and the weaker the others, the seat turning from game to game;
game ``i`` of a pair is dealt from ``random.Random(i)``. Reported per pair: games, wins, draws
(shared wins included), losses, the score ``(wins + draws / 2) / games`` with its 95 % Wilson
interval, the seconds per decision of the stronger level (p50, p95, on this machine) and the CPU
seconds the pair took. ``--budget`` is the search level's budget per decision: a playout count
(repeatable exactly) or seconds with an ``s`` suffix. ``--merge FILE...`` joins the outputs of
runs split by ``--game``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_app.bots import LEVELS

if TYPE_CHECKING:
    from pi_app.bots.base import Budget

#: Every table of the bench: game name and seats.
TABLES: tuple[tuple[str, int], ...] = (
    ("topple", 2), ("topple", 3), ("topple", 4), ("manami", 2), ("tactiki", 2))


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion (``successes`` may be fractional: a
    draw counts half)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def outcome(winners: tuple[int, ...], seat: int) -> str:
    """``"win"`` (the sole winner), ``"draw"`` (a shared win, or a game nobody won: TacTiki's
    referee draw) or ``"loss"``."""
    if winners == (seat,):
        return "win"
    return "draw" if seat in winners or not winners else "loss"


def parse_budget(text: str) -> Budget:
    """``300`` is 300 playouts per decision; ``0.2s`` is 0.2 seconds."""
    from pi_app.bots.base import Budget

    if text.endswith("s"):
        return Budget(seconds=float(text[:-1]))
    return Budget(playouts=int(text))


def play_pair(game_name: str, players: int, level: str, opponent: str, games: int,
              budget: Budget, seed: int = 0) -> dict[str, Any]:
    """``level`` in one seat (turning), ``opponent`` in the others, ``games`` games."""
    from pi_app.bots.levels import make_bot
    from pi_app.bots.play import play_game
    from pi_app.games import get_game

    game = get_game(game_name)
    options = {"players": players} if game_name == "topple" else None
    wins = draws = losses = decisions = 0
    seconds: list[float] = []
    cpu = time.process_time()
    wall = time.perf_counter()
    for i in range(games):
        seat = i % players
        bots = [make_bot(game_name, level if s == seat else opponent) for s in range(players)]
        result = play_game(game, bots, random.Random(seed + i), budget, options)
        decisions += result.decisions
        seconds += result.seconds[seat]
        kind = outcome(result.winners, seat)
        wins += kind == "win"
        draws += kind == "draw"
        losses += kind == "loss"
    score = wins + draws / 2
    low, high = wilson(score, games)
    return {
        "game": game_name, "players": players, "level": level, "opponent": opponent,
        "games": games, "wins": wins, "draws": draws, "losses": losses,
        "score": round(score / games, 4) if games else None,
        "ci95": [round(low, 4), round(high, 4)],
        "fair_share": round(1 / players, 4),
        "seconds_per_decision": {"p50": _round(_percentile(seconds, 0.5)),
                                 "p95": _round(_percentile(seconds, 0.95)),
                                 "decisions": len(seconds)},
        "decisions_per_game": round(decisions / games, 1) if games else None,
        "games_per_s": round(games / (time.perf_counter() - wall), 3),
        "cpu_s": round(time.process_time() - cpu, 1),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 5)


def _commit() -> str | None:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                             capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return None
    return out.stdout.strip() or None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games per pair")
    parser.add_argument("--search-games", type=int,
                        help="games per pair that involves the search level (default --games)")
    parser.add_argument("--budget", default="300",
                        help="search budget per decision: playouts (300) or seconds (0.2s)")
    parser.add_argument("--game", action="append",
                        help="only this table, as topple:2 or manami (repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="game i is dealt from seed + i")
    parser.add_argument("--merge", nargs="+", help="join the JSON outputs of split runs")
    args = parser.parse_args(argv)
    if args.merge:
        parts = [json.loads(Path(f).read_text()) for f in args.merge]
        merged = dict(parts[0])
        merged["results"] = [r for part in parts for r in part["results"]]
        merged["parts"] = [{k: v for k, v in part.items() if k != "results"} for part in parts]
        print(json.dumps(merged, indent=1))
        return
    tables = TABLES
    if args.game:
        wanted = {(g.split(":")[0], int(g.split(":")[1]) if ":" in g else 2) for g in args.game}
        tables = tuple(t for t in TABLES if t in wanted)
    budget = parse_budget(args.budget)
    search_games = args.games if args.search_games is None else args.search_games
    results = []
    for game_name, players in tables:
        for i, level in enumerate(LEVELS):
            for opponent in LEVELS[:i]:
                n = search_games if "search" in (level, opponent) else args.games
                results.append(play_pair(game_name, players, level, opponent, n, budget,
                                         args.seed))
    print(json.dumps({
        "bench": "bots", "commit": _commit(), "budget": args.budget,
        "machine": platform.machine(), "python": platform.python_version(),
        "pi4_scaling": "a Raspberry Pi 4 runs pure Python about 4-6x slower than this x86 core:"
                       " multiply seconds_per_decision by 5",
        "results": results}, indent=1))


if __name__ == "__main__":
    main()


def register(sub: Any) -> None:
    """``tikiboard bot``: bots against each other, games per second and the results."""
    p = sub.add_parser("bot", help="play bots against each other; print games/s and results")
    p.add_argument("--game", choices=sorted({g for g, _ in TABLES}), default="topple")
    p.add_argument("--level", choices=LEVELS, default="search", help="the bot measured")
    p.add_argument("--opponent", choices=LEVELS, help="the other seats (default: --level)")
    p.add_argument("--players", type=int, default=2, help="seats (Topple: 2 to 4)")
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--seed", type=int, default=0, help="game i is dealt from seed + i")
    p.add_argument("--budget", default="300", help="search budget: playouts, or seconds (0.2s)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.set_defaults(func=cmd_bot)


def cmd_bot(args: argparse.Namespace) -> int:
    if args.games < 1 or not (2 <= args.players <= (4 if args.game == "topple" else 2)):
        print("tikiboard: --games must be at least 1; --players 2 (Topple: 2 to 4)",
              file=sys.stderr)
        return 2
    try:
        budget = parse_budget(args.budget)
    except ValueError as exc:
        print(f"tikiboard: --budget {args.budget!r}: {exc}", file=sys.stderr)
        return 2
    opponent = args.opponent or args.level
    result = play_pair(args.game, args.players, args.level, opponent, args.games, budget,
                       args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    timing = result["seconds_per_decision"]
    low, high = result["ci95"]
    print(f"{args.game} ({args.players} players): {args.level} against {opponent}, "
          f"{result['games']} games, {result['games_per_s']} games/s")
    print(f"{args.level} won {result['wins']}, shared or drew {result['draws']}, lost "
          f"{result['losses']}: score {result['score']:.2f} (95% CI {low:.2f}-{high:.2f}; "
          f"an even share is {result['fair_share']:.2f})")
    print(f"{args.level}: {timing['p50'] * 1000:.2f} ms per decision (p50), "
          f"{timing['p95'] * 1000:.2f} ms (p95), budget {args.budget}")
    return 0
