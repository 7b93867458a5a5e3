"""Tiki Topple at real players' pace (issue 18): scripted hands, timed as the varied players of
the accuracy bench keep them, for the cases that bench found going wrong in Topple."""

from __future__ import annotations

from rig import Rig
from test_board_topple import start
from test_inference_pace import swap_up


def test_a_swap_the_next_hand_goes_on_from_within_a_pause_is_no_move_of_its_own() -> None:
    """Lokahi up one (it waits: also the first swap of an Up 2), then the next player makes an
    Up 2 of Akamai by swaps, resting 0.35 s after the first swap (Akamai up one, which would
    be a move of its own) before the second. The next player could not have started within
    that pause, so the first swap was the same hand going on: the record is Up 1 Lokahi and
    Up 2 Akamai, not Up 1 Lokahi and two Up 1s of Akamai by two players (accuracy bench,
    varied players, Topple table 1000024: 'up2 Akamai' missed, then a cascade)."""
    rig = Rig("topple", start())
    out = swap_up(rig, "Lokahi", "s5", "Nui", "s4", linger=0.6)
    out += swap_up(rig, "Akamai", "s6", "Nui", "s5", linger=0.2)
    out += swap_up(rig, "Akamai", "s5", "Lokahi", "s4", linger=2.0)
    assert Rig.accepted(out) == ["up1 Lokahi", "up2 Akamai"]
    assert [t for _, t in rig.follower.history] == ["up1 Lokahi", "up2 Akamai"]
    assert Rig.prompts(out) == [] and Rig.guidance(out) == []
