"""What the follower says: moves accepted, revised and taken back, questions and guidance.

The outcomes are the follower's only output (:mod:`pi_app.board.follower`): the referee records
and renders them. :class:`Acceptance` values are stored with each move and read back after a
restart, so they never change.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Generic

from pi_app.board.fixes import Fix
from pi_app.board.tracker import ViewKey
from pi_app.games.base import S


class Acceptance(StrEnum):
    """How a move was accepted. The values are stored with the move (the ``move`` event's
    ``"how"``, ``docs/records.md``) and read back after a restart, so they never change: a
    ``str`` enum writes exactly the words earlier stations stored."""

    AT_ONCE = "at once"
    """Clear and finished."""
    RESTED = "rested"
    """Clear, but a piece carried over a stack looks the same for a moment: after
    ``settle_min``."""
    SETTLED = "settled"
    """After resting: an incomplete picture, or the middle of another move."""
    ASKED = "asked"
    """A question was answered (button or card)."""
    FORCED = "forced"
    """The only move there was (a pass, a decision that makes no difference)."""

    @classmethod
    def stored(cls, value: object) -> Acceptance | None:
        """The acceptance a stored ``"how"`` names; None when it names none (absent in older
        games, or a hand-edited store): such a move is treated as one the players chose."""
        if isinstance(value, str) and value in cls._value2member_map_:
            return cls(value)
        return None

    @property
    def board_decided(self) -> bool:
        """The board alone decided it: only such a move may be revised (or undone when a
        piece comes back) by what the board shows next."""
        return self in BOARD_DECIDED


#: How a move was accepted when the board alone decided it.
BOARD_DECIDED = frozenset({Acceptance.AT_ONCE, Acceptance.RESTED, Acceptance.SETTLED})


class PromptKind(StrEnum):
    """What a question on the screen is about (stored in ``prompt`` notes, shown on the page)."""

    AMBIGUOUS = "ambiguous"
    """Which of several look-alike moves was made?"""
    TAKEBACK = "takeback"
    """Take back the moves the board shows undone?"""
    DECISION = "decision"
    """A choice the sensors cannot see (the order of two villages, a pass)."""
    DRAW = "draw"
    """The station's own: a draw offered (asked by the referee, not the follower)."""
    ORDER = "order"
    """The station's own: in which order were these pieces put down (TacTiki's start stacks)?"""


class GuidanceKind(StrEnum):
    """Why the board differs from the position (stored as the note's kind)."""

    FOLLOW_UP = "follow_up"
    """The rules demand it: remove defeated pieces, clear a village."""
    MISMATCH = "mismatch"
    """A wrong or unfinished move."""


# -- outcomes -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MoveAccepted(Generic[S]):
    t: float
    text: str
    player: int | None
    state: S
    since_rest: float
    """Seconds from the board's last change to the acceptance (the settle cost)."""
    how: Acceptance = Acceptance.AT_ONCE
    """How it was accepted (stored with it: a restarted station must know whether the board
    alone decided it)."""
    lifts_only: bool = False
    """The picture accepted only had pieces gone (see :attr:`Option.lifts_only`): the move is
    undone if such a piece comes back (a restarted station must know it too)."""


@dataclass(frozen=True)
class MoveRevised(Generic[S]):
    """The last accepted move was the middle of another: ``text`` replaces ``replaced``."""

    t: float
    replaced: str
    text: str
    state: S


@dataclass(frozen=True)
class Prompt:
    """A question (the follower asks ``ambiguous``, ``takeback`` and ``decision`` ones)."""

    t: float
    kind: PromptKind
    options: tuple[str, ...]
    selected: int = 0
    plies: int = 0


@dataclass(frozen=True)
class PromptCleared:
    t: float


@dataclass(frozen=True)
class Guidance:
    """The board differs from the position, and why (``kind``)."""

    t: float
    kind: GuidanceKind
    fixes: tuple[Fix, ...]


@dataclass(frozen=True)
class InSync:
    """The board matches the position again."""

    t: float


@dataclass(frozen=True)
class TakenBack(Generic[S]):
    """Moves taken back. ``left``: by BACK, the picture the board showed then (the moves still
    on it); until the board shows ``state`` that picture is no move. None when the board
    already showed the earlier position."""

    t: float
    plies: int
    state: S
    left: ViewKey | None = None


Outcome = (
    MoveAccepted[S] | MoveRevised[S] | Prompt | PromptCleared | Guidance | InSync | TakenBack[S]
)
