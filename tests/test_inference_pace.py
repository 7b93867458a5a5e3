"""Move inference at real players' pace (issue 18): scripted sequences of sensor pictures at
the timings real players keep, not the project's simulated players, who always wait ~3 s.

Each scenario is one the issue found going wrong: a Toast followed by the next move within a
second; an illegal attempt undone after a second or two.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest
from rig import Rig
from test_board_manami_tactiki import TOTEM_ON_B2, manami, tactiki
from test_board_topple import slots, start

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Guidance, MoveAccepted, MoveRevised, Outcome
from pi_app.board.geometry import load_geometry
from pi_app.board.inference import Verdict
from pi_app.games import get_game
from pi_app.readings import PresenceChanged, SensorEvent
from pi_app.sim.hands import Action
from pi_app.sim.table import Pace, SimTable
from tools.bench.accuracy import run


def toasted() -> Any:
    """A Topple position where the bottom tiki (Huhu, on s9) may be toasted."""
    return start(["up1 Kapu", "up1 Eepo"])


def test_a_toast_followed_at_once_by_the_next_move_is_taken() -> None:
    """The player toasts (Huhu off s9) and the next one swaps Lokahi up past Nui 0.8 s later,
    long before the board was still for the Toast's 1.5 s: the next move shows the Toast
    happened (it starts from the line without Huhu), so both are taken, in order."""
    rig = Rig("topple", toasted())
    out = rig.act(("lift", "Huhu", "s9"), linger=0.6)
    assert Rig.accepted(out) == []  # a Toast alone still waits (a knock looks the same)
    out = rig.act(("lift", "Lokahi", "s5"), ("lift", "Nui", "s4"), ("put", "Lokahi", "s4"),
                  ("put", "Nui", "s5"), gap=0.15, linger=1.5)
    assert Rig.accepted(out) == ["toast", "up1 Lokahi"]
    assert [t for _, t in rig.follower.history] == ["toast", "up1 Lokahi"]
    assert Rig.guidance(out) == []


def test_a_toast_then_a_quick_topple_is_taken() -> None:
    """The same with a Topple as the next move (Akamai to the bottom of the shorter line)."""
    rig = Rig("topple", toasted())
    rig.act(("lift", "Huhu", "s9"), linger=0.4)
    out = rig.act(("lift", "Akamai", "s6"), ("lift", "Nani", "s7"), ("put", "Nani", "s6"),
                  ("lift", "Wikiwiki", "s8"), ("put", "Wikiwiki", "s7"), ("put", "Akamai", "s8"),
                  gap=0.15, linger=1.0)
    assert Rig.accepted(out) == ["toast", "topple Akamai"]


def test_a_toast_then_a_move_that_looks_like_another_asks_which() -> None:
    """After the Toast, Nani to the bottom of eight tikis looks just like Wikiwiki up one:
    the Toast is taken, and the players are asked about the next move (never a guess)."""
    rig = Rig("topple", toasted())
    rig.act(("lift", "Huhu", "s9"), linger=0.4)
    out = rig.act(("lift", "Nani", "s7"), ("lift", "Wikiwiki", "s8"), ("put", "Wikiwiki", "s7"),
                  ("put", "Nani", "s8"), gap=0.15, linger=1.0)
    assert Rig.accepted(out) == ["toast"]
    assert [p.options for p in Rig.prompts(out)] == [("up1 Wikiwiki", "topple Nani")]


def test_a_knocked_bottom_tiki_put_back_before_the_next_move_is_no_toast() -> None:
    """Huhu knocked off and put back within half a second, then a move: only the move."""
    rig = Rig("topple", toasted())
    out = rig.act(("lift", "Huhu", "s9"), ("put", "Huhu", "s9"), gap=0.25, linger=0.2)
    out += rig.act(("lift", "Lokahi", "s5"), ("lift", "Nui", "s4"), ("put", "Lokahi", "s4"),
                   ("put", "Nui", "s5"), gap=0.15)
    assert Rig.accepted(out) == ["up1 Lokahi"]


def test_a_bottom_tiki_lifted_only_in_passing_is_no_toast() -> None:
    """Huhu lifted for a moment (shorter than a settle) while the hand makes a move that
    leaves it off the board: the picture is no Toast followed by a move, it is a mismatch."""
    rig = Rig("topple", toasted())
    out = rig.act(("lift", "Huhu", "s9"), ("lift", "Lokahi", "s5"), ("lift", "Nui", "s4"),
                  ("put", "Lokahi", "s4"), ("put", "Nui", "s5"), gap=0.1, linger=3.0)
    assert Rig.accepted(out) == []
    assert any(isinstance(o, Guidance) and o.kind == "mismatch" for o in out)


def _illegal(rig: Rig) -> dict[str, tuple[str, ...]]:
    """The first picture (cells in board order) that moves the top piece of one cell onto
    another and that no legal move, transit or earlier position explains."""
    view = rig.game.expected_view(rig.follower.state)
    position = rig.follower.position
    for src, pieces in view.items():
        for dst in view:
            if not pieces or dst == src or rig.geometry.cell(dst).reader is None:
                continue
            trial = {c: tuple(p) for c, p in view.items()}
            trial[src], trial[dst] = pieces[:-1], (*view[dst], pieces[-1])
            key = tuple((c, tuple(sorted(trial[c]))) for c in rig.follower.cells)
            if key not in position.by_placement and key not in position.transit \
                    and key not in position.earlier:
                return trial
    raise AssertionError("no illegal picture")


@pytest.mark.parametrize("game", ["topple", "manami", "tactiki"])
def test_an_illegal_move_undone_after_a_second_is_reported(game: str) -> None:
    """A player puts a piece where the rules do not allow, sees nothing happen, and takes it
    back a second later: the mismatch was shown while it lay there (within a settle of the
    piece resting, not the 1.2 s grace a hand in the middle of a move gets)."""
    starts: dict[str, Callable[[], Any]] = {
        "topple": toasted, "manami": lambda: manami(["place b1", "place c1", "place a3"]),
        "tactiki": lambda: tactiki([])}
    state = starts[game]()
    rig = Rig(game, state)
    before = rig.game.expected_view(state)
    out = rig.show(_illegal(rig), linger=1.0)
    assert Rig.guidance(out), [str(o)[:80] for o in out]
    assert Rig.accepted(out) == []
    out = rig.show(before, linger=1.0)
    assert Rig.accepted(out) == [] and rig.follower.history == []


def swap_lokahi_up(rig: Rig) -> list[Action]:
    """A hand swaps Lokahi (s5) up past Nui (s4), an action every 0.15 s, applied to the rig's
    board; the actions, for the sensor model."""
    steps = [("lift", "Lokahi", "s5"), ("lift", "Nui", "s4"), ("put", "Lokahi", "s4"),
             ("put", "Nui", "s5")]
    actions = []
    t = rig.now
    for verb, piece, cell in steps:
        t += 0.15
        actions.append(Action(t, rig.registry.uids_of(piece)[0], cell, put=verb == "put"))
        rig.board.apply(actions[-1])
    return actions


def swap_up(rig: Rig, tiki: str, cell: str, above: str, above_cell: str, *, gap: float = 0.15,
            linger: float = 1.5) -> list[Outcome]:
    """A hand swaps ``tiki`` up past the tiki above it, an action every ``gap`` seconds."""
    return rig.act(("lift", tiki, cell), ("lift", above, above_cell), ("put", tiki, above_cell),
                   ("put", above, cell), gap=gap, linger=linger)


def up_three(rig: Rig, tiki: str, slot: int, above: list[str], *,
             linger: float) -> list[Outcome]:
    """A hand lifts ``tiki`` off slot ``slot``, moves each tiki ``above`` it (nearest first)
    down one slot, and sets it down three slots up."""
    steps: list[tuple[str, str, str | None]] = [("lift", tiki, f"s{slot}")]
    for k, name in enumerate(above, start=1):
        steps += [("lift", name, f"s{slot - k}"), ("put", name, f"s{slot - k + 1}")]
    steps.append(("put", tiki, f"s{slot - len(above)}"))
    return rig.act(*steps, gap=0.15, linger=linger)


def test_a_chattering_empty_cell_does_not_hold_up_a_move() -> None:
    """The presence contact of the empty bottom slot chatters (closed for 30 ms every 0.25 s,
    shorter than the debounce) while the next player swaps Lokahi up one: the chatter is no
    change on the board, the swap settles and is taken as if the contact were quiet."""
    rig = Rig("topple", start(["up1 Kapu", "up1 Eepo", "toast"]))
    assert not rig.board.cells["s9"]
    sensor = rig.geometry.cell("s9").presence
    assert sensor is not None
    actions = swap_lokahi_up(rig)
    t = actions[-1].t
    chatter: list[SensorEvent] = []
    for i in range(16):
        at = rig.now + 0.1 + 0.25 * i
        chatter += [PresenceChanged(at, sensor, True), PresenceChanged(at + 0.03, sensor, False)]
    events = sorted([*rig.sensors.run(actions), *chatter], key=lambda e: e.t)
    out = rig.deliver(events, linger=0.0)
    accepted = [o for o in out if isinstance(o, MoveAccepted)]
    assert [a.text for a in accepted] == ["up1 Lokahi"]
    assert accepted[0].t <= t + rig.follower.settle_long + 0.3


def test_a_move_that_waits_to_rest_is_taken_when_the_next_move_shows_it() -> None:
    """Lokahi up one (also the first swap of an Up 2, so it waits 1 s of rest), and 0.45 s
    later the next player swaps Akamai up one: the second swap starts from the line after the
    first, so the first was finished. Both are taken, none is missed (once the second rested
    as long as a hand pauses: Nui down two slots is also the middle of a Topple of Nui)."""
    rig = Rig("topple", toasted())
    out = rig.act(("lift", "Lokahi", "s5"), ("lift", "Nui", "s4"), ("put", "Lokahi", "s4"),
                  ("put", "Nui", "s5"), gap=0.15, linger=0.3)
    assert Rig.accepted(out) == []
    out = rig.act(("lift", "Akamai", "s6"), ("lift", "Nui", "s5"), ("put", "Akamai", "s5"),
                  ("put", "Nui", "s6"), gap=0.15, linger=1.5)
    assert Rig.accepted(out) == ["up1 Lokahi", "up1 Akamai"]
    assert Rig.guidance(out) == []


def test_the_next_players_wrong_move_does_not_rewrite_the_last_one() -> None:
    """Manami: the totem on b2 is sown b2-b3-c3 (the last token lands on a stack, so the move
    is taken after resting and stays open to revision: a hand carrying a token over a stack
    looks the same). 1.9 s later the next player puts the token on b3 diagonally onto c2, which
    the rules do not allow: that picture is also what b2-c2-c3 would have left, but it comes
    far too late to be the same hand going on. It is a mismatch, not a rewritten record."""
    rig = Rig("manami", manami(TOTEM_ON_B2))
    out = rig.act(("lift", "p1", "b2"), ("lift", "p0", "b2"), ("put", "p0", "b3"),
                  ("put", "p1", "c3"), gap=0.3, linger=1.0)
    assert Rig.accepted(out) == ["b2-b3-c3"]
    out = rig.act(("lift", "p0", "b3"), ("put", "p0", "c2"), gap=0.3, linger=1.5)
    assert [o for o in out if isinstance(o, MoveRevised)] == []
    assert [t for _, t in rig.follower.history][-1] == "b2-b3-c3"
    assert Rig.guidance(out)
    out = rig.act(("lift", "p0", "c2"), ("put", "p0", "b3"), gap=0.3)
    assert Rig.accepted(out) == [] and [t for _, t in rig.follower.history][-1] == "b2-b3-c3"


def test_the_varied_players_keep_real_pace_and_the_bench_reports_it() -> None:
    """The project's own simulator no longer waits ~3 s after every move: with ``--players
    varied`` moves follow 0.5-4 s after the last came to rest, and the bench reports the
    median and p95 from rest to acceptance per game."""
    figures = run("topple", moves=40, seed=5, players="varied")
    assert figures["players"] == "varied" and figures["moves_made"] >= 40
    latency = figures["rest_to_accept_s"]
    assert 0.0 <= latency["p50"] <= latency["p95"]
    rng = random.Random(5)
    game, geometry = get_game("topple"), load_geometry("topple")
    table = SimTable(game, geometry, registry_for("topple"), rng, pace=Pace())
    for _ in range(12):
        table.play_move(game.random_move(table.believed, rng))
    rests = [rest for *_, rest in table._chain]
    table.end_row()
    gaps = [b - a for a, b in pairwise(rests)]
    assert min(gaps) < 3.0, gaps  # steady players: 4.5 s or more from rest to rest
    assert table.stats.moves_made == 12


def test_a_contact_closing_early_under_a_carried_token_places_nothing() -> None:
    """Manami: the token is carried just above the empty a1 on its way to a2; a1's reader reads
    it and the contact, pressed by the hand's approach, closes for 60 ms. One early sample
    never decides a move with no wait: nothing is taken on a1, the move is the one to a2."""
    rig = Rig("manami", manami(["place b1", "place c1", "place a3"]))
    sensor = rig.geometry.cell("a1").presence
    assert sensor is not None and not rig.board.cells["a1"]
    uid = rig.board.off_board("p1")[0]
    t = rig.now + 0.2
    actions = [Action(t, uid, "a1", put=True, hover=True),
               Action(t + 0.15, uid, "a1", put=False, hover=True),
               Action(t + 0.25, uid, "a2", put=True)]
    for action in actions:
        rig.board.apply(action)
    blip = [PresenceChanged(t + 0.06, sensor, True), PresenceChanged(t + 0.12, sensor, False)]
    out = rig.deliver(sorted([*rig.sensors.run(actions), *blip], key=lambda e: e.t))
    assert Rig.accepted(out) == ["place a2"]
    assert [o for o in out if isinstance(o, MoveRevised)] == []


def test_a_swap_onto_a_contact_that_does_not_hold_closed_is_taken() -> None:
    """Topple at pace (a varied-pace bench game, seed 1): Lokahi is swapped up past Nui and
    read on s4 before s4's contact closes; the contact closes for 40 ms and opens again under
    the tiki (it never holds the 80 ms debounce). Lokahi lies on no other cell, so the read
    is s4's own, not a neighbour's: the swap is taken. The first neighbour gating dropped the
    read until the contact held closed, lost Lokahi and raised a mismatch instead."""
    rig = Rig("topple", toasted())
    sensor = rig.geometry.cell("s4").presence
    assert sensor is not None
    actions = swap_lokahi_up(rig)
    reopens = PresenceChanged(actions[2].t + 0.05, sensor, False)
    out = rig.deliver(sorted([*rig.sensors.run(actions), reopens], key=lambda e: e.t))
    assert Rig.accepted(out) == ["up1 Lokahi"]
    assert Rig.guidance(out) == []


def test_two_toasts_in_a_row_then_a_move_are_all_taken() -> None:
    """Huhu toasted, and 0.8 s after it is gone the next player toasts Wikiwiki, and 0.8 s
    later the first swaps Lokahi up one: no removal rested its 1.5 s, but the swap starts from
    the line without both, so both Toasts happened. (Two pieces gone alone prove nothing: a
    hand lifting the bottom two tikis for an Up 1 looks the same.)"""
    rig = Rig("topple", toasted())
    out = rig.act(("lift", "Huhu", "s9"), linger=1.1)
    out += rig.act(("lift", "Wikiwiki", "s8"), linger=1.1)
    assert Rig.accepted(out) == []
    out += swap_up(rig, "Lokahi", "s5", "Nui", "s4")
    assert Rig.accepted(out) == ["toast", "toast", "up1 Lokahi"]
    assert Rig.guidance(out) == []


def test_two_toasts_in_a_row_that_rest_are_taken() -> None:
    """Two Toasts in a row and then the players stop (the round's last cards, or they look at
    the station): the board without both tikis rests as long as a single Toast must, and
    both are taken."""
    rig = Rig("topple", toasted())
    out = rig.act(("lift", "Huhu", "s9"), linger=1.1)
    out += rig.act(("lift", "Wikiwiki", "s8"), linger=3.0)
    assert Rig.accepted(out) == ["toast", "toast"]
    assert Rig.guidance(out) == []
    assert rig.follower.state.line[-1] == "Nani"


def test_a_hand_holding_the_bottom_two_tikis_a_long_time_is_no_two_toasts() -> None:
    """A hand lifts Huhu, then Wikiwiki, for an Up 1 of Huhu, and holds both three seconds
    before it puts them down swapped (which looks like a Topple of Wikiwiki: the players say
    which). Whatever the station made of the two gaps meanwhile, the record ends with the Up 1
    alone, and nothing is left to put right."""
    rig = Rig("topple", toasted())
    rig.act(("lift", "Huhu", "s9"), ("lift", "Wikiwiki", "s8"), gap=0.5, linger=3.0)
    out = rig.act(("put", "Huhu", "s8"), ("put", "Wikiwiki", "s9"), gap=0.3, linger=2.0)
    assert [p.options for p in Rig.prompts(out)] == [("up1 Huhu", "topple Wikiwiki")]
    rig.press("ok")
    assert [t for _, t in rig.follower.history] == ["up1 Huhu"]
    assert rig.follower.decide(rig.now).verdict is Verdict.UNCHANGED


def test_two_toasts_and_a_fumbled_tiki_put_back_are_two_toasts() -> None:
    """Two Toasts in a row, then a hand picks up Nani (now the bottom tiki) and puts it back
    half a second later: for that moment the board looked like a third Toast. Nani back, the
    two Toasts are taken once the board rests, and nothing is shown as a mismatch."""
    rig = Rig("topple", toasted())
    out = rig.act(("lift", "Huhu", "s9"), linger=1.1)
    out += rig.act(("lift", "Wikiwiki", "s8"), linger=0.8)
    out += rig.act(("lift", "Nani", "s7"), ("put", "Nani", "s7"), gap=0.5, linger=3.0)
    assert Rig.accepted(out) == ["toast", "toast"]
    assert Rig.guidance(out) == []


def test_an_up3_made_one_swap_at_a_time_with_long_pauses_is_asked_about() -> None:
    """Lokahi swapped up one slot at a time, the hand resting 0.8 s between the swaps: as long
    as the next player may take to start, so each swap could also be a move of its own (an Up
    1, then the next player's Up 2). The station takes none of them for a move by itself: it
    asks, and the card tapped says it was one Up 3."""
    rig = Rig("topple", toasted())
    out = swap_up(rig, "Lokahi", "s5", "Nui", "s4", linger=0.65)
    out += swap_up(rig, "Lokahi", "s4", "Hookipa", "s3", linger=0.65)
    out += swap_up(rig, "Lokahi", "s3", "Eepo", "s2", linger=1.5)
    assert Rig.accepted(out) == []
    assert "up3 Lokahi" in Rig.prompts(out)[-1].options
    rig.follower.choose("up3", rig.now)
    assert [t for _, t in rig.follower.history] == ["up3 Lokahi"]


def test_an_up3_made_one_swap_at_a_time_with_short_pauses_is_one_move() -> None:
    """The same swaps with 0.3 s between them: sooner than any next player starts, so it is
    one hand making one Up 3, taken without a question."""
    rig = Rig("topple", toasted())
    out = swap_up(rig, "Lokahi", "s5", "Nui", "s4", linger=0.15)
    out += swap_up(rig, "Lokahi", "s4", "Hookipa", "s3", linger=0.15)
    out += swap_up(rig, "Lokahi", "s3", "Eepo", "s2", linger=1.5)
    assert Rig.accepted(out) == ["up3 Lokahi"]
    assert Rig.prompts(out) == []


def test_an_up2_and_the_next_players_up1_of_the_same_tiki_are_asked_about() -> None:
    """Lokahi up two, and 0.6 s after it came to rest the next player swaps Lokahi up once
    more: the board shows what an Up 3 would, but the next player may have started. Asked,
    the players say Up 2 (by buttons): both moves are in the record, in order."""
    rig = Rig("topple", toasted())
    rig.act(("lift", "Lokahi", "s5"), ("lift", "Nui", "s4"), ("put", "Nui", "s5"),
            ("lift", "Hookipa", "s3"), ("put", "Hookipa", "s4"), ("put", "Lokahi", "s3"),
            gap=0.15, linger=0.45)
    out = swap_up(rig, "Lokahi", "s3", "Eepo", "s2", linger=1.0)
    assert Rig.accepted(out) == []
    assert Rig.prompts(out)[-1].options == ("up3 Lokahi", "up2 Lokahi")
    rig.press("menu")
    rig.press("ok")
    rig.wait_until(rig.now + 1.0)
    assert [t for _, t in rig.follower.history] == ["up2 Lokahi", "up1 Lokahi"]


def test_a_swap_and_the_next_players_swap_back_are_asked_about() -> None:
    """Lokahi up one, and 0.6 s later the next player swaps Nui back up past it: the board is
    as it was, which is also what a hand that swapped two tikis and thought better of it
    leaves. The station asks whether Up 1 Lokahi was played; yes, and the next move follows."""
    rig = Rig("topple", toasted())
    swap_up(rig, "Lokahi", "s5", "Nui", "s4", linger=0.45)
    out = swap_up(rig, "Nui", "s5", "Lokahi", "s4", linger=1.0)
    assert Rig.prompts(out)[-1].options == ("up1 Lokahi",)
    rig.press("ok")
    rig.wait_until(rig.now + 1.0)
    assert [t for _, t in rig.follower.history] == ["up1 Lokahi", "up1 Nui"]


def test_a_move_in_the_middle_of_a_row_that_looks_like_a_hand_going_on_is_taken() -> None:
    """Lokahi up one; 0.6 s later the next player swaps Akamai up past Nui (Nui is then two
    slots down: also the middle of a Topple of Nui, a hand that may still be going on); 0.55 s
    later the first player makes an Up 3 of Huhu. The last shows the two before it happened:
    all three are taken, in order."""
    rig = Rig("topple", toasted())
    out = swap_up(rig, "Lokahi", "s5", "Nui", "s4", linger=0.45)
    out += swap_up(rig, "Akamai", "s6", "Nui", "s5", linger=0.4)
    out += up_three(rig, "Huhu", 9, ["Wikiwiki", "Nani", "Nui"], linger=1.5)
    assert Rig.accepted(out) == ["up1 Lokahi", "up1 Akamai", "up3 Huhu"]
    assert Rig.guidance(out) == []


def test_the_next_players_swaps_through_the_old_line_keep_the_last_move_in_question() -> None:
    """Lokahi up one; 0.6 s later the next player, who has no Up 1 left, makes an Up 3 of
    Hookipa by swaps, and its first swap puts Hookipa back above Lokahi: for a moment the line
    is as it was before the Up 1. The Up 1 is not forgotten there: the finished picture is
    Hookipa up two (the first player's) or the Up 1 and then the Up 3, and the players are
    asked. Forgetting it took the Up 2, a move nobody made."""
    rig = Rig("topple", start(["up1 Kapu", "up1 Eepo", "toast", "up1 Nui"]))
    swap_up(rig, "Lokahi", "s5", "Hookipa", "s4", linger=0.45)
    out = swap_up(rig, "Hookipa", "s5", "Lokahi", "s4", linger=0.1)
    out += swap_up(rig, "Hookipa", "s4", "Nui", "s3", linger=0.1)
    out += swap_up(rig, "Hookipa", "s3", "Eepo", "s2", linger=1.0)
    assert Rig.accepted(out) == []
    assert Rig.prompts(out)[-1].options == ("up2 Hookipa", "up1 Lokahi")
    rig.press("menu")
    rig.press("ok")
    rig.wait_until(rig.now + 1.0)
    assert [t for _, t in rig.follower.history][-2:] == ["up1 Lokahi", "up3 Hookipa"]


def test_three_quick_moves_that_sum_to_one_are_three_moves() -> None:
    """Akamai up one, Huhu up one, then Lokahi up three, each begun 0.8 s after the last came
    to rest: the line ends as Lokahi up one alone would leave it. But the first picture put
    Lokahi below Akamai, a cell that move never touches, and rested there: the three moves are
    taken, in order. (Zero-noise accuracy bench, Topple table 1000019: the single Up 1 was
    taken and the game went on one move off, 10 phantom and 12 missed.) The second player has
    no Up 2 left, so the first move and one more cannot make the picture: nothing to ask."""
    rig = Rig("topple", start(["up1 Kapu", "up2 Huhu"]))
    assert [slots(rig, f"s{i}") for i in range(4, 8)] == ["Nui", "Lokahi", "Akamai", "Huhu"]
    out = swap_up(rig, "Akamai", "s6", "Lokahi", "s5", linger=0.8)
    out += swap_up(rig, "Huhu", "s7", "Lokahi", "s6", linger=0.8)
    out += up_three(rig, "Lokahi", 7, ["Huhu", "Akamai", "Nui"], linger=2.0)
    assert Rig.accepted(out) == ["up1 Akamai", "up1 Huhu", "up3 Lokahi"]
    assert Rig.prompts(out) == [] and Rig.guidance(out) == []


def test_a_tiki_up_twice_then_back_down_is_three_moves() -> None:
    """Lokahi up one, the next player's Lokahi up one again, then Eepo up one back past it,
    each begun 0.8 and 0.5 s after the last came to rest: the line ends as the first move
    left it. The third hand lifts Lokahi before Eepo, a swap the position does not list as on
    its way, so for a moment only the first move explains the picture; the second is kept
    while that hand holds a tiki. All three are taken. (Zero-noise Topple table 1000103: the
    first alone was taken, 4 phantom and 6 missed after it.)"""
    rig = Rig("topple", start(["up2 Huhu", "up2 Wikiwiki"]))  # (no Up 2 left: no question)
    out = swap_up(rig, "Lokahi", "s5", "Nui", "s4", linger=0.8)
    out += swap_up(rig, "Lokahi", "s4", "Eepo", "s3", linger=0.5)
    out += swap_up(rig, "Lokahi", "s3", "Eepo", "s4", linger=2.0)
    assert Rig.accepted(out) == ["up1 Lokahi", "up1 Lokahi", "up1 Eepo"]
    assert Rig.prompts(out) == [] and Rig.guidance(out) == []


def test_a_card_two_options_share_answers_nothing() -> None:
    """Lokahi up one, then the next player moves Nui up two: the board shows what Nui up one
    would. Both readings begin with an Up 1 card, so a tapped Up 1 card cannot say which:
    nothing is taken on it (the first such option was), and the buttons decide."""
    rig = Rig("topple", toasted())
    swap_up(rig, "Lokahi", "s5", "Nui", "s4", linger=0.45)
    out = rig.act(("lift", "Nui", "s5"), ("lift", "Lokahi", "s4"), ("put", "Lokahi", "s5"),
                  ("lift", "Hookipa", "s3"), ("put", "Hookipa", "s4"), ("put", "Nui", "s3"),
                  gap=0.15, linger=1.0)
    assert Rig.prompts(out)[-1].options == ("up1 Nui", "up1 Lokahi")
    assert rig.follower.choose("up1", rig.now) == []
    rig.press("menu")
    rig.press("ok")
    rig.wait_until(rig.now + 1.0)
    assert [t for _, t in rig.follower.history] == ["up1 Lokahi", "up2 Nui"]


def test_a_topple_whose_hand_holds_two_tikis_a_while_is_one_topple() -> None:
    """Akamai toppled by a hand that swaps it down once (which looks like Up 1 Nani), then at
    once lifts the bottom two tikis and holds them two seconds before it finishes: the lifts
    came sooner than any next player starts, so they are no Toasts after an Up 1. The record
    is the Topple alone."""
    rig = Rig("topple", toasted())
    rig.act(("lift", "Akamai", "s6"), ("lift", "Nani", "s7"), ("put", "Akamai", "s7"),
            ("put", "Nani", "s6"), gap=0.15, linger=0.0)
    rig.act(("lift", "Huhu", "s9"), ("lift", "Wikiwiki", "s8"), gap=0.45, linger=2.2)
    rig.act(("lift", "Akamai", "s7"), ("put", "Wikiwiki", "s7"), ("put", "Huhu", "s8"),
            ("put", "Akamai", "s9"), gap=0.15, linger=2.0)
    assert [t for _, t in rig.follower.history] == ["topple Akamai"]
