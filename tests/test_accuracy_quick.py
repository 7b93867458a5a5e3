"""Move inference on simulated noisy play, a quick version of ``python -m tools.bench.accuracy``.

Each game is played by simulated hands with slides, hesitations, knocked pieces, reader misses,
presence flicker, deliberate illegal moves and takebacks, through the real tracker, inference
and follower. Fixed seeds keep the run repeatable; the long run's figures are in the README.
"""

from __future__ import annotations

import json

import pytest

from tools.bench.accuracy import main, run

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("game", ["topple", "manami", "tactiki"])
def test_noisy_play_is_followed_exactly(game: str) -> None:
    figures = run(game, moves=250, seed=11)
    assert figures["moves_made"] >= 250
    assert figures["phantom"] == 0, figures
    assert figures["missed"] == 0, figures
    assert figures["illegal_reported"] == figures["illegal_made"] > 0, figures
    assert figures["mismatches_resolved"] == figures["mismatches_raised"], figures
    assert figures["decision_ms"]["p99"] < 5.0  # generous here; the benchmark reports the real


def test_the_report_is_strict_json(capsys: pytest.CaptureFixture[str]) -> None:
    """No Topple move waits a rest, so that percentile has no values: null, not NaN (which
    JSON has not, and a browser or ``jq`` refuses)."""
    main(["--game", "topple", "--moves", "30"])

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    report = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert report["figures"]["topple"]["rest_to_accept_s"]["rested_p50"] is None
