"""Reading a set-up the players chose: stacks of hidden pieces on the start fields (TacTiki's
ranks); the engine says what a start field may hold (``Game.start_stack_problem``).

Sensors see which pieces stand on a field, never their order. While the players set up, the
order is the order the pieces arrived: the first piece put down on a field is its bottom. A
piece taken off again leaves the order; it goes back on top when put down again.

Pieces of different ranks that first show up in the same reading (put down together, or faster
than one scan apart, or standing there when the station started) have no known order, and a
guess gets a hidden rank wrong for the rest of the game. Such a field is *unsure*: the station
asks the players to lift the pieces off it and put them back one at a time (docs/feedback.md).
That question names only the field, never a piece: the opponent reads the same screen, and a
piece's name is its rank (``T4``). Lifting a piece off an unsure field settles it too: what
stays is below what was lifted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_app.games.base import Game, GameError
from pi_app.json_types import JSON
from pi_app.records import replay


@dataclass
class StackOrder:
    """Per cell, the pieces bottom first, in groups: the pieces that arrived in one reading.

    The order inside a group is not known; a group of one name (two ``T2``) needs none.
    """

    groups: dict[str, list[list[str]]] = field(default_factory=dict)

    @property
    def order(self) -> dict[str, list[str]]:
        """Per cell, the pieces bottom first (inside an unsure group: by name, a guess)."""
        return {cell: [name for group in stack for name in sorted(group)]
                for cell, stack in self.groups.items()}

    def unsure(self) -> tuple[str, ...]:
        """The cells whose order is not known: two different pieces arrived at once."""
        return tuple(cell for cell, stack in sorted(self.groups.items())
                     if any(len(set(group)) > 1 for group in stack))

    def update(self, pieces: Mapping[str, tuple[str, ...]], cells: Iterable[str]) -> None:
        for cell in cells:
            have = Counter(pieces.get(cell, ()))
            stack = self.groups.setdefault(cell, [])
            on = Counter(name for group in stack for name in group)
            for name, extra in (on - have).items():  # taken off: from the highest group
                for _ in range(extra):
                    next(g for g in reversed(stack) if name in g).remove(name)
            stack[:] = [group for group in stack if group]
            arrived = sorted((have - on).elements())
            if arrived:
                stack.append(arrived)


def stacks_record(game: Game[Any, Any], order: StackOrder,
                  options: JSON) -> tuple[JSON | None, str]:
    """The record of the players' set-up as ``game``'s engine reads start stacks, or None and
    what is still wrong (for the screen): the engine's word on a field, else that its order
    was not seen, else what the whole set-up lacks."""
    stacks: dict[str, list[str]] = {}
    unsure = order.unsure()
    for cell, stack in sorted(order.order.items()):
        if not stack:
            continue
        why = game.start_stack_problem(cell, stack)
        if why:
            return None, why
        if cell in unsure:
            return None, f"{cell}: lift the pieces off, put them back one at a time"
        stacks[cell] = stack
    try:
        record = game.start_stacks_record(stacks, options)
    except GameError as exc:
        return None, str(exc)
    try:
        replay(record)
    except Exception as exc:  # the ranks do not match the rank option
        return None, str(exc)
    return record, ""


def start_state(record: JSON) -> Any:
    return replay(record).state
