"""The station end to end: simulated hands on the firmware's own scanner, behind a pty, read by
the daemon's serial link, refereed, stored in SQLite, shown on the LED and display mocks.

Each game is played to its end by simulated hands with illegal moves and takebacks; games
start from a stored position part-way through (the daemon resumes it, as after a power cut) so
the suite stays short while every game still ends with its scores and winner.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pi_app.demo import DemoPlayers
from pi_app.games import get_game
from pi_app.records import replay
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.session import Session
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore
from pi_app.station_main import serve

pytestmark = [pytest.mark.slow, pytest.mark.realtime]


def prefix(game_name: str, seed: int, keep: int) -> tuple[Any, list[tuple[str, Any]]]:
    """A random game's start and its steps but the last ``keep`` moves (the hands play those).

    Steps are ("move", text) or ("deal", state of the new Topple round)."""
    game = get_game(game_name)
    rng = random.Random(seed)
    start = game.new_game(rng)
    state, steps = start, []
    while not game.is_over(state):
        if game.to_move(state) is None:
            state = game.deal(state, rng)
            steps.append(("deal", state))
            continue
        move = game.random_move(state, rng)
        steps.append(("move", game.move_text(state, move)))
        state = game.apply(state, move)
    cut = len(steps)
    for _ in range(keep):
        cut -= 1
        while cut > 0 and steps[cut][0] == "deal":
            cut -= 1
    return start, steps[:cut]


def record_steps(session: Session, state: Any, steps: list[tuple[str, Any]]) -> None:
    """Store ``steps`` after ``state`` as the station would: a move as its text, a Topple deal
    as ``("deal", state)`` (the new round's state)."""
    from pi_app.games.topple import round_record

    game = session.game
    for kind, value in steps:
        if kind == "deal":
            session.dealt(value, round_record(value))
            state = value
            continue
        after = game.apply_text(state, value)
        session.moved(value, game.to_move(state), after)
        state = after


def preload(data_dir: Path, game_name: str, start: Any, steps: list[tuple[str, Any]]) -> None:
    store = EventStore(data_dir / "tikiboard.db")
    session = Session.new(store, game_name, state=start, board="e2e")
    record_steps(session, start, steps)
    store.close()


def run_station(data_dir: Path, game_name: str, *, turns: int, seed: int, illegal: float,
                takeback: float) -> tuple[Station, DemoPlayers]:
    config = Config(station=replace(StationConfig(), game=game_name, seed=seed,
                                    data_dir=str(data_dir), board="e2e"))
    holder: dict[str, Any] = {}

    async def main() -> None:
        stop = asyncio.Event()
        tasks: list[asyncio.Future[None]] = []

        def ready(station: Station, hardware: Hardware) -> None:
            players = DemoPlayers(station, hardware, random.Random(seed), illegal=illegal,
                                  takeback=takeback, pace=(0.05, 0.12),
                                  script={2: "illegal", 4: "takeback", 6: "illegal"})
            holder["station"], holder["players"] = station, players

            async def play() -> None:
                try:
                    await players.play(turns)
                    await asyncio.sleep(0.5)
                finally:
                    stop.set()

            tasks.append(asyncio.ensure_future(play()))

        await asyncio.wait_for(serve(config, stop=stop, on_ready=ready), timeout=400)
        for task in tasks:
            task.result()

    asyncio.run(main())
    return holder["station"], holder["players"]


@pytest.mark.parametrize(("game_name", "keep"), [("topple", 14), ("manami", 16),
                                                 ("tactiki", 12)])
def test_a_game_to_its_end_through_the_real_pipeline(tmp_path: Path, game_name: str,
                                                      keep: int) -> None:
    start, moves = prefix(game_name, seed=3, keep=keep)
    preload(tmp_path, game_name, start, moves)
    station, players = run_station(tmp_path, game_name, turns=120, seed=5, illegal=0.08,
                                   takeback=0.06)
    game = station.session.game
    state = station.session.state
    assert game.is_over(state), game.describe(state)
    # The stored record replays to the same end, scores and winner: nothing was lost.
    store = EventStore(tmp_path / "tikiboard.db")
    row = store.games()[-1]
    record = Session.resume(store, row).export()
    result = replay(record)
    assert result.ok and result.state == state
    assert row.finished and row.result == {"scores": list(game.scores(state)),
                                           "winners": list(game.winners(state) or [])}
    # The hands made illegal moves and takebacks, and the station followed every real move.
    stats = players.players.stats
    assert stats.moves >= 2
    assert stats.illegal >= 1 and stats.takebacks >= 1
    assert station.accepted_log  # confirmed moves
