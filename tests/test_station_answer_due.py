"""A bot's answer that comes in between two steps of the station is collected at the next poll.

The station's bots think on a worker thread; the loop steps the station at
:meth:`Station.next_deadline`, which polls every ``POLL_S`` while a bot thinks. An answer that
came in after a step and before the next wake-up was no longer "thinking", so no poll was due:
the station's move was shown only at the next sensor event or follower deadline, and the long
soak with the station's seat gave other figures run to run, as the thread was fast or slow.
Here the bot answers at once (an executor that runs the job inline), the hardest case.
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from test_station_bot import Table

from pi_app.referee import opponent
from pi_app.referee.opponent import POLL_S


class _Inline:
    """An executor whose jobs are done when submitted (a bot that answers at once)."""

    def __init__(self, *_: Any, **__: Any) -> None:
        """Nothing to start."""

    def submit(self, fn: Any, *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, **_: Any) -> None:
        """Nothing to stop."""


def test_an_answer_in_before_the_next_wake_up_is_shown_at_the_next_poll(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opponent, "ThreadPoolExecutor", _Inline)
    table = Table(tmp_path, "manami", {"1": "random"})
    game, station = table.game, table.station
    move = game.legal_moves(table.state)[0]
    actions, _ = table.hands.change(table.board, game.placement_view(table.state, move),
                                    table.now + 0.2)
    accepted_at: float | None = None
    shown_at: float | None = None
    pending = sorted(table.sensors.run(actions), key=lambda e: e.t)
    while shown_at is None and table.now < 30.0:  # the daemon's loop, no waiting on threads
        deadline = station.next_deadline(table.now)
        if pending and (deadline is None or pending[0].t <= deadline):
            event = pending.pop(0)
            table.now = max(table.now, event.t)
            station.step(event, table.now)
        elif deadline is not None:
            table.now = max(table.now, deadline)
            station.step(None, table.now)
        else:
            break
        if accepted_at is None and station.accepted_log:
            accepted_at = table.now
        if station.opponent.shown is not None and station.opponent.shown.kind == "station":
            shown_at = table.now
    assert accepted_at is not None and game.to_move(table.state) == 1
    assert shown_at is not None and shown_at - accepted_at <= POLL_S + 1e-9, \
        (accepted_at, shown_at)
