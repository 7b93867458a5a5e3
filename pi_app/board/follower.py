"""The follower: one game on one physical board, from sensor events to accepted moves.

It owns the engine state and its history, the tracker and the inference position, and turns
events (and the passing of time) into :class:`Outcome` s: a move accepted, a question for the
players, guidance to fix the board. It stores nothing and lights nothing: the referee records
each accepted move before it confirms it, and renders the outcomes on LEDs and screen.

Timing is passed in by the caller; nothing here reads a clock. Every wait, what it waits for,
from when it counts and why, is ``docs/waits.md``; the waits themselves are one frozen record
(:class:`pi_app.board.waits.Waits`), paced on the board's measured scan cycle.

The follower is assembled from parts, each a module of its own over the state declared in
:mod:`pi_app.board.core`: questions and guidance (:mod:`.asking`), held moves (:mod:`.held`),
stale reads (:mod:`.stale`), accepting and revising (:mod:`.revise`) and restarts
(:mod:`.restart`). This module holds the entry points and :meth:`Follower._step`, the order in
which the rules are tried. Its outcomes are :mod:`pi_app.board.outcomes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pi_app.board.asking import Questions
from pi_app.board.core import Asking, FollowerCore, Held, Removal, Revisable, StaleDue
from pi_app.board.geometry import Geometry
from pi_app.board.held import HeldRules
from pi_app.board.inference import Decision, Option, Position
from pi_app.board.outcomes import (
    BOARD_DECIDED,
    Acceptance,
    Guidance,
    GuidanceKind,
    InSync,
    MoveAccepted,
    MoveRevised,
    Outcome,
    Prompt,
    PromptCleared,
    PromptKind,
    TakenBack,
)
from pi_app.board.pictures import EPSILON, TAKEBACK_DEPTH, takeback_plies
from pi_app.board.registry import TagRegistry
from pi_app.board.restart import Restarts
from pi_app.board.revise import Revisions
from pi_app.board.rules import Rules
from pi_app.board.stale import StaleReads
from pi_app.board.tracker import Observation, Tracker, ViewKey
from pi_app.board.waits import Waits
from pi_app.games.base import Game, M, S
from pi_app.readings import ButtonPressed, SensorEvent

#: The waits (dataclass fields) that stretch with the board's scan cycle, besides ``settle_min``.
_PACED = (
    "settle",
    "settle_long",
    "settle_removal",
    "grace",
    "revise_window",
    "revise_placed",
    "settle_unexplained",
)
#: Oldest a sensor event's own time may be (seconds before it is handled) and still be used.
MAX_EVENT_AGE = 2.0


@dataclass
class Follower(
    Rules[S, M],
    Questions[S, M],
    HeldRules[S, M],
    StaleReads[S, M],
    Revisions[S, M],
    Restarts[S, M],
):
    """Follows one game on one board, generic over the engine's state and move types (plain
    ``Follower`` where the game is chosen at run time)."""

    game: Game[S, M]
    state: S
    geometry: Geometry
    registry: TagRegistry
    settle_min: float | None = None
    """None: the board's own (``Geometry.settle_min``)."""
    # The defaults are the waits' own (one place: pi_app/board/waits.py says what each is).
    settle: float = Waits.settle
    settle_long: float = Waits.settle_long
    settle_next: float = Waits.settle_next
    settle_removal: float = Waits.settle_removal
    grace: float = Waits.grace
    revise_window: float = Waits.revise_window
    revise_placed: float = Waits.revise_placed
    settle_unexplained: float = Waits.settle_unexplained
    history: list[tuple[S, str]] = field(default_factory=list)
    """(state before, move text) for every accepted move, oldest first."""

    def __post_init__(self) -> None:
        self.tracker = Tracker(self.geometry, self.registry)
        # The configured waits are floors: _keep_pace paces them on the board's scan cycle.
        self.configured_waits = Waits(
            settle_min=self.geometry.settle_min if self.settle_min is None else self.settle_min,
            miss_grace=self.tracker.miss_grace,
            settle_next=self.settle_next,
            **{name: getattr(self, name) for name in _PACED},
        )
        self.waits = self.configured_waits
        self._paced_for: float | None = None
        self._keep_pace()
        self.cells = tuple(self.game.expected_view(self.state))
        self._position: Position | None = None
        self._prepared = False  # the position's silent decisions have been asked for
        self._asking: Asking | None = None
        self._shown: tuple[GuidanceKind, ViewKey] | None = None  # the guidance shown, and for
        self._follow_up: ViewKey | None = None  # placement of a move still being tidied
        # A last move that may still be revised: the position before it, the move, and when.
        # (None for "when": restored after a restart; the window opens at the first picture,
        # or counts from the restart if that picture is the board as the move left it.)
        self._previous: Revisable | None = None
        self._resumed_at: float | None = None  # when a restart restored that move
        self._taken_at = -1e18  # when the board took that move (restored: before the restart)
        self._guide_now = False  # after an undo by button, show the way back at once
        self._undone: ViewKey | None = None  # the picture of a move undone by button
        # A picture of an earlier position the players said is no takeback (BACK to the
        # question): never asked about again (a question that comes straight back is a loop),
        # judged as a picture the position does not explain, until the position changes or
        # the board shows it.
        self._declined: ViewKey | None = None
        # A move that waits to rest (a Toast, an Up 1 that may become an Up 2) whose picture
        # held for ``settle``, not taken yet, and where it leads (built when needed: the
        # position after it and any forced moves, :meth:`_held_through`); then any removals
        # whose pictures held after it in turn (a second Toast), in order.
        self._held: tuple[Held, ...] = ()
        self._held_rest = 0.0  # when the board last changed since the first held was held
        self._held_showing = False  # the board has shown that move's picture since then
        self._held_pause = 0.0  # the longest it rested at that picture before it changed
        # The same for each move held after the first (the hand that may be going on), and
        # the picture at the last look (:meth:`_went_on`).
        self._held_paused: dict[Option, float] = {}
        self._held_key: ViewKey | None = None
        # A held move that rested long enough for the next player to start, no longer held
        # (the next player's hand showed another move of the position on its way): the
        # question may still be about it.
        self._candidate: tuple[S, Option, Position] | None = None
        # The removals the board alone took last, in a row (the position before each, and
        # the move): a piece one of them took off that is back on the board undoes it and
        # those after it (two Toasts in a row that were a hand holding two tikis).
        self._removals: tuple[Removal, ...] = ()
        self._reopened: Option | None = None  # the last move whose window opened again
        self._presence_pieces = frozenset(
            c.presence_piece for c in self.geometry.cells if c.presence_piece is not None
        )
        self._due = StaleDue()
        # The board's last change when the position last changed (older reads do not count).
        self._moved_at = self.tracker.last_change
        # The last picture judged a finished wrong move (settle_unexplained), and since when
        # the board has shown such pictures with no piece arriving anywhere (_unexplained_for).
        self._unexplained: tuple[ViewKey, float] | None = None
        self._follow_up = self._pending_follow_up()

    @property
    def position(self) -> Position:
        """What inference knows about the current state (built on first use)."""
        if self._position is None:
            self._position = self._build(self.state)
        return self._position

    @property
    def pending(self) -> bool:
        """True after the position changed and before :meth:`prepare` ran."""
        return not self._prepared

    def prepare(self, now: float) -> list[Outcome[S]]:
        """Get ready for the next move: precompute the position, ask for any decision the
        sensors cannot see, and look at the board again (a fast hand may be a move ahead).

        The station calls this after it has confirmed an accepted move on the LEDs, so the
        precomputation never delays the confirmation. Does nothing when nothing changed.
        """
        out: list[Outcome[S]] = []
        for _ in range(8):
            if self._prepared:
                break
            self._prepared = True
            out += self._decisions(now)
            if self._prepared:
                out += self._evaluate(now)
        return out

    def start(self, now: float) -> list[Outcome[S]]:
        """Outcomes due before anything moves: a forced or button-only decision."""
        return self.prepare(now)

    def handle(self, event: SensorEvent | None, now: float) -> list[Outcome[S]]:
        """:meth:`feed` (or :meth:`tick` for None), then :meth:`prepare`: for callers that
        have no feedback to render in between."""
        out = self.tick(now) if event is None else self.feed(event, now)
        return out + self.prepare(now)

    def _moved_to(self, state: S) -> None:
        """The position changed: inference data is rebuilt lazily, decisions are due."""
        self.state = state
        self._moved_at = self.tracker.last_change
        self._position = None
        self._prepared = False
        self._shown = None
        self._held = ()
        self._declined = None

    def feed(self, event: SensorEvent, now: float) -> list[Outcome[S]]:
        """Take one event at time ``now``.

        The event's own time (the sensor's clock, mapped to the host's) is trusted only while it
        is plausible: a clock that jumps (a board that rebooted, a mapping that drifted) must
        not freeze the settle timers or fire them all at once, so a time later than ``now`` or
        more than :data:`MAX_EVENT_AGE` earlier is replaced by ``now``.
        """
        if isinstance(event, ButtonPressed):
            return self.press(event.button, now)
        if not now - MAX_EVENT_AGE <= event.t <= now:
            event = replace(event, t=now)
        self.tracker.feed(event)
        return self.tick(now)

    def tick(self, now: float) -> list[Outcome[S]]:
        """Let time pass: settle and grace timers, expiring missed tags."""
        self._keep_pace()
        self.tracker.poll(now)
        return self._evaluate(now)

    def next_deadline(self, now: float) -> float | None:
        """The next time after ``now`` when :meth:`tick` may have something to say."""
        self._keep_pace()
        last = self.tracker.last_change
        waits = self.waits
        times = [
            self.tracker.next_deadline(),
            last + waits.settle_min,
            last + waits.settle,
            last + waits.settle_long,
            last + waits.settle_unexplained,
            last + waits.settle_removal,
            last + waits.grace,
            last + 2 * waits.grace,
            *self._due,
            None if self._unexplained is None else self._unexplained[1] + waits.settle_unexplained,
        ]
        return min((t for t in times if t is not None and t > now), default=None)

    def _keep_pace(self) -> None:
        """Time the waits on the board's scan cycle (``pi_app/board/pacing.py``): at start on
        the board file's figure, and again whenever the tracker hears the firmware's own.
        The attributes (``settle``, ``grace``, ...) then hold the waits in force."""
        period = self.tracker.scan_period
        if period == self._paced_for:
            return
        self._paced_for = period
        self.waits = self.configured_waits.paced(period)
        self.tracker.miss_grace = self.waits.miss_grace
        for name in _PACED:  # (mirrored for callers that read the waits in force)
            setattr(self, name, getattr(self.waits, name))

    def observation(self, now: float) -> Observation:
        return self.tracker.observation(now)

    def decide(self, now: float) -> Decision:
        """Classify the current picture (for diagnostics and benchmarks)."""
        return self.position.classify(self.tracker.observation(now))

    def _evaluate(self, now: float) -> list[Outcome[S]]:
        if not self._prepared:  # nobody called prepare(): do it now, on this event's time
            return self.prepare(now)
        if not self.tracker.fresh:
            # The sensor link is down, or back but its first snapshot has not come: the
            # picture is what the board was when the cable went, so no move is judged on it
            # (a piece read in passing would stay "at rest" for as long as the cable is out).
            return []
        observation = self.tracker.observation(now)
        key = observation.key(self.cells)
        quiet = now - self.tracker.last_change + EPSILON  # deadlines land exactly
        self._resumed_as_left(key, now)
        out = self._step(observation, key, quiet, now)
        self._pad(observation, now, out)
        return out


__all__ = [
    "BOARD_DECIDED",
    "MAX_EVENT_AGE",
    "TAKEBACK_DEPTH",
    "Acceptance",
    "Follower",
    "FollowerCore",
    "Guidance",
    "GuidanceKind",
    "InSync",
    "MoveAccepted",
    "MoveRevised",
    "Outcome",
    "Prompt",
    "PromptCleared",
    "PromptKind",
    "TakenBack",
    "takeback_plies",
]
