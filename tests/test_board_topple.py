"""Move validation on a Tiki Topple board: exact scenarios through tracker, inference, follower."""

from __future__ import annotations

from typing import Any

import pytest
from rig import Rig

from pi_app.board.equipment import registry_for
from pi_app.board.follower import InSync, MoveAccepted, MoveRevised, TakenBack
from pi_app.board.geometry import load_geometry
from pi_app.board.inference import Verdict
from pi_app.board.tracker import Tracker
from pi_app.readings import LinkState, LinkStatus, PresenceChanged, Snapshot, TagsSeen
from pi_app.records import replay
from pi_app.sim.hands import Action

LINE = ["Hookipa", "Kapu", "Eepo", "Nui", "Lokahi", "Akamai", "Nani", "Wikiwiki", "Huhu"]


def start(moves: list[str] | None = None, players: int = 2) -> Any:
    cards = [["Hookipa", "Lokahi", "Nani"], ["Wikiwiki", "Hookipa", "Akamai"],
             ["Lokahi", "Wikiwiki", "Hookipa"]][:players]
    record = {"game": "topple", "options": {"players": players},
              "rounds": [{"line": LINE, "cards": cards, "first": 0, "moves": moves or []}]}
    result = replay(record)
    assert result.ok
    return result.state


def slots(rig: Rig, cell: str) -> str:
    pieces = rig.board.pieces(cell)
    return pieces[0] if pieces else "-"


def test_unambiguous_move_is_accepted_at_once() -> None:
    rig = Rig("topple", start())
    out = rig.act(("lift", "Nui", "s4"), ("lift", "Eepo", "s3"), ("put", "Eepo", "s4"),
                  ("lift", "Kapu", "s2"), ("put", "Kapu", "s3"), ("lift", "Hookipa", "s1"),
                  ("put", "Hookipa", "s2"), ("put", "Nui", "s1"))
    accepted = [o for o in out if isinstance(o, MoveAccepted)]
    assert [a.text for a in accepted] == ["up3 Nui"]
    # Accepted on the first picture that shows it: no settle wait (within two scan periods
    # of the last piece coming to rest, 50 ms each).
    assert accepted[0].since_rest <= 0.01
    assert rig.follower.state.line[:4] == ("Nui", "Hookipa", "Kapu", "Eepo")


def test_gaps_while_tikis_shift_are_never_moves() -> None:
    rig = Rig("topple", start())
    out = rig.act(("lift", "Akamai", "s6"), ("lift", "Nani", "s7"), ("put", "Nani", "s6"),
                  linger=0.5)
    assert Rig.accepted(out) == [] and not Rig.guidance(out)
    assert rig.follower.decide(rig.now).verdict is Verdict.IN_PROGRESS
    out = rig.act(("lift", "Wikiwiki", "s8"), ("put", "Wikiwiki", "s7"),
                  ("lift", "Huhu", "s9"), ("put", "Huhu", "s8"), ("put", "Akamai", "s9"))
    assert Rig.accepted(out) == ["topple Akamai"]


def test_first_swap_of_an_up2_waits_and_the_second_swap_decides() -> None:
    """Swapping one slot at a time: the first swap looks like an Up 1 (a transit view). The
    hand pauses 0.4 s between the swaps, less than the next player's quickest start (0.5 s:
    a longer pause is asked about, test_inference_pace)."""
    rig = Rig("topple", start())
    out = rig.act(("lift", "Nui", "s4"), ("lift", "Eepo", "s3"), ("put", "Nui", "s3"),
                  ("put", "Eepo", "s4"), linger=0.2)
    assert Rig.accepted(out) == []  # could be the first half of up2 Nui
    out = rig.act(("lift", "Nui", "s3"), ("lift", "Kapu", "s2"), ("put", "Nui", "s2"),
                  ("put", "Kapu", "s3"))
    assert Rig.accepted(out) == ["up2 Nui"]


def test_up1_is_accepted_once_the_board_rests() -> None:
    rig = Rig("topple", start())
    out = rig.act(("lift", "Nui", "s4"), ("lift", "Eepo", "s3"), ("put", "Nui", "s3"),
                  ("put", "Eepo", "s4"))
    accepted = [o for o in out if isinstance(o, MoveAccepted)]
    assert [a.text for a in accepted] == ["up1 Nui"]
    assert rig.follower.settle_long - 0.01 <= accepted[0].since_rest <= \
        rig.follower.settle_long + 0.01


