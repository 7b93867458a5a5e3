"""Pairing two boards into one remote game by a short code (issue 36, docs/remote-play.md).

Board A asks the authority for a game and shows the code on its OLED; the player at board B
types it on B's page. The code only names the offer: each station still logs in to the broker
with its own credentials, so knowing a code never lets anyone speak for a board.

Form: six characters of Crockford's base32 (no I, L, O, U: nothing to confuse with 1, 0 or V)
and a seventh, the check symbol of Crockford's scheme (the value modulo 37), so a mistyped
character is told apart from a code nobody offered, and the refusal says which. Typing is
forgiving as Crockford intends: lower case, ``I``/``L`` for 1, ``O`` for 0, dashes and spaces.
Pure: the caller passes the clock and the random source.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CHECK = ALPHABET + "*~$=U"
LENGTH = 6
#: Seconds an offer stands: long enough to walk to the other board, short enough that a code
#: seen over a shoulder is soon worth nothing.
TTL_S = 300.0

MISTYPED = "mistyped"
UNKNOWN = "unknown"
EXPIRED = "expired"
USED = "used"
SAME_BOARD = "same-board"
OTHER_EVENT = "other-event"
OTHER_GAME = "other-game"


def _value(body: str) -> int:
    value = 0
    for char in body:
        value = value * 32 + ALPHABET.index(char)
    return value


def with_check(body: str) -> str:
    """``body`` and its check symbol."""
    return body + CHECK[_value(body) % 37]


def normalise(text: str) -> str:
    """What was typed, as the code's own characters (Crockford's decoding rules)."""
    out = text.strip().upper().replace("-", "").replace(" ", "")
    return out.translate(str.maketrans("ILO", "110"))


@dataclass(frozen=True)
class Offer:
    code: str
    event: str
    board: str
    game: str
    expires: float


@dataclass(frozen=True)
class Paired:
    """Two boards in one game: ``first`` made the offer (seat 0), ``second`` took it."""
    game: str
    first: str
    second: str


@dataclass
class PairingDesk:
    """The authority's open offers, each usable once."""
    event: str
    offers: dict[str, Offer] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def offer(self, board: str, game: str, now: float, rng: random.Random) -> str:
        """A fresh code for ``board``'s offer of ``game`` (any earlier offer of it lapses)."""
        self.offers = {c: o for c, o in self.offers.items() if o.board != board}
        while True:
            code = with_check("".join(rng.choice(ALPHABET) for _ in range(LENGTH)))
            if code not in self.offers and code not in self.used:
                break
        self.offers[code] = Offer(code, self.event, board, game, now + TTL_S)
        return code

    def join(self, typed: str, board: str, event: str, game: str, now: float
             ) -> Paired | str:
        """The pairing, or the reason it is refused (one of the module's words); a refusal
        changes nothing, so the right code still works afterwards."""
        code = normalise(typed)
        if (len(code) != LENGTH + 1 or any(c not in ALPHABET for c in code[:LENGTH])
                or with_check(code[:LENGTH]) != code):
            return MISTYPED
        if event != self.event:
            return OTHER_EVENT
        if code in self.used:
            return USED
        offer = self.offers.get(code)
        if offer is None:
            return UNKNOWN
        if now > offer.expires:
            del self.offers[code]
            return EXPIRED
        if board == offer.board:
            return SAME_BOARD
        if game != offer.game:
            return OTHER_GAME
        del self.offers[code]
        self.used.add(code)
        return Paired(offer.game, offer.board, board)
