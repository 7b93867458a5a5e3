"""Topple playouts on plain lists: the search's rollout to the round's end without the engine's
immutable states.

A profile of a four-player search decision at 300 playouts (cProfile, this x86) put two thirds
of its time in the playouts' greedy moves: each built a :class:`~pi_app.games.topple.ToppleState`
per legal move (``apply``) only to read the line back (``evaluate``), some twenty per move and
up to 24 moves to a round's end. A round's rest needs only the line, the hands, who has opened
and whose turn it is, so this module plays it on lists and values a candidate move by its line
alone. The rules are the engine's (``legal_moves``, ``random_move``, ``apply``, the round's
end); ``tests/test_bots_topple.py`` plays random rounds both ways and checks that every line,
hand and end agrees, so the engine stays the one reference.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pi_app.games.topple import CARD_POINTS, TIKIS_LEFT_AT_END, ToppleState, score_card

Card = tuple[str, str, str]
#: A playout's move: the card's index in ``topple.CARDS`` and the tiki's place in the line
#: (ignored for a Toast).
FastMove = tuple[int, int]

_TOAST = 4
_TOPPLE = 3


def line_value(line: Sequence[str], card: Card) -> float:
    """The greedy evaluation of ``line`` for the holder of ``card``: the points it would score
    if the round ended now, plus a share for tikis of the card close to their scoring place
    (a tiki one place too low is worth more than one at the bottom, which the next Toast
    removes). :meth:`ToppleModel.evaluate <pi_app.bots.models.ToppleModel.evaluate>` is this."""
    score = float(score_card(line, card))
    last = len(line) - 1
    for tiki, (value, places) in zip(card, CARD_POINTS, strict=True):
        if tiki in line:
            pos = line.index(tiki)
            below = pos + 1 - places
            if below > 0:
                score += value * 0.5 ** (below + 1)
            if pos == last:
                score -= value * 0.25
    return score


def moves(line: Sequence[str], hand: Sequence[int], opened: bool,
          topple_bottom: bool) -> list[FastMove]:
    """The engine's ``legal_moves`` as ``(card index, place)``, in the engine's order."""
    n = len(line)
    out: list[FastMove] = []
    for index in (0, 1, 2):
        if hand[index]:
            out += [(index, pos) for pos in range(index + 1, n)]
    if hand[_TOPPLE]:
        out += [(_TOPPLE, pos) for pos in range(n if topple_bottom else n - 1)]
    if hand[_TOAST] and opened:
        out.append((_TOAST, n - 1))
    return out


def after(line: list[str], move: FastMove) -> list[str]:
    """The line after ``move`` (a new list): the engine's ``apply`` on the line alone."""
    index, pos = move
    if index == _TOAST:
        return line[:-1]
    tiki = line[pos]
    if index == _TOPPLE:
        return line[:pos] + line[pos + 1:] + [tiki]
    up = index + 1
    return [*line[:pos - up], tiki, *line[pos - up:pos], *line[pos + 1:]]


def random_move(line: Sequence[str], hand: Sequence[int], opened: bool, topple_bottom: bool,
                rng: random.Random) -> FastMove:
    """A uniform draw from :func:`moves` without building the list."""
    n = len(line)
    counts = (n - 1 if hand[0] else 0, n - 2 if hand[1] else 0, n - 3 if hand[2] else 0,
              (n if topple_bottom else n - 1) if hand[_TOPPLE] else 0,
              1 if hand[_TOAST] and opened else 0)
    pick = rng.randrange(sum(counts))
    for index, count in enumerate(counts):
        if pick < count:
            if index == _TOAST:
                return (_TOAST, n - 1)
            return (index, pick + index + 1 if index < _TOPPLE else pick)
        pick -= count
    raise AssertionError("unreachable: pick is below the sum of the counts")


