"""One feed snapshot: the real station and the simulated one say the same keys, of the same types.

The page, the MQTT publisher and the referee dashboard read ``StationFeed.snapshot`` without
knowing which kind of station wrote it. Both build it with ``FeedSnapshot.of``; these tests
fail when one of them grows a key the other lacks or sends a value of another type.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from test_referee import lay_out, station_for

from pi_app.board.fixes import Fix
from pi_app.board.follower import Prompt, PromptKind
from pi_app.games import GAME_NAMES
from pi_app.net.redact import SNAPSHOT_FIELDS
from pi_app.net.schema import StatePayload
from pi_app.net.simstation import SimStation
from pi_app.referee.feed import FeedSnapshot, StationFeed, StationStatus


def alike(a: Any, b: Any) -> bool:
    """``a`` and ``b`` have the same JSON types where both say something: the same type,
    dicts alike on their common keys, lists alike item by item (an empty one, or None, says
    nothing)."""
    if a is None or b is None:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return all(alike(a[k], b[k]) for k in a.keys() & b.keys())
    if isinstance(a, list) and isinstance(b, list):
        return all(alike(x, y) for x in a for y in b)
    return type(a) is type(b) or {type(a), type(b)} <= {int, float}


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_real_and_the_simulated_station_feed_the_same_snapshot(
        tmp_path: Path, game: str) -> None:
    station = station_for(tmp_path / "real", game)
    lay_out(station, 0.5)
    station.step(None, 1.0)
    station.render(1.0)
    real = station.feed.snapshot
    sim = SimStation(tmp_path / "sim", "t1", game=game, seed=1)
    sim.step()  # a game starts
    sim.step()  # and something is stored
    simulated = sim.feed.snapshot
    assert set(real) == set(simulated)
    assert simulated["seq"] == sim.seq >= 1
    for key in sorted(real):
        assert alike(real[key], simulated[key]), (key, real[key], simulated[key])
    for snapshot in (real, simulated):
        assert StationStatus(snapshot["status"])
        assert isinstance(snapshot["to_move"], int | None)
        assert isinstance(snapshot["record"], dict) and snapshot["record"]["game"] == game


def test_the_typed_snapshot_says_every_documented_field(tmp_path: Path) -> None:
    """A prompt and fixes come out in the schema's form; the feed adds board and seq."""
    sim = SimStation(tmp_path, "t2", game="topple", seed=3)
    sim.new_game()
    assert sim.session is not None
    prompt = Prompt(0.0, PromptKind.AMBIGUOUS, ("up1 Nani", "up2 Nani"), 1)
    fixes = (Fix("move", "Nani", "s2", "s1"), Fix("place", "Lono", "s3"))
    snapshot = FeedSnapshot.of(sim.session, ["Ana", "Ben"], StationStatus.PROMPT,
                               prompt=prompt, fixes=fixes, station_seats={1: "easy"},
                               clock=lambda: 12.5)
    out = snapshot.to_json()
    assert out["prompt"] == {"kind": "ambiguous", "options": ["up1 Nani", "up2 Nani"],
                             "selected": 1}
    assert out["guidance"] == ["move Nani from s2 to s1", "put Lono on s3"]
    assert out["marks"][1] == {"kind": "place", "piece": "Lono", "cell": "s3", "to": None}
    assert out["station_seats"] == {"1": "easy"} and out["updated"] == 12.5
    assert out["winners"] is None and out["status"] == "prompt"
    feed = StationFeed("t2")
    feed.update(snapshot)
    assert feed.snapshot["board"] == "t2" and feed.snapshot["seq"] == 0
    assert FeedSnapshot.of(sim.session, ["Ana", "Ben"], draw_agreed=True).winners == []


def test_every_snapshot_field_is_known_to_the_public_view_and_the_dashboard() -> None:
    """A field added to the snapshot but not to the public view would silently vanish from
    the page and the MQTT feed; one the dashboard's schema reads must be one stations send."""
    sent = {f.name for f in fields(FeedSnapshot)} | {"board", "seq"}
    # record and text hold hidden facts; review is there once the game is over (all public)
    assert sent - set(SNAPSHOT_FIELDS) == {"record", "text", "review"}
    assert set(SNAPSHOT_FIELDS) <= sent
    assert {f.name for f in fields(StatePayload)} <= sent
