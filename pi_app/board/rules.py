"""The follower's rules, named and in order: one look at the board is a walk down :data:`RULES`.

Each rule takes the :class:`Look` so far (the picture, how long the board has been quiet, the
verdict once it is known) and either answers (the outcomes of this look: the walk stops) or
passes a look on, perhaps changed (a stale read moved, a verdict vetoed). ``docs/waits.md``
("Rules") states them with the waits they use; each rule's own logic lives in the part it
belongs to (:mod:`.asking`, :mod:`.held`, :mod:`.stale`, :mod:`.revise`).
``tests/test_follower_rules.py`` shows that the recorded corpus needs every one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pi_app.board.core import Asking, FollowerCore
from pi_app.board.inference import Decision, Verdict, between
from pi_app.board.outcomes import (
    Acceptance,
    GuidanceKind,
    InSync,
    Outcome,
    PromptCleared,
    PromptKind,
)
from pi_app.board.pictures import EPSILON, all_on_board
from pi_app.board.tracker import Observation, ViewKey
from pi_app.games.base import M, S

#: The verdict before the picture is classified (the first rules need none).
_NOT_YET = Decision(Verdict.UNKNOWN)
#: Verdicts that a tag read on two closed cells may explain better (:meth:`Rules._stale_reads`).
_REREAD = (Verdict.UNKNOWN, Verdict.IN_PROGRESS, Verdict.UNCHANGED, Verdict.TAKEBACK)


@dataclass(frozen=True)
class Look:
    """One look at the board, as the rules pass it on."""

    observation: Observation
    key: ViewKey
    quiet: float
    """Seconds since the board last changed (or since the read a rule trusts from)."""
    now: float
    unexplained: tuple[ViewKey, float] | None
    """The last look's finished wrong move and since when (:meth:`StaleReads._unexplained_for`)."""
    decision: Decision = _NOT_YET
    out: tuple[Outcome[Any], ...] = ()
    """Outcomes of this look so far (a question cleared), before the answer."""

    @property
    def verdict(self) -> Verdict:
        return self.decision.verdict


#: A rule's answer: a look to pass on, or this look's outcomes.
Answer = Look | list[Outcome[Any]]


@dataclass(frozen=True)
class Rule:
    """A named rule and what it states (one line)."""

    name: str
    statement: str
    apply: Callable[[Rules[Any, Any], Look], Answer]


