"""The follower's waits on the board's real pace: at least the configured seconds, and at least
so many full scan cycles of the sensor board.

Why the scan cycle: the sensors do not see a change when it happens but when the firmware next
scans that cell's reader. On a Topple board that is within 0.1 s; on a TacTiki board (25
PN5180 readers, about 1 s per full cycle, ``firmware/README.md``, "Scan cycle") a piece set
down on a stack is read up to a second later, and a tag taken off a stack is reported gone
only after three clean misses (three cycles). A wait that stands for "until the readers have
looked again" and is tuned at one pace means something else at another. So each such wait
spans a number of cycles (:data:`CYCLES`, the reason beside each); the configured figure stays
the floor (it is what players' hands need on a fast board). The waits that stand for the
players' hands are not stretched (the reason and the measurement are below the table).

The cycle is the one the firmware measures and reports (``ScanCycle``, from SCAN_TIMES), the
board file's ``scan_period_s`` until the first report. A wait switched off (0, as Topple's
``settle_min``: no piece can be carried over a stack there) stays off.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Full scan cycles each wait spans at least, and why. A wait not named here keeps its figure.
CYCLES: Mapping[str, float] = {
    # A piece carried over a stack is read there; if it goes on to another cell, it is read
    # there at that reader's turn: half a cycle later on average. Later than that the
    # revision below corrects it.
    "settle_min": 0.5,
    # A correction (the piece put back, the move finished elsewhere) is read a cycle after it
    # is made, at worst: ``revise_window`` spans that and more. A move that
    # put a piece on a stack is taken half a cycle (``settle_min``) after the stack's reader
    # read it; a hand that goes on from there sets the piece down a moment later, and its new
    # cell is read up to a cycle after that: two cycles in all (the long soak's TacTiki game
    # 2000088, 1.04 s scan: 'd2-c2 c2-c1' taken for 'd2-c2 c2-b2', the right picture 1.3 s
    # after, just past 1.25 cycles). A piece carried over a stack onto a cell that already
    # holds one (no contact changes) is read there half a cycle after the move was taken, but
    # the tracker keeps it on the stack until the stack's reader has missed it three times:
    # the right picture comes three cycles after the stack's read (game 3000142, 1.04 s scan:
    # 'a1-a2 a2-b2' taken for a1-a3, right 2.7 s after the stack's read, past two cycles).
    # Only a move the board may extend or a piece coming back is revised, so the longer
    # window does not take the next player's move for this one. At the board files' slowest
    # cycles (firmware/README.md, "Scan cycle": empty cells are left out, so the cycle grows
    # with the pieces on the board) it stays below the configured 1.2 s on Topple (0.12 s)
    # and Manami (0.35 s); on TacTiki it is 1.1-1.8 s (0.34 s at the start, 0.55 s full).
    "revise_placed": 3.25,
    "revise_window": 2.5,
    # A tag missed by a scan on a closed cell comes back at its reader's next turn, a cycle
    # later (the tracker's ``miss_grace``).
    "miss_grace": 1.0,
}
# Not stretched: ``settle``, ``settle_long``, ``settle_removal``, ``settle_unexplained`` and
# ``grace`` count from the board's last change, which the tracker hears only once the readers
# have seen it, and players at real pace reach for the next piece 0.5 s after a move rests: a
# move that must wait a whole cycle then is still waiting when its picture changes again. The
# accuracy bench measured it on the TacTiki board (1.04 s cycle, varied players, 400 moves):
# ``settle`` and ``settle_unexplained`` stretched to 1.25 cycles missed 10 of 579 moves,
# ``grace`` to 1.25 cycles 6 of 463, against none with them as configured.

#: The longest cycle believed (seconds): a board that reports more is stuck or faulty, and its
#: figure must not freeze the station for minutes. The board file's limit is the same.
MAX_PERIOD = 5.0


def paced(configured: Mapping[str, float], period: float) -> dict[str, float]:
    """Each wait of ``configured`` on a board that scans in ``period`` seconds: the larger of
    the configured figure and its cycles; 0 stays 0, a wait :data:`CYCLES` does not name keeps
    its figure."""
    period = min(max(period, 0.0), MAX_PERIOD)
    return {name: value if value <= 0 else max(value, CYCLES.get(name, 0.0) * period)
            for name, value in configured.items()}
