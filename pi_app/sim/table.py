"""A simulated table: players with simulated hands play whole games through the real follower.

Each decision is made by hands on a :class:`PhysicalBoard`, seen through the :class:`SensorModel`
and fed, event by event and in time order, to a :class:`Follower` (the same one the station
runs). Players answer the follower's questions the way people at a table would: they press a
button or tap a card to say which move they meant, confirm a takeback they intended, and fix the
board when they are shown a mismatch. Players may also make deliberate illegal moves and take
moves back.

Every intended move is checked against what the follower accepted, so the run counts phantom
moves (accepted, never made), missed moves (made, never accepted), illegal moves reported,
mismatches raised and resolved, and the time each took. The accuracy script and the soak are
this class run long; the tests run it short.

By default the players are steady: after each move they wait until the station has long
settled. With a :class:`Pace` they keep real players' pace instead: the next move starts
0.5-4 s after the last piece of the move before came to rest, whether the station has taken
that move yet or not, and an illegal attempt is undone by the player after 1-3 s, reported or
not. Moves made in a row are judged together once the players stop (a question, a mismatch,
a takeback, an illegal attempt, the end of a round): every one of them must be in the record.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from pi_app.board.follower import (
    Follower,
    Guidance,
    InSync,
    MoveAccepted,
    MoveRevised,
    Outcome,
    Prompt,
    PromptCleared,
    TakenBack,
    takeback_plies,
)
from pi_app.board.geometry import Geometry
from pi_app.board.outcomes import GuidanceKind, PromptKind
from pi_app.board.registry import TagRegistry
from pi_app.games.base import Game, IllegalMove
from pi_app.json_types import JSON
from pi_app.readings import ButtonPressed, HardwareFault, HwEvent, SensorEvent
from pi_app.sim.hands import Action, Hands, Noise, PhysicalBoard
from pi_app.sim.sensors import SensorModel


@dataclass
class TableStats:
    """What a run measured."""

    moves_made: int = 0
    moves_accepted: int = 0
    revised: int = 0
    """Moves first accepted as the middle of another and then corrected (MoveRevised)."""
    phantom: int = 0
    missed: int = 0
    illegal_made: int = 0
    illegal_reported: int = 0
    takebacks_made: int = 0
    takebacks_done: int = 0
    prompts: int = 0
    mismatches_raised: int = 0
    mismatches_resolved: int = 0
    games: int = 0
    longest_recovery: float = 0.0
    accept_latency: list[float] = field(default_factory=list)
    """Seconds from the last piece at rest to acceptance, for moves accepted without a question."""
    accept_how: list[str] = field(default_factory=list)
    """For each entry of ``accept_latency``: ``at once`` or ``settled`` (MoveAccepted.how)."""
    accept_moves: list[tuple[Any, Any]] = field(default_factory=list)
    """For each entry of ``accept_latency``: the state before the move and the state the
    players made (the accuracy bench tells clear moves from the rules with them)."""
    decision_seconds: list[float] = field(default_factory=list)
    """Wall-clock seconds the follower spent per event it was fed (the decision time)."""
    failures: list[str] = field(default_factory=list)
    """One line per phantom or missed move (simulated time, what was made, what was taken),
    to find the run that shows it and replay it."""
    unreported: list[str] = field(default_factory=list)
    """One line per illegal attempt not reported before its player began to undo it (what it
    was, when its piece came to rest, until when the player looked, when the undo touched the
    board, when a mismatch came after all, if one did), to find the attempt and trace it."""

    def merge(self, other: TableStats) -> None:
        for name, value in vars(other).items():
            mine = getattr(self, name)
            if isinstance(value, list):
                mine.extend(value)
            elif name == "longest_recovery":
                self.longest_recovery = max(mine, value)
            else:
                setattr(self, name, mine + value)


@dataclass(frozen=True)
class Pace:
    """Real players' pace (seconds)."""

    between: tuple[float, float] = (0.5, 4.0)
    """From the last piece of one move at rest to the first touch of the next."""
    undo_illegal: tuple[float, float] = (1.0, 3.0)
    """How long an illegal attempt lies on the board before its player undoes it."""


