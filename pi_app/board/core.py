"""The follower's state: every field it holds, in one place, and the records of its hypotheses.

:class:`pi_app.board.follower.Follower` is assembled from parts (questions, held moves, stale
reads, revisions, restarts), each a mixin over :class:`FollowerCore`, which declares the state
they share: what each field stands for is here, once. ``docs/waits.md`` describes the model this
state is the first step towards (one frozen record per hypothesis, rules over it in order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, NamedTuple

from pi_app.board.geometry import Geometry
from pi_app.board.inference import Decision, Option, Position, Verdict
from pi_app.board.outcomes import Acceptance, GuidanceKind, Outcome, Prompt, PromptKind
from pi_app.board.registry import TagRegistry
from pi_app.board.tracker import Observation, Tracker, ViewKey
from pi_app.board.waits import Waits
from pi_app.games.base import Game, M, S


@dataclass(frozen=True)
class Asking:
    """The open question (a record: a new one for each change, never edited). ``after`` is a
    cache of positions built on demand, not state: the same question builds the same."""

    kind: PromptKind
    key: ViewKey
    options: tuple[Option, ...] = ()
    plies: int = 0
    selected: int = 0
    after: dict[int, Position] = field(default_factory=dict, compare=False)
    """The position after each option, built when the board goes on (:meth:`Follower._asked_on`)."""


@dataclass(frozen=True)
class Through:
    """Where a held move leads: the position the next move is made from, and the forced
    moves the follower takes by itself on the way there (a pass), in order. The board shows
    no forced move, so the next move it shows is made from the position after them."""

    position: Position
    forced: tuple[Option, ...] = ()


class Held(NamedTuple):
    """A move whose picture held for ``settle`` but must rest longer, and where it leads
    (built on first use: :meth:`pi_app.board.held.HeldRules._held_through`)."""

    move: Option
    through: Through | None = None


class Revisable(NamedTuple):
    """The last move the board alone took, while it may still be revised or undone."""

    before: Position
    """The position before it."""
    move: Option
    since: float | None
    """When its revise window opened (None: restored after a restart, not yet)."""


class Removal(NamedTuple):
    """A removal the board alone took (one of a row of them), and the position before it."""

    before: Position
    move: Option


class StaleDue(NamedTuple):
    """The stale-read rules' deadlines: when a picture they doubt may be judged again. Each is
    set by the look that found the doubt; ``carried``, ``contested`` and ``open`` only by the
    last look (so no other wait adds a deadline), ``elsewhere`` until the next look that
    rereads (:meth:`pi_app.board.stale.StaleReads._read_elsewhere`)."""

    elsewhere: float | None = None
    """A move read from tags seen on two closed cells."""
    carried: float | None = None
    """A move onto a stack doubted by a read elsewhere (``_carried_past``)."""
    contested: float | None = None
    """A read of a tag on two closed cells goes stale (``Tracker.contested_window``): the
    picture read from them changes then."""
    open: float | None = None
    """A picture waiting while a cell shows pieces its open contact denies (``_rested``)."""


class FollowerCore(Generic[S, M]):
    """The state the follower's parts share (set in ``Follower.__post_init__``)."""

    game: Game[S, M]
    state: S
    geometry: Geometry
    registry: TagRegistry
    history: list[tuple[S, str]]
    """(state before, move text) for every accepted move, oldest first."""
    tracker: Tracker
    cells: tuple[str, ...]
    configured_waits: Waits
    """The waits as configured: the floors (:mod:`pi_app.board.waits`)."""
    waits: Waits
    """The waits in force: the configured ones paced on the board's scan cycle."""
    _paced_for: float | None
    _position: Position | None
    _prepared: bool
    """The position's silent decisions have been asked for."""
    _asking: Asking | None
    """The open question."""
    _shown: tuple[GuidanceKind, ViewKey] | None
    """The guidance shown, and for which picture."""
    _follow_up: ViewKey | None
    """The placement of a move whose follow-up (removals) is still being tidied."""
    _previous: Revisable | None
    """A last move that may still be revised: the position before it, the move, and when
    (None: restored after a restart; the window opens at the first picture judged)."""
    _resumed_at: float | None
    """When a restart restored that move."""
    _taken_at: float
    """When the board took that move (restored: before the restart)."""
    _guide_now: bool
    """After an undo by button, show the way back at once."""
    _undone: ViewKey | None
    """The picture of a move undone by button: no move until the board shows the position."""
    _declined: ViewKey | None
    """A picture of an earlier position the players said is no takeback."""
    _held: tuple[Held, ...]
    """Moves whose pictures held for ``settle`` but must rest longer, in order, with where
    each leads (built when needed)."""
    _held_rest: float
    """When the board last changed since the first held move was held."""
    _held_showing: bool
    """The board has shown the first held move's picture since then."""
    _held_pause: float
    """The longest the board rested at that picture before it changed."""
    _held_paused: dict[Option, float]
    """The same for each move held after the first."""
    _held_key: ViewKey | None
    """The picture at the last look."""
    _candidate: tuple[S, Option, Position] | None
    """A held move that rested long enough for the next player to start, no longer held:
    a question may still be about it."""
    _removals: tuple[Removal, ...]
    """The removals the board alone took last, in a row (the position before each, the move)."""
    _reopened: Option | None
    """The last move whose revise window opened again."""
    _presence_pieces: frozenset[str]
    _due: StaleDue
    """When the stale-read rules want to look again (one record, replaced as a whole)."""
    _moved_at: float
    """The board's last change when the position last changed (older reads do not count)."""
    _unexplained: tuple[ViewKey, float] | None
    """The last picture judged a finished wrong move, and since when."""

    if TYPE_CHECKING:  # the parts' methods each other part calls (defined in one of them)

        @property
        def position(self) -> Position: ...
        def _moved_to(self, state: S) -> None: ...
        def _decisions(self, now: float) -> list[Outcome[S]]: ...
        def press(self, button: str, now: float) -> list[Outcome[S]]: ...
        def _evaluate(self, now: float) -> list[Outcome[S]]: ...
        def _resumed_as_left(self, key: ViewKey, now: float) -> None: ...
        def _unexplained_for(
            self, last: tuple[ViewKey, float] | None, key: ViewKey, changed: float, now: float
        ) -> float: ...
        def _guide(
            self,
            kind: GuidanceKind,
            observation: Observation,
            key: ViewKey,
            now: float,
            target: Mapping[str, tuple[str, ...]] | None = None,
        ) -> list[Outcome[S]]: ...
        def _prompt(self, now: float) -> Prompt: ...
        def _pad(self, observation: Observation, now: float, out: list[Outcome[S]]) -> None: ...
        def _may_hover(self, option: Option, here: ViewKey) -> bool: ...
        def _hold(self, option: Option, observation: Observation) -> None: ...
        def _after_held(
            self, observation: Observation, verdict: Verdict, quiet: float, now: float
        ) -> list[Outcome[S]] | None: ...
        def _read_elsewhere(
            self, observation: Observation, decision: Decision, now: float
        ) -> tuple[Observation, Decision, float] | None: ...
        def _wrong_elsewhere(
            self, observation: Observation, unexplained: tuple[ViewKey, float] | None, now: float
        ) -> list[Outcome[S]] | None: ...
        def _asked_on(self, observation: Observation, quiet: float) -> bool: ...
        def _split(self, decision: Decision, observation: Observation) -> Option | None: ...
        def _strayed(self, decision: Decision, observation: Observation) -> bool: ...
        def _still_held(self, observation: Observation) -> bool: ...
        def _rest_needed(self, option: Option) -> float: ...
        def _rested(self, option: Option, observation: Observation, quiet: float) -> bool: ...
        def _carried_past(self, option: Option, now: float) -> bool: ...
        def _revise(
            self, observation: Observation, quiet: float, now: float
        ) -> list[Outcome[S]]: ...
        def _came_back_undo(
            self, observation: Observation, quiet: float, now: float
        ) -> list[Outcome[S]]: ...
        def _accept(
            self, option: Option, now: float, quiet: float = 0.0, how: Acceptance = Acceptance.ASKED
        ) -> list[Outcome[S]]: ...
        def _take_back(
            self, plies: int, now: float, left: ViewKey | None = None
        ) -> list[Outcome[S]]: ...
        def _build(self, state: S) -> Position: ...
        def _pending_follow_up(self) -> ViewKey | None: ...