class Rules(FollowerCore[S, M]):
    """The rules in order: an open question, a follow-up being tidied, stale reads, a veto,
    the held moves, then the verdict on the picture."""

    def _step(
        self, observation: Observation, key: ViewKey, quiet: float, now: float
    ) -> list[Outcome[S]]:
        # (each set again if this look still waits)
        self._due = self._due._replace(carried=None, open=None, contested=None)
        unexplained, self._unexplained = self._unexplained, None
        look = Look(observation, key, quiet, now, unexplained)
        for rule in RULES:
            answer = rule.apply(self, look)
            if isinstance(answer, Look):
                look = answer
            else:
                return [*look.out, *answer]
        raise AssertionError("the last rule always answers")  # pragma: no cover

    def _question(self, look: Look) -> Answer:
        asking = self._asking
        if asking is None:
            return look
        if (
            look.key == asking.key
            or (asking.kind is PromptKind.DECISION and look.key == self.position.here)
            or self._asked_on(look.observation, look.quiet)
        ):
            return []
        self._asking = None
        return replace(look, out=(*look.out, PromptCleared(look.now)))

    def _follow_up_first(self, look: Look) -> Answer:
        # Tidying up after the last move (clearing a village token by token) can pass
        # through pictures of new moves (one token left looks like a new totem).
        if (
            self._follow_up is not None
            and look.key != self.position.here
            and between(look.observation, self.position.here, self._follow_up)
        ):
            return self._guide(GuidanceKind.FOLLOW_UP, look.observation, look.key, look.now)
        return look

    def _classify(self, look: Look) -> Answer:
        return replace(look, decision=self.position.classify(look.observation))

    def _stale_reads(self, look: Look) -> Answer:
        if look.verdict not in _REREAD:
            return look
        elsewhere = self._read_elsewhere(look.observation, look.decision, look.now)
        if elsewhere is None:
            return look
        observation, decision, read = elsewhere
        return replace(
            look,
            observation=observation,
            decision=decision,
            key=observation.key(self.cells),
            quiet=min(look.quiet, look.now - read + EPSILON),
        )

    def _vetoes(self, look: Look) -> Answer:
        key, decision = look.key, look.decision
        if self._undone is not None:
            if key == self.position.here:
                self._undone = None  # put back (a pass leaves nothing to put back)
            elif key == self._undone:
                # A hand that lifts a piece to put it back and sets it down where it was is
                # not making the move again; once the board shows the position, it may.
                decision = Decision(Verdict.UNKNOWN)
        if self._declined is not None:
            if key == self.position.here:
                self._declined = None
            elif key == self._declined and decision.verdict is Verdict.TAKEBACK:
                decision = Decision(Verdict.UNKNOWN)  # the players said it is no takeback
        return replace(look, decision=decision)

    def _held_pauses(self, look: Look) -> Answer:
        changed = self.tracker.last_change
        if self._held and changed > self._held_rest:
            # The board changed: how long did it rest at each held move's picture before?
            if self._held_showing:
                self._held_pause = max(self._held_pause, changed - self._held_rest)
            paused = {
                o: p for o, p in self._held_paused.items() if any(o is h for h, _ in self._held)
            }
            for option, _ in self._held[1:]:  # (the moves held after it: _went_on)
                if option.placement == self._held_key:
                    paused[option] = max(paused.get(option, 0.0), changed - self._held_rest)
            self._held_paused = paused
            self._held_rest = changed
        self._held_showing = bool(self._held) and look.key == self._held[0][0].placement
        self._held_key = look.key
        return look

    def _split_rule(self, look: Look) -> Answer:
        split = self._split(look.decision, look.observation)
        if split is None:
            return look
        if look.quiet < self.waits.settle:
            return []
        self._asking = Asking(PromptKind.AMBIGUOUS, look.key, (*look.decision.options, split))
        return [self._prompt(look.now)]

    def _strayed_rule(self, look: Look) -> Answer:
        if not self._strayed(look.decision, look.observation):
            return look
        waiting = Verdict.IN_PROGRESS if look.verdict is Verdict.SETTLING else Verdict.UNKNOWN
        chained = self._after_held(look.observation, waiting, look.quiet, look.now)
        if chained:
            self._held = ()
        return chained or []  # (taken, or waiting as the held moves wait)

    def _after_held_rule(self, look: Look) -> Answer:
        if look.verdict is Verdict.SETTLING:
            return look
        chained = self._after_held(look.observation, look.verdict, look.quiet, look.now)
        if chained or (
            look.verdict is Verdict.UNCHANGED
            and not (self._held and self._still_held(look.observation))
        ):
            # Taken, or the board is back as it was (unless the next player's hand is on its
            # way through the old picture: its first swap undoes the held one's).
            self._held = ()
        return look if chained is None else chained  # (none yet: removals in a row, held)

    def _unchanged(self, look: Look) -> Answer:
        if look.verdict is not Verdict.UNCHANGED:
            return look
        wrong = self._wrong_elsewhere(look.observation, look.unexplained, look.now)
        if wrong is not None:
            return wrong
        tidied = self._follow_up is not None
        self._follow_up = None
        self._guide_now = False
        if (self._shown is not None or tidied) and not look.observation.unknown:
            # (also when a follow-up was done before it was shown: the station keeps a note
            # of it, so a restart knows the tidying is over)
            self._shown = None
            return [InSync(look.now)]
        if look.observation.unknown:
            return self._guide(GuidanceKind.MISMATCH, look.observation, look.key, look.now)
        return []

    def _move(self, look: Look) -> Answer:
        if look.verdict is not Verdict.MOVE:
            return look
        option = look.decision.options[0]
        if not self._may_hover(option, self.position.here):
            return self._accept(option, look.now, look.quiet, Acceptance.AT_ONCE)
        if look.quiet >= self.waits.settle_min and not self._carried_past(option, look.now):
            return self._accept(option, look.now, look.quiet, Acceptance.RESTED)
        # A piece set on a stack: held at once like a move that waits to rest, so the next
        # player's move from it takes it (a stack's reader may show it a cycle late).
        self._hold(option, look.observation)
        return []

    def _settling(self, look: Look) -> Answer:
        if look.verdict is not Verdict.SETTLING:
            return look
        option = look.decision.options[0]
        if self._rested(option, look.observation, look.quiet) and not self._carried_past(
            option, look.now
        ):
            return self._accept(option, look.now, look.quiet, Acceptance.SETTLED)
        if look.quiet >= self.waits.settle:
            self._hold(option, look.observation)
        return []

    def _ambiguous(self, look: Look) -> Answer:
        if look.verdict is not Verdict.AMBIGUOUS:
            return look
        if look.quiet < self.waits.settle:
            return []
        self._asking = Asking(PromptKind.AMBIGUOUS, look.key, look.decision.options)
        return [self._prompt(look.now)]

    def _takeback(self, look: Look) -> Answer:
        if look.verdict is not Verdict.TAKEBACK:
            return look
        undone = self._came_back_undo(look.observation, look.quiet, look.now)
        if undone:
            return undone
        if look.quiet < self.waits.settle:
            return []
        self._asking = Asking(PromptKind.TAKEBACK, look.key, plies=look.decision.plies)
        return [self._prompt(look.now)]

    def _revise_rule(self, look: Look) -> Answer:
        if look.verdict is not Verdict.UNKNOWN:
            return look
        return self._revise(look.observation, look.quiet, look.now) or look

    def _tidy(self, look: Look) -> Answer:
        for untidy, tidy in self.position.tidy.items():  # a fight in the middle of a turn
            if between(look.observation, tidy, untidy):
                return self._guide(
                    GuidanceKind.FOLLOW_UP, look.observation, look.key, look.now, dict(tidy)
                )
        return look

    def _mismatch(self, look: Look) -> Answer:
        waited = self.waits.grace * (2 if look.verdict is Verdict.IN_PROGRESS else 1)
        quiet = look.quiet
        if (
            look.verdict is Verdict.UNKNOWN
            and look.observation.complete
            and all_on_board(self.position.here, look.observation, self._presence_pieces)
        ):
            waited = self.waits.settle_unexplained  # nothing in a hand: a finished wrong move
            quiet = self._unexplained_for(
                look.unexplained, look.key, look.now - look.quiet + EPSILON, look.now
            )
        if quiet >= waited or self._guide_now:
            return self._guide(GuidanceKind.MISMATCH, look.observation, look.key, look.now)
        return []


