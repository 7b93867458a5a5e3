"""The follower does what it did: every call the benches made, replayed (issue 30).

``tests/traces/GAME.jsonl.gz`` were recorded from the accuracy bench's varied players (zero, low
and default noise) and one long-soak game per game, on the follower before its refactor
(``python -m tools.bench.corpus record tests/traces``). A refactor that changes any answer to
any call fails here, with the call and both answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_app.board.follower import Follower
from tools.bench.corpus import Replayed, read, replay, replay_session

TRACES = Path(__file__).parent / "traces"
FILES = sorted(TRACES.glob("*.jsonl.gz"))


def test_the_corpus_is_there() -> None:
    assert {p.name for p in FILES} == {"topple.jsonl.gz", "manami.jsonl.gz", "tactiki.jsonl.gz"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.split(".")[0])
def test_replay_matches_the_recording(path: Path) -> None:
    found = replay([path])
    assert found.calls > 10_000
    assert found.differences == []


def test_a_changed_wait_is_seen() -> None:
    """The replay can fail: a follower that settles a little later answers differently."""

    def later(*args: Any, **kwargs: Any) -> Follower[Any, Any]:
        return Follower(*args, **{**kwargs, "settle": kwargs.get("settle", 0.25) + 0.2})

    found = Replayed()
    for header, calls in read(TRACES / "topple.jsonl.gz"):
        replay_session(header, calls, found, factory=later)
        if found.differences:
            break
    assert found.differences
