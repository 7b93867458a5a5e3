"""Engine speed: random complete games per second and move generation plus apply per second.

Run ``python -m tools.bench.engines [--seconds S] [--game NAME]``; it prints one JSON object.
Random play uses only the public engine interface (``new_game``, ``deal``, ``random_move``,
``apply``), so the figure is the budget a computer opponent or move inference really has.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from typing import Any

from pi_app.games import GAME_NAMES, Game, get_game

#: Games that run longer than this many decisions are reported, never silently cut.
MAX_DECISIONS = 100_000


def play_random(game: Game[Any, Any], rng: random.Random) -> tuple[Any, int]:
    """Play one complete game with random legal decisions; returns the end state and its length."""
    state = game.new_machine_game(rng)
    decisions = 0
    while not game.is_over(state):
        if game.to_move(state) is None:
            state = game.deal(state, rng)
            continue
        state = game.apply(state, game.random_move(state, rng))
        decisions += 1
        if decisions > MAX_DECISIONS:
            raise RuntimeError(f"{game.name}: a random game ran past {MAX_DECISIONS} decisions")
    return state, decisions


def games_per_second(game: Game[Any, Any], seconds: float, seed: int = 1) -> dict[str, float]:
    """Complete random games for about ``seconds`` of one core's time."""
    rng = random.Random(seed)
    games = decisions = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        _, n = play_random(game, rng)
        games += 1
        decisions += n
    return {
        "games_per_s": round(games / elapsed, 1),
        "decisions_per_game": round(decisions / games, 1),
        "games": games,
    }


def movegen_per_second(game: Game[Any, Any], seconds: float, seed: int = 2) -> dict[str, float]:
    """``legal_moves`` plus ``apply`` of every legal move, over positions from random play."""
    rng = random.Random(seed)
    positions: list[Any] = []
    while len(positions) < 2_000:
        state = game.new_machine_game(rng)
        while not game.is_over(state):
            if game.to_move(state) is None:
                state = game.deal(state, rng)
                continue
            positions.append(state)
            state = game.apply(state, game.random_move(state, rng))
    generated = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        for position in positions:
            for move in game.legal_moves(position):
                game.apply(position, move)
                generated += 1
    return {"moves_generated_and_applied_per_s": round(generated / elapsed, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per figure")
    parser.add_argument("--game", choices=GAME_NAMES, action="append",
                        help="only this game (repeatable); default: every game that exists")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {}
    for name in args.game or GAME_NAMES:
        try:
            game = get_game(name)
        except ModuleNotFoundError:
            continue
        figures[name] = {**games_per_second(game, args.seconds),
                         **movegen_per_second(game, args.seconds)}
    print(json.dumps({
        "benchmark": "engines",
        "unit": "per second of one core's process time",
        "machine": {"cpu": platform.processor() or platform.machine(),
                    "python": platform.python_version()},
        "figures": figures,
    }, indent=2))


if __name__ == "__main__":
    main()
