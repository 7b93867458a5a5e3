"""Move inference: which legal move (if any) explains what the sensors see.

Compare states, not move texts (docs/design.md). For each engine position a :class:`Position` is
built once, right after a move is accepted, while the players are still reaching for pieces: the
sensor picture of every legal move's placement, of everything a move passes through on the way,
and of the last few positions (takebacks). Classifying a stable picture is then one dictionary
look-up, well inside the 1 ms budget.

The verdicts, in the order they are tried:

* ``UNCHANGED``: the board shows the current position.
* ``MOVE``: exactly one resulting state explains the picture, the picture is complete, and it is
  not on the way to another legal move: accept now (no settle wait).
* ``SETTLING``: one resulting state explains it, but the picture is incomplete or could be the
  middle of a longer action (an Up 1 is the first swap of an Up 2): accept once it stays still.
* ``AMBIGUOUS``: several different states look alike to the sensors (Topple's Up 1 of the bottom
  tiki and Topple of the tiki above it): ask, never guess.
* ``TAKEBACK``: the board shows an earlier position: offer to take moves back.
* ``IN_PROGRESS``: the picture is on the way to a legal move: wait.
* ``UNKNOWN``: nothing explains it: a transient, or after a grace time a mismatch to guide.
"""

from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

from pi_app.board.fixes import Fix
from pi_app.board.geometry import Geometry
from pi_app.board.tracker import Observation, ViewKey, view_key
from pi_app.games.base import Game, View


@dataclass(frozen=True, eq=False)
class Option:
    """One legal move as the table sees it: its record text, the state it leads to, and the
    pictures of the board once it is made by hand and once its follow-up is done."""

    text: str
    state: Any
    placement: ViewKey
    final: ViewKey
    extendable: bool = False
    """Its placement is also a moment in the middle of another legal move (a transit view),
    so it is accepted only once the board has rested a while."""
    lifts_only: bool = False
    """The picture has pieces gone from the board (Topple's Toast; a fight's losers already
    taken off): a piece held in a hand for a moment looks the same, so it is accepted only
    once the board has rested longer."""

    @property
    def has_follow_up(self) -> bool:
        """True when the rules demand more handling after the move (removals)."""
        return self.placement != self.final


class Verdict(enum.Enum):
    UNCHANGED = "unchanged"
    MOVE = "move"
    SETTLING = "settling"
    AMBIGUOUS = "ambiguous"
    IN_PROGRESS = "in progress"
    TAKEBACK = "takeback"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    options: tuple[Option, ...] = ()
    plies: int = 0


@dataclass
class Position:
    """Everything inference needs about one engine state, computed once."""

    game: Game[Any, Any]
    state: Any
    cells: tuple[str, ...]
    here: ViewKey
    by_placement: dict[ViewKey, list[Option]] = field(default_factory=dict)
    transit: dict[ViewKey, list[Option]] = field(default_factory=dict)
    earlier: dict[ViewKey, int] = field(default_factory=dict)
    tidy: dict[ViewKey, ViewKey] = field(default_factory=dict)
    """Mid-move pictures that await a follow-up (a TacTiki fight in the first step of two)
    -> the same picture with the defeated pieces taken off."""

    @classmethod
    def build(cls, game: Game[Any, Any], state: Any, cells: Sequence[str],
              earlier_states: Sequence[Any] = ()) -> Position:
        """Precompute the pictures of every legal move; ``earlier_states`` newest first."""
        cells = tuple(cells)
        here = view_key(game.expected_view(state), cells)
        position = cls(game, state, cells, here)
        # Moves that reach the same position (same key) are one option; each distinct way
        # of making it by hand adds its picture (TacTiki: stepping the other copy of a rank).
        groups: dict[Any, list[tuple[Any, Any]]] = {}
        loose: list[tuple[ViewKey, Option]] = []
        for move in game.ways(state):
            after = game.apply(state, move)
            groups.setdefault(game.position_key(after), []).append((move, after))
        for members in groups.values():
            # The option is one exact result under its canonical text (the lowest, as a
            # group may hold several exact results: copies of a rank swapped).
            texts: dict[Any, str] = {}
            for move, after in members:
                if after not in texts:  # the engine's text is canonical per exact result
                    texts[after] = game.move_text(state, move)
            text, after = min((t, a) for a, t in texts.items())
            final = view_key(game.expected_view(after), cells)
            seen: dict[ViewKey, Option] = {}
            for way, _ in members:
                placement = view_key(game.placement_view(state, way), cells)
                option = seen.get(placement) or position._add(
                    Option(text, after, placement, final), seen)
                keys = [view_key(view, cells) for view in game.transit_views(state, way)]
                for key in keys:
                    if key not in (here, placement):
                        position.transit.setdefault(key, []).append(option)
                for untidy, tidied in pairwise(keys):
                    if untidy != tidied and _only_removes(untidy, tidied):
                        position.tidy[untidy] = tidied
                loose += [(view_key(view, cells), option)
                          for view in game.loose_views(state, way)]
        for placement, options in position.by_placement.items():
            if placement in position.transit:
                options[:] = [replace(o, extendable=True) for o in options]
        for key, option in loose:  # (no move waits for these: other hands' orders)
            if key != here and key not in position.by_placement:
                position.transit.setdefault(key, []).append(option)
        for plies, earlier in enumerate(earlier_states, start=1):
            key = view_key(game.expected_view(earlier), cells)
            if key != here:
                position.earlier.setdefault(key, plies)
        return position

    def _add(self, option: Option, seen: dict[ViewKey, Option]) -> Option:
        """Register a legal move's picture (and its tidied picture, when the rules demand a
        follow-up) under ``seen``, the pictures of its group so far."""
        here, placement, final = self.here, option.placement, option.final
        option = replace(option, lifts_only=placement != here and all(
            Counter(p) <= Counter(h) for (_, p), (_, h) in zip(placement, here, strict=True)
            if p != h))
        seen[placement] = option
        self.by_placement.setdefault(placement, []).append(option)
        if final != placement and final not in seen and placement != here:
            # The follow-up may be done before the hand leaves the board. Pieces that are gone
            # may also just be in a hand, so this picture waits like a removal. Not for a move
            # the board does not show (a TacTiki piece that fights and steps back): the players
            # declare it with OK first, or a piece merely lifted off would be taken for it.
            seen[final] = replace(option, lifts_only=True)
            self.by_placement.setdefault(final, []).append(seen[final])
        return option

    def classify(self, observation: Observation) -> Decision:
        """The verdict on one picture of the board."""
        key = observation.key(self.cells)
        if key == self.here:
            return Decision(Verdict.UNCHANGED)
        options = self.by_placement.get(key)
        if options:
            if len(options) > 1:
                return Decision(Verdict.AMBIGUOUS, tuple(options))
            if observation.complete and not (options[0].extendable or options[0].lifts_only):
                return Decision(Verdict.MOVE, tuple(options))
            return Decision(Verdict.SETTLING, tuple(options))
        plies = self.earlier.get(key)
        if plies is not None:  # asked after a rest; a hand that moves on clears the question
            return Decision(Verdict.TAKEBACK, plies=plies)
        passing = self.transit.get(key)
        if passing:
            return Decision(Verdict.IN_PROGRESS, tuple(passing))
        return Decision(Verdict.UNKNOWN)


