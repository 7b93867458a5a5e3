"""A tag a stack's reader misses and reads again, on the same cell, before ``miss_grace`` runs
out (issue 18, varied-pace TacTiki table 1000025): the tracker kept it in the picture all the
while, so neither the miss nor the re-read is a change of the board. Each read as news
restarted the board's quiet time (``Tracker.last_change``), and a turn onto a stack, which
waits ``settle_min`` from its picture, waited past the next player's first lift."""

from __future__ import annotations

from test_neighbour_tags import Board


def stacks() -> tuple[Board, str, str]:
    """A board with C3 and C4 on a5 and T3 on a1, every contact closed; the UIDs of C4 (the
    one a5's reader will miss) and C3."""
    board = Board()
    c3, c4, t3 = board.uid("C3"), board.uid("C4"), board.uid("T3")
    board.put("a5", c3, c4)
    board.put("a1", t3)
    board.wait(2.0)
    return board, c4, c3


def test_a_tag_missed_and_read_again_on_its_stack_changes_nothing() -> None:
    """a5's reader lets C4 go and reads it again 0.4 s later: the picture shows C4 on a5
    throughout, and the tracker says so: no change, the same read and take times, and C4
    is not listed as lifted (it was in no hand)."""
    board, c4, c3 = stacks()
    settled = board.tracker.last_change
    read, taken = board.tracker.read_since("a5", c4), board.tracker.taken_at(c4)
    picture = board.pieces()
    board.read("a5", c3)  # missed
    board.wait(0.4)
    assert board.pieces() == picture
    assert not board.read("a5", c3, c4)  # read again: no change
    board.wait(0.1)
    assert board.pieces() == picture
    assert board.tracker.last_change == settled
    assert board.tracker.read_since("a5", c4) == read
    assert board.tracker.taken_at(c4) == taken
    assert board.tracker.lifted() == {}


def test_a_tag_read_again_after_its_grace_ran_out_is_a_change() -> None:
    """Read again only after ``miss_grace``: the picture lost it meanwhile, and getting it
    back is a change, as a piece set down there again is."""
    board, c4, c3 = stacks()
    board.read("a5", c3)
    board.wait(board.tracker.miss_grace + 0.1)
    assert board.pieces()["a5"] == ("C3",)
    gone = board.tracker.last_change
    assert board.read("a5", c3, c4)
    assert board.tracker.last_change > gone
    assert board.pieces()["a5"] == ("C3", "C4")


def test_a_tag_missed_read_elsewhere_and_back_is_a_change() -> None:
    """Missed on a5, read on the empty a4 (set down there), and read on a5 again: it moved
    twice; each read is a change, and the first take time is not given back."""
    board, c4, c3 = stacks()
    board.read("a5", c3)
    board.wait(0.2)
    board.contact("a4", True)
    board.read("a4", c4)
    board.wait(0.2)
    assert board.pieces()["a4"] == ("C4",)
    moved = board.tracker.last_change
    taken = board.tracker.taken_at(c4)
    board.read("a4")
    board.contact("a4", False)
    board.wait(0.1)
    assert board.read("a5", c3, c4)
    assert board.tracker.last_change > moved
    later = board.tracker.taken_at(c4)
    assert later is not None and taken is not None and later > taken
