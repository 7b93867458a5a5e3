"""Move inference on simulated noisy play, a quick version of ``python -m tools.bench.accuracy``.

Each game is played by simulated hands with slides, hesitations, knocked pieces, reader misses,
presence flicker, deliberate illegal moves and takebacks, through the real tracker, inference
and follower. Fixed seeds keep the run repeatable; the long run's figures are in the README.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from test_board_topple import start

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Follower
from pi_app.board.geometry import load_geometry
from pi_app.games import get_game
from pi_app.sim.hands import Noise
from pi_app.sim.table import FollowerReferee, Pace, SimTable, TableStats
from tools.bench import accuracy
from tools.bench.accuracy import clear_move, main, run


@pytest.mark.slow
@pytest.mark.parametrize("game", ["topple", "manami", "tactiki"])
def test_noisy_play_is_followed_exactly(game: str) -> None:
    figures = run(game, moves=250, seed=11)
    assert figures["moves_made"] >= 250
    assert figures["phantom"] == 0, figures
    assert figures["missed"] == 0, figures
    assert figures["illegal_reported"] == figures["illegal_made"] > 0, figures
    assert figures["mismatches_resolved"] == figures["mismatches_raised"], figures
    # A guard against a decision that got ten times dearer, not a speed figure (the benchmark
    # reports those, on an idle machine): the median, because the tail of wall-clock times is
    # the scheduler's when another test worker or process shares the cores (p99 read 16-25 ms
    # under a load of 6, against ~2 ms idle).
    assert figures["decision_ms"]["p50"] < 1.0, figures["decision_ms"]


@pytest.mark.slow
def test_the_report_is_strict_json(capsys: pytest.CaptureFixture[str]) -> None:
    """No Topple move waits a rest, so that percentile has no values: null, not NaN (which
    JSON has not, and a browser or ``jq`` refuses)."""
    main(["--game", "topple", "--moves", "30"])

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    report = json.loads(capsys.readouterr().out, parse_constant=refuse)
    latency = report["figures"]["topple"]["rest_to_accept_s"]
    assert latency["rested_p50"] is None
    assert latency["clear_share"] + latency["not_clear_share"] == pytest.approx(1.0, abs=0.002)


@pytest.mark.parametrize(("moves", "text", "clear"), [
    ([], "up3 Nui", True),          # to the top: no longer move of Nui, no other move's swap
    ([], "topple Hookipa", True),   # top to bottom: nothing else shows that line
    ([], "up1 Lokahi", False),      # the first swap of Up 2 and Up 3 Lokahi
    ([], "up2 Nui", False),         # the middle of Up 3 Nui
    ([], "up1 Kapu", False),        # Kapu to the top: the first swap of Topple Hookipa
    ([], "topple Wikiwiki", False),  # one slot down to the bottom: the line of Up 1 Huhu
    (["up1 Kapu", "up1 Eepo"], "toast", False),  # a removal: a knocked tiki looks the same
    # The first player has played the Topple card: Up 1 of the tiki under the top one is no
    # longer the first swap of anything that player can play.
    (["topple Akamai", "up1 Eepo"], "up1 Eepo", True),
])
def test_a_clear_move_is_decided_by_the_rules(moves: list[str], text: str, clear: bool) -> None:
    """Worked out by hand on the two-player line Hookipa, Kapu, Eepo, Nui, Lokahi, Akamai,
    Nani, Wikiwiki, Huhu (each player: Up 1 x2, Up 2, Up 3, Topple, Toast x2)."""
    game = get_game("topple")
    before = start(moves)
    assert clear_move(game, before, game.apply_text(before, text)) is clear


def _illegal_attempt(wait: float | None = None) -> TableStats:
    """One illegal attempt at real pace on TacTiki's opening, against a follower that shows a
    mismatch after ``wait`` at the soonest (None: its own waits); the table's figures."""
    game = get_game("tactiki")
    geometry, registry = load_geometry("tactiki"), registry_for("tactiki")
    rng = random.Random(3)
    state = game.new_game(rng)
    follower = Follower(game, state, geometry, registry)
    if wait is not None:
        follower = Follower(game, state, geometry, registry, grace=wait, settle_unexplained=wait)
    table = SimTable(game, geometry, registry, rng, state=state, pace=Pace(),
                     referee=FollowerReferee(follower))
    table.play_illegal()
    return table.stats


