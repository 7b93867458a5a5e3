"""Topple: two players' Up 1s that swap back the two before them, so the line shows the
position of two moves earlier (accuracy bench, varied players, ``--seed 2``, table 2000018).

The sensors cannot tell that from a hand putting the last two moves back, so the station asks
once: "take back 2 move(s)?". The players' answer decides, and the question is never put again
for the same picture: BACK (no) keeps the moves going forward, OK takes the two moves back and
the next move is followed from there. (Before: BACK cleared the question, the same picture
asked it again at once, in a loop, and the two forward moves were missed.)
"""

from __future__ import annotations

from rig import Rig
from test_board_topple import start
from test_inference_pace import swap_up

from pi_app.board.follower import PromptKind, TakenBack


def swapped_back() -> Rig:
    """Up 1 Lokahi and Up 1 Wikiwiki, each taken; then, at pace, Up 1 Nani (swaps Wikiwiki's
    back: the line after the first move; it waits, as an Up 1 may be the first swap of an
    Up 2) and Up 1 Nui (swaps Lokahi's back: the line at the start)."""
    rig = Rig("topple", start())
    out = swap_up(rig, "Lokahi", "s5", "Nui", "s4", linger=1.3)
    out += swap_up(rig, "Wikiwiki", "s8", "Nani", "s7", linger=1.3)
    assert Rig.accepted(out) == ["up1 Lokahi", "up1 Wikiwiki"]
    out = swap_up(rig, "Nani", "s8", "Wikiwiki", "s7", linger=0.6)
    out += swap_up(rig, "Nui", "s5", "Lokahi", "s4", linger=1.5)
    assert Rig.accepted(out) == []
    asked = Rig.prompts(out)
    assert [p.kind for p in asked] == [PromptKind.TAKEBACK] and asked[0].plies == 2, asked
    return rig


def test_no_to_the_takeback_keeps_the_moves_going_forward_and_is_not_asked_again() -> None:
    rig = swapped_back()
    out = rig.press("back")
    out += rig.wait_until(rig.now + 3.0)
    assert Rig.prompts(out) == [], Rig.prompts(out)
    assert [t for _, t in rig.follower.history] == [
        "up1 Lokahi", "up1 Wikiwiki", "up1 Nani", "up1 Nui"]
    assert Rig.guidance(out) == []


def test_yes_to_the_takeback_takes_back_and_the_next_move_follows_from_there() -> None:
    rig = swapped_back()
    out = rig.press("ok")
    assert [o.plies for o in out if isinstance(o, TakenBack)] == [2]
    assert rig.follower.history == []
    out = swap_up(rig, "Kapu", "s2", "Hookipa", "s1", linger=1.5)
    assert Rig.accepted(out) == ["up1 Kapu"]
    assert Rig.prompts(out) == [] and Rig.guidance(out) == []


def test_no_to_a_takeback_nothing_else_explains_is_a_mismatch_not_a_loop() -> None:
    """Up 3 Nui, then the line put back by hand: asked once; BACK (no) leaves a picture
    nothing else explains, shown as a mismatch to put right, and the question does not come
    back while it lies there. Once the board shows the position, putting it back asks again."""
    rig = Rig("topple", start())
    up3 = (("lift", "Nui", "s4"), ("lift", "Eepo", "s3"), ("put", "Eepo", "s4"),
           ("lift", "Kapu", "s2"), ("put", "Kapu", "s3"), ("lift", "Hookipa", "s1"),
           ("put", "Hookipa", "s2"), ("put", "Nui", "s1"))
    assert Rig.accepted(rig.act(*up3, gap=0.15, linger=1.0)) == ["up3 Nui"]
    before = rig.game.expected_view(rig.follower.history[0][0])
    now_view = rig.game.expected_view(rig.follower.state)
    out = rig.show(before, linger=1.0)
    assert [p.kind for p in Rig.prompts(out)] == [PromptKind.TAKEBACK]
    out = rig.press("back")
    out += rig.wait_until(rig.now + 3.0)
    assert Rig.prompts(out) == [] and Rig.guidance(out)
    assert [t for _, t in rig.follower.history] == ["up3 Nui"]
    rig.show(now_view, linger=1.0)
    out = rig.show(before, linger=1.0)
    assert [p.kind for p in Rig.prompts(out)] == [PromptKind.TAKEBACK]