#: The rules, in the order one look tries them.
RULES: tuple[Rule, ...] = (
    Rule(
        "question",
        "an open question stands while the picture is its own or a move after "
        "one of its options; otherwise it is cleared",
        Rules._question,
    ),
    Rule(
        "follow-up first",
        "while the last move's follow-up is being tidied, a picture "
        "between the move and the position is guidance, not a move",
        Rules._follow_up_first,
    ),
    Rule("classify", "the position's verdict on the picture", Rules._classify),
    Rule(
        "stale reads",
        "a tag read on two closed cells counts where it was read last when "
        "that explains more; quiet then counts from that read",
        Rules._stale_reads,
    ),
    Rule(
        "vetoes",
        "the move just undone by BACK, and a picture declined as a takeback, are no "
        "move until the board shows the position",
        Rules._vetoes,
    ),
    Rule(
        "held pauses", "how long the board rested at each held move's picture", Rules._held_pauses
    ),
    Rule(
        "split",
        "a picture that is a longer move and also the held move then the next "
        "player's is asked after settle",
        Rules._split_rule,
    ),
    Rule(
        "strayed",
        "a move of the position that the held moves with the next player's "
        "explain better takes those",
        Rules._strayed_rule,
    ),
    Rule(
        "after held",
        "a move from the position after the held moves takes them, in order",
        Rules._after_held_rule,
    ),
    Rule(
        "unchanged",
        "the position: in sync, unless a far read shows a finished wrong move",
        Rules._unchanged,
    ),
    Rule(
        "move",
        "a clear move is taken at once, or after settle_min when a hover could fake "
        "it; otherwise held",
        Rules._move,
    ),
    Rule(
        "settling",
        "an incomplete or extendable move is taken once rested, held after settle",
        Rules._settling,
    ),
    Rule("ambiguous", "look-alike moves are asked about after settle", Rules._ambiguous),
    Rule(
        "takeback",
        "a removal's piece back undoes it; an earlier position is asked about after settle",
        Rules._takeback,
    ),
    Rule(
        "revise",
        "an unexplained picture that is another result of the position before the "
        "last move revises it within its window",
        Rules._revise_rule,
    ),
    Rule("tidy", "a fight in the middle of a turn shows its follow-up", Rules._tidy),
    Rule(
        "mismatch",
        "an unexplained picture is shown after grace (twice on the way to a "
        "move), a finished wrong move after settle_unexplained",
        Rules._mismatch,
    ),
)
