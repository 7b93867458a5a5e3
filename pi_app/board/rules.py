"""The order in which the follower's rules are tried on one look at the board.

:meth:`Rules._step` is the follower's reducer body: given the picture now, how long the board
has been quiet and the time, it tries the rules in a fixed order (``docs/waits.md``, "Rules",
lists them with one line each) and returns the outcomes. Each rule's own logic lives in the
part it belongs to (:mod:`.asking`, :mod:`.held`, :mod:`.stale`, :mod:`.revise`).
"""

from __future__ import annotations

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
from pi_app.board.pictures import (
    EPSILON,
    all_on_board,
)
from pi_app.board.tracker import Observation, ViewKey
from pi_app.games.base import M, S


class Rules(FollowerCore[S, M]):
    """The rules in order: an open question, a follow-up being tidied, stale reads, a veto,
    the held moves, then the verdict on the picture."""

    def _step(
        self, observation: Observation, key: ViewKey, quiet: float, now: float
    ) -> list[Outcome[S]]:
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
        if (
            self._follow_up is not None
            and key != self.position.here
            and between(observation, self.position.here, self._follow_up)
        ):
            # Tidying up after the last move (clearing a village token by token) can pass
            # through pictures of new moves (one token left looks like a new totem): the
            # follow-up goes first, until the board shows the position.
            return out + self._guide(GuidanceKind.FOLLOW_UP, observation, key, now)
        decision = self.position.classify(observation)
        if decision.verdict in (
            Verdict.UNKNOWN,
            Verdict.IN_PROGRESS,
            Verdict.UNCHANGED,
            Verdict.TAKEBACK,
        ):
            elsewhere = self._read_elsewhere(observation, decision, now)
            if elsewhere is not None:
                observation, decision, read = elsewhere
                key = observation.key(self.cells)
                quiet = min(quiet, now - read + EPSILON)
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
                self._held_pause = max(self._held_pause, self.tracker.last_change - self._held_rest)
            paused = {
                o: p for o, p in self._held_paused.items() if any(o is h for h, _ in self._held)
            }
            for option, _ in self._held[1:]:  # (the moves held after it: _went_on)
                if option.placement == self._held_key:
                    paused[option] = max(
                        paused.get(option, 0.0), self.tracker.last_change - self._held_rest
                    )
            self._held_paused = paused
            self._held_rest = self.tracker.last_change
        self._held_showing = bool(self._held) and key == self._held[0][0].placement
        self._held_key = key
        split = self._split(decision, observation)
        if split is not None:
            if quiet >= self.waits.settle:
                self._asking = Asking(PromptKind.AMBIGUOUS, key, (*decision.options, split))
                out.append(self._prompt(now))
            return out
        if self._strayed(decision, observation):
            chained = self._after_held(
                observation,
                Verdict.IN_PROGRESS if verdict is Verdict.SETTLING else Verdict.UNKNOWN,
                quiet,
                now,
            )
            if chained:
                self._held = ()
            return out + (chained or [])  # (taken, or waiting as the held moves wait)
        if verdict is not Verdict.SETTLING:
            chained = self._after_held(observation, verdict, quiet, now)
            if chained or (
                verdict is Verdict.UNCHANGED and not (self._held and self._still_held(observation))
            ):
                # Taken, or the board is back as it was: no move now. (Unless the held move
                # rested long enough and the next player's hand is on its way through the
                # old picture: its first swap undoes the held one's.)
                self._held = ()
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
            if self._rested(option, observation, quiet) and not self._carried_past(option, now):
                return out + self._accept(option, now, quiet, Acceptance.SETTLED)
            if quiet >= self.waits.settle:
                self._hold(option, observation)
            return out
        if verdict is Verdict.AMBIGUOUS:
            if quiet >= self.waits.settle:
                self._asking = Asking(PromptKind.AMBIGUOUS, key, decision.options)
                out.append(self._prompt(now))
            return out
        if verdict is Verdict.TAKEBACK:
            undone = self._came_back_undo(observation, quiet, now)
            if undone:
                return out + undone
            if quiet >= self.waits.settle:
                self._asking = Asking(PromptKind.TAKEBACK, key, plies=decision.plies)
                out.append(self._prompt(now))
            return out
        revised = self._revise(observation, quiet, now) if verdict is Verdict.UNKNOWN else []
        if revised:
            return out + revised
        for untidy, tidy in self.position.tidy.items():  # a fight in the middle of a turn
            if between(observation, tidy, untidy):
                return out + self._guide(GuidanceKind.FOLLOW_UP, observation, key, now, dict(tidy))
        waited = self.waits.grace * (2 if verdict is Verdict.IN_PROGRESS else 1)
        if (
            verdict is Verdict.UNKNOWN
            and observation.complete
            and all_on_board(self.position.here, observation, self._presence_pieces)
        ):
            waited = self.waits.settle_unexplained  # nothing in a hand: a finished wrong move
            quiet = self._unexplained_for(unexplained, key, now - quiet + EPSILON, now)
        if quiet >= waited or self._guide_now:
            out += self._guide(GuidanceKind.MISMATCH, observation, key, now)
        return out
