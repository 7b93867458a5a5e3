"""Pure helpers over pictures of the board: what a picture shows, what it lacks, what is forced.

No state and no time: each function answers one question about a position and an observation,
so the follower's rules (:mod:`pi_app.board.follower` and its parts) share one answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from pi_app.board.inference import Option, Position
from pi_app.board.outcomes import Acceptance
from pi_app.board.registry import TagRegistry
from pi_app.board.tracker import Observation, ViewKey
from pi_app.games.base import Game, M, S

#: How many earlier positions a takeback can return to.
TAKEBACK_DEPTH = 12
#: The most forced moves in a row followed after a held move (a pass; two would end a game).
FORCED_DEPTH = 8
#: Timers fire at exactly ``last change + settle``; float sums may land a hair short of it.
EPSILON = 1e-6


def only_silent(position: Position) -> list[Option]:
    """The legal moves that leave the board as it is, when no legal move moves a piece (empty
    otherwise): decisions the sensors cannot see and the players cannot avoid."""
    here = position.here
    if any(o.placement != here for options in position.by_placement.values() for o in options):
        return []
    return position.by_placement.get(here, [])


def forced_option(position: Position) -> Option | None:
    """The move the follower takes by itself in ``position`` (as :meth:`Follower._decisions`
    does): the only legal one, and one that leaves the board as it is (a pass). None when
    there is none, or when the players choose (several such moves, or pieces could move)."""
    silent = only_silent(position)
    return silent[0] if len(silent) == 1 else None


def moved_reads(
    observation: Observation,
    moves: Sequence[tuple[str, tuple[str, str, float]]],
    registry: TagRegistry,
) -> Observation | None:
    """``observation`` with each tag of ``moves`` (UID -> (cell it lies on, cell that read it
    since, when)) on the cell that read it since; None when the picture does not show it
    where it lay."""
    pieces = {cell: list(stack) for cell, stack in observation.pieces.items()}
    for uid, (home, other, _) in moves:
        piece = registry.lookup(uid)
        stack = pieces.get(home, [])
        if piece is None or piece not in stack:
            return None
        stack.remove(piece)
        pieces.setdefault(other, []).append(piece)
    return replace(
        observation, pieces={cell: tuple(sorted(stack)) for cell, stack in pieces.items() if stack}
    )


def opened(option: Option, how: Acceptance) -> Option:
    """The accepted move as the board may still revise it. One taken only because it rested
    on a stack for settle_min (``rested``) may be a piece the hand carried on, or a turn's
    steps made in another order: it stays open like a move that could go on."""
    return replace(option, extendable=True) if how is Acceptance.RESTED else option


def takeback_plies(game: Game[S, M], history: Sequence[tuple[S, str]]) -> int:
    """How many moves BACK takes back: the last one a player made, and the forced moves
    after it (taking back only a forced move would see it taken again at once: the follower
    takes a :meth:`~pi_app.games.base.Game.forced_move` by itself, as :meth:`Follower._decisions`
    does, and would take it again)."""
    plies = 1
    while plies < len(history) and game.forced_move(history[-plies][0]) is not None:
        plies += 1
    return min(plies, len(history))


def came_back(
    before: ViewKey, after: ViewKey, observation: Observation, now_here: ViewKey | None = None
) -> bool:
    """True when a piece that went off the board between ``before`` and ``after`` is seen on
    the board again, beyond what ``now_here`` (by default ``after``) has on it."""
    gone = Counter(p for _, cell in before for p in cell) - Counter(
        p for _, cell in after for p in cell
    )
    if not gone:
        return False
    seen = Counter(p for pieces in observation.pieces.values() for p in pieces)
    expected = Counter(p for _, cell in (after if now_here is None else now_here) for p in cell)
    return bool((seen - expected) & gone)


def all_on_board(
    here: ViewKey, observation: Observation, presence_pieces: frozenset[str] = frozenset()
) -> bool:
    """True when every piece of the position ``here`` is seen somewhere on the board, or may
    lie where only a contact sees it: a cell that knows its piece by its contact alone
    (Manami's shaman fields) shows that piece for whatever closes it, so as many extra such
    pieces as pieces missing is a piece set down there, none in a hand (case 18,
    ``docs/waits.md``)."""
    seen = Counter(p for pieces in observation.pieces.values() for p in pieces)
    want = Counter(p for _, cell in here for p in cell)
    missing = sum((want - seen).values())
    return missing == 0 or missing <= sum(
        n for p, n in (seen - want).items() if p in presence_pieces
    )


def only_additions(before: ViewKey, after: ViewKey) -> bool:
    """True when ``after`` is ``before`` with pieces added and none taken away."""
    return all(
        Counter(b) <= Counter(a) for (_, b), (_, a) in zip(before, after, strict=True) if a != b
    )
