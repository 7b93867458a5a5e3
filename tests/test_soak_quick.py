"""A short soak: a Topple game through the real daemon while the link takes garbage bursts and
an unplugged cable; every move the players made is followed (the long runs: README)."""

from __future__ import annotations

import pytest

from tools.bench.soak import soak

pytestmark = [pytest.mark.slow, pytest.mark.realtime]

def test_moves_are_followed_through_garbage_and_an_unplugged_cable() -> None:
    report = soak("topple", games=1, turns=16, seed=4, fault_every=1.0)
    assert report["moves_made"] >= 8
    assert report["lost"] == 0, report
    assert report["followed"] == report["moves_made"]
    assert report["garbage_bursts"] >= 1 and report["link"]["frames_bad"] >= 1
    assert report["unplugs"] >= 1 and report["link"]["connects"] >= 2
    assert report["longest_reconnect_s"] < 10
