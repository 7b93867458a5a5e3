"""Held moves: a move whose picture rested but must rest longer, and the moves the board shows
after it.

Part of :class:`pi_app.board.follower.Follower` (a mixin over its state, :mod:`pi_app.board.core`);
the waits it uses are ``docs/waits.md``.
"""

from __future__ import annotations

from pi_app.board.core import FollowerCore, Held, Through
from pi_app.board.inference import Decision, Option, Position, Verdict
from pi_app.board.outcomes import (
    Acceptance,
    Outcome,
)
from pi_app.board.pictures import (
    FORCED_DEPTH,
    TAKEBACK_DEPTH,
    all_on_board,
    forced_option,
)
from pi_app.board.tracker import Observation
from pi_app.games.base import M, S


class HeldRules(FollowerCore[S, M]):
    """A held move is taken when the next player goes on from it, asked about when the sensors
    cannot tell whose hand moved, and dropped when the board goes back."""

    def _hold(self, option: Option, observation: Observation) -> None:
        """``option``'s picture held for ``settle`` but must rest longer: hold it (``_held``),
        so that a move of the next player from it takes it (:meth:`_after_held`)."""
        if not self._held or (self._held[0][0] is not option and not self._still_held(observation)):
            if (
                self._held
                and not self._held[0][0].lifts_only
                and self._held_pause >= self.waits.settle_next
            ):
                # It may have been a move, and the next player's hand makes this
                # picture on its way: it stays a candidate for the question.
                self._candidate = (self.state, self._held[0][0], self._held_after(0))
            self._held = (Held(option),)
            self._held_pause = 0.0
            self._held_rest, self._held_showing = self.tracker.last_change, True
        self._held = self._held[:1]  # back to its picture: what was held after it was not

    def _after_held(
        self, observation: Observation, verdict: Verdict, quiet: float, now: float
    ) -> list[Outcome[S]] | None:
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
            if decision.verdict not in (Verdict.UNKNOWN, Verdict.TAKEBACK) and not self._went_on(
                index, decision, observation
            ):
                if self._in_hand_after(index + 1, observation, quiet):
                    return []
                self._held = self._held[: index + 1]
                break
        last = self._held[-1][0]
        settling = (
            decision.verdict is Verdict.SETTLING
            and quiet >= self.waits.settle
            and (
                verdict is Verdict.IN_PROGRESS
                or (
                    decision.options[0].lifts_only
                    and (
                        self._held_pause >= self.waits.settle_next
                        if len(self._held) == 1
                        else last.lifts_only
                        or self._held_paused.get(last, 0.0) >= self.waits.settle_next
                    )
                )
            )
        )
        rested = (
            decision.verdict is Verdict.MOVE
            and verdict is Verdict.IN_PROGRESS
            and quiet >= self.waits.settle_next
            and not last.lifts_only
        )
        if settling or rested:
            # One more removal, or a move that may be the held one's hand still going on (on
            # the way to a longer move of the position): held too, until it is proven. (Not
            # a removal the same hand made: lifted sooner than the next player starts, or
            # after such a move, unless that move rested as long as the next player takes to
            # start: case 1, ``docs/waits.md``. A
            # hand in the middle of a Topple holds tikis.) A clear move after them that
            # rested as long as the next player takes to start is held too, so that where the
            # board goes next is judged with it (:meth:`_strayed`).
            self._held = (*self._held, Held(decision.options[0]))
            return []
        if decision.verdict is Verdict.UNCHANGED and len(self._held) > 1:
            if quiet < self._rest_needed(self._held[-1][0]) or (
                verdict is Verdict.IN_PROGRESS and quiet < self.waits.settle_long
            ):
                return []  # (more pieces gone is no proof yet: a hand may hold them)
        elif verdict is Verdict.IN_PROGRESS and quiet < self.waits.settle_long:
            return None
        elif decision.verdict is Verdict.MOVE:
            if quiet < self.waits.settle_min and self._may_hover(decision.options[0], after.here):
                return None
        elif (
            decision.verdict not in (Verdict.SETTLING, Verdict.AMBIGUOUS)
            or quiet < self.waits.settle
            or any(o.lifts_only for o in decision.options)
        ):
            return None
        steps = [(option, self._held_through(i)) for i, (option, _) in enumerate(self._held)]
        out: list[Outcome[S]] = []
        for option, through in steps:
            out += self._accept(option, now, quiet, Acceptance.SETTLED)
            for forced in through.forced:  # (a pass the station takes by itself, in order)
                out += self._accept(forced, now, how=Acceptance.FORCED)
            self._position = through.position  # the next is judged from it (prepare() goes on)
        return out

    def _split(self, decision: Decision, observation: Observation) -> Option | None:
        """The held move, when the picture could be it followed by the next player's move as
        well as the longer move (or moves) ``decision`` names, or as no move at all (the next
        player's move put the board back as it was: one swap, and the next player swapped the
        same two tikis back): the held move's picture rested long enough (``settle_next``)
        for the next player to have started."""
        if decision.verdict not in (
            Verdict.MOVE,
            Verdict.SETTLING,
            Verdict.AMBIGUOUS,
            Verdict.UNCHANGED,
        ):
            return None
        candidates = (
            [self._candidate[1:]]
            if self._candidate is not None and self._candidate[0] is self.state
            else []
        )  # (back after a removal undone)
        if self._held and self._held_pause >= self.waits.settle_next:
            candidates.insert(0, (self._held[0][0], self._held_after(0)))
        for held, after in candidates:
            if held.lifts_only or any(o.state == held.state for o in decision.options):
                continue
            if after.classify(observation).verdict in (
                Verdict.MOVE,
                Verdict.SETTLING,
                Verdict.AMBIGUOUS,
            ):
                return held
        return None

    def _strayed(self, decision: Decision, observation: Observation) -> bool:
        """Is the position's own move that ``decision`` names no longer the likely one, though
        the picture is it? When a held move's picture changed a cell that move leaves as it
        was (a hand making it would not have set a piece there and let go), and the held moves
        with the next players' explain the picture too: they are taken instead, in order.
        (case 2, ``docs/waits.md``) A held move on the way to it
        (an Up 1, then the same hand's Up 2), or one that with a single next move makes the
        picture, is asked about first (:meth:`_split`)."""
        if not self._held or decision.verdict not in (Verdict.MOVE, Verdict.SETTLING):
            return False
        target = decision.options[0].placement
        if all(
            all(
                held == here or moved != here
                for (_, held), (_, here), (_, moved) in zip(
                    option.placement, self.position.here, target, strict=True
                )
            )
            for option, _ in self._held
        ):
            return False
        for index in range(len(self._held)):
            chain = self._held_after(index).classify(observation)
            if chain.verdict in (Verdict.MOVE, Verdict.SETTLING, Verdict.AMBIGUOUS) and not any(
                o.lifts_only for o in chain.options
            ):
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
            Verdict.MOVE,
            Verdict.SETTLING,
            Verdict.AMBIGUOUS,
            Verdict.IN_PROGRESS,
            Verdict.TAKEBACK,
        )  # (the board as before it: the next hand swapped it back)

    def _in_hand_after(self, index: int, observation: Observation, quiet: float) -> bool:
        """Is the next player's hand, for a moment, in the middle of a move from the position
        after the ``index``-th held move, one that rested as long as the next player takes to
        start? Then a picture an earlier held move explains does not drop it yet: the hand
        holds a piece (the picture is incomplete), and a swap made in an order the position
        does not list as on the way passes through pictures only the earlier one explains.
        (case 3, ``docs/waits.md``)"""
        if index >= len(self._held) or quiet >= self.waits.grace:
            return False
        held = self._held[index][0]
        if held.lifts_only or self._held_paused.get(held, 0.0) < self.waits.settle_next:
            return False
        return not all_on_board(self._held_after(index).here, observation, self._presence_pieces)

    def _went_on(self, index: int, decision: Decision, observation: Observation) -> bool:
        """Was the ``index``-th held move, held after the first because the hand might be
        going on, that hand going on? Yes when the board left its picture sooner than the next
        player starts (``settle_next``) and a held move before it explains the picture now:
        then the picture is that one's longer move, not this one and the next player's.
        (case 4, ``docs/waits.md``)"""
        held = self._held[index][0]
        pause = self._held_paused.get(held)
        if (
            index == 0
            or held.lifts_only
            or pause is None
            or pause >= self.waits.settle_next
            or decision.verdict is Verdict.UNCHANGED
        ):
            return False
        return any(
            self._held_after(i).classify(observation).verdict
            not in (Verdict.UNKNOWN, Verdict.TAKEBACK)
            for i in range(index)
        )

    def _held_after(self, index: int) -> Position:
        """The position the next move is made from after the ``index``-th held move: after
        it and any forced moves that follow it (:meth:`_held_through`)."""
        return self._held_through(index).position

    def _held_through(self, index: int) -> Through:
        """Where the ``index``-th held move leads (built on first use): the position after
        it, and on through the moves the follower would take by itself as the only ones
        there are (:func:`forced_option`: a pass). The board shows no such move, so the move it
        shows next is made from the position after them. (Varied-pace TacTiki table
        1000025: a turn held, the opponent left only a pass, and the same player's next turn
        judged from the position before the pass: unexplained, a mismatch shown, both turns
        missed.)"""
        option, through = self._held[index]
        if through is None:
            passed: list[S] = [self.state]  # the states the chain went through, oldest first
            for i in range(index):
                passed += [self._held[i][0].state, *(o.state for o in self._held_through(i).forced)]
            earlier = [*reversed(passed), *(s for s, _ in reversed(self.history))]
            position = Position.build(self.game, option.state, self.cells, earlier[:TAKEBACK_DEPTH])
            forced: list[Option] = []
            for _ in range(FORCED_DEPTH):
                move = forced_option(position)
                if move is None:
                    break
                forced.append(move)
                earlier.insert(0, position.state)
                position = Position.build(
                    self.game, move.state, self.cells, earlier[:TAKEBACK_DEPTH]
                )
            through = Through(position, tuple(forced))
            self._held = (*self._held[:index], Held(option, through), *self._held[index + 1 :])
        return through

    def _rest_needed(self, option: Option) -> float:
        """How long the board must rest before ``option`` is accepted without asking."""
        if option.lifts_only:
            return self.waits.settle_removal
        waits = self.waits
        return max(waits.settle_min, waits.settle_long if option.extendable else waits.settle)