@dataclass
class Rates:
    """How often players do something unusual, per move."""

    illegal: float = 0.0
    takeback: float = 0.0
    tap_card: float = 0.5  # answer an ambiguity by tapping the card rather than buttons

    @classmethod
    def table(cls) -> Rates:
        return cls(illegal=0.05, takeback=0.03)


Listener = Callable[[SensorEvent | None, list[Outcome]], None]


class Referee(Protocol):
    """What the players play against: by default the follower itself (:class:`FollowerReferee`);
    the long soak (``tools.bench.longsoak``) puts a whole station, store and all, behind it."""

    @property
    def follower(self) -> Follower:
        """The follower deciding now (the players read its position to plan illegal moves)."""
    @property
    def state(self) -> Any:
        """The position the referee holds (what the players check their moves against)."""
    @property
    def history(self) -> list[tuple[Any, str]]: ...
    def feed(self, event: HwEvent, now: float) -> list[Outcome]: ...
    def tick(self, now: float) -> list[Outcome]: ...
    def prepare(self, now: float) -> list[Outcome]: ...
    def choose(self, card: str, now: float) -> list[Outcome]: ...
    def next_deadline(self, now: float) -> float | None: ...
    def reset(self, state: Any, history: Sequence[tuple[Any, str]] = ()) -> None:
        """Put the referee on ``state`` (a set-up, or the run kept going after a miss)."""
    def place(self, event: HwEvent) -> None:
        """An event of a set-up laid out at once (seen before play starts)."""
    def start(self, now: float) -> list[Outcome]:
        """The set-up is laid out: outcomes due before anything moves."""
    def deal(self, state: Any, rng: random.Random) -> Any:
        """The next Tiki Topple round after ``state`` (the referee may deal it itself)."""


class Sensors(Protocol):
    """What turns the hands' actions into sensor events: by default :class:`SensorModel`."""

    def run(self, actions: Iterable[Action]) -> Iterable[HwEvent]: ...
    def lay_out(self, cells: dict[str, list[str]], t: float) -> Iterable[HwEvent]: ...


@dataclass
class FollowerReferee:
    """The follower alone, fed exactly as the station feeds it."""

    follower: Follower

    @property
    def state(self) -> Any:
        return self.follower.state

    @property
    def history(self) -> list[tuple[Any, str]]:
        return self.follower.history

    def feed(self, event: HwEvent, now: float) -> list[Outcome]:
        if isinstance(event, HardwareFault):
            return []  # the follower has no use for it (the station shows it)
        return self.follower.feed(event, now)

    def tick(self, now: float) -> list[Outcome]:
        return self.follower.tick(now)

    def prepare(self, now: float) -> list[Outcome]:
        return self.follower.prepare(now)

    def choose(self, card: str, now: float) -> list[Outcome]:
        return self.follower.choose(card, now)

    def next_deadline(self, now: float) -> float | None:
        return self.follower.next_deadline(now)

    def reset(self, state: Any, history: Sequence[tuple[Any, str]] = ()) -> None:
        self.follower.reset(state, history)

    def place(self, event: HwEvent) -> None:
        assert not isinstance(event, HardwareFault)
        self.follower.tracker.feed(event)

    def start(self, now: float) -> list[Outcome]:
        self.follower.tracker.poll(now)
        return self.follower.start(now)

    def deal(self, state: Any, rng: random.Random) -> Any:
        return self.follower.game.deal(state, rng)


