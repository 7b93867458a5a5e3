"""Illegal attempts at real players' pace (issue 18): a wrong move that stays on the board is
shown as a mismatch ``settle_unexplained`` after the sensors first show it, even when a reader
lets an old read go only later. Scripted TacTiki readings timed as the accuracy bench's varied
players made them (``python -m tools.bench.accuracy --players varied --game tactiki``, whose
``unreported_tables`` listed the attempts a player undid, 1-3 s after it rested, before the
station said anything). The Manami case is in ``test_manami_pace.py``."""

from __future__ import annotations

from test_tactiki_pace import Table

from pi_app.board.follower import Guidance


def mismatches(table: Table) -> list[float]:
    """When each mismatch was shown."""
    return [o.t for o in table.out if isinstance(o, Guidance) and o.kind == "mismatch"]


def test_a_tiki_moved_from_a_stack_onto_a_far_stack_is_shown_from_the_read() -> None:
    """T5 lifted off a1's stack and set on e1's, four cells away, at 4.9 s: no contact
    changes. e1's reader reads it at 5.0 s; a1's reports it until its third miss, at 5.7 s,
    With T5 on e1 the picture is a
    finished wrong move, and e1 is no neighbour of a1 whose reader might read a tag lying
    there: it is shown ``settle_unexplained`` after e1's read, not after a1 let T5 go (varied
    tables 1000027, 1000046, 1000051: the mismatch came 1.2-1.5 s after the tiki rested, after
    its player had begun to undo it)."""
    table = Table()
    t5 = table.uid("a1", "T5")
    table.read(5.0, "e1", *table.seen["e1"], t5)
    table.until(5.7)
    table.read(5.7, "a1", *(set(table.seen["a1"]) - {t5}))
    table.until(7.5)
    assert table.accepted() == []
    shown = mismatches(table)
    assert shown and shown[0] <= 5.0 + table.follower.settle_unexplained + 0.01, shown


def test_a_neighbours_read_of_a_tiki_is_no_mismatch() -> None:
    """b1's reader reads T5 lying on its neighbour a1 (a short pitch): the picture with T5 on
    b1 is wrong too, but a neighbour's read is no move, and a1 goes on reporting it: nothing
    is shown. (A guard for the rule above: only a read on a cell no neighbour of the tag's
    own counts.)"""
    table = Table()
    t5 = table.uid("a1", "T5")
    table.read(5.0, "b1", *table.seen["b1"], t5)
    table.until(7.5)
    assert table.accepted() == [] and mismatches(table) == []

