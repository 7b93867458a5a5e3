"""Tiki (Manami): scripted scenarios from the long soak at the faster scan (100 games,
docs/longsoak-faster-scan.json: 3 phantom / 1 missed in games 1000086 and 1000093, one illegal
attempt not reported), each pinned in a few seconds instead of replaying the whole game.

* 1000093: a token carried over a stack (read there for a moment) and set down on an empty
  village beyond it, an illegal move. The empty village's contact closed under it and its
  reader read it alone, so the tracker put it there; the stack's reader went on reporting it
  for three more scans, and the follower, reading the tag back on the stack (a tag read on
  two closed cells), saw a legal move there and took it (then the next move was missed).
* 1000086: a move taken onto a stack, the station restarted 2.2 s later, and the next
  player's wrong move off that stack 1.8 s after the restart: the restored move's revise
  window opened only at that wrong move's picture, so the wrong move revised it into another
  sowing instead of being shown as a mismatch (the illegal attempt not reported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from rig import Rig

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Follower
from pi_app.readings import PresenceChanged, ScanCycle, Snapshot, TagsSeen
from pi_app.records import replay
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore

VILLAGES = {"a1": 1, "b1": 0, "c1": 1, "a2": -1, "b2": 2, "c2": 1, "a3": 0, "b3": 1, "c3": 0}
#: Player 0 to move with a totem of two of its tokens on b2 and one token on c3: b2-b3-c3
#: lands its last token on the stack c3 (taken after ``settle_min``, "rested").
TWO_ON_B2 = ["place b2", "place a1", "place c3", "place a2", "place c2", "place c1", "c2-b2",
             "a1-b1"]


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


def test_a_token_off_a_stack_onto_a_path_is_shown_though_the_stack_lets_it_go_later() -> None:
    """A token lifted off b2's stack of two and set on the path b2/c2 (an illegal attempt):
    the path's contact shows it as a second shaman 0.28 s after b2's reader last read the
    token, while the tracker keeps it on b2 for ``miss_grace`` (a reader may miss a tag on a
    stack for a scan). Both pictures, before and after b2 lets it go, are a finished wrong
    move; the board letting a piece go is no piece on its way, so the mismatch is shown
    ``settle_unexplained`` after the first, not after b2 lets it go (it came 0.9 s after the
    token rested: accuracy bench, Manami, varied pace, table 1000064, 1.12 s after, when the
    player had begun to undo it)."""
    rig = Rig("manami", manami(TWO_ON_B2))
    first, second = rig.board.cells["b2"]
    b2, path = rig.geometry.cell("b2"), rig.geometry.cell("b2/c2")
    assert b2.reader is not None and path.presence is not None
    out = rig.deliver([
        ScanCycle(1.0, 0.35, None),
        TagsSeen(1.9, b2.reader, frozenset({first, second})),
        TagsSeen(2.0, b2.reader, frozenset({first})),  # lifted; b2's contact stays closed
        PresenceChanged(2.2, path.presence, True),  # set down on the path
    ], linger=2.0)
    assert Rig.accepted(out) == []
    shown = Rig.guidance(out)
    assert shown and shown[0].t <= 2.2 + rig.follower.tracker.presence_debounce + \
        rig.follower.settle_unexplained + 0.01, [o.t for o in shown]


# -- a restart between a move onto a stack and the next player's wrong move ----------------------
class Table:
    """A Manami station on a store in ``tmp``, fed the readings of a board the test lays out
    by hand (cell -> UIDs), on a clock the test sets: restarted as the daemon is after a
    crash (a new station on the same database, the board read afresh by a snapshot)."""

    def __init__(self, tmp: Path, moves: list[str]) -> None:
        self.tmp = tmp
        self.now = 0.0
        self.config = Config(station=replace(StationConfig(), game="manami", seed=1,
                                             data_dir=str(tmp)))
        self.registry = registry_for("manami")
        station = self.open()
        game = station.session.game
        for text in moves:  # the game so far, stored as a station would have
            state = station.session.state
            station.session.moved(text, game.to_move(state),
                                  game.apply(state, game.parse_move(state, text)))
        station.store.close()
        self.station = self.open()
        view = game.expected_view(self.station.session.state)
        free = {name: iter(self.registry.uids_of(name)) for name in ("p0", "p1")}
        self.cells: dict[str, list[str]] = {
            cell.name: [next(free[p]) for p in view.get(cell.name, ())]
            for cell in self.station.geometry.cells}

    def open(self) -> Station:
        clock: Callable[[], float] = lambda: self.now  # noqa: E731 (read at each call)
        return Station(self.config, EventStore(self.tmp / "tikiboard.db"), self.registry,
                       clock=clock)

    def restart(self) -> None:
        self.station.store.close()
        self.station = self.open()

    def snapshot(self) -> None:
        geometry = self.station.geometry
        tags = [frozenset[str]()] * geometry.reader_count
        presence = [False] * geometry.presence_count
        for cell in geometry.cells:
            if cell.reader is not None:
                tags[cell.reader] = frozenset(self.cells[cell.name])
            if cell.presence is not None:
                presence[cell.presence] = bool(self.cells[cell.name])
        self.station.step(Snapshot(self.now, tuple(tags), tuple(presence)), self.now)

    def read(self, name: str, uids: list[str] | None = None) -> None:
        """The cell's reader reports ``uids`` (by default what lies there); its contact
        follows what lies there."""
        cell = self.station.geometry.cell(name)
        assert cell.reader is not None and cell.presence is not None
        self.station.step(PresenceChanged(self.now, cell.presence, bool(self.cells[name])),
                          self.now)
        seen = self.cells[name] if uids is None else uids
        self.station.step(TagsSeen(self.now, cell.reader, frozenset(seen)), self.now)

    def move(self, uid: str, to: str | None, *reads: str) -> None:
        for stack in self.cells.values():
            if uid in stack:
                stack.remove(uid)
        if to is not None:
            self.cells[to].append(uid)
        for name in reads:
            self.read(name)

    def until(self, t: float) -> None:
        while self.now < t:
            self.now = round(self.now + 0.05, 3)
            self.station.step(None, self.now)

    def texts(self) -> list[str]:
        return [text for _, text in self.station.session.history]


def sow_b2_b3_c3(table: Table) -> tuple[str, str]:
    """Player 0 sows b2 over b3 onto the stack c3; the UIDs of the tokens on b3 and c3."""
    first, second = table.cells["b2"]
    table.until(2.5)
    table.move(first, None)
    table.move(second, None, "b2")
    table.until(2.9)
    table.move(first, "b3", "b3")
    table.until(3.3)
    table.move(second, "c3", "c3")
    table.until(3.8)
    assert table.texts()[-1] == "b2-b3-c3"
    last = table.station.store.events(table.station.session.game_id, ("move",))[-1]
    assert last.data["how"] == "rested"  # a token on a stack: still revisable by the board
    return first, second


def test_a_wrong_move_off_the_stack_after_a_restart_does_not_revise_the_move(
        tmp_path: Path) -> None:
    """The move rests 2.2 s (its window closes), the station restarts and reads the board as
    the move left it; 1.5 s after the restart the next player lifts the token just sown on
    c3 and sets it on a3 (b2-b3-a3 from the position before, for the sensors): a wrong
    move, shown as a mismatch; the record keeps b2-b3-c3."""
    table = Table(tmp_path, TWO_ON_B2)
    table.now = 1.0
    table.snapshot()
    table.until(2.0)
    _, second = sow_b2_b3_c3(table)
    table.until(5.8)
    table.restart()
    table.now = 6.6
    table.snapshot()  # the link is back: the board as the move left it
    table.until(7.1)
    table.move(second, "a3", "a3")  # read on a3 at once; c3's reader reports it a while yet
    table.until(7.6)
    table.read("c3")  # three misses later
    table.until(9.0)
    assert table.texts()[-1] == "b2-b3-c3"
    assert table.station.accepted_log == []
    assert table.station.status.guidance is not None


def test_a_hand_that_goes_on_right_after_a_restart_still_revises_the_move(
        tmp_path: Path) -> None:
    """The same sowing with the station restarted 0.2 s after it took the move: the hand
    carries the token on from c3 to a3 0.3 s after the board is read again, within the
    window counted from the restart. It was b2-b3-a3. (Passes on the old code too: the
    window from the restart must not close on a hand that really goes on.)"""
    table = Table(tmp_path, TWO_ON_B2)
    table.now = 1.0
    table.snapshot()
    table.until(2.0)
    _, second = sow_b2_b3_c3(table)
    table.restart()
    table.now = 4.2
    table.snapshot()
    table.until(4.5)
    table.move(second, "a3", "a3")
    table.until(4.9)
    table.read("c3")
    table.until(6.5)
    assert table.texts()[-1] == "b2-b3-a3"
    assert table.station.status.guidance is None


# -- the next player lifts the token the last move left on a stack -------------------------------
def test_a_token_lifted_off_the_stack_again_is_no_other_path_of_the_move(tmp_path: Path) -> None:
    """b2-b3-c3 is taken (the token rested on c3's stack); 0.55 s after it came to rest a
    hand lifts it off again, and c3's reader lets it go three scans later (read on no cell:
    it is in the hand); only then is it set down on a3, b2-b3-a3 from the position before
    for the sensors. That is a later hand (the next player's, here a wrong move), not the
    sowing going on: the move stands and the board is shown as a mismatch. (Accuracy bench,
    Manami, varied pace, tables 1000072, 1000084, 1000105: the next player, sowing off the
    stack, set its top token on the far cell first; the last move was revised into another
    path: one phantom, one or two missed each.)"""
    table = Table(tmp_path, TWO_ON_B2)
    table.now = 1.0
    table.snapshot()
    table.until(2.0)
    _, second = sow_b2_b3_c3(table)  # c3 read it at 3.3, taken at 3.8 at the latest
    table.until(3.85)
    table.move(second, None)  # lifted; c3's contact stays closed (its own token)
    table.until(4.6)
    table.read("c3")  # the third clean miss
    table.until(4.75)
    table.move(second, "a3", "a3")
    table.until(6.5)
    assert table.texts()[-1] == "b2-b3-c3"
    assert table.station.status.guidance is not None


def test_a_token_carried_over_the_stack_onto_a3_still_revises_the_move(tmp_path: Path) -> None:
    """The same sowing, the hand carrying the token over c3's stack (read there) and
    setting it down on a3 a moment later, read there while c3's reader still reports it:
    b2-b3-a3, revised if b2-b3-c3 was taken meanwhile. (Passes on the old code too: the
    lifted-again rule must not stop this revision.)"""
    table = Table(tmp_path, TWO_ON_B2)
    table.now = 1.0
    table.snapshot()
    table.until(2.0)
    _, second = sow_b2_b3_c3(table)
    table.move(second, "a3", "a3")
    table.until(4.4)
    table.read("c3")
    table.until(6.0)
    assert table.texts()[-1] == "b2-b3-a3"
    assert table.station.status.guidance is None


#: Zero-noise accuracy table 1000049 (player 0 first) up to the move it lost.
TABLE_1000049 = {"a1": -1, "b1": 1, "c1": 0, "a2": 1, "b2": 0, "c2": 0, "a3": 1, "b3": 2, "c3": 1}
BEFORE_1000049 = [
    "place a3", "place b3", "a3-b3", "place a3", "place b1", "a3-b3", "b1-c1", "place a3",
    "place a1", "place b3", "place a2", "place b2", "a2-a3", "b3-c3", "c1-b1", "b2-b3",
    "a3-b3-b2", "place c2", "a1-b1", "b3-b2-b1", "place a2", "place c1", "place b1", "c3-b3",
    "a2-b2", "c2-c1", "place a3", "c1-c2-c3", "b1-c1", "place a2", "a3-b3", "c2-b2", "b3-b2-c2",
    "a2-a1", "c2-c1", "place a2", "c1-c2-b2", "c3-c2", "place a3", "a2-a1", "place b1",
    "a1-a2-a3", "place c1", "place b3", "c1-c2", "a3-a2-a1", "place c2", "place c1"]


def test_a_totem_carried_a_token_at_a_time_does_not_revise_the_move_before() -> None:
    """a2-a1-b1 is taken; 0.8 s after it rested the next player moves the totem it left on a1
    a token at a time, the first straight to b2, the end of its path a1-b1-b2, and the other,
    still lying on a1, 0.6 s later. From the position before, the picture between is a2-b2-b1
    (the token on b2, not a1); from the position now it is the next move under way, and it is
    taken as that. (Zero-noise accuracy bench, table 1000049: a2-a1-b1 was revised into
    a2-b2-b1, one phantom, one missed.)"""
    result = replay({"game": "manami", "villages": TABLE_1000049, "first": 0,
                     "moves": BEFORE_1000049})
    assert result.ok, result.error
    rig = Rig("manami", result.state)
    out = rig.act(("lift", "p0", "a2"), ("put", "p0", "b1"), ("lift", "p1", "a2"),
                  ("put", "p1", "a1"), gap=0.2, linger=0.6)
    out += rig.act(("lift", "p1", "a1"), ("put", "p1", "b2"), gap=0.2, linger=0.45)
    out += rig.act(("lift", "p1", "a1"), ("put", "p1", "b1"), gap=0.6, linger=2.0)
    assert Rig.accepted(out) == ["a2-a1-b1", "a1-b1-b2"]
    assert [t for _, t in rig.follower.history][-2:] == ["a2-a1-b1", "a1-b1-b2"]