def test_ambiguity_up1_of_bottom_or_topple_of_the_one_above_asks_by_button() -> None:
    rig = Rig("topple", start())
    out = rig.act(("lift", "Huhu", "s9"), ("lift", "Wikiwiki", "s8"), ("put", "Huhu", "s8"),
                  ("put", "Wikiwiki", "s9"))
    assert Rig.accepted(out) == []
    prompt = Rig.prompts(out)[-1]
    assert prompt.kind == "ambiguous"
    assert sorted(prompt.options) == ["topple Wikiwiki", "up1 Huhu"]
    wanted = prompt.options.index("topple Wikiwiki")
    for _ in range((wanted - prompt.selected) % 2):
        rig.press("menu")
    out = rig.press("ok")
    assert Rig.accepted(out) == ["topple Wikiwiki"]
    assert rig.follower.state.hands[0] == (2, 1, 1, 0, 2)  # the Topple card was spent


def test_ambiguity_answered_by_a_card_tap() -> None:
    rig = Rig("topple", start())
    rig.act(("lift", "Huhu", "s9"), ("lift", "Wikiwiki", "s8"), ("put", "Huhu", "s8"),
            ("put", "Wikiwiki", "s9"))
    out = rig.act(("put", "action:up1", "card"), linger=1.0)
    assert Rig.accepted(out) == ["up1 Huhu"]


def test_toast_waits_for_the_removal_to_last_and_a_knock_is_no_move() -> None:
    rig = Rig("topple", start(["up1 Kapu", "up1 Eepo"]))
    # A knock: the bottom tiki lifted and put back within a second is not a Toast.
    out = rig.act(("lift", "Huhu", "s9"), linger=0.8)
    out += rig.act(("put", "Huhu", "s9"))
    assert Rig.accepted(out) == []
    out = rig.act(("lift", "Huhu", "s9"))
    accepted = [o for o in out if isinstance(o, MoveAccepted)]
    assert [a.text for a in accepted] == ["toast"]
    assert accepted[0].since_rest >= rig.follower.settle_removal - 0.2


def test_a_toast_taken_mid_topple_is_revised() -> None:
    """A hand that lifts the bottom tiki first and rests longer than the Toast wait."""
    rig = Rig("topple", start(["up1 Kapu", "up1 Eepo"]))
    out = rig.act(("lift", "Huhu", "s9"), linger=2.0)
    assert Rig.accepted(out) == ["toast"]
    out = rig.act(("lift", "Wikiwiki", "s8"), ("lift", "Nani", "s7"),
                  ("put", "Wikiwiki", "s7"), ("put", "Huhu", "s8"), ("put", "Nani", "s9"))
    revised = [o for o in out if isinstance(o, MoveRevised)]
    assert [(r.replaced, r.text) for r in revised] == [("toast", "topple Nani")]
    assert [t for _, t in rig.follower.history][-1] == "topple Nani"


def test_a_toast_whose_tiki_comes_back_is_undone_without_a_question() -> None:
    """A tiki held in a hand longer than the Toast wait (say while a mismatch is put right)
    reads as a Toast; when it lands back on its slot, the Toast is undone by itself: the
    board shows the position before it, and that is no takeback for the players to confirm."""
    before = start(["up1 Kapu", "up1 Eepo"])
    rig = Rig("topple", before)
    out = rig.act(("lift", "Huhu", "s9"), linger=2.0)
    assert Rig.accepted(out) == ["toast"]
    out = rig.act(("put", "Huhu", "s9"))
    assert any(isinstance(o, TakenBack) and o.plies == 1 for o in out)
    assert Rig.prompts(out) == [] and Rig.accepted(out) == []
    assert rig.follower.history == [] and rig.follower.state == before


def test_two_move_takeback_with_confirmation() -> None:
    rig = Rig("topple", start())
    rig.play("up3 Lokahi")
    rig.play("topple Kapu")
    assert [t for _, t in rig.follower.history] == ["up3 Lokahi", "topple Kapu"]
    out = rig.show({f"s{i + 1}": (t,) for i, t in enumerate(LINE)})
    prompt = Rig.prompts(out)[-1]
    assert prompt.kind == "takeback" and prompt.plies == 2
    out = rig.press("ok")
    assert any(isinstance(o, TakenBack) and o.plies == 2 for o in out)
    assert rig.follower.history == [] and list(rig.follower.state.line) == LINE


