"""Generated play: tables of hands drawn from the whole space, and what the follower made of them.

The accuracy bench draws each table's hands from ranges the follower was tuned on; a rule made
for one of its tables passes there and proves little. Here every kind of mishap is drawn from
"never" to "often", independently, at paces beyond the bench's (the next player may start
0.3 s after the last move rested, the issue's held-out traces), and a failing table is shrunk by
hypothesis to the fewest mishaps that still fail (:func:`table_specs`, used by
``tests/test_generated_play.py``).

Run ``python -m tools.bench.generated [--tables N] [--game NAME] [--seed S]`` for figures as
JSON: per game the moves, phantom and missed moves, questions per 100 moves, rest to acceptance
(median and p95 over every move the board decided), the decision time per event, and the specs
of the tables that went wrong (each replays with :func:`play`).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from typing import Any

from hypothesis import strategies as st

from pi_app.board.equipment import registry_for
from pi_app.board.geometry import load_geometry
from pi_app.games import GAME_NAMES, get_game
from pi_app.sim.hands import Noise
from pi_app.sim.table import Pace, Rates, SimTable, TableStats


@dataclass(frozen=True)
class TableSpec:
    """One generated table: the hands, the pace and the sensors. Every mishap is a rate per
    move or per piece moved (:class:`pi_app.sim.hands.Noise`); 0 is "never"."""

    game: str
    seed: int
    moves: int
    slide: float = 0.0
    hover: bool = False
    hesitate: float = 0.0
    knock: float = 0.0
    fumble: float = 0.0
    swap_style: float = 0.0
    next_soonest: float = 0.5
    """The soonest the next player starts after the last move rested (seconds)."""
    hand_fast: float = 0.15
    hand_slow: float = 0.4
    miss: float = 0.0
    flicker: float = 0.0
    chatter: float = 0.0
    early: float = 0.0
    illegal: float = 0.0
    takeback: float = 0.0


#: The range each mishap is drawn from (the lower end is what shrinking goes towards).
RANGES: dict[str, tuple[float, float]] = {
    "slide": (0.0, 0.5),
    "hesitate": (0.0, 0.3),
    "knock": (0.0, 0.5),
    "fumble": (0.0, 0.3),
    "swap_style": (0.0, 1.0),
    "hand_fast": (0.06, 0.3),
    "hand_slow": (0.1, 0.9),
    "miss": (0.0, 0.1),
    "flicker": (0.0, 0.1),
    "chatter": (0.0, 0.03),
    "early": (0.0, 0.3),
    "illegal": (0.0, 0.1),
    "takeback": (0.0, 0.1),
}
#: The soonest the next player may start: from the bench's 0.5 s down to the held-out traces'.
NEXT_SOONEST = (0.3, 1.0)


def table_specs(game: str, *, moves: int = 10) -> st.SearchStrategy[TableSpec]:
    """Tables of ``game``, about ``moves`` decisions long, with every mishap drawn freely.
    Shrinking goes towards "never" for every mishap (and the slowest next player), so a
    failure shrinks to the mishaps it needs."""
    low, high = NEXT_SOONEST
    return st.builds(
        TableSpec,
        game=st.just(game),
        seed=st.integers(0, 2**31),
        moves=st.just(moves),
        hover=st.booleans(),
        next_soonest=st.floats(0.0, high - low).map(lambda x: round(high - x, 3)),
        **{name: st.floats(lo, hi) for name, (lo, hi) in RANGES.items()},
    )


def draw(game: str, rng: random.Random, *, moves: int) -> TableSpec:
    """One table as :func:`table_specs` would draw it, from ``rng`` (for the bench)."""
    return TableSpec(
        game=game,
        seed=rng.randrange(2**31),
        moves=moves,
        hover=rng.random() < 0.5,
        next_soonest=round(rng.uniform(*NEXT_SOONEST), 3),
        **{name: rng.uniform(lo, hi) for name, (lo, hi) in RANGES.items()},
    )


def play(spec: TableSpec) -> TableStats:
    """Play the table ``spec`` describes through the real tracker, inference and follower."""
    game = get_game(spec.game)
    carried = spec.game != "topple"
    dwell = (0.02, 0.15) if carried else (0.05, 0.3)
    noise = Noise(
        slide=spec.slide,
        hesitate=spec.hesitate,
        knock=spec.knock,
        swap_style=spec.swap_style,
        slide_dwell=dwell,
        hover=carried or spec.hover,
        fumble=spec.fumble,
    )
    table = SimTable(
        game,
        load_geometry(spec.game),
        registry_for(spec.game),
        random.Random(spec.seed),
        noise=noise,
        rates=Rates(illegal=spec.illegal, takeback=spec.takeback),
        pace=Pace(between=(spec.next_soonest, 4.0)),
        hand_pace=(spec.hand_fast, spec.hand_fast + spec.hand_slow),
        miss=spec.miss,
        flicker=spec.flicker,
        chatter=spec.chatter,
        early=spec.early,
    )
    return table.play_game(spec.moves)


def _percentile(values: list[float], share: float) -> float | None:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3) if ordered else None


def run(game: str, tables: int, seed: int, moves: int) -> dict[str, Any]:
    """``tables`` tables drawn from :func:`table_specs` (seeded, so a run repeats)."""
    rng = random.Random(seed)
    total = TableStats()
    bad: list[dict[str, Any]] = []
    for _ in range(tables):
        spec = draw(game, rng, moves=moves)
        stats = play(spec)
        if stats.phantom or stats.missed:
            bad.append(
                {
                    "spec": asdict(spec),
                    "phantom": stats.phantom,
                    "missed": stats.missed,
                    "failures": stats.failures[:3],
                }
            )
        total.merge(stats)
    decided = [
        x
        for x, how in zip(total.accept_latency, total.accept_how, strict=True)
        if how in ("at once", "rested", "settled")
    ]
    decisions = [d * 1000 for d in total.decision_seconds]
    return {
        "tables": tables,
        "moves_made": total.moves_made,
        "phantom": total.phantom,
        "missed": total.missed,
        "revised": total.revised,
        "prompts": total.prompts,
        "prompts_per_100": round(100 * total.prompts / max(total.moves_made, 1), 2),
        "rest_to_accept_s": {
            "p50": _percentile(decided, 0.5),
            "p95": _percentile(decided, 0.95),
            "moves": len(decided),
        },
        "decision_ms": {"p50": _percentile(decisions, 0.5), "p99": _percentile(decisions, 0.99)},
        "bad_tables": bad,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=40, help="tables per game")
    parser.add_argument("--moves", type=int, default=30, help="decisions per table")
    parser.add_argument("--game", choices=GAME_NAMES, action="append")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    figures = {
        name: run(name, args.tables, args.seed, args.moves) for name in args.game or GAME_NAMES
    }
    print(json.dumps({"benchmark": "generated", "seed": args.seed, "figures": figures}, indent=2))
    if any(f["phantom"] or f["missed"] for f in figures.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
