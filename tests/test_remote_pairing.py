"""Pairing by a short code (pi_app.net.remote_pairing): each bad input refused with its reason,
and a refusal costs nothing."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_app.net import remote_pairing as rp


def test_a_code_pairs_two_boards_once() -> None:
    desk = rp.PairingDesk("cup")
    code = desk.offer("alpha", "manami", 0.0, random.Random(1))
    assert len(code) == rp.LENGTH + 1
    assert desk.join(code, "alpha", "cup", "manami", 1.0) == rp.SAME_BOARD
    assert desk.join(code, "beta", "other", "manami", 1.0) == rp.OTHER_EVENT
    assert desk.join(code, "beta", "cup", "tactiki", 1.0) == rp.OTHER_GAME
    # every refusal above left the offer standing; typed loosely, it still works
    loose = code.lower()[:3] + "-" + code.lower()[3:]
    assert desk.join(loose, "beta", "cup", "manami", 2.0) == rp.Paired("manami", "alpha", "beta")
    assert desk.join(code, "gamma", "cup", "manami", 3.0) == rp.USED


def test_an_old_code_is_refused_as_expired_and_a_new_offer_replaces_the_old() -> None:
    desk = rp.PairingDesk("cup")
    rng = random.Random(2)
    old = desk.offer("alpha", "manami", 0.0, rng)
    assert desk.join(old, "beta", "cup", "manami", rp.TTL_S + 1) == rp.EXPIRED
    first = desk.offer("alpha", "manami", 0.0, rng)
    second = desk.offer("alpha", "manami", 1.0, rng)
    assert desk.join(first, "beta", "cup", "manami", 2.0) == rp.UNKNOWN
    assert isinstance(desk.join(second, "beta", "cup", "manami", 2.0), rp.Paired)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), at=st.integers(0, rp.LENGTH - 1), by=st.integers(1, 31))
def test_one_mistyped_character_is_told_from_an_unknown_code(seed: int, at: int,
                                                               by: int) -> None:
    desk = rp.PairingDesk("cup")
    code = desk.offer("alpha", "manami", 0.0, random.Random(seed))
    wrong = rp.ALPHABET[(rp.ALPHABET.index(code[at]) + by) % 32]
    typo = code[:at] + wrong + code[at + 1:]
    assert desk.join(typo, "beta", "cup", "manami", 1.0) == rp.MISTYPED
    swapped = code[1] + code[0] + code[2:]
    if swapped != code:
        assert desk.join(swapped, "beta", "cup", "manami", 1.0) == rp.MISTYPED
    assert isinstance(desk.join(code, "beta", "cup", "manami", 1.0), rp.Paired)
