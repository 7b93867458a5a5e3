"""Stale reads: every rule that decides whether a picture can be trusted yet.

Part of :class:`pi_app.board.follower.Follower` (a mixin over its state, :mod:`pi_app.board.core`);
the waits it uses are ``docs/waits.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from pi_app.board.core import FollowerCore
from pi_app.board.inference import Decision, Option, Verdict
from pi_app.board.outcomes import (
    GuidanceKind,
    Outcome,
)
from pi_app.board.pictures import (
    EPSILON,
    all_on_board,
    moved_reads,
    only_additions,
)
from pi_app.board.tracker import ABSENT_MISSES, Observation, ViewKey
from pi_app.games.base import M, S


class StaleReads(FollowerCore[S, M]):
    """A reader reports a tag lifted off a stack for more scans, a neighbour reads a piece
    beside it, a piece carried over a stack reads like one set on it: these rules say when the
    picture read from such reads may be judged, and from when."""

    def _unexplained_for(
        self, last: tuple[ViewKey, float] | None, key: ViewKey, changed: float, now: float
    ) -> float:
        """How long the board has shown a finished wrong move, ``key`` being one (the board
        last changed at ``changed``): since the last such picture began, ``last``, when this
        one is it with pieces gone and none arrived. What ``settle_unexplained`` waits out is
        a piece on its way (slid across a neighbour): it arrives somewhere. A piece that only
        drops out of the picture is an old read let go: a reader reports a tag lifted off a
        stack for ``ABSENT_MISSES`` more scans (case 5, ``docs/waits.md``)."""
        since = changed
        if last is not None and only_additions(key, last[0]):
            since = min(since, last[1])
        self._unexplained = (key, since)
        return now - since + EPSILON

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
            if (
                after != before
                and Counter(after) - Counter(before)
                and (before or self.geometry.cell(name).presence is None)
            ):
                return True
        return False

    def _read_elsewhere(
        self, observation: Observation, decision: Decision, now: float
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
        shown and the players to undo a legal turn (case 6, ``docs/waits.md``); once the
        turn is taken, the same stale read showed it as wrong. A neighbour's read can also
        make a half-made turn look whole, so a move read this way waits as long as a hand
        pauses mid-move (``settle_long``) from the read and the board's last change, is
        revisable as a move that may go on (the hand's next step shows which it was), and is
        never read from a tag read before the position began (a neighbour's read that stays
        reported)."""
        self._due = self._due._replace(elsewhere=None)
        # A picture that is the position, or the one before, is read otherwise only for a
        # piece just moved, and only on a board whose old reader would go on reporting it
        # for more than a cycle after such a move could be taken: elsewhere the picture comes
        # right about as soon, and a neighbour's read of a token like the ones beside it
        # made a Manami sowing out of nothing (case 7, ``docs/waits.md``).
        settled = decision.verdict in (Verdict.UNCHANGED, Verdict.TAKEBACK)
        if settled and self.waits.settle_long >= (ABSENT_MISSES - 1) * self.tracker.scan_period:
            return None
        contested = list(self.tracker.contested(now, recent=settled).items())
        if not contested:
            return None
        # A read that went stale changes the picture read from the others with no event: the
        # follower looks again then, and that picture shows from then on, not from the reads.
        stale, contested_due = self.tracker.contested_window(now, recent=settled)
        self._due = self._due._replace(contested=contested_due)
        groups = [contested] + ([[c] for c in contested] if len(contested) > 1 else [])
        if settled:  # one piece moved, not two neighbours' reads that happen to make a turn
            groups = [g for g in groups if len(g) == 1]
        best: tuple[int, Observation, Decision, float] | None = None
        for group in groups:
            picture = moved_reads(observation, group, self.registry)
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
            elif found.verdict in (Verdict.MOVE, Verdict.SETTLING) and self._news(
                group, found.options[0]
            ):
                rank = 1
                found = Decision(
                    Verdict.SETTLING, tuple(replace(o, extendable=True) for o in found.options)
                )
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
            due = max(read, self.tracker.last_change) + self._rest_needed(found.options[0])
            self._due = self._due._replace(elsewhere=due)
        return picture, found, read

    def _wrong_elsewhere(
        self, observation: Observation, unexplained: tuple[ViewKey, float] | None, now: float
    ) -> list[Outcome[S]] | None:
        """The picture is the position, but a tag is read, since the position began, on a
        closed cell that is no neighbour of the one it lies on (so no neighbour's read), and
        with it there the picture is a finished wrong move (every piece on the board, nothing
        explains it): a piece moved from a stack onto a far stack, no contact changed, its
        old reader reporting it for ``ABSENT_MISSES`` more scans. That wrong move is shown
        ``settle_unexplained`` after the read (:meth:`_unexplained_for`), as if the old reader
        had let it go then, and the wait goes on when it does (the guidance, in a list; an
        empty list while it waits); None when no read shows one.
        (case 8, ``docs/waits.md``)"""
        here = self.position.here
        for uid, (home, other, at) in self.tracker.contested(now, recent=True).items():
            if at <= self._moved_at or self.geometry.near(home, other):
                continue
            picture = moved_reads(observation, [(uid, (home, other, at))], self.registry)
            if (
                picture is None
                or not picture.complete
                or self.position.classify(picture).verdict is not Verdict.UNKNOWN
                or not all_on_board(here, picture, self._presence_pieces)
            ):
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
        scans (case 9, ``docs/waits.md``)."""
        here, placement = dict(self.position.here), dict(option.placement)
        for uid, (_, other, at) in group:
            taken = self.tracker.taken_at(uid)
            if taken is not None and at < taken:
                return False
            piece = self.registry.lookup(uid)
            if at <= self._moved_at and placement[other].count(piece) > here[other].count(piece):
                return False
        return True

    def _open_wait(self) -> float:
        """The longest a picture waits while a cell shows pieces its contact says are not
        there (:meth:`_rested`): a cycle more than a reader takes to report a tag gone."""
        return (ABSENT_MISSES + 1) * self.tracker.scan_period

    def _rested(self, option: Option, observation: Observation, quiet: float) -> bool:
        """Has the board rested long enough to take ``option``'s (incomplete) picture? As
        long as :meth:`_rest_needed` says, and, while a cell shows pieces though its contact
        is open (believed so, not closing), until its reader lets them go (at most
        :meth:`_open_wait`): a piece lifted off it that its reader still reports, or one read
        while carried above it. Either way the picture is stale: a hand has it. (case 10,
        ``docs/waits.md``)
        A contact that stays open under a piece lying there only delays the move."""
        if quiet < self._rest_needed(option):
            return False
        if quiet >= self._open_wait():
            return True
        tracker = self.tracker
        if any(
            observation.pieces.get(name)
            and self.geometry.cell(name).presence is not None
            and not tracker.presence(name)
            and not tracker.closing(name)
            for name in observation.inconsistent
        ):
            self._due = self._due._replace(open=tracker.last_change + self._open_wait())
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
        stack). (case 11, ``docs/waits.md``)"""
        here, placement = dict(self.position.here), dict(option.placement)
        window = (ABSENT_MISSES + 1) * self.tracker.scan_period
        last: float | None = None
        for uid, (home, _, at) in self.tracker.contested(now, recent=True).items():
            piece = self.registry.lookup(uid)
            since = self.tracker.read_since(home, uid)
            if (
                piece is None
                or since is None
                or at <= since
                or not (here.get(home) or self.geometry.cell(home).presence is None)
            ):
                continue
            if placement.get(home, ()).count(piece) > here.get(home, ()).count(piece):
                last = at if last is None else max(last, at)
        if last is None:
            return False
        self._due = self._due._replace(carried=last + window + EPSILON)
        return True
