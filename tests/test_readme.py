"""The README stays a front door (issue 31): short, the two set-up commands first, and the
test command the one CI runs.

It had grown to 751 lines, most of them benchmark history, and a newcomer could not find what
works today. Plain file reads: well under a second.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

DEMO = "sh tests/bootstrap.sh && .venv/bin/tikiboard demo"
TESTS = "sh tests/bootstrap.sh && .venv/bin/pytest"


def test_the_readme_is_at_most_200_lines() -> None:
    assert len(README.splitlines()) <= 200


def test_the_two_commands_come_first() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert first_block is not None
    assert README.index("```sh") < README.index("\n## ")
    lines = [line.split("#", 1)[0].strip() for line in first_block.group(1).splitlines()]
    assert lines == [DEMO, TESTS]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.strip().splitlines()[-1] == TESTS


def test_the_readme_says_no_board_has_been_built() -> None:
    """What does not work yet is said before anything else about the station."""
    assert README.index("No board has been built yet") < README.index("## What it does")