class SimTable:
    """One board, one game, simulated players."""

    def __init__(self, game: Game[Any, Any], geometry: Geometry, registry: TagRegistry,
                 rng: random.Random, *, noise: Noise | None = None, rates: Rates | None = None,
                 miss: float = 0.0, flicker: float = 0.0, scan_period: float | None = None,
                 state: Any = None, listener: Listener | None = None,
                 referee: Referee | None = None, sensors: Sensors | None = None,
                 pace: Pace | None = None, hand_pace: tuple[float, float] | None = None,
                 chatter: float = 0.0, early: float = 0.0) -> None:
        self.game = game
        self.rng = rng
        self.rates = rates or Rates()
        self.state = state if state is not None else game.new_machine_game(rng)
        self.board = PhysicalBoard(geometry, registry)
        self.hands = Hands(rng, noise) if hand_pace is None else Hands(rng, noise, pace=hand_pace)
        self.sensors: Sensors = sensors or SensorModel(
            geometry, rng, miss=miss, flicker=flicker,
            scan_period=scan_period or geometry.scan_period, chatter=chatter, early=early)
        self.pace = pace
        # Moves made in a row at pace, not judged yet: (intended state, state before, index
        # into ``accepted`` when it was made, time its last piece came to rest).
        self._chain: list[tuple[Any, Any, int, float]] = []
        self._chain_history = 0  # length of the referee's history when the row began
        self.referee: Referee = referee or FollowerReferee(
            Follower(game, self.state, geometry, registry))
        self.stats = TableStats()
        self.listener = listener
        self.now = 0.0
        self.accepted: list[MoveAccepted] = []
        self.outcomes: list[Outcome] = []
        self._mismatch_open = False
        self._taking_back = False  # a takeback the players asked for is no revision
        self._touched = 0.0  # when the last change by hand first touched the board
        self._lay_out(self.state)

    @property
    def follower(self) -> Follower:
        """The follower deciding now (the referee's; a restarted station has a new one)."""
        return self.referee.follower

    # -- the clock and the wire ------------------------------------------------------------------
    def _deliver(self, events: Iterable[HwEvent], linger: float | None = None) -> None:
        """Feed events in time order, ticking the follower at its deadlines in between, and
        on for ``linger`` seconds after the last (None: until everything has settled)."""
        for event in events:
            self._tick_until(event.t)
            self.now = max(self.now, event.t)
            self._take(event, partial(self.referee.feed, event, self.now))
        self._tick_until(self.now + (2.5 * self.follower.grace + 0.5 if linger is None
                                     else linger))

    def _tick_until(self, until: float, asked: bool = False) -> None:
        """Let the station's deadlines pass up to ``until`` (``asked``: only until it puts
        a question on the screen, which players at the table see and stop for)."""
        while True:
            if asked and self._open_prompt() is not None:
                return
            deadline = self.referee.next_deadline(self.now)
            if deadline is None or deadline > until:
                return
            self.now = deadline
            self._take(None, partial(self.referee.tick, self.now))

    def _take(self, event: HwEvent | None, call: Callable[[], list[Outcome]]) -> None:
        start = time.perf_counter()
        out = call()
        if event is not None:
            self.stats.decision_seconds.append(time.perf_counter() - start)
        # As the station does: confirm first, then get ready for the next move (untimed).
        out += self.referee.prepare(self.now)
        self.outcomes += out
        for outcome in out:
            if isinstance(outcome, MoveAccepted):
                self.accepted.append(outcome)
            elif isinstance(outcome, MoveRevised) or (
                    isinstance(outcome, TakenBack) and not self._taking_back):
                self.stats.revised += 1
            elif isinstance(outcome, Prompt):
                self.stats.prompts += 1
            if isinstance(outcome, Guidance) and outcome.kind == GuidanceKind.MISMATCH:
                if not self._mismatch_open:
                    self.stats.mismatches_raised += 1
                    self._mismatch_open = True
            elif (isinstance(outcome, InSync | MoveAccepted | TakenBack | MoveRevised)
                  and self._mismatch_open):
                self.stats.mismatches_resolved += 1
                self._mismatch_open = False
        if self.listener is not None:
            self.listener(None if isinstance(event, HardwareFault) else event, out)

    def press(self, button: str) -> None:
        self.now += self.rng.uniform(0.3, 1.0)
        event = ButtonPressed(self.now, button)
        self._take(event, partial(self.referee.feed, event, self.now))

    def _lay_out(self, state: Any) -> None:
        """Put the pieces of ``state`` on the board (a set-up), and tell the follower."""
        self.board.set_view(self.game.expected_view(state))
        self.now += 1.0
        cells = {name: list(uids) for name, uids in self.board.cells.items()}
        self.referee.reset(state)
        for event in self.sensors.lay_out(cells, self.now):
            self.referee.place(event)
            if self.listener is not None and not isinstance(event, HardwareFault):
                self.listener(event, [])
        self.now += 1.0
        self.outcomes += self.referee.start(self.now)

    # -- players ---------------------------------------------------------------------------------
    def _move_by_hand(self, target: Mapping[str, tuple[str, ...]],
                      waypoints: list[Mapping[str, tuple[str, ...]]] | None = None,
                      linger: float | None = None) -> float:
        """Change the board by hand; ``linger`` as for :meth:`_deliver` (a player at pace
        starts at once: the pause before was already waited)."""
        start = self.now + (self.rng.uniform(0.5, 2.0) if linger is None else 0.0)
        actions, rest = self.hands.change(self.board, target, start, waypoints or [])
        self._touched = actions[0].t if actions else start
        if linger is None:
            self._deliver(self.sensors.run(actions))
        else:
            self._deliver(self.sensors.run(actions), 0.0)
            self._tick_until(max(self.now, rest + linger))
        return rest

    @property
    def believed(self) -> Any:
        """The position the players have made (the station may not have taken it all yet)."""
        return self.game.advance_forced(self._chain[-1][0])[0] if self._chain \
            else self.referee.state

    def play_move(self, move: Any) -> None:
        """Make ``move`` by hand and see it through: questions answered, follow-ups tidied."""
        game = self.game
        if self.pace is not None and \
                game.placement_view(self.believed, move) != game.expected_view(self.believed):
            self._play_at_pace(move)
            return
        planned = self.believed
        self.end_row()
        state = self.referee.state
        if not self._same(state, planned):  # the station missed one: go on from its position
            if game.is_over(state) or game.to_move(state) is None:
                return
            move = game.random_move(state, self.rng)
        intended = game.apply(state, move)
        self.stats.moves_made += 1
        before = len(self.accepted)
        placement = game.placement_view(state, move)
        waypoints: list[Mapping[str, tuple[str, ...]]] = []
        if self.rng.random() < self.hands.noise.swap_style:
            total = sum(len(v) for v in placement.values())
            waypoints = [v for v in game.transit_views(state, move)
                         if sum(len(p) for p in v.values()) == total]
        if placement == game.expected_view(state):
            self._answer_decision(move, intended)
        else:
            rest = self._move_by_hand(placement, waypoints)
            self._answer(intended, move)
            final = game.expected_view(intended)
            if final != placement:  # the follow-up the rules demand
                self._move_by_hand(final)
            if len(self.accepted) > before and self.accepted[before].t >= rest and \
                    self.accepted[before].how.board_decided:
                self.stats.accept_latency.append(self.accepted[before].t - rest)
                self.stats.accept_how.append(self.accepted[before].how)
                self.stats.accept_moves.append((state, intended))
        self._settle_back()
        self._judge(intended, before)

    def _play_at_pace(self, move: Any) -> None:
        """Make ``move`` at real players' pace: the next player goes on 0.5-4 s after its last
        piece came to rest, unless a question or a mismatch stops them."""
        assert self.pace is not None
        game, state = self.game, self.believed
        if not self._chain:
            self._chain_history = len(self.referee.history)
        intended = game.apply(state, move)
        self.stats.moves_made += 1
        placement = game.placement_view(state, move)
        waypoints: list[Mapping[str, tuple[str, ...]]] = []
        if self.rng.random() < self.hands.noise.swap_style:
            total = sum(len(v) for v in placement.values())
            waypoints = [v for v in game.transit_views(state, move)
                         if sum(len(p) for p in v.values()) == total]
        before = len(self.accepted)
        gap = self.rng.uniform(*self.pace.between)
        rest = self._move_by_hand(placement, waypoints, linger=min(gap, 0.6))
        if self._same(self.referee.state, state):  # (a question about an earlier move waits)
            self._answer(intended, move)
        final = game.expected_view(intended)
        if final != placement:  # the follow-up the rules demand
            rest = self._move_by_hand(final, linger=min(gap, 0.6))
        self._chain.append((intended, state, before, rest))
        self._tick_until(rest + gap, asked=True)
        if self._open_prompt() is not None or self._last_guidance() is not None:
            self.end_row()  # the players stop for the question or the mismatch
        else:
            # The next player starts ``gap`` after the rest, not at the station's last
            # deadline before it (the clock stood there: about 1 % of the next moves began
            # under 0.5 s, the quickest start this pace promises).
            self.now = max(self.now, rest + gap)

    def end_row(self) -> None:
        """The players stop: let the station settle, then judge the moves made in a row.
        Stopped by a question on the screen, they answer it first (each press 0.3-1 s after
        the last), as players at a table do, not after the board has sat still for seconds."""
        if not self._chain:
            return
        asked_now = next((e for e in self._chain if self._same(e[1], self.referee.state)), None)
        if self._open_prompt() is not None and asked_now is not None:
            self._answer(asked_now[0], self._move_between(asked_now[1], asked_now[0]))
        self._tick_until(self.now + 2.5 * self.follower.grace + 0.5)
        chain, self._chain = self._chain, []
        last = chain[-1][0]
        for _ in range(len(chain) + 2):  # questions, answered for the move they are about
            asked = next((e for e in chain if self._same(e[1], self.referee.state)), None)
            if self._open_prompt() is None or asked is None:
                break
            self._answer(asked[0], self._move_between(asked[1], asked[0]))
            self._tick_until(self.now + 2.5 * self.follower.grace + 0.5)
        expected: list[Any] = []
        for intended, _, _, _ in chain:
            expected.append(intended)
            state = intended
            for _ in range(self.game.advance_forced(intended)[1]):  # the follower's own
                state, _ = self.game.advance_forced(state, limit=1)
                expected.append(state)
        history = self.referee.history[self._chain_history:]
        reached = [s for s, _ in history[1:]] + ([self.referee.state] if history else [])
        for intended, made_from, before, rest in chain:
            if any(self._same(r, intended) for r in reached):
                self.stats.moves_accepted += 1
                taken = next((a for a in self.accepted[before:]
                              if self._same(a.state, intended)), None)
                if taken is not None and taken.how.board_decided:
                    self.stats.accept_latency.append(max(taken.t - rest, 0.0))
                    self.stats.accept_how.append(taken.how)
                    self.stats.accept_moves.append((made_from, intended))
            else:
                self.stats.missed += 1
                self._failed("missed", rest, made_from, intended)
        for (_, text), r in zip(history, reached, strict=True):
            if not any(self._same(r, e) for e in expected):
                self.stats.phantom += 1
                self.stats.failures.append(f"phantom at {self.now:.2f} s: took {text!r} "
                                           f"in a row of {self._texts(chain)}")
        final, _ = self.game.advance_forced(last)
        if not self._same(self.referee.state, final):
            self.referee.reset(final, [*self.referee.history])  # keep the run going
        self._settle_back()

    def _failed(self, kind: str, rest: float, before: Any, intended: Any) -> None:
        """Note a missed move: when its last piece came to rest, and what the station took."""
        taken = [a.text for a in self.accepted if a.t >= rest - 5.0]
        self.stats.failures.append(
            f"{kind} at {rest:.2f} s: {self._text(before, intended)!r}; taken since "
            f"{rest - 5.0:.2f} s: {taken}")

    def _text(self, before: Any, after: Any) -> str:
        """The record text of the move from ``before`` to ``after`` (a decision included)."""
        move = self._move_between(before, after)
        return str(self.game.move_text(before, move))

    def _texts(self, chain: Sequence[tuple[Any, Any, int, float]]) -> list[str]:
        return [self._text(before, intended) for intended, before, _, _ in chain]

    def _move_between(self, before: Any, after: Any) -> Any:
        """A legal move from ``before`` that reaches ``after`` (the one the player made)."""
        return next(m for m in self.game.legal_moves(before)
                    if self._same(self.game.apply(before, m), after))

    def _answer(self, intended: Any, move: Any) -> None:
        """Answer an open question the way the player who moved would."""
        for _ in range(12):
            prompt = self._open_prompt()
            if prompt is None or self._same(self.referee.state, intended):
                return
            if prompt.kind in (PromptKind.AMBIGUOUS, PromptKind.DECISION):
                wanted = self.game.move_text(self.referee.state, move)
                texts = prompt.options
                if wanted not in texts:  # the follower offers a canonical text for that state
                    wanted = next((t for t in texts if self._leads_to(t, intended)), texts[0])
                card = wanted.split()[0]
                if (prompt.kind == PromptKind.AMBIGUOUS and self.rng.random() < self.rates.tap_card
                        and any(p.kind == "pad" for p in self.board.geometry.cells)
                        and [t.split()[0] for t in texts].count(card) == 1):
                    self.now += self.rng.uniform(0.5, 1.5)
                    self._take(None, partial(self.referee.choose, card, self.now))
                    continue
                index = texts.index(wanted)
                for _ in range((index - prompt.selected) % len(texts)):
                    self.press("menu")
                self.press("ok")
            else:
                self.press("back")

    def _leads_to(self, text: str, intended: Any) -> bool:
        """Does the option ``text`` of a question lead to ``intended``? (An option the rules
        refuse from the referee's position, as when the question is about a move before it
        at real pace, leads nowhere.)"""
        try:
            return self._same(self.game.apply_text(self.referee.state, text), intended)
        except IllegalMove:
            return False

    def _answer_decision(self, move: Any, intended: Any) -> None:
        """A move the sensors cannot see: answer the question, or ask for it with OK."""
        self._tick_until(self.now + 0.5)
        if self.referee.state != intended and self._open_prompt() is None:
            self.press("ok")
        if self.referee.state != intended:
            self._answer(intended, move)

    def _open_prompt(self) -> Prompt | None:
        for outcome in reversed(self.outcomes):
            if isinstance(outcome, Prompt):
                return outcome
            if isinstance(outcome, MoveAccepted | TakenBack | PromptCleared):
                return None
        return None

    def _settle_back(self) -> None:
        """If the follower shows a mismatch, put the board right as guided."""
        for _ in range(3):
            shown = self._last_guidance()
            if shown is None:
                return
            started = self.now
            self._move_by_hand(self.game.expected_view(self.referee.state))
            self.stats.longest_recovery = max(self.stats.longest_recovery, self.now - started)

    def _last_guidance(self) -> Guidance | None:
        for outcome in reversed(self.outcomes):
            if isinstance(outcome, InSync | MoveAccepted | TakenBack):
                return None
            if isinstance(outcome, Guidance):
                return outcome
        return None

    def _same(self, a: Any, b: Any) -> bool:
        """The same position for the rules (TacTiki: which copy of a rank stands where is
        no difference)."""
        return bool(self.game.position_key(a) == self.game.position_key(b))

    def _judge(self, intended: Any, before: int) -> None:
        intended, forced = self.game.advance_forced(intended)
        accepted = self.accepted[before:]
        if self._same(self.referee.state, intended):
            self.stats.moves_accepted += 1
            extra = len(accepted) - 1 - forced - self._revisions(before)
            self.stats.phantom += max(0, extra)
            if extra > 0:
                self.stats.failures.append(f"phantom at {self.now:.2f} s: took "
                                           f"{[a.text for a in accepted]} for one move")
        else:
            self.stats.missed += 1
            self.stats.phantom += len(accepted)
            self.stats.failures.append(f"missed at {self.now:.2f} s (steady): took "
                                       f"{[a.text for a in accepted]}")
            self.referee.reset(intended, [*self.referee.history])  # keep the run going

    def _revisions(self, before: int) -> int:
        """Revisions that corrected moves accepted since index ``before`` of ``accepted``: a
        move replaced, or taken back by the follower itself to ask which one was meant."""
        first = self.accepted[before].t if before < len(self.accepted) else self.now
        return sum(1 for o in self.outcomes
                   if isinstance(o, MoveRevised | TakenBack) and o.t >= first)

    def play_illegal(self) -> None:
        """Move a piece somewhere the rules do not allow, wait to be told, put it back."""
        view = {c: list(p) for c, p in self.game.expected_view(self.referee.state).items()}
        occupied = [c for c, p in view.items() if p]
        if not occupied:
            return
        for _ in range(20):
            src = self.rng.choice(occupied)
            dst = self.rng.choice([c for c in view if c != src])
            trial = {c: list(p) for c, p in view.items()}
            trial[dst].append(trial[src].pop())
            key = tuple((c, tuple(sorted(trial[c]))) for c in self.follower.cells)
            position = self.follower.position
            if key not in position.by_placement and key not in position.transit \
                    and key not in position.earlier:
                break
        else:
            return
        self.stats.illegal_made += 1
        before = len(self.outcomes)
        state_before = self.referee.state
        history_before = list(self.referee.history)
        if self.pace is None:
            rest = self._move_by_hand({c: tuple(p) for c, p in trial.items()})
            looked = self.now
        else:  # the player sees nothing happen (or the LEDs) and undoes it soon
            linger = self.rng.uniform(*self.pace.undo_illegal)
            rest = self._move_by_hand({c: tuple(p) for c, p in trial.items()}, linger=linger)
            looked = rest + linger
        reported = self._mismatch_since(before)
        if reported is not None:
            self.stats.illegal_reported += 1
        if self.pace is not None:
            self._move_by_hand(self.game.expected_view(state_before))
        if reported is None:
            undo = "" if self.pace is None else \
                f", the undo touched the board at {self._touched:.2f} s"
            late = self._mismatch_since(before)
            shown = "never" if late is None else f"at {late:.2f} s ({late - rest:.2f} s after rest)"
            self.stats.unreported.append(
                f"illegal {src} -> {dst}: rested at {rest:.2f} s, looked at until {looked:.2f} s "
                f"({looked - rest:.2f} s){undo}; mismatch {shown}")
        self._settle_back()
        if not self._same(self.referee.state, state_before):
            # The illegal placement was taken for a move (or a revision of the last one):
            # a move nobody made. Count it, and go on from what the players really have.
            self.stats.phantom += 1
            taken = [t for _, t in self.referee.history[max(len(history_before) - 1, 0):]]
            self.stats.failures.append(f"phantom at {self.now:.2f} s: an illegal placement "
                                       f"taken; the record ends {taken}")
            self.referee.reset(state_before, history_before)

    def _mismatch_since(self, index: int) -> float | None:
        """When the first mismatch among the outcomes from ``index`` on was shown (None: none)."""
        return next((o.t for o in self.outcomes[index:]
                     if isinstance(o, Guidance) and o.kind == GuidanceKind.MISMATCH), None)

    def play_takeback(self) -> None:
        """Put the board back one move and confirm the takeback."""
        history = self.referee.history
        if not history:
            return
        earlier = history[-takeback_plies(self.game, history)][0]
        self.stats.takebacks_made += 1
        self._taking_back = True
        view = self.game.expected_view(earlier)
        if not self.follower.sees_put_back(earlier):
            self.press("back")
            self._move_by_hand(view)
        else:
            self._move_by_hand(view)
            prompt = self._open_prompt()
            if prompt is not None and prompt.kind == PromptKind.TAKEBACK:
                self.press("ok")
        if self._same(self.referee.state, earlier):
            self.stats.takebacks_done += 1
        self._taking_back = False
        self._settle_back()

    def play_game(self, max_decisions: int = 2_000) -> TableStats:
        """Play to the end with random legal moves and the configured mischief."""
        game = self.game
        for _ in range(max_decisions):
            state = self.believed
            if game.is_over(state) or game.to_move(state) is None:
                self.end_row()
                state = self.referee.state
            if game.is_over(state):
                break
            if game.to_move(state) is None:  # between Topple rounds: deal and set up
                self._lay_out(self.referee.deal(state, self.rng))
                continue
            roll = self.rng.random()
            if roll < self.rates.illegal:
                self.end_row()
                self.play_illegal()
            elif roll < self.rates.illegal + self.rates.takeback:
                self.end_row()
                self.play_takeback()
            else:
                self.play_move(game.random_move(state, self.rng))
        self.end_row()
        self.stats.games += 1
        return self.stats


def simulate_trace(game: Game[Any, Any], geometry: Geometry, registry: TagRegistry, seed: int,
                   moves: int, *, noise: Noise | None = None, miss: float = 0.0,
                   flicker: float = 0.0) -> tuple[JSON, list[SensorEvent]]:
    """Play ``moves`` random moves by simulated hands; the trace header and events."""
    events: list[SensorEvent] = []

    def listen(event: SensorEvent | None, _: list[Outcome]) -> None:
        if event is not None:
            events.append(event)

    rng = random.Random(seed)
    start = game.new_machine_game(rng)
    table = SimTable(game, geometry, registry, rng, noise=noise, miss=miss, flicker=flicker,
                     state=start, listener=listen)
    for _ in range(moves):
        state = table.referee.state
        if game.is_over(state) or game.to_move(state) is None:
            break
        table.play_move(game.random_move(state, rng))
    header = {"trace": 1, "game": game.name, "record": game.setup_record(start),
              "registry": dict(registry), "geometry": geometry.game}
    return header, events
