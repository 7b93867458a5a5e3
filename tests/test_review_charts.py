"""The review's charts and pictures (issue 34): the evaluation and score over the game, each
named move's position with the better move drawn, never the station's own seats, and
``tikiboard review`` writing them as SVG."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pi_app.bots.review import changed_cells, review
from pi_app.cli import main
from pi_app.games import get_game
from pi_app.net.review_svg import evaluation_svg, scores_svg, slip_svg

SVG = "{http://www.w3.org/2000/svg}"


def random_record(name: str, seed: int) -> dict[str, Any]:
    game = get_game(name)
    rng = random.Random(seed)
    state = game.new_game(rng)
    moves = []
    while not game.is_over(state):
        move = game.random_move(state, rng)
        moves.append(game.move_text(state, move))
        state = game.apply(state, move)
    return {**game.setup_record(game.new_game(random.Random(seed))), "moves": moves}


def test_the_station_seats_are_never_named() -> None:
    record = random_record("tactiki", 4)
    everyone = review(record, seconds=300)
    assert {s.player for s in everyone.slips} == {0, 1}  # random play slips on both sides
    result = review({**record, "station_seats": {"1": "club"}}, seconds=300)
    assert result.skipped == (1,)
    assert {s.player for s in result.slips} == {0}
    again = review({**record, "station_seats": {"1": "club"}}, seconds=300, skip=())
    assert again.slips == everyone.slips


@pytest.mark.parametrize("name", ["manami", "tactiki"])
def test_the_curve_follows_every_move_and_the_slips_carry_their_position(name: str) -> None:
    record = random_record(name, 3)
    game = get_game(name)
    result = review(record, seconds=300)
    assert [p.move for p in result.curve] == list(range(1, result.total + 1))
    assert all(0.0 <= v <= 1.0 for p in result.curve for v in p.values)
    state = get_game(name).record_segments(record)[0].start(None)
    states = [state]
    for text in record["moves"]:
        state = game.apply_text(state, text)
        states.append(state)
    assert result.curve[-1].scores == game.scores(states[-1])
    for slip in result.slips:
        before = states[slip.move - 1]
        assert dict(slip.before) == dict(game.expected_view(before))
        better = game.parse_move(before, slip.better)
        assert (slip.lift, slip.put) == changed_cells(game, before, better)
        assert slip.lift or slip.put


def test_the_charts_are_svg_with_a_line_per_player_and_the_slips_marked() -> None:
    data = review(random_record("manami", 5)).to_json()
    chart = ET.fromstring(evaluation_svg(data, ["Ana", "Ben"]))
    assert len(chart.findall(f"{SVG}polyline")) == 2
    assert len(chart.findall(f"{SVG}circle")) == len(data["slips"])
    assert "Ana" in "".join(chart.itertext())
    score = scores_svg(data)
    assert score is not None and len(ET.fromstring(score).findall(f"{SVG}polyline")) == 2
    assert scores_svg(review(random_record("tactiki", 5)).to_json()) is None
    picture = ET.fromstring(slip_svg("manami", data["slips"][0]))
    assert picture.findall(f".//{SVG}*[@class='better']")


def test_names_are_escaped() -> None:
    data = review(random_record("manami", 5)).to_json()
    text = evaluation_svg(data, ["<script>x</script>", "B"])
    assert "<script>" not in text
    ET.fromstring(text)


def run(*argv: str) -> int:
    with pytest.raises(SystemExit) as stop:
        main(list(argv))
    return int(stop.value.code or 0)


def test_tikiboard_review_writes_the_pictures(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    record = random_record("manami", 5)
    path = tmp_path / "game.tiki.json"
    path.write_text(json.dumps(record))
    assert run("review", str(path), "--out", str(tmp_path / "out")) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert "evaluation.svg" in written and "score.svg" in written
    assert any(n.startswith("move-") for n in written)
    assert "better:" in capsys.readouterr().out


def test_tikiboard_review_of_a_record_that_stops_replaying(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = random_record("manami", 5)
    record["moves"] = [*record["moves"][:6], "z9-z8", *record["moves"][6:]]
    path = tmp_path / "game.tiki.json"
    path.write_text(json.dumps(record))
    assert run("review", str(path), "--out", str(tmp_path / "out"), "--json") == 1
    out = json.loads(capsys.readouterr().out)
    assert out["total"] == 6 and (tmp_path / "out" / "evaluation.svg").exists()
    path.write_text("not json")
    assert run("review", str(path), "--out", str(tmp_path / "out")) == 2