def test_back_button_undoes_the_last_move_and_guides_the_pieces_back() -> None:
    rig = Rig("topple", start())
    rig.play("up1 Kapu")
    out = rig.press("back")
    assert any(isinstance(o, TakenBack) for o in out)
    out = rig.wait_until(rig.now + 0.5)
    guide = Rig.guidance(rig.outcomes)[-1]
    assert {str(f) for f in guide.fixes} == {"move Kapu from s1 to s2",
                                             "move Hookipa from s2 to s1"}
    out = rig.show({f"s{i + 1}": (t,) for i, t in enumerate(LINE)})
    assert any(isinstance(o, InSync) for o in out) and Rig.accepted(out) == []


def test_a_piece_set_down_where_it_was_after_back_is_not_the_move_again() -> None:
    """After BACK the board still shows the move. A hand that lifts Kapu to put it back and
    sets it down where it was shows that picture again: not the move made a second time (a
    long soak's Topple player, game 1000008, got the move back and then its reverse). Once the
    board shows the position, the move may be made again."""
    rig = Rig("topple", start())
    rig.play("up1 Kapu")
    rig.press("back")
    out = rig.act(("lift", "Kapu", "s1"), ("put", "Kapu", "s1"), gap=0.4)
    assert Rig.accepted(out) == [] and Rig.guidance(out)
    out = rig.show({f"s{i + 1}": (t,) for i, t in enumerate(LINE)})
    assert any(isinstance(o, InSync) for o in out) and Rig.accepted(out) == []
    assert Rig.accepted(rig.play("up1 Kapu")) == ["up1 Kapu"]


def test_misplaced_piece_is_guided_back_cell_by_cell() -> None:
    rig = Rig("topple", start())
    # Swap two tikis far apart: no card does that.
    out = rig.act(("lift", "Kapu", "s2"), ("lift", "Nani", "s7"), ("put", "Nani", "s2"),
                  ("put", "Kapu", "s7"))
    assert Rig.accepted(out) == []
    guide = Rig.guidance(out)[-1]
    assert guide.t - rig.now < 0 and len(guide.fixes) == 2
    assert {(f.kind, f.piece, f.cell, f.to) for f in guide.fixes} == {
        ("move", "Nani", "s2", "s7"), ("move", "Kapu", "s7", "s2")}
    out = rig.act(("lift", "Nani", "s2"), ("lift", "Kapu", "s7"), ("put", "Kapu", "s2"),
                  ("put", "Nani", "s7"))
    assert any(isinstance(o, InSync) for o in out) and Rig.accepted(out) == []


def test_unknown_tag_is_reported_on_its_cell() -> None:
    rig = Rig("topple", start())
    uid = "04DEADBEEF0001"
    out = rig.deliver([*rig.sensors.run([])])
    from pi_app.readings import TagsSeen

    out = rig.deliver([TagsSeen(rig.now + 0.1, 9, frozenset({uid}))])
    assert rig.follower.observation(rig.now).unknown == {"card": (uid,)}
    guide = Rig.guidance(out)[-1]
    assert [(f.kind, f.piece, f.cell) for f in guide.fixes] == [("unknown", uid, "card")]


@pytest.mark.parametrize("absent_after", [1, 3])
def test_a_tag_missed_for_several_scans_changes_nothing(absent_after: int) -> None:
    """The reader drops Nui for a few scans while the presence sensor stays on."""
    rig = Rig("topple", start(), absent_after=absent_after)
    from pi_app.readings import TagsSeen

    nui = rig.board.cells["s4"][0]
    t = rig.now
    events = [TagsSeen(t + 0.05 * k, 3, frozenset()) for k in range(1, 2)]
    events.append(TagsSeen(t + 0.4, 3, frozenset({nui})))  # read again within the grace
    out = rig.deliver(events)
    assert Rig.accepted(out) == [] and not Rig.guidance(out)


def test_decision_time_is_a_lookup() -> None:
    rig = Rig("topple", start())
    position = rig.follower.position
    assert position.by_placement and position.transit
    observation = rig.follower.observation(rig.now)
    assert position.classify(observation).verdict is Verdict.UNCHANGED


