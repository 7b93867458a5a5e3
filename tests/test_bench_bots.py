"""The bots bench run in pieces: ``--pair`` picks pairs, ``--seed`` picks the games, and
``--merge`` pools the pieces of one pair into the figures one long run would give."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools.bench.bots import main as bench_main
from tools.bench.bots import merge


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    bench_main(["--game", "manami", "--pair", "greedy:random", "--budget", "10", *args])
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_pieces_of_a_pair_pool_into_the_long_run(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    whole = _run(capsys, "--games", "6")
    first = _run(capsys, "--games", "4")
    rest = _run(capsys, "--games", "2", "--seed", "4")
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(rest))
    bench_main(["--merge", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    pooled = json.loads(capsys.readouterr().out)
    [one] = whole["results"]
    [both] = pooled["results"]
    for name in ("games", "wins", "draws", "losses", "score", "ci95"):
        assert both[name] == one[name], name
    assert [(p["seed"], p["games"]) for p in both["parts"]] == [(0, 4), (4, 2)]
    assert {(r["level"], r["opponent"]) for r in pooled["results"]} == {("greedy", "random")}
    with pytest.raises(ValueError, match="share games"):
        merge([first, _run(capsys, "--games", "2", "--seed", "3")])
