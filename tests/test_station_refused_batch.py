"""A move the station refuses ends what the follower said in the same breath.

The follower may take two moves in one step: a TacTiki turn that rested, then the next
player's forced pass. When the first is a wrong execution for the station's seat (here the
station's bot has not answered yet, as after a restart), the station refuses it and puts the
follower back; the pass after it was judged from a position the station never stored, and
storing it crashed the step (``IllegalMove: You can still move a piece``; the long soak with
the station's seat, TacTiki at c889347, PYTHONHASHSEED 5: 1 crash, 1 record mismatch).
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from test_station_bot import Table, _stored_until

from pi_app.referee import opponent
from pi_app.referee.station import Station


class _NeverDone:
    """An executor whose jobs never finish: a bot still thinking."""

    def __init__(self, *_: Any, **__: Any) -> None:
        """Nothing to start."""

    def submit(self, fn: Any, *args: Any) -> Future[Any]:
        return Future()

    def shutdown(self, **_: Any) -> None:
        """Nothing to stop."""


def _wrong_then_pass(station: Station, state: Any, ply: int, move: Any) -> bool:
    """The station's seat (1) to move; ``move`` shows on the board and leaves seat 0 only a
    pass."""
    game = station.session.game
    after = game.apply(state, move)
    return game.to_move(state) == 1 and not game.is_over(after) and game.to_move(after) == 0 \
        and [game.move_text(after, m) for m in game.legal_moves(after)] == ["pass"] \
        and game.placement_view(state, move) != game.expected_view(state)


def test_a_pass_forced_by_a_refused_move_is_not_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bots = {"1": "greedy"}
    move = _stored_until(tmp_path, bots, _wrong_then_pass)
    monkeypatch.setattr(opponent, "ThreadPoolExecutor", _NeverDone)
    monkeypatch.setattr(opponent.Opponent, "wait", lambda self, timeout=0.0: None)
    table = Table(tmp_path, "tactiki", bots)
    game, station = table.game, table.station
    before, stored = table.state, len(station.session.history)
    assert game.to_move(before) == 1 and station.opponent.shown is None
    table.carry_out(move)  # the station's seat's move made by hand before it was shown
    assert station.session.state == before and len(station.session.history) == stored
    assert station.accepted_log == [] and game.to_move(table.state) == 1
