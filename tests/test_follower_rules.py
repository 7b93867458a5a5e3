"""Every rule of the follower is needed: without it, the recorded corpus is answered otherwise.

:data:`pi_app.board.rules.RULES` is the follower's rules in order. For each one, the corpus
(``tests/traces/``, see ``tests/test_follower_corpus.py``) is replayed with that rule switched
off (passing every look on unchanged; the last rule, which always answers, answering nothing)
and must differ from the recording, in the session named here (found by replaying them all:
starting there keeps the test fast). A rule the corpus never needs is listed apart, with the
tests that pin it instead, so a new rule cannot go unpinned unnoticed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_app.board import rules
from tools.bench.corpus import Replayed, read, replay_session

TRACES = Path(__file__).parent / "traces"

#: Rule -> (corpus file, the session, counted from 1, whose replay shows the difference).
PINNED = {
    "question": ("topple", 1),
    "follow-up first": ("manami", 1),
    "classify": ("topple", 1),
    "stale reads": ("topple", 3),
    "vetoes": ("topple", 3),
    "held pauses": ("topple", 1),
    "split": ("topple", 1),
    "after held": ("topple", 1),
    "unchanged": ("topple", 1),
    "move": ("topple", 1),
    "settling": ("topple", 1),
    "ambiguous": ("topple", 2),
    "takeback": ("topple", 3),
    "revise": ("tactiki", 2),
    "tidy": ("tactiki", 1),
    "mismatch": ("topple", 3),
}
#: Rules the corpus does not need, and the tests that do.
ELSEWHERE = {
    # (test_three_quick_moves_that_sum_to_one_are_three_moves fails without it)
    "strayed": "tests/test_inference_pace.py",
}


def test_every_rule_is_pinned_once() -> None:
    names = [rule.name for rule in rules.RULES]
    assert len(names) == len(set(names))
    assert set(names) == set(PINNED) | set(ELSEWHERE)
    assert not set(PINNED) & set(ELSEWHERE)
    assert all((Path(__file__).parents[1] / path).is_file() for path in ELSEWHERE.values())


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_corpus_needs_the_rule(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    index = next(i for i, rule in enumerate(rules.RULES) if rule.name == name)
    last = index == len(rules.RULES) - 1

    def off(follower: Any, look: rules.Look) -> rules.Answer:
        return [] if last else look

    switched = (*rules.RULES[:index], rules.Rule(name, "off", off), *rules.RULES[index + 1 :])
    monkeypatch.setattr(rules, "RULES", switched)
    game, session = PINNED[name]
    found = Replayed()
    for number, (header, calls) in enumerate(read(TRACES / f"{game}.jsonl.gz"), start=1):
        if number == session:
            replay_session(header, calls, found, limit=1)
            break
    assert found.differences, f"the corpus does not need the rule {name!r}"
