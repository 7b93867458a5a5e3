"""``tikiboard replay`` through the real command line: good, illegal and malformed records."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

LINE = ["Hookipa", "Kapu", "Eepo", "Nui", "Lokahi", "Akamai", "Nani", "Wikiwiki", "Huhu"]
CARDS = [["Hookipa", "Lokahi", "Nani"], ["Wikiwiki", "Hookipa", "Akamai"]]


def tikiboard(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the installed console script (falling back to ``python -m pi_app``)."""
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60,
                          check=False)


def write(tmp_path: Path, record: Any, name: str = "game.tiki.json") -> str:
    path = tmp_path / name
    path.write_text(record if isinstance(record, str) else json.dumps(record))
    return str(path)


def topple(moves: list[str]) -> dict[str, Any]:
    return {"game": "topple", "options": {"players": 2},
            "rounds": [{"line": LINE, "cards": CARDS, "first": 0, "moves": moves}]}


def test_good_record_json(tmp_path: Path) -> None:
    run = tikiboard("replay", write(tmp_path, topple(["up1 Nani", "topple Kapu"])), "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert set(out) == {"ok", "error", "finished", "scores", "winner", "state"}
    assert out["ok"] is True and out["error"] is None and out["finished"] is False
    assert out["scores"] == [0, 0] and out["winner"] is None
    assert out["state"]["line"][:4] == ["Hookipa", "Eepo", "Nui", "Lokahi"]
    assert run.stdout.count("\n") == 1  # exactly one JSON object


def test_rulebook_example_prints_the_rulebook_scores() -> None:
    import tempfile

    from pi_app.cli import example_record

    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), example_record("topple"))
        out = json.loads(tikiboard("replay", path, "--json").stdout)
        assert out["scores"] == [5, 7, 11, 2]
        human = tikiboard("replay", path)
        assert human.returncode == 0
        assert "Player 1: 5, Player 2: 7, Player 3: 11, Player 4: 2" in human.stdout


def test_illegal_move_exits_1_and_locates_it(tmp_path: Path) -> None:
    run = tikiboard("replay", write(tmp_path, topple(["up1 Nani", "toast", "up3 Kapu"])),
                    "--json")
    assert run.returncode == 1
    out = json.loads(run.stdout)
    assert out["ok"] is False and out["finished"] is False
    assert out["error"]["round"] == 0 and out["error"]["move"] == 1
    assert out["error"]["text"] == "toast"
    assert "first turn" in out["error"]["reason"]
    assert out["state"]["turn"] == 1 and out["state"]["line"][5] == "Nani"  # before the error


def test_illegal_move_human_output(tmp_path: Path) -> None:
    run = tikiboard("replay", write(tmp_path, topple(["up3 Kapu"])))
    assert run.returncode == 1
    assert "illegal move at round 1, move 1: 'up3 Kapu'" in run.stdout
    assert "Kapu is number 2 in line" in run.stdout


@pytest.mark.parametrize("content", [
    "not json at all {",
    "[1, 2, 3]",
    json.dumps({"rounds": []}),
    json.dumps({"game": "chess"}),
    json.dumps({"game": "topple"}),
    json.dumps({"game": "topple", "rounds": [{"line": LINE[:3], "cards": CARDS}]}),
    json.dumps({"game": "topple", "rounds": [{"line": LINE, "cards": CARDS, "moves": [7]}]}),
    json.dumps({"game": "topple", "options": {"players": 9},
                "rounds": [{"line": LINE, "cards": CARDS}]}),
    "\u00ff\u00fe garbage",
    "[" * 100_000,
])
def test_malformed_records_exit_2_with_one_line_and_no_traceback(tmp_path: Path,
                                                                 content: str) -> None:
    run = tikiboard("replay", write(tmp_path, content), "--json")
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith("tikiboard: ")


def test_missing_and_binary_files_exit_2(tmp_path: Path) -> None:
    missing = tikiboard("replay", str(tmp_path / "nope.tiki.json"))
    assert missing.returncode == 2 and "No such file" in missing.stderr
    binary = tmp_path / "bin.tiki.json"
    binary.write_bytes(b"\x80\x81\xff\x00")
    run = tikiboard("replay", str(binary))
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_demo_runs() -> None:
    run = tikiboard("examples", "--game", "topple")
    assert run.returncode == 0, run.stderr
    assert "Lokahi" in run.stdout


