"""Reading a set-up the players chose: TacTiki's hidden-rank stacks on the start fields.

Sensors see which pieces stand on a field, never their order. While the players set up, the
order is the order the pieces arrived: the first piece put down on a field is its bottom. A
piece taken off again leaves the order; it goes back on top when put down again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_app.games.base import JSON
from pi_app.records import replay

START_ROWS = {"T": "1", "C": "5"}  # TIKI sets up on row 1, TAC on row 5


@dataclass
class StackOrder:
    """Per cell, the pieces in the order they arrived (bottom first)."""

    order: dict[str, list[str]] = field(default_factory=dict)

    def update(self, pieces: Mapping[str, tuple[str, ...]], cells: Iterable[str]) -> None:
        for cell in cells:
            have = Counter(pieces.get(cell, ()))
            stack = self.order.setdefault(cell, [])
            for name, extra in (Counter(stack) - have).items():  # taken off: the latest goes
                for _ in range(extra):
                    del stack[len(stack) - 1 - stack[::-1].index(name)]
            for name, new in sorted((have - Counter(stack)).items()):
                stack.extend([name] * new)


def tactiki_setup(order: StackOrder, options: JSON) -> tuple[JSON | None, str]:
    """The record of the players' set-up, or None and what is still wrong (for the screen)."""
    setup: dict[str, list[int]] = {}
    for cell, stack in sorted(order.order.items()):
        if not stack:
            continue
        row = cell[-1]
        if row not in START_ROWS.values():
            return None, f"{cell}: pieces go on the start rows 1 and 5 only"
        owner = next(o for o, r in START_ROWS.items() if r == row)
        if any(not name.startswith(owner) for name in stack):
            return None, f"{cell}: only {'TIKI' if owner == 'T' else 'TAC'} pieces here"
        if len(stack) != 2:
            return None, f"{cell}: two pieces on each start field ({len(stack)} now)"
        setup[cell] = [int(name[1:]) for name in stack]
    if len(setup) != 10:
        return None, "two pieces on each of the ten start fields"
    record: JSON = {"game": "tactiki", "options": options, "setup": setup, "moves": []}
    try:
        replay(record)
    except Exception as exc:  # the ranks do not match the rank option
        return None, str(exc)
    return record, ""


def start_state(record: JSON) -> Any:
    return replay(record).state
