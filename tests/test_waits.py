"""The follower's waits are one frozen record, paced on the scan cycle as a new record."""

from __future__ import annotations

import dataclasses
import random

import pytest

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Follower
from pi_app.board.geometry import load_geometry
from pi_app.board.pacing import CYCLES
from pi_app.board.waits import NAMES, Waits
from pi_app.games import get_game
from pi_app.readings import ScanCycle


def test_a_wait_cannot_be_set() -> None:
    waits = Waits()
    with pytest.raises(dataclasses.FrozenInstanceError):
        waits.settle = 1.0  # type: ignore[misc]


def test_pacing_gives_a_new_record_of_floors_and_cycles() -> None:
    floors = Waits(settle_min=0.3)
    assert floors.paced(0.05) == floors  # a fast board keeps its floors
    slow = floors.paced(1.0)
    assert slow is not floors and floors.settle_min == 0.3
    assert slow.settle_min == CYCLES["settle_min"] * 1.0
    assert slow.revise_placed == CYCLES["revise_placed"] * 1.0
    assert slow.miss_grace == CYCLES["miss_grace"] * 1.0
    unpaced = set(NAMES) - set(CYCLES)
    assert {n: getattr(slow, n) for n in unpaced} == {n: getattr(floors, n) for n in unpaced}
    assert Waits(settle_min=0.0).paced(2.0).settle_min == 0.0  # switched off stays off


def test_the_follower_paces_its_configured_waits_on_the_reported_cycle() -> None:
    game = get_game("tactiki")
    geometry = load_geometry("tactiki")
    follower = Follower(
        game,
        game.new_game(random.Random(1)),
        geometry,
        registry_for("tactiki"),
        settle=0.3,
        settle_long=0.7,
    )
    configured = follower.configured_waits
    assert (configured.settle, configured.settle_long) == (0.3, 0.7)
    assert configured.settle_min == geometry.settle_min  # None: the board's own
    assert follower.waits == configured.paced(geometry.scan_period)
    follower.feed(ScanCycle(1.0, 1.2, 0.05), 1.0)
    assert follower.configured_waits is configured
    assert follower.waits == configured.paced(1.2)
    assert follower.tracker.miss_grace == follower.waits.miss_grace
    assert follower.revise_placed == follower.waits.revise_placed  # mirrored for callers