#: Per tiki of a card (top, middle, bottom): what it adds to :func:`line_value` at each place
#: of the line, not counting the bottom place's penalty (see :func:`_card_value`).
_PLACE_VALUE: tuple[tuple[float, ...], ...] = tuple(
    tuple((value if pos < places else 0) + (value * 0.5 ** (pos + 2 - places)
                                           if pos + 1 - places > 0 else 0.0)
          for pos in range(9))
    for value, places in CARD_POINTS)
_BOTTOM_PENALTY: tuple[float, ...] = tuple(value * 0.25 for value, _ in CARD_POINTS)


def _card_value(places: Sequence[int], length: int) -> float:
    """:func:`line_value` from the places of the card's tikis alone (-1: toasted) in a line of
    ``length``. Every term is a small multiple of a power of two, so the sum is exact in any
    order and equals :func:`line_value`'s."""
    score = 0.0
    last = length - 1
    for j, pos in enumerate(places):
        if pos >= 0:
            score += _PLACE_VALUE[j][pos]
            if pos == last:
                score -= _BOTTOM_PENALTY[j]
    return score


def greedy_move(line: list[str], hand: Sequence[int], opened: bool, topple_bottom: bool,
                card: Card) -> FastMove:
    """The move whose line :func:`line_value` likes best for ``card`` (the first of equals, in
    the engine's order). A move only shifts tikis, so each candidate is valued from where it
    puts the card's three tikis (:func:`_card_value`, written out here: this is the playouts'
    inner loop), without building its line."""
    n = len(line)
    last = n - 1
    where = [(line.index(t) if t in line else -1, _PLACE_VALUE[j], _BOTTOM_PENALTY[j])
             for j, t in enumerate(card)]
    best: FastMove = (0, 0)
    best_score = float("-inf")
    for index in (0, 1, 2):
        if hand[index]:
            up = index + 1
            for pos in range(up, n):
                low = pos - up
                score = 0.0
                for now, values, penalty in where:
                    if now >= 0:
                        x = now - up if now == pos else now + 1 if low <= now < pos else now
                        score += values[x]
                        if x == last:
                            score -= penalty
                if score > best_score:
                    best, best_score = (index, pos), score
    if hand[_TOPPLE]:
        for pos in range(n if topple_bottom else last):
            score = 0.0
            for now, values, penalty in where:
                if now >= 0:
                    x = last if now == pos else now - 1 if now > pos else now
                    score += values[x]
                    if x == last:
                        score -= penalty
            if score > best_score:
                best, best_score = (_TOPPLE, pos), score
    if hand[_TOAST] and opened:
        score = _card_value([-1 if x == last else x for x, _, _ in where], n - 1)
        if score > best_score:
            best = (_TOAST, last)
    return best


def playout(state: ToppleState, rng: random.Random, random_share: float) -> list[int]:
    """Each seat's points at the end of the round ``state`` is in (0 for a seat not in it):
    every move a random one with probability ``random_share``, else the mover's greedy move
    for the Secret Tiki card it holds in ``state`` (a determinized state holds every card)."""
    table = state.table
    cards = table.cards
    line = list(state.line)
    turn = state.turn
    if turn is not None:
        hands = [list(h) for h in state.hands]
        opened = list(state.opened)
        seats = table.seats
        following = {s: seats[(i + 1) % len(seats)] for i, s in enumerate(seats)}
        left = sum(sum(hands[s]) for s in seats)
        bottom = table.topple_bottom
        while True:
            hand = hands[turn]
            card = cards[turn]
            if card is None or rng.random() < random_share:
                move = random_move(line, hand, opened[turn], bottom, rng)
            else:
                move = greedy_move(line, hand, opened[turn], bottom, card)
            line = after(line, move)
            hand[move[0]] -= 1
            opened[turn] = True
            left -= 1
            if len(line) <= TIKIS_LEFT_AT_END or not left:
                break
            turn = following[turn]
    return [0 if c is None else score_card(line, c) for c in cards]
