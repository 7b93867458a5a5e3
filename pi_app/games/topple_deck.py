"""The Secret Tiki deck, read from ``pi_app/data/topple_deck.json``.

Only five of the 27 printed cards are known (the rulebook's scoring example and one review); the
other 22 are a documented synthetic completion, marked ``"printed": false`` in the data file
(ruling R2 in ``seeds/tiki-topple.md``). Records never depend on this table: replay accepts any
card of three different tikis. The station uses it only to deal.
"""

from __future__ import annotations

import json
import random
from functools import cache
from importlib import resources

Card = tuple[str, str, str]


@cache
def deck() -> tuple[Card, ...]:
    """All 27 cards as (9-point, 5-point, 2-point) tikis, in table order."""
    data = json.loads(resources.files("pi_app.data").joinpath("topple_deck.json").read_text())
    return tuple((c["card"][0], c["card"][1], c["card"][2]) for c in data["cards"])


@cache
def printed_cards() -> frozenset[Card]:
    """The cards known to be printed in the real deck."""
    data = json.loads(resources.files("pi_app.data").joinpath("topple_deck.json").read_text())
    return frozenset((c["card"][0], c["card"][1], c["card"][2])
                     for c in data["cards"] if c["printed"])


def draw_cards(rng: random.Random, n: int,
               dealt: frozenset[Card] = frozenset()) -> tuple[Card, ...]:
    """``n`` different cards from the draw pile (the deck less ``dealt``).

    When the pile is too small, the discards are shuffled back in (ruling R5).
    """
    pile = [card for card in deck() if card not in dealt]
    if len(pile) < n:
        pile = list(deck())
    return tuple(rng.sample(pile, n))
