"""Bots playing each other: the games behind ``tikiboard bot`` and the strength bench
(``tools/bench/bots.py``).

Game ``i`` of a pair is dealt from ``random.Random(seed + i)`` and the measured level's seat turns
from game to game, so a run repeats exactly for a playout budget. The score counts a draw (or a
shared win) as half, with its 95 % Wilson interval, the way rating tables report a match.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from pi_app.bots.base import Budget
from pi_app.bots.levels import make_bot
from pi_app.bots.play import play_game
from pi_app.games import get_game

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
    if text.endswith("s"):
        return Budget(seconds=float(text[:-1]))
    return Budget(playouts=int(text))


def play_pair(game_name: str, players: int, level: str, opponent: str, games: int,
              budget: Budget, seed: int = 0) -> dict[str, Any]:
    """``level`` in one seat (turning), ``opponent`` in the others, ``games`` games. A
    decision's seconds are this process's CPU time, not the wall clock: on a machine shared
    with other work the wall clock counts their time too."""
    game = get_game(game_name)
    # a game for more than one player count is told its count (records.md: options.players)
    options = {"players": players} if len(game.player_counts) > 1 else None
    wins = draws = losses = decisions = 0
    seconds: list[float] = []
    cpu = time.process_time()
    wall = time.perf_counter()
    for i in range(games):
        seat = i % players
        bots = [make_bot(game_name, level if s == seat else opponent) for s in range(players)]
        result = play_game(game, bots, random.Random(seed + i), budget, options,
                           clock=time.process_time)
        decisions += result.decisions
        seconds += result.seconds[seat]
        verdict = outcome(result.winners, seat)
        wins += verdict == "win"
        draws += verdict == "draw"
        losses += verdict == "loss"
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
                                 "decisions": len(seconds), "clock": "process CPU"},
        "decisions_per_game": round(decisions / games, 1) if games else None,
        "games_per_s": round(games / (time.perf_counter() - wall), 3),
        "cpu_s": round(time.process_time() - cpu, 1),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 5)


