"""Tiki (Manami): scripted scenarios from the long soak at the faster scan (100 games,
docs/longsoak-faster-scan.json: 3 phantom / 1 missed in games 1000086 and 1000093, one illegal
attempt not reported), each pinned in a few seconds instead of replaying the whole game.

* 1000093: a token carried over a stack (read there for a moment) and set down on an empty
  village beyond it, an illegal move. The empty village's contact closed under it and its
  reader read it alone, so the tracker put it there; the stack's reader went on reporting it
  for three more scans, and the follower, reading the tag back on the stack (a tag read on
  two closed cells), saw a legal move there and took it (then the next move was missed).
"""

from __future__ import annotations

from typing import Any

from rig import Rig

from pi_app.board.follower import Follower
from pi_app.readings import PresenceChanged, ScanCycle, Snapshot, TagsSeen
from pi_app.records import replay
from pi_app.referee.config import Config

VILLAGES = {"a1": 1, "b1": 0, "c1": 1, "a2": -1, "b2": 2, "c2": 1, "a3": 0, "b3": 1, "c3": 0}


def manami(moves: list[str]) -> Any:
    result = replay({"game": "manami", "villages": VILLAGES, "first": 0, "moves": moves})
    assert result.ok, result.error
    return result.state


def station_follower(rig: Rig) -> Follower:
    """A follower timed as the station's (``[timing]`` defaults: ``settle_long`` 0.7 s, not
    the follower's own 1.0 s), reading the rig's board from a snapshot, as after a connect."""
    timing = Config().timing
    follower = Follower(rig.game, rig.follower.state, rig.geometry, rig.registry,
                        settle=timing.settle, settle_long=timing.settle_long,
                        settle_removal=timing.settle_removal, grace=timing.grace)
    tags = [frozenset[str]()] * rig.geometry.reader_count
    presence = [False] * rig.geometry.presence_count
    for cell in rig.geometry.cells:
        if cell.reader is not None:
            tags[cell.reader] = frozenset(rig.board.cells[cell.name])
        if cell.presence is not None:
            presence[cell.presence] = bool(rig.board.cells[cell.name])
    follower.handle(Snapshot(0.5, tuple(tags), tuple(presence)), 0.5)
    return follower


def test_a_token_carried_over_a_stack_onto_an_empty_village_is_no_move_onto_the_stack() -> None:
    """a3-b3 is legal, a3 to c3 is not. The hand lifts the token off a3, holds it above b3
    for a moment (b3's reader reads it; b3's contact was closed by its own token), then sets
    it down on c3, whose contact closes under it and whose reader reads it alone: it lies on
    c3. b3's reader reports it for three more scans (1 s at Manami's 0.35 s cycle), and the
    picture with it on b3, a3-b3, was taken 0.7 s (``settle_long``) after c3 closed. The
    illegal attempt is shown as a mismatch instead, and nothing is taken. (Timed as the
    events of game 1000093 at 418-421.5 s.)"""
    rig = Rig("manami", manami(["place a3", "place b3"]))
    rig.follower = station_follower(rig)
    (token,) = rig.board.cells["a3"]
    (own,) = rig.board.cells["b3"]
    a3, b3, c3 = (rig.geometry.cell(name) for name in ("a3", "b3", "c3"))
    assert None not in (a3.reader, a3.presence, b3.reader, c3.reader, c3.presence)
    out = rig.deliver([
        ScanCycle(1.0, 0.35, None),
        PresenceChanged(1.5, a3.presence or 0, False), TagsSeen(1.9, a3.reader or 0, frozenset()),
        TagsSeen(3.7, b3.reader or 0, frozenset({token, own})),  # held above b3
        PresenceChanged(3.816, c3.presence or 0, True),  # set down on c3
        TagsSeen(3.855, c3.reader or 0, frozenset({token})),
        TagsSeen(4.75, b3.reader or 0, frozenset({own})),  # b3's third miss
    ], linger=2.0)
    assert Rig.accepted(out) == [] and rig.follower.history == []
    shown = Rig.guidance(out)
    assert shown and shown[0].t <= 3.9 + rig.follower.settle_unexplained + 0.05
    assert [(f.kind, f.piece, f.cell, f.to) for f in shown[0].fixes] == [
        ("move", "p0", "c3", "a3")]