def _only_removes(before: ViewKey, after: ViewKey) -> bool:
    """True when ``after`` is ``before`` with some pieces taken off and nothing added."""
    return all(Counter(a) <= Counter(b) for (_, b), (_, a) in zip(before, after, strict=True)
               if a != b)


def between(observation: Observation, least: ViewKey, most: ViewKey) -> bool:
    """True when every cell holds no less than ``least`` and no more than ``most``: a
    follow-up (taking pieces off) is under way from ``most`` to ``least``."""
    for (cell, want), (_, ceiling) in zip(least, most, strict=True):
        have = Counter(observation.pieces.get(cell, ()))
        if Counter(want) - have or have - Counter(ceiling):
            return False
    return True


# -- guidance (each step a Fix: pi_app.board.fixes) ----------------------------------------------
def guidance(observation: Observation, target: View | Mapping[str, tuple[str, ...]],
             geometry: Geometry, cells: Iterable[str], near: str | None = None) -> list[Fix]:
    """What to do, piece by piece, to turn the observed board into ``target``; nearest first.

    A piece that is extra on one cell and missing on another becomes one ``move`` (pairs chosen
    nearest first); unknown tags come first, since nothing can be judged while they lie there.
    """
    extra: list[tuple[str, str]] = []
    missing: list[tuple[str, str]] = []
    for cell in cells:
        want = Counter(target.get(cell, ()))
        have = Counter(observation.pieces.get(cell, ()))
        extra += [(cell, p) for p, n in (have - want).items() for _ in range(n)]
        missing += [(cell, p) for p, n in (want - have).items() for _ in range(n)]
    fixes = [Fix("unknown", uid, cell) for cell, uids in sorted(observation.unknown.items())
             for uid in uids]
    pairs = sorted((_distance(geometry, a, b), a, b, p)
                   for a, p in set(extra) for b, q in set(missing) if p == q)
    moves: list[Fix] = []
    for _, a, b, p in pairs:  # nearest pairs first; each piece is paired once
        if (a, p) in extra and (b, p) in missing:
            extra.remove((a, p))
            missing.remove((b, p))
            moves.append(Fix("move", p, a, b))
    rest = [Fix("remove", p, c) for c, p in extra] + [Fix("place", p, c) for c, p in missing]
    ordered = moves + rest
    if near is not None:
        ordered.sort(key=lambda f: _distance(geometry, near, f.cell))
    return fixes + ordered


def _distance(geometry: Geometry, a: str, b: str) -> float:
    (ax, ay), (bx, by) = geometry.cell(a).center_mm, geometry.cell(b).center_mm
    return math.hypot(ax - bx, ay - by)
