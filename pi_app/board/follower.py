"""The follower: one game on one physical board, from sensor events to accepted moves.

It owns the engine state and its history, the tracker and the inference position, and turns
events (and the passing of time) into :class:`Outcome` s: a move accepted, a question for the
players, guidance to fix the board. It stores nothing and lights nothing: the referee records
each accepted move before it confirms it, and renders the outcomes on LEDs and screen.

Timing (all in seconds, passed in by the caller; nothing here reads a clock). Each figure is
a floor: on a board that scans slower than it, the wait spans so many of the board's full
scan cycles instead (``pi_app/board/pacing.py`` says how many and why), the cycle the
firmware measures and reports, or the board file's until its first report:

* ``settle_min``: how long a clear, finished move must stay still before it is accepted when
  a piece carried over a cell would look the same for a moment: the reader reads a piece a few
  centimetres up, and only a presence sensor that was open (an empty cell) tells a piece lying
  there from one passing over (``Geometry.presence_on_contact``). So a piece arriving on an
  empty cell is accepted at once, one arriving on a stack after ``settle_min``.
* ``settle``: how long a picture must stay still before an ambiguous, incomplete or possibly
  unfinished move is accepted or asked about. A complete, unambiguous, finished move does not
  wait at all.
* ``settle_long``: the same for a move whose picture is also a moment in the middle of another
  legal move (Topple's Toast lifts the bottom tiki, and so does the start of many a Topple; an
  Up 1 is the first swap of an Up 2). Longer than a hand pauses between two actions of one
  move (the slowest simulated hands: 0.9 s, plus a scan to see it): a hand that swaps a tiki
  up one slot at a time and pauses between the swaps has not finished.
* ``settle_next``: the soonest the next player starts after a move came to rest (players at
  real pace: 0.5-4 s). When a move that waits ``settle_long`` rested at least this long and
  the board then goes on to a picture that is both a longer move of the same player and that
  move followed by the next player's (an Up 2 then an Up 1 of the same tiki, or an Up 3), the
  sensors cannot tell who moved: the players are asked which card was played (never a guess;
  by the buttons when both readings start with the same card). Sooner, it is the same hand
  going on, and a tiki it lifts then is no Toast of the next player. Such a held move stays
  in question while the next player's hand passes through other pictures of the position
  (its first swap may undo the held one's), until a move that puts a piece somewhere is taken.
* ``revise_window``: should a hand still rest longer than that mid-move, or a knocked piece
  make a move look like another for a moment, the follower revises: when, within this time of
  accepting a move, the board shows a legal result of the position before it that nothing
  explains from the new position, the last move is replaced (:class:`MoveRevised`).
* ``revise_placed``: the same, shorter (longer on a slow TacTiki board, :mod:`.pacing`),
  for a move that put a piece somewhere (not a removal,
  which a hand resting mid-Topple fakes for ``settle_removal`` and then goes on): the same
  hand going on, or a knocked piece put back, shows within about a second, while players at
  real pace start the next move 0.5 s after the last came to rest; a longer window let their
  half-made or wrong move rewrite a finished one (a Manami sowing turned into another path).
* ``settle_removal``: the same for a move that only takes pieces off the board (Topple's Toast),
  which a knocked piece held for a moment would fake. Players do not wait that long: the next
  player reaches for a tiki within a second. So a move that waits to rest (a removal, the
  middle of a longer move, a piece on a stack) whose picture held for ``settle`` is also taken
  as soon as the board shows a legal move made from the position after it (the next move starts
  from the line without the toasted tiki), and that move follows.
* ``grace``: how long an unexplained picture may last before it is shown as a mismatch (hands
  are still moving; a knocked piece is put back).
* ``settle_unexplained``: the same for a complete picture that nothing explains while every
  piece of the position lies on the board (no hand holds one): a finished wrong move, which
  players often undo within a second or two, so it is shown at once after this rest. It only
  needs to outlast a piece slid across a neighbouring cell on its way (up to 0.3 s there).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Generic

from pi_app.board.fixes import Fix
from pi_app.board.geometry import Geometry
from pi_app.board.inference import (
    Decision,
    Option,
    Position,
    Verdict,
    between,
    guidance,
)
from pi_app.board.registry import TagRegistry
from pi_app.board.tracker import ABSENT_MISSES, Observation, Tracker, ViewKey, view_key
from pi_app.board.waits import Waits
from pi_app.games.base import Game, IllegalMove, M, S
from pi_app.readings import ButtonPressed, SensorEvent

#: How many earlier positions a takeback can return to.
TAKEBACK_DEPTH = 12
#: The waits (dataclass fields) that stretch with the board's scan cycle, besides ``settle_min``.
_PACED = ("settle", "settle_long", "settle_removal", "grace", "revise_window", "revise_placed",
          "settle_unexplained")
#: Oldest a sensor event's own time may be (seconds before it is handled) and still be used.
MAX_EVENT_AGE = 2.0
#: The most forced moves in a row followed after a held move (a pass; two would end a game).
_FORCED_DEPTH = 8


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

#: Timers fire at exactly ``last change + settle``; float sums may land a hair short of it.
_EPSILON = 1e-6


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


Outcome = (MoveAccepted[S] | MoveRevised[S] | Prompt | PromptCleared | Guidance | InSync
           | TakenBack[S])


@dataclass
class _Asking:
    kind: PromptKind
    key: ViewKey
    options: tuple[Option, ...] = ()
    plies: int = 0
    selected: int = 0
    after: dict[int, Position] = field(default_factory=dict)
    """The position after each option, built when the board goes on (:meth:`Follower._asked_on`)."""


@dataclass(frozen=True)
class _Through:
    """Where a held move leads: the position the next move is made from, and the forced
    moves the follower takes by itself on the way there (a pass), in order. The board shows
    no forced move, so the next move it shows is made from the position after them."""

    position: Position
    forced: tuple[Option, ...] = ()


@dataclass
class Follower(Generic[S, M]):
    """Follows one game on one board, generic over the engine's state and move types (plain
    ``Follower`` where the game is chosen at run time)."""

    game: Game[S, M]
    state: S
    geometry: Geometry
    registry: TagRegistry
    settle_min: float | None = None
    """None: the board's own (``Geometry.settle_min``)."""
    settle: float = 0.25
    settle_long: float = 1.0
    settle_next: float = 0.5
    settle_removal: float = 1.5
    grace: float = 1.2
    revise_window: float = 2.5
    revise_placed: float = 1.2
    settle_unexplained: float = 0.5
    history: list[tuple[S, str]] = field(default_factory=list)
    """(state before, move text) for every accepted move, oldest first."""

    def __post_init__(self) -> None:
        self.tracker = Tracker(self.geometry, self.registry)
        # The configured waits are floors: _keep_pace paces them on the board's scan cycle.
        self.configured_waits = Waits(
            settle_min=self.geometry.settle_min if self.settle_min is None else self.settle_min,
            miss_grace=self.tracker.miss_grace,
            settle_next=self.settle_next, **{name: getattr(self, name) for name in _PACED})
        self.waits = self.configured_waits
        self._paced_for: float | None = None
        self._keep_pace()
        self.cells = tuple(self.game.expected_view(self.state))
        self._position: Position | None = None
        self._prepared = False  # the position's silent decisions have been asked for
        self._asking: _Asking | None = None
        self._shown: tuple[GuidanceKind, ViewKey] | None = None  # the guidance shown, and for
        self._follow_up: ViewKey | None = None          # placement of a move still being tidied
        # A last move that may still be revised: the position before it, the move, and when.
        # (None for "when": restored after a restart; the window opens at the first picture,
        # or counts from the restart if that picture is the board as the move left it.)
        self._previous: tuple[Position, Option, float | None] | None = None
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
        self._held: list[tuple[Option, _Through | None]] = []
        self._held_rest = 0.0   # when the board last changed since the first held was held
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
        self._removals: list[tuple[Position, Option]] = []
        self._reopened: Option | None = None  # the last move whose window opened again
        self._presence_pieces = frozenset(
            c.presence_piece for c in self.geometry.cells if c.presence_piece is not None)
        # When a move read from tags seen on two closed cells is due (_read_elsewhere), and
        # the board's last change when the position last changed (older reads do not count).
        self._elsewhere_due: float | None = None
        # When a move onto a stack doubted by a read elsewhere is due (_carried_past), and
        # one waiting while a cell shows pieces its open contact denies (_rested): set by
        # the last look at the board only, so no other wait adds a deadline (the players'
        # clock in the simulated table runs from the station's deadlines).
        self._carried_due: float | None = None
        # When a read of a tag on two closed cells that the last look listed goes stale
        # (Tracker.contested_window): the picture read from them changes then.
        self._contested_due: float | None = None
        self._open_due: float | None = None
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
        self._held = []
        self._declined = None

    def _decisions(self, now: float) -> list[Outcome[S]]:
        """Decisions the sensors cannot see. When every legal move is one (Manami's
        ``resolve``, a forced ``pass``) the follower asks at once, or takes the only one;
        when pieces could move too (TacTiki's waiting turn, ``shaman stay``), the player
        says so with the OK button (:meth:`press`)."""
        silent = _only_silent(self.position)
        if not silent:
            return []
        if len(silent) == 1:
            return self._accept(silent[0], now, how=Acceptance.FORCED)
        self._asking = _Asking(PromptKind.DECISION, self.position.here, tuple(silent))
        return [self._prompt(now)]

    def _silent(self) -> list[Option]:
        """Legal moves that leave the board as it is."""
        return self.position.by_placement.get(self.position.here, [])

    # -- input -----------------------------------------------------------------------------------
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
        times = [self.tracker.next_deadline(), last + waits.settle_min, last + waits.settle,
                 last + waits.settle_long, last + waits.settle_unexplained,
                 last + waits.settle_removal, last + waits.grace, last + 2 * waits.grace,
                 self._elsewhere_due, self._carried_due, self._open_due, self._contested_due,
                 None if self._unexplained is None else
                 self._unexplained[1] + waits.settle_unexplained]
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

    def press(self, button: str, now: float) -> list[Outcome[S]]:
        """A player button: ``ok`` confirms, ``menu`` cycles the choices, ``back`` cancels a
        question or, with none open, takes the last move back."""
        asking = self._asking
        if asking is None:
            if button == "ok" and self._silent():
                self._asking = _Asking(PromptKind.DECISION, self.position.here,
                                       tuple(self._silent()))
                return [self._prompt(now)]
            if button == "back" and self.history:
                plies = takeback_plies(self.game, self.history)
                return self._take_back(plies, now, self.tracker.observation(now).key(self.cells))
            return []
        if button == "menu":
            count = len(asking.options) if asking.options else 1
            asking.selected = (asking.selected + 1) % max(count, 1)
            return [self._prompt(now)]
        if button == "back":
            if asking.kind is PromptKind.DECISION:
                return []  # the rules demand an answer
            self._asking = None
            if asking.kind is PromptKind.TAKEBACK:
                # No takeback: the players went on. The moves held since the last taken
                # stay held, and the picture is judged again at once as one the position
                # does not explain: moves made from a held one (two Up 1s that swapped the
                # last two back) follow; otherwise it is a mismatch to put right.
                self._declined = asking.key
                return [PromptCleared(now), *self._evaluate(now)]
            self._held, self._candidate = [], None  # "none of these": not asked again
            return [PromptCleared(now)]
        if button == "ok":
            self._asking = None
            if asking.kind is PromptKind.TAKEBACK:
                return [PromptCleared(now), *self._take_back(asking.plies, now)]
            return [PromptCleared(now),
                    *self._accept(asking.options[asking.selected], now, how=Acceptance.ASKED)]
        return []

    def choose(self, card: str, now: float) -> list[Outcome[S]]:
        """Answer an ambiguity with a card (its first word, e.g. ``up1``), as a card tap does.
        A card two of the options share (Up 1 of this tiki, or the last move and then the next
        player's, each an Up 1) answers nothing: the buttons say which."""
        asking = self._asking
        if asking is None or asking.kind is not PromptKind.AMBIGUOUS:
            return []
        matching = [o for o in asking.options if o.text.split()[0] == card]
        if len(matching) != 1:
            return []
        self._asking = None
        return [PromptCleared(now), *self._accept(matching[0], now, how=Acceptance.ASKED)]

    # -- the decision ----------------------------------------------------------------------------
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
        quiet = now - self.tracker.last_change + _EPSILON  # deadlines land exactly
        self._resumed_as_left(key, now)
        out = self._step(observation, key, quiet, now)
        self._pad(observation, now, out)
        return out

    def _resumed_as_left(self, key: ViewKey, now: float) -> None:
        """After a restart that restored the last move (:meth:`resume_last_move` with its
        time), the first picture judged opens that move's revise window: then, when the
        hand may have gone on while the station was down, unless the picture is the board
        as the move left it (the position, or its placement before the follow-up). Then the
        window counts from the restart: the move was taken before the station went down, so
        at least that long ago, and a hand that goes on from that picture later is as late as
        one that goes on that long after the move without a restart. (The long soak's Manami
        game 1000086: a move taken onto a stack, the station restarted 2.2 s after it, and
        the next player's wrong move off that stack 1.8 s after the restart revised it into
        another sowing: its window had opened only at that wrong move's picture.)"""
        if self._previous is None or self._previous[2] is not None or \
                self._resumed_at is None:
            return
        as_left = key in (self.position.here, self._follow_up)
        self._previous = (*self._previous[:2], self._resumed_at if as_left else now)

    def _step(self, observation: Observation, key: ViewKey, quiet: float,
              now: float) -> list[Outcome[S]]:
        out: list[Outcome[S]] = []
        # (each set again if this look still waits)
        self._carried_due = self._open_due = self._contested_due = None
        unexplained, self._unexplained = self._unexplained, None
        if self._asking is not None:
            if key == self._asking.key:
                return out
            if self._asking.kind is PromptKind.DECISION and key == self.position.here:
                return out
            if self._asked_on(observation, quiet):
                return out
            self._asking = None
            out.append(PromptCleared(now))
        if self._follow_up is not None and key != self.position.here and \
                between(observation, self.position.here, self._follow_up):
            # Tidying up after the last move (clearing a village token by token) can pass
            # through pictures of new moves (one token left looks like a new totem): the
            # follow-up goes first, until the board shows the position.
            return out + self._guide(GuidanceKind.FOLLOW_UP, observation, key, now)
        decision = self.position.classify(observation)
        if decision.verdict in (Verdict.UNKNOWN, Verdict.IN_PROGRESS, Verdict.UNCHANGED,
                                Verdict.TAKEBACK):
            elsewhere = self._read_elsewhere(observation, decision, now)
            if elsewhere is not None:
                observation, decision, read = elsewhere
                key = observation.key(self.cells)
                quiet = min(quiet, now - read + _EPSILON)
        if self._undone is not None:
            if key == self.position.here:
                self._undone = None  # put back (a pass leaves nothing to put back)
            elif key == self._undone:
                # The move just undone by button, still on the board, or on it again: a hand
                # that lifts a piece to put it back and sets it down where it was is not
                # making the move again. Once the board shows the position, it may.
                decision = Decision(Verdict.UNKNOWN)
        if self._declined is not None:
            if key == self.position.here:
                self._declined = None
            elif key == self._declined and decision.verdict is Verdict.TAKEBACK:
                decision = Decision(Verdict.UNKNOWN)  # the players said it is no takeback
        verdict = decision.verdict
        if self._held and self.tracker.last_change > self._held_rest:
            # The board changed: how long did it rest at the held move's picture before?
            if self._held_showing:
                self._held_pause = max(self._held_pause,
                                       self.tracker.last_change - self._held_rest)
            paused = {o: p for o, p in self._held_paused.items()
                      if any(o is h for h, _ in self._held)}
            for option, _ in self._held[1:]:  # (the moves held after it: _went_on)
                if option.placement == self._held_key:
                    paused[option] = max(paused.get(option, 0.0),
                                         self.tracker.last_change - self._held_rest)
            self._held_paused = paused
            self._held_rest = self.tracker.last_change
        self._held_showing = bool(self._held) and key == self._held[0][0].placement
        self._held_key = key
        split = self._split(decision, observation)
        if split is not None:
            if quiet >= self.waits.settle:
                self._asking = _Asking(PromptKind.AMBIGUOUS, key, (*decision.options, split))
                out.append(self._prompt(now))
            return out
        if self._strayed(decision, observation):
            chained = self._after_held(observation, Verdict.IN_PROGRESS if verdict is
                                       Verdict.SETTLING else Verdict.UNKNOWN, quiet, now)
            if chained:
                self._held = []
            return out + (chained or [])  # (taken, or waiting as the held moves wait)
        if verdict is not Verdict.SETTLING:
            chained = self._after_held(observation, verdict, quiet, now)
            if chained or (verdict is Verdict.UNCHANGED and not (
                    self._held and self._still_held(observation))):
                # Taken, or the board is back as it was: no move now. (Unless the held move
                # rested long enough and the next player's hand is on its way through the
                # old picture: its first swap undoes the held one's.)
                self._held = []
            if chained is not None:
                return out + chained  # (none yet: removals in a row, held)
        if verdict is Verdict.UNCHANGED:
            wrong = self._wrong_elsewhere(observation, unexplained, now)
            if wrong is not None:
                return out + wrong
            tidied = self._follow_up is not None
            self._follow_up = None
            self._guide_now = False
            if (self._shown is not None or tidied) and not observation.unknown:
                # (also when a follow-up was done before it was shown: the station keeps a
                # note of it, so a restart knows the tidying is over)
                self._shown = None
                out.append(InSync(now))
            elif observation.unknown:
                out += self._guide(GuidanceKind.MISMATCH, observation, key, now)
            return out
        if verdict is Verdict.MOVE:
            option = decision.options[0]
            if not self._may_hover(option, self.position.here):
                return out + self._accept(option, now, quiet, Acceptance.AT_ONCE)
            if quiet >= self.waits.settle_min and not self._carried_past(option, now):
                return out + self._accept(option, now, quiet, Acceptance.RESTED)
            # A piece set on a stack: held like a move that waits to rest, so the next
            # player's move from it takes it (TacTiki, varied-pace table 1000003: 'd2-c2
            # e3-d3' rested 0.41 s, under settle_min, when the next player's reincarnation
            # landed; both were missed). At once, not after ``settle``: a stack's reader may
            # show the piece a scan cycle after it was set down, when the next player's hand
            # is already on its way (low-noise tables 1000010 and 1000056: the turn seen
            # complete 0.13-0.17 s before the next player's first lift; both turns missed).
            # A piece only carried over the stack makes no move of the next player's from it.
            self._hold(option, observation)
            return out
        if verdict is Verdict.SETTLING:
            option = decision.options[0]
            if self._rested(option, observation, quiet) and \
                    not self._carried_past(option, now):
                return out + self._accept(option, now, quiet, Acceptance.SETTLED)
            if quiet >= self.waits.settle:
                self._hold(option, observation)
            return out
        if verdict is Verdict.AMBIGUOUS:
            if quiet >= self.waits.settle:
                self._asking = _Asking(PromptKind.AMBIGUOUS, key, decision.options)
                out.append(self._prompt(now))
            return out
        if verdict is Verdict.TAKEBACK:
            undone = self._came_back_undo(observation, quiet, now)
            if undone:
                return out + undone
            if quiet >= self.waits.settle:
                self._asking = _Asking(PromptKind.TAKEBACK, key, plies=decision.plies)
                out.append(self._prompt(now))
            return out
        revised = self._revise(observation, quiet, now) if verdict is Verdict.UNKNOWN else []
        if revised:
            return out + revised
        for untidy, tidy in self.position.tidy.items():  # a fight in the middle of a turn
            if between(observation, tidy, untidy):
                return out + self._guide(GuidanceKind.FOLLOW_UP, observation, key, now, dict(tidy))
        waited = self.waits.grace * (2 if verdict is Verdict.IN_PROGRESS else 1)
        if verdict is Verdict.UNKNOWN and observation.complete and \
                _all_on_board(self.position.here, observation, self._presence_pieces):
            waited = self.waits.settle_unexplained  # nothing in a hand: a finished wrong move
            quiet = self._unexplained_for(unexplained, key, now - quiet + _EPSILON, now)
        if quiet >= waited or self._guide_now:
            out += self._guide(GuidanceKind.MISMATCH, observation, key, now)
        return out

    def _unexplained_for(self, last: tuple[ViewKey, float] | None, key: ViewKey,
                         changed: float, now: float) -> float:
        """How long the board has shown a finished wrong move, ``key`` being one (the board
        last changed at ``changed``): since the last such picture began, ``last``, when this
        one is it with pieces gone and none arrived. What ``settle_unexplained`` waits out is
        a piece on its way (slid across a neighbour): it arrives somewhere. A piece that only
        drops out of the picture is an old read let go: a reader reports a tag lifted off a
        stack for ``ABSENT_MISSES`` more scans (Manami, varied-pace table 1000064: a token
        lifted off c2's stack and set on the path cell c2/c3, shown 0.16 s later as a second
        shaman; c2's reader let it go 0.46 s after that, restarting the wait, and the
        mismatch came 1.12 s after the token rested, after the player had begun to undo it)."""
        since = changed
        if last is not None and _only_additions(key, last[0]):
            since = min(since, last[1])
        self._unexplained = (key, since)
        return now - since + _EPSILON

    def _guide(self, kind: GuidanceKind, observation: Observation, key: ViewKey, now: float,
               target: Mapping[str, tuple[str, ...]] | None = None) -> list[Outcome[S]]:
        if self._shown == (kind, key):
            return []
        self._shown = (kind, key)
        if target is None:
            target = self.game.expected_view(self.state)
        return [Guidance(now, kind, tuple(guidance(observation, target, self.geometry,
                                                     self.cells)))]

    def _prompt(self, now: float) -> Prompt:
        asking = self._asking
        assert asking is not None
        if asking.kind is PromptKind.TAKEBACK:
            return Prompt(now, PromptKind.TAKEBACK, (f"take back {asking.plies} move(s)",), 0,
                          asking.plies)
        return Prompt(now, asking.kind, tuple(o.text for o in asking.options), asking.selected)

    def _pad(self, observation: Observation, now: float, out: list[Outcome[S]]) -> None:
        """A card tapped on a pad answers an open ambiguity (``action:up1`` means Up 1)."""
        if self._asking is None or self._asking.kind is not PromptKind.AMBIGUOUS:
            return
        for cell in self.geometry.names("pad"):
            for piece in observation.pieces.get(cell, ()):
                if piece.startswith("action:"):
                    out += self.choose(piece.removeprefix("action:"), now)
                    return

    def _may_hover(self, option: Option, here: ViewKey) -> bool:
        """True when the picture could be a piece held above a cell on its way elsewhere: a
        cell gains a piece, and its presence sensor cannot tell a piece lying there from one
        carried over it, because it has none or a piece already lay there. (A presence sensor
        closes only with a piece on the board, while the reader reads it centimetres up.)"""
        if self.waits.settle_min <= 0:
            return False
        if not self.geometry.presence_on_contact:
            return True
        for (name, after), (_, before) in zip(option.placement, here, strict=True):
            if after != before and Counter(after) - Counter(before) and (
                    before or self.geometry.cell(name).presence is None):
                return True
        return False

    def _hold(self, option: Option, observation: Observation) -> None:
        """``option``'s picture held for ``settle`` but must rest longer: hold it (``_held``),
        so that a move of the next player from it takes it (:meth:`_after_held`)."""
        if not self._held or (self._held[0][0] is not option and \
                not self._still_held(observation)):
            if self._held and not self._held[0][0].lifts_only and \
                    self._held_pause >= self.waits.settle_next:
                # It may have been a move, and the next player's hand makes this
                # picture on its way: it stays a candidate for the question.
                self._candidate = (self.state, self._held[0][0], self._held_after(0))
            self._held = [(option, None)]
            self._held_pause = 0.0
            self._held_rest, self._held_showing = self.tracker.last_change, True
        del self._held[1:]  # back to its picture: what was held after it was not

    def _after_held(self, observation: Observation, verdict: Verdict, quiet: float,
                    now: float) -> list[Outcome[S]] | None:
        """Take the moves the board showed for ``settle`` (``_held``) when the picture now,
        which no legal move of the position explains, is a legal move of the position after
        them: the next player went on from the board the last one left. Only a move that puts
        a piece somewhere proves it (clear, or resting as long as it would have to). More
        pieces gone do not, at once: a second Toast looks just like a hand that lifted the
        bottom tiki and the one above it for an Up 1. Such a removal is held in turn, and the
        row is taken when a move that puts a piece somewhere follows it, or once the board
        rests ``settle_removal``, as long as a single removal must. A picture on the way to
        one of the position's own moves must also rest ``settle_long``: a hand may be half
        way.

        None when the held moves do not explain the picture; an empty list while they do but
        wait (no mismatch is shown for removals in a row)."""
        if not self._held or verdict not in (Verdict.UNKNOWN, Verdict.IN_PROGRESS):
            return None
        # The last of them that explains the picture: those after it were not (a tiki lifted
        # for a moment after two Toasts, then put back; a lift that was the next player's
        # swap at the bottom of the line).
        for index in reversed(range(len(self._held))):
            after = self._held_after(index)
            decision = after.classify(observation)
            if decision.verdict not in (Verdict.UNKNOWN, Verdict.TAKEBACK) and \
                    not self._went_on(index, decision, observation):
                if self._in_hand_after(index + 1, observation, quiet):
                    return []
                del self._held[index + 1:]
                break
        last = self._held[-1][0]
        settling = decision.verdict is Verdict.SETTLING and quiet >= self.waits.settle and (
            verdict is Verdict.IN_PROGRESS or (decision.options[0].lifts_only and (
                self._held_pause >= self.waits.settle_next if len(self._held) == 1
                else last.lifts_only or
                self._held_paused.get(last, 0.0) >= self.waits.settle_next)))
        rested = decision.verdict is Verdict.MOVE and verdict is Verdict.IN_PROGRESS and \
            quiet >= self.waits.settle_next and not last.lifts_only
        if settling or rested:
            # One more removal, or a move that may be the held one's hand still going on (on
            # the way to a longer move of the position): held too, until it is proven. (Not
            # a removal the same hand made: lifted sooner than the next player starts, or
            # after such a move, unless that move rested as long as the next player takes to
            # start: low-noise Topple table 1000134, a Toast 0.98 s after the held Up 3. A
            # hand in the middle of a Topple holds tikis.) A clear move after them that
            # rested as long as the next player takes to start is held too, so that where the
            # board goes next is judged with it (:meth:`_strayed`).
            self._held.append((decision.options[0], None))
            return []
        if decision.verdict is Verdict.UNCHANGED and len(self._held) > 1:
            if quiet < self._rest_needed(self._held[-1][0]) or (
                    verdict is Verdict.IN_PROGRESS and quiet < self.waits.settle_long):
                return []  # (more pieces gone is no proof yet: a hand may hold them)
        elif verdict is Verdict.IN_PROGRESS and quiet < self.waits.settle_long:
            return None
        elif decision.verdict is Verdict.MOVE:
            if quiet < self.waits.settle_min and self._may_hover(decision.options[0], after.here):
                return None
        elif decision.verdict not in (Verdict.SETTLING, Verdict.AMBIGUOUS) or \
                quiet < self.waits.settle or any(o.lifts_only for o in decision.options):
            return None
        steps = [(option, self._held_through(i)) for i, (option, _) in enumerate(self._held)]
        out: list[Outcome[S]] = []
        for option, through in steps:
            out += self._accept(option, now, quiet, Acceptance.SETTLED)
            for forced in through.forced:  # (a pass the station takes by itself, in order)
                out += self._accept(forced, now, how=Acceptance.FORCED)
            self._position = through.position  # the next is judged from it (prepare() goes on)
        return out

    def _read_elsewhere(self, observation: Observation, decision: Decision, now: float
                        ) -> tuple[Observation, Decision, float] | None:
        """The picture with the tags read on two closed cells (:meth:`Tracker.contested`)
        where they were read last, when it explains more than the picture as it is (which
        nothing or only a move under way explains, or which is the position, or the one
        before: a piece moved from a stack onto a stack, its old reader still reporting it,
        before and after the move is taken): that picture, its
        verdict and when its last such read came. A piece moved from a stack onto a stack
        changes no contact, and
        the old stack's reader reports it for three more scans (3 s at TacTiki's 1.04 s
        cycle): the tracker keeps it where it lay meanwhile, and a turn (one step onto an
        empty cell, one onto a stack) showed as half made long enough for a mismatch to be
        shown and the players to undo a legal turn (neighbour-read games, seed 5); once the
        turn is taken, the same stale read showed it as wrong. A neighbour's read can also
        make a half-made turn look whole, so a move read this way waits as long as a hand
        pauses mid-move (``settle_long``) from the read and the board's last change, is
        revisable as a move that may go on (the hand's next step shows which it was), and is
        never read from a tag read before the position began (a neighbour's read that stays
        reported)."""
        self._elsewhere_due = None
        # A picture that is the position, or the one before, is read otherwise only for a
        # piece just moved, and only on a board whose old reader would go on reporting it
        # for more than a cycle after such a move could be taken: elsewhere the picture comes
        # right about as soon, and a neighbour's read of a token like the ones beside it
        # made a Manami sowing out of nothing (neighbour-read games, seed 5: 65 phantoms).
        settled = decision.verdict in (Verdict.UNCHANGED, Verdict.TAKEBACK)
        if settled and self.waits.settle_long >= (ABSENT_MISSES - 1) * self.tracker.scan_period:
            return None
        contested = list(self.tracker.contested(now, recent=settled).items())
        if not contested:
            return None
        # A read that went stale changes the picture read from the others with no event: the
        # follower looks again then, and that picture shows from then on, not from the reads.
        stale, self._contested_due = self.tracker.contested_window(now, recent=settled)
        groups = [contested] + ([[c] for c in contested] if len(contested) > 1 else [])
        if settled:  # one piece moved, not two neighbours' reads that happen to make a turn
            groups = [g for g in groups if len(g) == 1]
        best: tuple[int, Observation, Decision, float] | None = None
        for group in groups:
            picture = _moved_reads(observation, group, self.registry)
            if picture is None:
                continue
            found = self.position.classify(picture)
            read = max(at for _, (_, _, at) in group)
            if stale is not None:
                read = max(read, stale)
            if found.verdict is Verdict.UNCHANGED:
                if decision.verdict is Verdict.UNCHANGED:
                    continue
                rank = 0
            elif found.verdict in (Verdict.MOVE, Verdict.SETTLING) and \
                    self._news(group, found.options[0]):
                rank = 1
                found = Decision(Verdict.SETTLING, tuple(
                    replace(o, extendable=True) for o in found.options))
            elif found.verdict is Verdict.IN_PROGRESS and decision.verdict is Verdict.UNKNOWN:
                rank = 2
            else:
                continue
            if best is None or rank < best[0]:
                best = (rank, picture, found, read)
        if best is None:
            return None
        _, picture, found, read = best
        if found.verdict is Verdict.SETTLING:
            self._elsewhere_due = max(read, self.tracker.last_change) + \
                self._rest_needed(found.options[0])
        return picture, found, read

    def _wrong_elsewhere(self, observation: Observation,
                         unexplained: tuple[ViewKey, float] | None, now: float
                         ) -> list[Outcome[S]] | None:
        """The picture is the position, but a tag is read, since the position began, on a
        closed cell that is no neighbour of the one it lies on (so no neighbour's read), and
        with it there the picture is a finished wrong move (every piece on the board, nothing
        explains it): a piece moved from a stack onto a far stack, no contact changed, its
        old reader reporting it for ``ABSENT_MISSES`` more scans. That wrong move is shown
        ``settle_unexplained`` after the read (:meth:`_unexplained_for`), as if the old reader
        had let it go then, and the wait goes on when it does (the guidance, in a list; an
        empty list while it waits); None when no read shows one.
        (Accuracy bench, TacTiki, varied pace, tables 1000027, 1000046 and 1000051: an
        illegal attempt from a stack onto a stack, read there 0.1-0.3 s after it rested; its
        old reader let it go 0.5-0.8 s after that, and the mismatch came 1.2-1.5 s after it
        rested, after its player had begun to undo it.)"""
        here = self.position.here
        for uid, (home, other, at) in self.tracker.contested(now, recent=True).items():
            if at <= self._moved_at or self.geometry.near(home, other):
                continue
            picture = _moved_reads(observation, [(uid, (home, other, at))], self.registry)
            if picture is None or not picture.complete or \
                    self.position.classify(picture).verdict is not Verdict.UNKNOWN or \
                    not _all_on_board(here, picture, self._presence_pieces):
                continue
            key = picture.key(self.cells)
            changed = max(at, self.tracker.last_change)
            waited = self._unexplained_for(unexplained, key, changed, now)
            if waited < self.waits.settle_unexplained:
                return []
            return self._guide(GuidanceKind.MISMATCH, picture, key, now)
        return None

    def _news(self, group: Sequence[tuple[str, tuple[str, str, float]]], option: Option) -> bool:
        """Were the tags ``option`` puts on a cell by ``group``'s reads read there since the
        position began? (One the position already has there is no news of a move.) And not
        before the piece reached the cell it lies on (:meth:`Tracker.taken_at`): that read
        was the piece carried over the other cell, whose reader reports it for three more
        scans (the long soak's Manami game 1000093: a token held above the stack b3 for a
        moment, then set down on the empty c3, an illegal move; read back on b3, the picture
        was a3-b3, taken 0.7 s after c3's contact closed)."""
        here, placement = dict(self.position.here), dict(option.placement)
        for uid, (_, other, at) in group:
            taken = self.tracker.taken_at(uid)
            if taken is not None and at < taken:
                return False
            piece = self.registry.lookup(uid)
            if at <= self._moved_at and \
                    placement[other].count(piece) > here[other].count(piece):
                return False
        return True

    def _asked_on(self, observation: Observation, quiet: float) -> bool:
        """Does the question about the last move stand though the board changed? When the
        picture is a move (or a move under way) from the position after one of its options:
        the next player went on before the question came (a TacTiki fight onto a stack is
        read up to a cycle after it rests, and the question waits ``settle`` after that).
        Cleared, the question left a picture nothing explains (varied-pace table 1000003 at
        1.04 s: 'c4-b4 a4-b4' and the next turn both missed); it stays until the players
        answer it, and the next move is judged from their answer. So it does when the players
        tidy up after one of its options before they answer (zero-noise TacTiki table 1000016:
        a fight's losers taken off cleared the question, then the loser's reincarnation was
        judged from the position before the fight: that move and the next missed)."""
        asking = self._asking
        if asking is None or asking.kind is not PromptKind.AMBIGUOUS or \
                self.position.classify(observation).verdict is not Verdict.UNKNOWN:
            return False  # (what the position explains is judged as before)
        for index, option in enumerate(asking.options):
            if option.has_follow_up and between(observation, option.final, option.placement):
                return True  # (its follow-up under way: a fight's losers taken off)
            after = asking.after.get(index)
            if after is None:
                earlier = [self.state, *(s for s, _ in reversed(self.history))]
                after = asking.after[index] = Position.build(
                    self.game, option.state, self.cells, earlier[:TAKEBACK_DEPTH])
            verdict = after.classify(observation).verdict
            if verdict in (Verdict.MOVE, Verdict.SETTLING, Verdict.AMBIGUOUS,
                           Verdict.IN_PROGRESS, Verdict.UNCHANGED):
                return True  # (unchanged: its follow-up done)
            if verdict is Verdict.UNKNOWN and quiet < self.waits.grace and not _all_on_board(
                    after.here, observation, self._presence_pieces):
                return True  # a piece in the next player's hand, for a moment (table 1000011)
        return False

    def _split(self, decision: Decision, observation: Observation) -> Option | None:
        """The held move, when the picture could be it followed by the next player's move as
        well as the longer move (or moves) ``decision`` names, or as no move at all (the next
        player's move put the board back as it was: one swap, and the next player swapped the
        same two tikis back): the held move's picture rested long enough (``settle_next``)
        for the next player to have started."""
        if decision.verdict not in (
                Verdict.MOVE, Verdict.SETTLING, Verdict.AMBIGUOUS, Verdict.UNCHANGED):
            return None
        candidates = [self._candidate[1:]] if self._candidate is not None and \
            self._candidate[0] is self.state else []  # (back after a removal undone)
        if self._held and self._held_pause >= self.waits.settle_next:
            candidates.insert(0, (self._held[0][0], self._held_after(0)))
        for held, after in candidates:
            if held.lifts_only or any(o.state == held.state for o in decision.options):
                continue
            if after.classify(observation).verdict in (
                    Verdict.MOVE, Verdict.SETTLING, Verdict.AMBIGUOUS):
                return held
        return None

    def _strayed(self, decision: Decision, observation: Observation) -> bool:
        """Is the position's own move that ``decision`` names no longer the likely one, though
        the picture is it? When a held move's picture changed a cell that move leaves as it
        was (a hand making it would not have set a piece there and let go), and the held moves
        with the next players' explain the picture too: they are taken instead, in order.
        (Zero-noise Topple table 1000019: 'up1 Wikiwiki', 'up1 Eepo' and 'up3 Huhu', each
        begun 0.8 s after the last rested, made the picture of 'up1 Huhu', which was taken;
        the game went on one move off, 10 phantom, 12 missed.) A held move on the way to it
        (an Up 1, then the same hand's Up 2), or one that with a single next move makes the
        picture, is asked about first (:meth:`_split`)."""
        if not self._held or decision.verdict not in (Verdict.MOVE, Verdict.SETTLING):
            return False
        target = decision.options[0].placement
        if all(all(held == here or moved != here for (_, held), (_, here), (_, moved) in
                   zip(option.placement, self.position.here, target, strict=True))
               for option, _ in self._held):
            return False
        for index in range(len(self._held)):
            chain = self._held_after(index).classify(observation)
            if chain.verdict in (Verdict.MOVE, Verdict.SETTLING, Verdict.AMBIGUOUS) and \
                    not any(o.lifts_only for o in chain.options):
                return True
        return False

    def _still_held(self, observation: Observation) -> bool:
        """Does the held move stay held though the picture is another move of the position?
        When it rested long enough for the next player to start and the picture is on the way
        to a move after it (the next player bubbles the same tiki on down: its first swap
        looks like another Up 1 of the position)."""
        held = self._held[0][0]
        if held.lifts_only or self._held_pause < self.waits.settle_next:
            return False
        return self._held_after(0).classify(observation).verdict in (
            Verdict.MOVE, Verdict.SETTLING, Verdict.AMBIGUOUS, Verdict.IN_PROGRESS,
            Verdict.TAKEBACK)  # (the board as before it: the next hand swapped it back)

    def _in_hand_after(self, index: int, observation: Observation, quiet: float) -> bool:
        """Is the next player's hand, for a moment, in the middle of a move from the position
        after the ``index``-th held move, one that rested as long as the next player takes to
        start? Then a picture an earlier held move explains does not drop it yet: the hand
        holds a piece (the picture is incomplete), and a swap made in an order the position
        does not list as on the way passes through pictures only the earlier one explains.
        (Zero-noise Topple table 1000103: Huhu up one, Huhu up one again 0.9 s later, then
        Nani up one 0.6 s after that, its hand lifting Huhu first: the second Up 1 was
        dropped, and the board ended as the first left it: one move taken for three.)"""
        if index >= len(self._held) or quiet >= self.waits.grace:
            return False
        held = self._held[index][0]
        if held.lifts_only or self._held_paused.get(held, 0.0) < self.waits.settle_next:
            return False
        return not _all_on_board(self._held_after(index).here, observation,
                                 self._presence_pieces)

    def _went_on(self, index: int, decision: Decision, observation: Observation) -> bool:
        """Was the ``index``-th held move, held after the first because the hand might be
        going on, that hand going on? Yes when the board left its picture sooner than the next
        player starts (``settle_next``) and a held move before it explains the picture now:
        then the picture is that one's longer move, not this one and the next player's.
        (Accuracy bench, varied players, Topple table 1000024: Up 1 Nui held, the next
        player's Up 2 of Akamai made by swaps rested 0.29 s after the first, which was held
        as an Up 1 of Akamai; the second swap was then taken as another player's Up 1 of
        Akamai, and 'up2 Akamai' was missed.)"""
        held = self._held[index][0]
        pause = self._held_paused.get(held)
        if index == 0 or held.lifts_only or pause is None or pause >= self.waits.settle_next or \
                decision.verdict is Verdict.UNCHANGED:
            return False
        return any(self._held_after(i).classify(observation).verdict not in (
            Verdict.UNKNOWN, Verdict.TAKEBACK) for i in range(index))

    def _held_after(self, index: int) -> Position:
        """The position the next move is made from after the ``index``-th held move: after
        it and any forced moves that follow it (:meth:`_held_through`)."""
        return self._held_through(index).position

    def _held_through(self, index: int) -> _Through:
        """Where the ``index``-th held move leads (built on first use): the position after
        it, and on through the moves the follower would take by itself as the only ones
        there are (:func:`_forced`: a pass). The board shows no such move, so the move it
        shows next is made from the position after them. (Varied-pace TacTiki table
        1000025: a turn held, the opponent left only a pass, and the same player's next turn
        judged from the position before the pass: unexplained, a mismatch shown, both turns
        missed.)"""
        option, through = self._held[index]
        if through is None:
            passed: list[S] = [self.state]  # the states the chain went through, oldest first
            for i in range(index):
                passed += [self._held[i][0].state,
                           *(o.state for o in self._held_through(i).forced)]
            earlier = [*reversed(passed), *(s for s, _ in reversed(self.history))]
            position = Position.build(self.game, option.state, self.cells,
                                      earlier[:TAKEBACK_DEPTH])
            forced: list[Option] = []
            for _ in range(_FORCED_DEPTH):
                move = _forced(position)
                if move is None:
                    break
                forced.append(move)
                earlier.insert(0, position.state)
                position = Position.build(self.game, move.state, self.cells,
                                          earlier[:TAKEBACK_DEPTH])
            through = _Through(position, tuple(forced))
            self._held[index] = (option, through)
        return through

    def _rest_needed(self, option: Option) -> float:
        """How long the board must rest before ``option`` is accepted without asking."""
        if option.lifts_only:
            return self.waits.settle_removal
        waits = self.waits
        return max(waits.settle_min, waits.settle_long if option.extendable else waits.settle)

    def _open_wait(self) -> float:
        """The longest a picture waits while a cell shows pieces its contact says are not
        there (:meth:`_rested`): a cycle more than a reader takes to report a tag gone."""
        return (ABSENT_MISSES + 1) * self.tracker.scan_period

    def _rested(self, option: Option, observation: Observation, quiet: float) -> bool:
        """Has the board rested long enough to take ``option``'s (incomplete) picture? As
        long as :meth:`_rest_needed` says, and, while a cell shows pieces though its contact
        is open (believed so, not closing), until its reader lets them go (at most
        :meth:`_open_wait`): a piece lifted off it that its reader still reports, or one read
        while carried above it. Either way the picture is stale: a hand has it. (The
        neighbour-read TacTiki game at seed 5: T2 lifted off c4 for the second step of
        'c4-c5 e4-e5', its reader still reporting it, while a neighbour's read put T1 on d5:
        'e4-d4 d4-d5' taken 0.45 s after c4's contact opened; the long soak's game 1000018:
        C1 carried over the empty b1, read there, taken as 'a2-b2 b2-b1' 0.45 s later,
        before b2's reader read it on the stack it was set on; game 1000037: 'a5-a4 a4-a3'
        taken while C4, lifted off c5 for the turn's second step, was still reported there.)
        A contact that stays open under a piece lying there only delays the move."""
        if quiet < self._rest_needed(option):
            return False
        if quiet >= self._open_wait():
            return True
        tracker = self.tracker
        if any(observation.pieces.get(name) and self.geometry.cell(name).presence is not None
               and not tracker.presence(name) and not tracker.closing(name)
               for name in observation.inconsistent):
            self._open_due = tracker.last_change + self._open_wait()
            return False
        return True

    def _carried_past(self, option: Option, now: float) -> bool:
        """Does a piece ``option`` sets on a stack (where a piece carried over it reads the
        same) also lie, by its reads, on another closed cell whose reader began to report
        it after the stack's did (:meth:`Tracker.contested`)? Then the hand may have carried
        it over the stack and set it down there, and the stack's reader reports it until
        ``ABSENT_MISSES`` scans have missed it (the tracker keeps it on the stack meanwhile):
        the move waits until that reader lets it go (the picture changes) or the other read is
        as old as the tracker lists such reads (a neighbour's read of the piece lying on the
        stack). (Varied-pace TacTiki table 1000008: T3 carried off c3 over b4's
        stack, read there, set on c4's stack and read there 0.37 s later; 'c3-b3 b3-b4' was
        taken 0.45 s after c3 let it go, then c4 showed it, half of 'b1-c1 c3-c4', and the
        turn finished past the revise window: one phantom, one missed.)"""
        here, placement = dict(self.position.here), dict(option.placement)
        window = (ABSENT_MISSES + 1) * self.tracker.scan_period
        last: float | None = None
        for uid, (home, _, at) in self.tracker.contested(now, recent=True).items():
            piece = self.registry.lookup(uid)
            since = self.tracker.read_since(home, uid)
            if piece is None or since is None or at <= since or not (
                    here.get(home) or self.geometry.cell(home).presence is None):
                continue
            if placement.get(home, ()).count(piece) > here.get(home, ()).count(piece):
                last = at if last is None else max(last, at)
        if last is None:
            return False
        self._carried_due = last + window + _EPSILON
        return True

    def _revise(self, observation: Observation, quiet: float, now: float) -> list[Outcome[S]]:
        """Replace the last move when the board, unexplained now, shows another legal result
        of the position before it (the last move was only the middle of that one)."""
        if self._previous is None:
            return []
        previous, accepted, when = self._previous
        if when is None:  # restored after a restart: the board gets its window from now
            when = now
            self._previous = (previous, accepted, when)
        undone = self._came_back_undo(observation, quiet, now)
        window = self.waits.revise_window if accepted.lifts_only else self.waits.revise_placed
        if not undone and now - when <= window and self._carried_on(accepted, observation):
            when = now
            self._previous = (previous, accepted, when)
        if undone or now - when > window:
            return undone
        decision = previous.classify(observation)
        if decision.verdict is Verdict.AMBIGUOUS and quiet >= self.waits.settle and (
                accepted.extendable or accepted.lifts_only):
            # The last move was the middle of one of several moves that look alike: take it
            # back; the question follows from the position before it.
            self._previous = None
            return self._take_back(1, now)
        if decision.verdict not in (Verdict.MOVE, Verdict.SETTLING):
            return []
        option = decision.options[0]
        if option.state == accepted.state:
            return []
        if not accepted.lifts_only and self._lifted_again(previous, accepted, option):
            return []
        if not (accepted.extendable or accepted.lifts_only) and not _only_additions(
                accepted.placement, observation.key(self.cells)):
            # A clear move is revised only when a piece comes back (it had been knocked off
            # for a moment), never because the next player's hands are half way.
            return []
        if decision.verdict is Verdict.SETTLING and not self._rested(option, observation, quiet):
            return []
        if decision.verdict is Verdict.MOVE and quiet < self.waits.settle_min and \
                self._may_hover(option, previous.here):
            return []  # a piece carried over a stack on its way: as for a move (_step)
        self.history.pop()
        self.history.append((previous.state, option.text))
        self._moved_to(option.state)
        # The revised move may itself be a moment of a longer one (a hand hovering over the
        # wrong field on its way): it stays revisable from the same position.
        self._previous = (previous, replace(
            option, lifts_only=option.lifts_only or accepted.lifts_only,
            extendable=option.extendable or accepted.extendable), when)
        self._removals = [(previous, self._previous[1])] if self._previous[1].lifts_only else []
        self._follow_up = option.placement if option.has_follow_up else None
        return [MoveRevised(now, accepted.text, option.text, option.state)]

    def _lifted_again(self, previous: Position, accepted: Option, option: Option) -> bool:
        """Would ``option`` move a piece off a cell ``accepted`` set it on, a piece that has
        since been read on no cell at all before its new one read it? Then it was lifted off
        again, not carried over that cell: the next player's hand (or a correction, shown as a
        mismatch), not the middle of this move. A piece carried over a stack and set down
        beyond is read there while the stack's reader still reports it (for
        ``ABSENT_MISSES`` scans); one that rested on the stack and was taken up later shows a
        gap. (Manami, varied pace, tables 1000072, 1000084, 1000105: the next player sowing off
        the stack the last move ended on set its top token first on the sowing's far cell,
        with a pause; that picture read as another path of the last move, which was revised
        into it: one phantom, one or two missed.) Only a piece let go since the move was
        taken counts: a piece of the same kind lifted off that cell earlier is another one."""
        before, moved, instead = dict(previous.here), dict(accepted.placement), \
            dict(option.placement)
        for uid, (cell, let_go) in self.tracker.lifted().items():
            piece = self.registry.lookup(uid)
            if piece is None or let_go < self._taken_at:  # (lifted before: another piece)
                continue
            put = moved.get(cell, ()).count(piece)
            if put > before.get(cell, ()).count(piece) and instead.get(cell, ()).count(piece) < put:
                return True
        return False

    def _carried_on(self, accepted: Option, observation: Observation) -> bool:
        """Has a piece of a move taken because it rested on a stack (``extendable``) left
        the cell the move put it on, the first time since? A stack's contact does not change
        under a piece carried over it, so the move rested on a read alone; the stack's reader
        reports the piece gone only after three misses, and only then is its read on the cell
        the hand went on to believed: the right picture comes three cycles after the stack's
        read, and the window to revise the move opens again from the moment the piece left
        (accuracy table 11000035, Manami: 'a1-b1-c1' taken for 'a1-b1-b2', right 1.41 s
        after it). Once per move: a board that keeps changing is the next player's."""
        if not accepted.extendable or accepted.lifts_only or self._reopened is accepted:
            return False
        if _only_additions(accepted.placement, observation.key(self.cells)):
            return False
        self._reopened = accepted
        return True

    def _came_back_undo(self, observation: Observation, quiet: float,
                        now: float) -> list[Outcome[S]]:
        """Undo the last move when a piece it took off the board is back on it: the piece
        was only held in a hand (a Toast that was not one, a fight's loser lifted too early,
        a piece carried while a mismatch was put right). The board may then show the position
        before the move exactly, which would otherwise read as a takeback to confirm.

        Not bound to ``revise_window`` but to the next move: a hand that goes on with other
        pieces may keep the board from resting for seconds before the piece is seen back. (A
        piece the rules bring back, a TacTiki reincarnation, is a legal move, never asked here.)

        Removals taken in a row (two Toasts) are undone from the one whose piece is back: a
        hand that held the bottom two tikis long enough to pass for two Toasts puts back the
        one it lifted first last.
        """
        if self._previous is None or not self._removals or quiet < self.waits.settle:
            return []
        # While the rules' follow-up is still due, its pieces (a fight's loser) have not left
        # the board yet: they cannot have come back.
        now_here = self.position.here if self._follow_up is None else self._follow_up
        afters = [previous.here for previous, _ in self._removals[1:]] + [now_here]
        for index, ((previous, _), after) in enumerate(zip(self._removals, afters,
                                                           strict=True)):
            if _came_back(previous.here, after, observation, now_here):
                plies = len(self._removals) - index
                kept = self._removals[:index]
                out = self._take_back(plies, now)
                if kept:  # the removals before it stand, and may still be undone in turn
                    self._previous, self._removals = (*kept[-1], now), kept
                return out
        return []

    # -- changing the position -------------------------------------------------------------------
    def _accept(self, option: Option, now: float, quiet: float = 0.0,
                how: Acceptance = Acceptance.ASKED) -> list[Outcome[S]]:
        player = self.game.to_move(self.state)
        # Only what the board alone decided may be revised by the board; a move the players
        # chose by button or card, or the only one there was, stands.
        self._previous = (self.position, _open(option, how), now) if how.board_decided \
            else None
        self._taken_at = now
        if not option.lifts_only:
            self._candidate = None  # a move that puts a piece somewhere: that is over
        if not (how.board_decided and option.lifts_only):
            self._removals = []
        elif self._removals and self._removals[-1][1].state is not self.state:
            self._removals = [(self.position, option)]  # (a row is of moves one after another)
        else:
            self._removals.append((self.position, option))
        self.history.append((self.state, option.text))
        self._moved_to(option.state)
        self._follow_up = option.placement if option.has_follow_up else None
        self._undone = None
        return [MoveAccepted(now, option.text, player, option.state, quiet, how,
                             option.lifts_only)]

    def _take_back(self, plies: int, now: float, left: ViewKey | None = None) -> list[Outcome[S]]:
        plies = min(plies, len(self.history))
        if plies == 0:
            return []
        state = self.history[-plies][0]
        del self.history[-plies:]
        self._moved_to(state)
        self._previous = None
        self._removals = []
        self._guide_now = True
        self._follow_up = None
        self._undone = left
        return [TakenBack(now, plies, self.state, left)]

    def _build(self, state: S) -> Position:
        earlier = [s for s, _ in reversed(self.history[-TAKEBACK_DEPTH:])]
        return Position.build(self.game, state, self.cells, earlier)

    def reset(self, state: S, history: Sequence[tuple[S, str]] = ()) -> None:
        """Follow ``state`` from now on (a new round, a resumed game)."""
        self.history = list(history)
        self._moved_to(state)
        self._asking = None
        self._follow_up = self._pending_follow_up()
        self._previous = None
        self._removals = []
        self._undone = None

    def expect_only(self, text: str) -> None:
        """From this position take only the move ``text`` (the station's own move, shown for
        a person to carry out): any other move's picture is then unexplained, so it gets the
        usual guidance back to the position. A new position lifts the restriction."""
        position = self.position
        for table in (position.by_placement, position.transit):
            for key, options in list(table.items()):
                kept = [o for o in options if o.text == text]
                if kept:
                    table[key] = kept
                else:
                    del table[key]

    def sees_put_back(self, earlier: S) -> bool:
        """Would the board put back to ``earlier`` by hand read as a takeback to confirm?
        Not when there is nothing to put back (a move the board does not show) or when that
        picture is a legal move's: then the players say it with BACK."""
        key = view_key(self.game.expected_view(earlier), self.cells)
        return key != self.position.here and key not in self.position.by_placement

    def resume_last_move(self, how: Acceptance | None, lifts_only: bool,
                         now: float | None = None) -> None:
        """After a restart: the board alone took the last move (the store says ``how``, and
        whether the picture only had pieces gone), so it stays open as it was before the
        restart: undone when a piece it took off comes back, revised when the board shows
        that it was the middle of another move. The revise window opens at the first picture
        judged after the restart (the hand may have gone on while the station was down),
        unless that picture is the board as the move left it: then it counts from ``now``,
        the restart (:meth:`_resumed_as_left`; None: from the first picture judged that
        nothing explains)."""
        if not self.history or how is None or not how.board_decided:
            return
        before, text = self.history[-1]
        earlier = [s for s, _ in reversed(self.history[-TAKEBACK_DEPTH - 1:-1])]
        previous = Position.build(self.game, before, self.cells, earlier)
        option = next((o for options in previous.by_placement.values() for o in options
                       if o.text == text), None)
        if option is not None:
            self._previous = (previous, _open(replace(option, lifts_only=lifts_only), how),
                              None)
            self._taken_at = -1e18
            self._resumed_at = now
            self._removals = [(previous, self._previous[1])] if lifts_only else []

    def resume_takeback(self, left: Mapping[str, Sequence[str]]) -> None:
        """After a restart: the players pressed BACK, leaving ``left`` on the board (the store
        says so), and the board has not shown the position since. That picture stays no move,
        as it was before the restart: it is the move just taken back."""
        self._undone = view_key({c: tuple(p) for c, p in left.items()}, self.cells)

    def follow_up_done(self) -> None:
        """The board showed the position after the last move's follow-up (the station's store
        says so): a restarted follower must not wait for that tidying again."""
        self._follow_up = None

    def _pending_follow_up(self) -> ViewKey | None:
        """The picture the last move left before the follow-up the rules demand (clear a
        village, take a fight's losers off), when it had one. A station that restarts in the
        middle of the tidying must not take the half-tidied board for a new move; a board
        that shows the position clears it."""
        if not self.history:
            return None
        before, text = self.history[-1]
        try:
            move = self.game.parse_move(before, text)
            placement = view_key(self.game.placement_view(before, move), self.cells)
        except IllegalMove:  # a history the engine cannot read: no follow-up to wait for
            return None
        return placement if placement != view_key(self.game.expected_view(self.state),
                                                  self.cells) else None


