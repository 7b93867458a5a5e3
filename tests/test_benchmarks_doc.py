"""``docs/benchmarks.md`` is what the benchmark JSON files in ``docs/`` give.

The figures moved out of the README into that page (issue 31), written by
``tools/render_benchmarks.py``; a results file committed without re-running the script, or a
figure edited by hand on the page, would have the page and its sources disagree again, which is
how the README's tables went stale. Plain file reads and string work: well under a second.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tools import render_benchmarks

ROOT = Path(__file__).resolve().parents[1]


def test_the_page_matches_the_results_files() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    expected = render_benchmarks.render(render_benchmarks.results_files())
    assert page == expected, "docs/benchmarks.md is stale: python -m tools.render_benchmarks"
    assert render_benchmarks.main(["--check"]) == 0


def test_every_results_file_has_its_section() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    for path in render_benchmarks.results_files():
        assert f"From [{path.name}]({path.name})." in page


def test_a_changed_figure_changes_the_page(tmp_path: Path) -> None:
    """The check can fail: one phantom move more in a results file is a different page."""
    name = "accuracy-varied-10k-noise-levels.json"
    shutil.copy(ROOT / "docs" / name, tmp_path / name)
    before = render_benchmarks.render([tmp_path / name])
    data = json.loads((tmp_path / name).read_text(encoding="utf-8"))
    data["levels"]["default"]["topple"]["phantom"] = 12345
    (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
    after = render_benchmarks.render([tmp_path / name])
    assert before != after
    assert "| topple | varied | 171 | 10,008 | 0 | 0 |" in before
    assert "| topple | varied | 171 | 10,008 | 12,345 | 0 |" in after
