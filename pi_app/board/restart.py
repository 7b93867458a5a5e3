"""Restarts and resets: a follower built again after the station restarted, or told to follow
another position.

Part of :class:`pi_app.board.follower.Follower` (a mixin over its state, :mod:`pi_app.board.core`);
the waits it uses are ``docs/waits.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pi_app.board.core import FollowerCore, Removal, Revisable
from pi_app.board.inference import Position
from pi_app.board.outcomes import (
    Acceptance,
)
from pi_app.board.pictures import (
    TAKEBACK_DEPTH,
    opened,
)
from pi_app.board.tracker import ViewKey, view_key
from pi_app.games.base import IllegalMove, M, S


class Restarts(FollowerCore[S, M]):
    """What a restarted follower restores from the store so the board reads as it did before the
    restart."""

    def _resumed_as_left(self, key: ViewKey, now: float) -> None:
        """After a restart that restored the last move (:meth:`resume_last_move` with its
        time), the first picture judged opens that move's revise window: then, when the
        hand may have gone on while the station was down, unless the picture is the board
        as the move left it (the position, or its placement before the follow-up). Then the
        window counts from the restart: the move was taken before the station went down, so
        at least that long ago, and a hand that goes on from that picture later is as late as
        one that goes on that long after the move without a restart. (case 17, ``docs/waits.md``)"""
        if self._previous is None or self._previous.since is not None or self._resumed_at is None:
            return
        as_left = key in (self.position.here, self._follow_up)
        self._previous = self._previous._replace(since=self._resumed_at if as_left else now)

    def reset(self, state: S, history: Sequence[tuple[S, str]] = ()) -> None:
        """Follow ``state`` from now on (a new round, a resumed game)."""
        self.history = list(history)
        self._moved_to(state)
        self._asking = None
        self._follow_up = self._pending_follow_up()
        self._previous = None
        self._removals = ()
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

    def resume_last_move(
        self, how: Acceptance | None, lifts_only: bool, now: float | None = None
    ) -> None:
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
        earlier = [s for s, _ in reversed(self.history[-TAKEBACK_DEPTH - 1 : -1])]
        previous = Position.build(self.game, before, self.cells, earlier)
        option = next(
            (o for options in previous.by_placement.values() for o in options if o.text == text),
            None,
        )
        if option is not None:
            self._previous = Revisable(
                previous, opened(replace(option, lifts_only=lifts_only), how), None
            )
            self._taken_at = -1e18
            self._resumed_at = now
            self._removals = (Removal(previous, self._previous.move),) if lifts_only else ()

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
        return (
            placement
            if placement != view_key(self.game.expected_view(self.state), self.cells)
            else None
        )