def _station_db(tmp_path: Path) -> Path:
    """A station's database with a Manami game three moves in and a fresh TacTiki game, as
    the station's own session stores them."""
    import random

    from pi_app.games import get_game
    from pi_app.referee.session import Session
    from pi_app.referee.store import EventStore

    db = tmp_path / "station.db"
    store = EventStore(db)
    rng = random.Random(7)
    session: Session[Any, Any] = Session.new(store, "manami", rng=rng, players=["Ana", "Ben"])
    game, state = get_game("manami"), session.state
    for _ in range(3):
        move = game.random_move(state, rng)
        player = game.to_move(state)
        state = game.apply(state, move)
        session.moved(game.move_text(session.state, move), player, state)
    Session.new(store, "tactiki", rng=rng)
    store.close()
    return db


def test_export_then_replay_meet(tmp_path: Path) -> None:
    """Issue 31: what ``export`` writes without ``--game`` (a list) is what ``replay`` reads,
    each record in turn, under its number; ``--game`` writes one record, replayed as before."""
    db = _station_db(tmp_path)
    every = tmp_path / "games.json"
    run = tikiboard("export", "--db", str(db), "--out", str(every))
    assert run.returncode == 0, run.stderr
    assert "--game ID writes one record" in run.stdout
    assert isinstance(json.loads(every.read_text()), list)
    replayed = tikiboard("replay", str(every))
    assert replayed.returncode == 0, replayed.stderr
    assert "== 1/2: Tiki (Manami island) ==" in replayed.stdout
    assert "== 2/2: TacTiki ==" in replayed.stdout
    assert "Ana: " in replayed.stdout  # the names the station stored
    as_json = json.loads(tikiboard("replay", str(every), "--json").stdout)
    assert as_json["ok"] is True and [r["ok"] for r in as_json["records"]] == [True, True]
    one = tmp_path / "one.json"
    assert tikiboard("export", "--db", str(db), "--game", "1", "--out", str(one)).returncode == 0
    single = json.loads(tikiboard("replay", str(one), "--json").stdout)
    assert single["ok"] is True and single["state"] == as_json["records"][0]["state"]


def test_a_list_with_a_bad_entry_replays_the_others(tmp_path: Path) -> None:
    good = topple(["up1 Nani"])
    run = tikiboard("replay", write(tmp_path, [good, 42, topple(["up1 Nani", "up1 Nani",
                                                                 "up9 Kapu"])]))
    assert run.returncode == 2
    assert "record 2 of 3: not a valid record: a record must be a JSON object" in run.stderr
    assert "--game ID writes one" in run.stderr
    assert "== 1/3: Tiki Topple ==" in run.stdout and "== 3/3: Tiki Topple ==" in run.stdout
    assert "illegal move" in run.stdout
    empty = tikiboard("replay", write(tmp_path, [], "empty.json"))
    assert empty.returncode == 2 and "no games to replay" in empty.stderr


#: What ``replay`` and ``examples`` print alike in every language: data, not words (a line of
#: the Topple line, the board's column letters, a board row of stacks and values).
DATA_LINE = re.compile(r"^\s*(?:\d+\.\s+\w+|[a-e ]+|\d\s+[\s.+\-\dCT]+)$")


@pytest.mark.parametrize("lang", ["nl", "fr", "it"])
def test_one_language_per_run(lang: str) -> None:
    """Issue 31: with ``--lang`` the examples' positions, scores and results are all in that
    language: every line the English run prints that comes back unchanged is data (the engines'
    descriptions once stayed English, "Player 1" beside "Speler 1")."""
    english = tikiboard("examples")
    other = tikiboard("examples", "--lang", lang)
    assert english.returncode == other.returncode == 0, other.stderr
    same = set(english.stdout.splitlines()) & set(other.stdout.splitlines())
    left = sorted(line for line in same if line.strip() and not DATA_LINE.match(line))
    assert left == []
    assert "Player" not in other.stdout
