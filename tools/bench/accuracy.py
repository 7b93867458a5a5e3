"""Move inference on simulated noisy play: accuracy, decision time and settle cost, as JSON.

Run ``python -m tools.bench.accuracy [--moves N] [--game NAME] [--seed S] [--players P]
[--clean | --low]``.
``--players steady`` (the default) are the project's first simulated players: they wait until
the station has settled after every move. ``--players varied`` keep real players' pace (the next
move 0.5-4 s after the last came to rest, illegal attempts undone after 1-3 s), each table's
hands drawn at random (fast or slow, sliding, hovering, knocking, fumbling) on sensors whose
empty contacts chatter and close early. ``--clean`` plays without noise or mischief (zero
noise); ``--low`` keeps the varied players' ways and their illegal moves and takebacks but
makes each mishap of hands and sensors a quarter as likely (low noise). Simulated hands play
whole games (slides across neighbours, hesitations, knocked pieces, reader misses, presence
flicker, deliberate illegal moves, takebacks) through the real tracker, inference and follower.
Reported per game:

* ``phantom``: accepted moves that nobody made (target 0); ``missed``: moves made and never
  accepted (target 0); ``revised``: moves first taken as the middle of a longer move and then
  corrected by the follower (counted apart: the record ends right, the LEDs were briefly wrong);
* ``illegal_made`` / ``illegal_reported`` and ``mismatches_raised`` / ``mismatches_resolved``;
  an attempt is reported when a mismatch was shown before its player began to undo it (at
  pace: 1-3 s after it rested); ``unreported_tables`` lists the others by table, each with
  when it rested, until when its player looked, when the undo touched the board and when a
  mismatch came, if one did (replay the table with ``--table SEED`` to trace it);
* ``decision_ms``: wall-clock time per sensor event fed to the follower, p50 and p99 (target
  p99 at most 1 ms on an x86 core), with ``position_build_ms``, the precomputation done once
  per accepted move while the players reach for the next piece;
* ``bad_tables``: every game (one table, its own seed) with a phantom or missed move, and
  what went wrong when (simulated seconds); ``--table SEED`` plays that game again alone;
* ``rest_to_accept_s``: simulated seconds from the last piece coming to rest to acceptance, for
  moves accepted without a question: ``at once`` (a clear, finished move: target two scan
  periods), ``rested`` (clear, but a piece arrived on a stack, where a piece carried over it
  looks the same for a moment: the board's ``settle_min``) and ``settled`` (moves that are also
  the middle of another move, or only lift pieces off, wait on purpose); ``p50`` and ``p95``
  over all of them. The issue's target (p95 at most 1 s) is for clear moves, so they are
  reported apart, ``clear_p50``, ``clear_p95`` and ``clear_share`` (and ``not_clear_...``),
  clear being decided by the rules alone (:func:`clear_move`), never by what the follower did:
  its own verdict would only say that it waited where it meant to.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import time
from collections import Counter
from itertools import count
from typing import Any

from pi_app.board.equipment import registry_for
from pi_app.board.geometry import load_geometry
from pi_app.board.inference import Position
from pi_app.games import GAME_NAMES, get_game
from pi_app.games.base import Game, View
from pi_app.sim.hands import Noise
from pi_app.sim.table import Pace, Rates, SimTable, TableStats

PLAYERS = ("steady", "varied")
#: ``--low``: the varied players' mishaps, hands and sensors alike, at this share of the default.
LOW = 0.25


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def _picture(view: View) -> frozenset[tuple[str, tuple[str, ...]]]:
    """A view as the sensors see it: the pieces on each occupied cell, in no order (stacked
    tags are read as a set)."""
    return frozenset((cell, tuple(sorted(pieces))) for cell, pieces in view.items() if pieces)


def _removal(before: View, after: View) -> bool:
    """Pieces gone from the board and none put anywhere (Topple's Toast): a knocked piece
    held in a hand for a moment leaves the same picture."""
    cells = set(before) | set(after)
    return _picture(before) != _picture(after) and all(
        Counter(after.get(c, ())) <= Counter(before.get(c, ())) for c in cells)


def clear_move(game: Game[Any, Any], before: Any, after: Any) -> bool:
    """Is the move from ``before`` to ``after`` clear by the rules alone? Its picture (as
    made by hand, before any follow-up the rules demand) must show something put somewhere
    (not a removal, which a knock fakes), and no other legal move of the same player from
    ``before`` (any card or piece that player holds there; a different resulting position)
    may leave that picture or pass through it on the way (``Game.transit_views``: Topple's
    Up 1 is the first swap of an Up 2 and of a Topple of the tiki above; a TacTiki step is the
    first of a two-step turn; a Manami totem drops its tokens one by one). A move made in
    several ways (TacTiki: the other copy of a rank) is clear only when each way's picture is.
    The bench judges with this, not with the follower's verdict, so a follower that waits
    where the rules do not make it wait shows up in ``clear_p95``."""
    target = game.position_key(after)
    start = game.expected_view(before)
    mine: set[frozenset[tuple[str, tuple[str, ...]]]] = set()
    others: list[Any] = []
    for way in game.ways(before):
        if game.position_key(game.apply(before, way)) == target:
            placement = game.placement_view(before, way)
            if _removal(start, placement) or _picture(placement) == _picture(start):
                return False
            mine.add(_picture(placement))
        else:
            others.append(way)
    if not mine:
        raise ValueError("no legal move leads from 'before' to 'after'")
    for way in others:
        seen = [game.placement_view(before, way), *game.transit_views(before, way)]
        if any(_picture(view) in mine for view in seen):
            return False
    return True


def run(game_name: str, moves: int, seed: int, *, noisy: bool = True,
        players: str = "steady", tables: list[int] | None = None,
        scale: float = 1.0) -> dict[str, Any]:
    """Play games of ``game_name`` until ``moves`` moves were made; the figures. Each game is
    one table with its own seed (``seed * 1_000_003 + n``); ``tables`` plays only the tables
    of those seeds (one game each), to replay the ones ``bad_tables`` lists."""
    game = get_game(game_name)
    geometry = load_geometry(game_name)
    rng = random.Random(seed)
    total = TableStats()
    started = time.process_time()
    bad: list[dict[str, Any]] = []
    unreported: list[dict[str, Any]] = []
    seeds = iter(tables) if tables is not None else (seed * 1_000_003 + n for n in count())
    for table_seed in seeds:
        if tables is None and total.moves_made >= moves:
            break
        stats = play_table(game_name, table_seed, noisy=noisy, players=players, scale=scale)
        if stats.phantom or stats.missed:
            bad.append({"seed": table_seed, "phantom": stats.phantom, "missed": stats.missed,
                        "failures": stats.failures})
        if stats.unreported:
            unreported.append({"seed": table_seed, "attempts": stats.unreported})
        total.merge(stats)
    cpu = time.process_time() - started
    builds: list[float] = []
    state = game.new_machine_game(random.Random(seed))
    cells = list(game.expected_view(state))
    for _ in range(200):
        if game.is_over(state) or game.to_move(state) is None:
            state = game.new_machine_game(rng)
        t0 = time.perf_counter()
        Position.build(game, state, cells)
        builds.append(time.perf_counter() - t0)
        state = game.apply(state, game.random_move(state, rng))
    decisions = [d * 1000 for d in total.decision_seconds]
    pairs = list(zip(total.accept_latency, total.accept_how, strict=True))
    at_once = [x for x, how in pairs if how == "at once"]
    rested = [x for x, how in pairs if how == "rested"]
    settled = [x for x, how in pairs if how == "settled"]
    clear_flags = [clear_move(game, b, a) for b, a in total.accept_moves]
    clear = [x for x, c in zip(total.accept_latency, clear_flags, strict=True) if c]
    not_clear = [x for x, c in zip(total.accept_latency, clear_flags, strict=True) if not c]
    scan = geometry.scan_period
    return {
        "players": players,
        "games": total.games,
        "moves_made": total.moves_made,
        "moves_accepted": total.moves_accepted,
        "phantom": total.phantom,
        "missed": total.missed,
        "revised": total.revised,
        "illegal_made": total.illegal_made,
        "illegal_reported": total.illegal_reported,
        "takebacks_made": total.takebacks_made,
        "takebacks_done": total.takebacks_done,
        "prompts": total.prompts,
        "mismatches_raised": total.mismatches_raised,
        "mismatches_resolved": total.mismatches_resolved,
        "longest_recovery_s": round(total.longest_recovery, 2),
        "decision_ms": {"p50": round(percentile(decisions, 50), 4),
                        "p99": round(percentile(decisions, 99), 4),
                        "max": round(max(decisions, default=0.0), 4),
                        "events": len(decisions)},
        "position_build_ms": {"p50": round(percentile(builds, 50) * 1000, 3),
                              "p99": round(percentile(builds, 99) * 1000, 3)},
        "rest_to_accept_s": {
            "scan_period": scan,
            "p50": round(percentile(total.accept_latency, 50), 3),
            "p95": round(percentile(total.accept_latency, 95), 3),
            "settle_min": geometry.settle_min,
            "at_once_share": round(sum(1 for h in total.accept_how if h == "at once")
                                   / max(len(total.accept_how), 1), 3),
            "at_once_p50": round(percentile(at_once, 50), 3),
            "at_once_p99": round(percentile(at_once, 99), 3),
            "rested_share": round(len(rested) / max(len(pairs), 1), 3),
            "rested_p50": round(percentile(rested, 50), 3),
            "rested_p99": round(percentile(rested, 99), 3),
            "settled_p50": round(percentile(settled, 50), 3),
            "settled_p99": round(percentile(settled, 99), 3),
            "clear_share": round(len(clear) / max(len(pairs), 1), 3),
            "clear_p50": round(percentile(clear, 50), 3),
            "clear_p95": round(percentile(clear, 95), 3),
            "not_clear_share": round(len(not_clear) / max(len(pairs), 1), 3),
            "not_clear_p50": round(percentile(not_clear, 50), 3),
            "not_clear_p95": round(percentile(not_clear, 95), 3),
        },
        "cpu_s": round(cpu, 1),
        "bad_tables": bad,
        "unreported_tables": unreported,
    }


def play_table(game_name: str, seed: int, *, noisy: bool = True,
               players: str = "steady", scale: float = 1.0) -> TableStats:
    """One whole game at one table seeded ``seed``: steady or varied players, noisy or clean;
    ``scale`` (varied players) makes every mishap of hands and sensors that much rarer."""
    game = get_game(game_name)
    geometry = load_geometry(game_name)
    registry = registry_for(game_name)
    rng = random.Random(seed)
    carried = game_name != "topple"
    if players == "varied":
        fast = rng.uniform(0.06, 0.3)
        table = SimTable(game, geometry, registry, rng,
                         noise=Noise.varied(rng, carried, scale) if noisy else Noise.clean(),
                         rates=Rates.table() if noisy else Rates(), pace=Pace(),
                         hand_pace=(fast, fast + rng.uniform(0.1, 0.6)),
                         miss=scale * rng.uniform(0.0, 0.08) if noisy else 0.0,
                         flicker=scale * rng.uniform(0.0, 0.1) if noisy else 0.0,
                         chatter=scale * rng.uniform(0.0, 0.02) if noisy else 0.0,
                         early=scale * rng.uniform(0.0, 0.2) if noisy else 0.0)
    else:
        table = SimTable(game, geometry, registry, rng,
                         noise=Noise.table(carried=carried) if noisy else Noise.clean(),
                         rates=Rates.table() if noisy else Rates(),
                         miss=0.05 if noisy else 0.0, flicker=0.05 if noisy else 0.0)
    return table.play_game()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=10_000, help="moves per game type")
    parser.add_argument("--game", choices=GAME_NAMES, action="append", help="only this game")
    parser.add_argument("--seed", type=int, default=1)
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("--clean", action="store_true", help="no noise, no mischief")
    noise.add_argument("--low", action="store_true",
                        help="varied players at low noise: every mishap of hands and sensors "
                             "a quarter as likely (illegal moves and takebacks as usual)")
    parser.add_argument("--players", choices=PLAYERS, default="steady",
                        help="steady: wait for the station after every move; varied: real pace")
    parser.add_argument("--table", type=int, action="append",
                        help="replay only the table of this seed (from bad_tables)")
    args = parser.parse_args(argv)
    figures = {}
    for name in args.game or GAME_NAMES:
        try:
            get_game(name)
        except ModuleNotFoundError:
            continue
        figures[name] = run(name, args.moves, args.seed, noisy=not args.clean,
                            players=args.players, tables=args.table,
                            scale=LOW if args.low else 1.0)
    print(json.dumps({"benchmark": "accuracy", "noisy": not args.clean, "players": args.players,
                      "noise_scale": 0.0 if args.clean else LOW if args.low else 1.0,
                      "machine": {"cpu": platform.processor() or platform.machine(),
                                  "python": platform.python_version()},
                      "figures": _no_nan(figures)}, indent=2, allow_nan=False))


def _no_nan(value: Any) -> Any:
    """A percentile of no values (no Topple move waits a rest) as null: JSON has no NaN."""
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


if __name__ == "__main__":
    main()
