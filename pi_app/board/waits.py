"""The follower's waits, in one frozen record: what each one waits for is ``docs/waits.md``.

Every wait the follower keeps is a field of :class:`Waits`, built once from the configuration
(the station's ``config.Timing`` names five of them; the rest are the follower's own figures)
and paced by the board's measured scan cycle with :meth:`Waits.paced`: a new record, never an
edit of the old one. Rules read a wait from the record in force; nothing sets a wait as a side
effect. The figures are floors: on a slow board a wait spans so many full scan cycles instead
(:data:`pi_app.board.pacing.CYCLES` says which and why).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

from pi_app.board.pacing import paced

#: The tracker's own wait for a tag a scan missed on a closed cell (``Tracker.miss_grace``).
MISS_GRACE = 0.6


@dataclass(frozen=True)
class Waits:
    """The waits of one follower, in seconds (see ``docs/waits.md`` for each one's situation,
    the moment it counts from, why and the evidence)."""

    settle_min: float = 0.0
    """A clear move onto a stack (a piece carried over it reads the same) rests this long."""
    settle: float = 0.25
    """An incomplete or ambiguous picture rests this long before it is taken or asked."""
    settle_long: float = 1.0
    """A picture that is also the middle of another legal move rests this long."""
    settle_next: float = 0.5
    """The soonest the next player starts after a move came to rest."""
    settle_removal: float = 1.5
    """A picture that only has pieces gone (a Toast; a piece held in a hand) rests this long."""
    grace: float = 1.2
    """An unexplained picture lasts this long before it is shown as a mismatch."""
    revise_window: float = 2.5
    """A removal the board took stays revisable this long."""
    revise_placed: float = 1.2
    """A move that put a piece somewhere stays revisable this long."""
    settle_unexplained: float = 0.5
    """A finished wrong move (every piece on the board) is shown after this rest."""
    miss_grace: float = MISS_GRACE
    """A tag a scan missed on a closed cell is kept this long (the tracker's)."""

    def paced(self, period: float) -> Waits:
        """These waits on a board that scans in ``period`` seconds: each at least its cycles
        (:func:`pi_app.board.pacing.paced`); a wait switched off stays off."""
        return Waits(**paced(self.as_dict(), period))

    def as_dict(self) -> dict[str, float]:
        return asdict(self)

    def with_values(self, **values: float) -> Waits:
        """These waits with some replaced (a configuration's figures)."""
        return replace(self, **values)


#: The names of the waits, in the record's order.
NAMES = tuple(f.name for f in fields(Waits))