def _only_silent(position: Position) -> list[Option]:
    """The legal moves that leave the board as it is, when no legal move moves a piece (empty
    otherwise): decisions the sensors cannot see and the players cannot avoid."""
    here = position.here
    if any(o.placement != here for options in position.by_placement.values() for o in options):
        return []
    return position.by_placement.get(here, [])


def _forced(position: Position) -> Option | None:
    """The move the follower takes by itself in ``position`` (as :meth:`Follower._decisions`
    does): the only legal one, and one that leaves the board as it is (a pass). None when
    there is none, or when the players choose (several such moves, or pieces could move)."""
    silent = _only_silent(position)
    return silent[0] if len(silent) == 1 else None


def _moved_reads(observation: Observation, moves: Sequence[tuple[str, tuple[str, str, float]]],
                 registry: TagRegistry) -> Observation | None:
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
    return replace(observation, pieces={cell: tuple(sorted(stack))
                                        for cell, stack in pieces.items() if stack})


def _open(option: Option, how: Acceptance) -> Option:
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


def _came_back(before: ViewKey, after: ViewKey, observation: Observation,
               now_here: ViewKey | None = None) -> bool:
    """True when a piece that went off the board between ``before`` and ``after`` is seen on
    the board again, beyond what ``now_here`` (by default ``after``) has on it."""
    gone = Counter(p for _, cell in before for p in cell) - Counter(
        p for _, cell in after for p in cell)
    if not gone:
        return False
    seen = Counter(p for pieces in observation.pieces.values() for p in pieces)
    expected = Counter(p for _, cell in (after if now_here is None else now_here) for p in cell)
    return bool((seen - expected) & gone)


def _all_on_board(here: ViewKey, observation: Observation,
                  presence_pieces: frozenset[str] = frozenset()) -> bool:
    """True when every piece of the position ``here`` is seen somewhere on the board, or may
    lie where only a contact sees it: a cell that knows its piece by its contact alone
    (Manami's shaman fields) shows that piece for whatever closes it, so as many extra such
    pieces as pieces missing is a piece set down there, none in a hand (Manami, varied-pace
    tables 1000003 and 1000006: a token put on a shaman field, an illegal attempt undone
    1.1 s after it rested, was shown as a mismatch only after ``grace``, too late)."""
    seen = Counter(p for pieces in observation.pieces.values() for p in pieces)
    want = Counter(p for _, cell in here for p in cell)
    missing = sum((want - seen).values())
    return missing == 0 or missing <= sum(
        n for p, n in (seen - want).items() if p in presence_pieces)


def _only_additions(before: ViewKey, after: ViewKey) -> bool:
    """True when ``after`` is ``before`` with pieces added and none taken away."""
    return all(Counter(b) <= Counter(a) for (_, b), (_, a) in zip(before, after, strict=True)
               if a != b)