def test_an_illegal_attempt_left_unreported_is_listed_with_its_timing() -> None:
    """The bench counts an attempt reported when a mismatch was shown before its player
    undid it, and lists the others (``unreported``: when it rested, until when the player
    looked, when the undo began, when a mismatch came if one did) so they can be traced."""
    deaf = _illegal_attempt(30.0)
    assert (deaf.illegal_made, deaf.illegal_reported) == (1, 0)
    (line,) = deaf.unreported
    assert line.startswith("illegal ") and "rested at" in line and line.endswith("mismatch never")
    heard = _illegal_attempt()
    assert (heard.illegal_made, heard.illegal_reported) == (1, 1) and heard.unreported == []


def test_the_report_lists_the_tables_with_unreported_attempts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``unreported_tables``: each table seed with its unreported attempts, to replay with
    ``--table``."""
    def play(game_name: str, seed: int, **_: Any) -> TableStats:
        return TableStats(games=1, illegal_made=2, illegal_reported=1,
                          unreported=[f"attempt at table {seed}"])

    monkeypatch.setattr(accuracy, "play_table", play)
    figures = run("topple", moves=10, seed=1, tables=[7, 9])
    assert (figures["illegal_made"], figures["illegal_reported"]) == (4, 2)
    assert figures["unreported_tables"] == [{"seed": 7, "attempts": ["attempt at table 7"]},
                                            {"seed": 9, "attempts": ["attempt at table 9"]}]


@pytest.mark.slow
@pytest.mark.parametrize(("game", "table", "scale"), [
    ("topple", 1000019, 0.0),   # three quick moves summing to one (test_inference_pace.py)
    ("topple", 1000103, 0.0),   # up, up again, back down: the second kept while a hand holds
    ("manami", 1000049, 0.0),   # a totem carried a token at a time (test_manami_pace.py)
    ("tactiki", 1000016, 0.0),  # a fight's losers taken off before the question was answered
    ("topple", 1000134, accuracy.LOW),  # a Toast 0.98 s after a held move's next move
    ("tactiki", 1000010, accuracy.LOW),  # a turn onto a stack read late: held at once
    ("tactiki", 1000056, accuracy.LOW),
    ("tactiki", 1000045, accuracy.LOW),  # both steps off one stack, the lower piece first
])
def test_the_tables_once_lost_are_followed_exactly(game: str, table: int, scale: float) -> None:
    """The whole games, at real pace with no noise (scale 0) or low noise, in which the
    station once lost moves (`python -m tools.bench.accuracy --moves 10000 --players varied`
    with `--clean` or `--low`)."""
    stats = accuracy.play_table(game, table, noisy=scale > 0, players="varied",
                                scale=scale or 1.0)
    assert (stats.phantom, stats.missed, stats.failures) == (0, 0, [])


def test_low_noise_is_the_same_players_with_rarer_mishaps() -> None:
    """``--low``: each table keeps its players' ways (the same draws: pace, swap style,
    hover) and each mishap is a quarter as likely, so a table's low-noise game differs from
    its default one only where a mishap happened."""
    default, low = (Noise.varied(random.Random(7), True, scale) for scale in (1.0, accuracy.LOW))
    assert (low.swap_style, low.hover, low.slide_dwell) == (
        default.swap_style, default.hover, default.slide_dwell)
    for mishap in ("slide", "hesitate", "knock", "fumble"):
        assert getattr(low, mishap) == pytest.approx(accuracy.LOW * getattr(default, mishap))
        assert getattr(default, mishap) > 0