@pytest.mark.parametrize("jump", [3600.0, -3600.0])
def test_a_jumping_sensor_clock_neither_freezes_nor_fires_the_timers(jump: float) -> None:
    """Events stamped an hour ahead of, or behind, the host's clock are handled on time."""
    from dataclasses import replace as dc_replace

    rig = Rig("topple", start())
    nui = rig.follower.state.line.index("Nui")
    assert nui == 3
    actions = []
    rig.hands.pace = (0.2, 0.2)
    from pi_app.sim.hands import Action

    board = rig.board
    uid_nui = board.cells["s4"][0]
    uid_eepo = board.cells["s3"][0]
    t = rig.now
    for action in (Action(t + 0.2, uid_nui, "s4", False), Action(t + 0.4, uid_eepo, "s3", False),
                   Action(t + 0.6, uid_eepo, "s4", True), Action(t + 0.8, uid_nui, "s3", True)):
        board.apply(action)
        actions.append(action)
    events = [dc_replace(e, t=e.t + jump) for e in rig.sensors.run(actions)]
    start_of = rig.now
    out = []
    for event in events:
        real = event.t - jump
        rig.wait_until(real)
        rig.now = real
        out += rig.follower.handle(event, real)
    out += rig.wait_until(rig.now + 3.0)
    accepted = [o for o in out if isinstance(o, MoveAccepted)]
    assert [a.text for a in accepted] == ["up1 Nui"]
    assert accepted[0].t - start_of < 2.0


def test_a_tag_a_snapshot_also_lists_where_it_passed_returns_to_where_it_lies() -> None:
    """After a gap the firmware's snapshot may list a tag on the cell it was carried over
    (until three misses clear it) as well as on the cell it lies on. Once the first reader
    stops reading it, the tag is where the other reader sees it: that cell is complete."""
    geometry = load_geometry("topple")
    registry = registry_for("topple")
    tracker = Tracker(geometry, registry)
    uid = registry.uids_of("Kapu")[0]
    readers, sensors = geometry.reader_count, geometry.presence_count
    tracker.feed(TagsSeen(1.0, 4, frozenset({uid})))
    tracker.feed(PresenceChanged(1.0, 4, True))
    tags = [frozenset[str]()] * readers
    tags[1] = tags[4] = frozenset({uid})
    presence = [False] * sensors
    presence[4] = True
    tracker.feed(Snapshot(2.0, tuple(tags), tuple(presence)))
    tracker.feed(TagsSeen(2.4, 1, frozenset()))
    tracker.poll(3.0)
    seen = tracker.observation(3.0)
    assert seen.pieces.get("s5") == ("Kapu",) and not seen.pieces.get("s2")
    assert seen.complete


def test_nothing_is_judged_while_the_cable_is_out() -> None:
    """The bottom tiki is lifted and the cable goes: the picture "Huhu gone" stays frozen for
    as long as the cable is out, and must not turn into a Toast by resting. Back up, the
    snapshot shows Huhu put back: nothing happened."""
    rig = Rig("topple", start(["up1 Kapu", "up1 Eepo"]))
    rig.act(("lift", "Huhu", "s9"), linger=0.1)
    out = rig.deliver([LinkStatus(rig.now, LinkState.DOWN, "device unplugged")], linger=4.0)
    assert Rig.accepted(out) == [] and Rig.guidance(out) == []
    uid = rig.registry.uids_of("Huhu")[0]
    rig.board.apply(Action(rig.now, uid, "s9", put=True))
    readers = {c.reader: c.name for c in rig.geometry.cells if c.reader is not None}
    sensors = {c.presence: c.name for c in rig.geometry.cells if c.presence is not None}
    snapshot = Snapshot(rig.now + 0.2,
                        tuple(frozenset(rig.board.cells[readers[r]]) if r in readers
                              else frozenset() for r in range(rig.geometry.reader_count)),
                        tuple(bool(rig.board.cells[sensors[p]]) if p in sensors else False
                              for p in range(rig.geometry.presence_count)))
    out = rig.deliver([LinkStatus(rig.now + 0.1, LinkState.UP, ""), snapshot])
    assert Rig.accepted(out) == [] and rig.follower.history == []


def test_a_toast_whose_tiki_comes_back_late_is_still_undone() -> None:
    """The hand that held the toasted tiki went on with another one for seconds (past the
    revision window) before both were back: the Toast is undone all the same, no question."""
    before = start(["up1 Kapu", "up1 Eepo"])
    rig = Rig("topple", before)
    assert Rig.accepted(rig.act(("lift", "Huhu", "s9"), linger=2.0)) == ["toast"]
    out = rig.act(("lift", "Nani", "s7"), linger=3.0)
    assert Rig.guidance(out)  # a gap in the line: shown as a mismatch meanwhile
    out += rig.act(("put", "Huhu", "s9"), ("put", "Nani", "s7"), gap=0.1)
    assert any(isinstance(o, TakenBack) for o in out)
    assert [p for p in Rig.prompts(out) if p.kind == "takeback"] == []
    assert rig.follower.history == [] and rig.follower.state == before
