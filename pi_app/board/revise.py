"""Accepting, taking back and revising moves: the only places the position and the history change.

Part of :class:`pi_app.board.follower.Follower` (a mixin over its state, :mod:`pi_app.board.core`);
the waits it uses are ``docs/waits.md``.
"""

from __future__ import annotations

from dataclasses import replace

from pi_app.board.core import FollowerCore, Removal, Revisable
from pi_app.board.inference import Option, Position, Verdict
from pi_app.board.outcomes import (
    Acceptance,
    MoveAccepted,
    MoveRevised,
    Outcome,
    TakenBack,
)
from pi_app.board.pictures import (
    TAKEBACK_DEPTH,
    came_back,
    only_additions,
    opened,
)
from pi_app.board.tracker import Observation, ViewKey
from pi_app.games.base import M, S


class Revisions(FollowerCore[S, M]):
    """A move the board alone decided stays revisable for a window: revised when the board shows
    it was the middle of another move, undone when a piece it took off comes back."""

    def _revise(self, observation: Observation, quiet: float, now: float) -> list[Outcome[S]]:
        """Replace the last move when the board, unexplained now, shows another legal result
        of the position before it (the last move was only the middle of that one)."""
        if self._previous is None:
            return []
        previous, accepted, when = self._previous
        if when is None:  # restored after a restart: the board gets its window from now
            when = now
            self._previous = Revisable(previous, accepted, when)
        undone = self._came_back_undo(observation, quiet, now)
        window = self.waits.revise_window if accepted.lifts_only else self.waits.revise_placed
        if not undone and now - when <= window and self._carried_on(accepted, observation):
            when = now
            self._previous = Revisable(previous, accepted, when)
        if undone or now - when > window:
            return undone
        decision = previous.classify(observation)
        if (
            decision.verdict is Verdict.AMBIGUOUS
            and quiet >= self.waits.settle
            and (accepted.extendable or accepted.lifts_only)
        ):
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
        if not (accepted.extendable or accepted.lifts_only) and not only_additions(
            accepted.placement, observation.key(self.cells)
        ):
            # A clear move is revised only when a piece comes back (it had been knocked off
            # for a moment), never because the next player's hands are half way.
            return []
        if decision.verdict is Verdict.SETTLING and not self._rested(option, observation, quiet):
            return []
        if (
            decision.verdict is Verdict.MOVE
            and quiet < self.waits.settle_min
            and self._may_hover(option, previous.here)
        ):
            return []  # a piece carried over a stack on its way: as for a move (_step)
        self.history.pop()
        self.history.append((previous.state, option.text))
        self._moved_to(option.state)
        # The revised move may itself be a moment of a longer one (a hand hovering over the
        # wrong field on its way): it stays revisable from the same position.
        self._previous = Revisable(
            previous,
            replace(
                option,
                lifts_only=option.lifts_only or accepted.lifts_only,
                extendable=option.extendable or accepted.extendable,
            ),
            when,
        )
        self._removals = (
            (Removal(previous, self._previous.move),) if self._previous.move.lifts_only else ()
        )
        self._follow_up = option.placement if option.has_follow_up else None
        return [MoveRevised(now, accepted.text, option.text, option.state)]

    def _lifted_again(self, previous: Position, accepted: Option, option: Option) -> bool:
        """Would ``option`` move a piece off a cell ``accepted`` set it on, a piece that has
        since been read on no cell at all before its new one read it? Then it was lifted off
        again, not carried over that cell: the next player's hand (or a correction, shown as a
        mismatch), not the middle of this move. A piece carried over a stack and set down
        beyond is read there while the stack's reader still reports it (for
        ``ABSENT_MISSES`` scans); one that rested on the stack and was taken up later shows a
        gap. (case 12, ``docs/waits.md``) Only a piece let go since the move was
        taken counts: a piece of the same kind lifted off that cell earlier is another one."""
        before, moved, instead = (
            dict(previous.here),
            dict(accepted.placement),
            dict(option.placement),
        )
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
        (case 13, ``docs/waits.md``). Once per move: a board that keeps changing is the next
        player's."""
        if not accepted.extendable or accepted.lifts_only or self._reopened is accepted:
            return False
        if only_additions(accepted.placement, observation.key(self.cells)):
            return False
        self._reopened = accepted
        return True

    def _came_back_undo(
        self, observation: Observation, quiet: float, now: float
    ) -> list[Outcome[S]]:
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
        for index, ((previous, _), after) in enumerate(zip(self._removals, afters, strict=True)):
            if came_back(previous.here, after, observation, now_here):
                plies = len(self._removals) - index
                kept = self._removals[:index]
                out = self._take_back(plies, now)
                if kept:  # the removals before it stand, and may still be undone in turn
                    self._previous, self._removals = Revisable(*kept[-1], now), kept
                return out
        return []

    def _accept(
        self, option: Option, now: float, quiet: float = 0.0, how: Acceptance = Acceptance.ASKED
    ) -> list[Outcome[S]]:
        player = self.game.to_move(self.state)
        # Only what the board alone decided may be revised by the board; a move the players
        # chose by button or card, or the only one there was, stands.
        self._previous = (
            Revisable(self.position, opened(option, how), now) if how.board_decided else None
        )
        self._taken_at = now
        if not option.lifts_only:
            self._candidate = None  # a move that puts a piece somewhere: that is over
        if not (how.board_decided and option.lifts_only):
            self._removals = ()
        elif self._removals and self._removals[-1].move.state is not self.state:
            # (a row is of moves one after another)
            self._removals = (Removal(self.position, option),)
        else:
            self._removals = (*self._removals, Removal(self.position, option))
        self.history.append((self.state, option.text))
        self._moved_to(option.state)
        self._follow_up = option.placement if option.has_follow_up else None
        self._undone = None
        return [MoveAccepted(now, option.text, player, option.state, quiet, how, option.lifts_only)]

    def _take_back(self, plies: int, now: float, left: ViewKey | None = None) -> list[Outcome[S]]:
        plies = min(plies, len(self.history))
        if plies == 0:
            return []
        state = self.history[-plies][0]
        del self.history[-plies:]
        self._moved_to(state)
        self._previous = None
        self._removals = ()
        self._guide_now = True
        self._follow_up = None
        self._undone = left
        return [TakenBack(now, plies, self.state, left)]

    def _build(self, state: S) -> Position:
        earlier = [s for s, _ in reversed(self.history[-TAKEBACK_DEPTH:])]
        return Position.build(self.game, state, self.cells, earlier)
