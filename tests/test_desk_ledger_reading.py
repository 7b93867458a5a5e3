"""The referee desk reads each thing one way, whichever path it comes by.

A station's result: the ledger's ``results`` (a restart) and ``reported`` (one game) take the
last stored result that fits the schema. A message: ``Desk.receive`` (on the loop) and
``Desk.receive_all`` (tools and tests) batch and count it alike.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from pi_app.json_types import JSON
from pi_app.net import topics
from pi_app.net.desk import Desk, Incoming
from pi_app.net.ledger import Ledger


def _message(leaf: str, payload: JSON) -> Incoming:
    return Incoming(topics.topic("cup", "t1", leaf), topics.encode(payload), 0, 1, 1,
                    time.time())


def _result(seq: int, data: JSON) -> JSON:
    return {"board": "t1", "seq": seq, "game_id": 1, "n": seq, "t": 1.0, "kind": "result",
            "data": data}


def test_both_readings_of_a_result_take_the_last_one_that_fits(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "d.sqlite")
    ledger.add_event("t1", _result(1, {"winners": [0], "scores": [3, 1]}), 1.0)
    ledger.add_event("t1", _result(2, {"winners": "nobody", "scores": [3, 1]}), 2.0)
    ledger.commit()
    assert ledger.results() == [("t1", 1, {"winners": [0], "scores": [3, 1]})]
    assert ledger.reported("t1", 1) == {"winners": [0], "scores": [3, 1]}
    ledger.add_event("t1", _result(3, {"winners": [1], "scores": [3, 4]}), 3.0)
    ledger.commit()
    assert ledger.results() == [("t1", 1, ledger.reported("t1", 1))]
    assert ledger.reported("t1", 2) is None
    ledger.close()


def test_a_message_is_taken_alike_on_the_loop_and_in_a_batch(tmp_path: Path) -> None:
    good = _message("events", {**_result(1, {"text": "m1"}), "kind": "move"})
    bad = _message("events", {"seq": "x"})
    batch = Desk(Ledger(tmp_path / "a.sqlite"), "cup")
    batch.receive_all([good, bad])
    looped = Desk(Ledger(tmp_path / "b.sqlite"), "cup")

    async def feed() -> None:
        looped.receive(good)
        looped.receive(bad)
        await asyncio.sleep(0.05)  # the scheduled flush

    asyncio.run(feed())
    assert looped.counts == batch.counts and batch.counts["malformed"] >= 1
    assert looped.ledger.events("t1") == batch.ledger.events("t1")
    assert len(batch.ledger.events("t1")) == 1
    for desk in (batch, looped):
        desk.ledger.close()


def test_the_lag_figure_counts_only_events_committed_since_a_time(tmp_path: Path) -> None:
    """A load run asks for its window only (``/api/stats?since=T``), not its stations' start."""
    desk = Desk(Ledger(tmp_path / "l.sqlite"), "cup")

    def move(seq: int) -> Incoming:
        return _message("events", {**_result(seq, {"text": f"m{seq}"}), "kind": "move",
                                   "t": time.time() - 0.5})

    desk.receive_all([move(1), move(2)])
    since = time.time()
    desk.receive_all([move(3)])
    everything, window = desk.stats()["lag_ms"], desk.stats(since)["lag_ms"]
    assert (everything["n"], window["n"]) == (3, 1)
    assert window["p99"] is not None and 500 <= window["p99"] < 5000
    assert desk.stats(time.time() + 60)["lag_ms"] == {"n": 0, "p50": None, "p90": None,
                                                      "p99": None, "max": None}
