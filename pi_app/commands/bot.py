"""``tikiboard bot``: bots against each other, games per second and the results, on this
machine (the strength table of the README comes from ``tools/bench/bots.py``, which plays the
same games)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pi_app.bots import ALL_LEVELS
from pi_app.bots.selfplay import TABLES, parse_budget, play_pair
from pi_app.games import get_game


def register(sub: Any) -> None:
    """``tikiboard bot``: bots against each other, games per second and the results."""
    p = sub.add_parser("bot", help="play bots against each other; print games/s and results")
    p.add_argument("--game", choices=sorted({g for g, _ in TABLES}), default="topple")
    p.add_argument("--level", choices=ALL_LEVELS, default="search", help="the bot measured")
    p.add_argument("--opponent", choices=ALL_LEVELS, help="the other seats (default: --level)")
    p.add_argument("--players", type=int, default=2, help="seats (Topple: 2 to 4)")
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--seed", type=int, default=0, help="game i is dealt from seed + i")
    p.add_argument("--budget", default="300", help="search budget: playouts, or seconds (0.2s)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.set_defaults(func=cmd_bot)


def cmd_bot(args: argparse.Namespace) -> int:
    if args.games < 1 or args.players not in get_game(args.game).player_counts:
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
    # Process CPU, not wall time: a busy machine does not make the bot look slower than it is.
    print(f"{args.level}: {timing['p50'] * 1000:.2f} ms of CPU per decision (p50), "
          f"{timing['p95'] * 1000:.2f} ms (p95), budget {args.budget}")
    return 0
