"""Swiss pairings for the two-player games (Manami, TacTiki), by maximum-weight matching.

The reference is FIDE's Dutch system (C.04.3); this is a simpler relative of it that keeps its
promises in a fixed order of importance instead of its bracket-by-bracket procedure. Every
possible pair of active players (and "player gets the bye") is an edge of a graph whose weight
encodes, lexicographically, how badly the pair breaks each rule below; networkx's
``max_weight_matching`` with ``maxcardinality=True`` then picks the pairing of everybody that
breaks the first rule least, among those the second least, and so on:

1. **First-player limit** — nobody's first-player count may exceed their second-player count by
   more than 2, or fall short of it by more than 2: two players who both *must* move first (or
   both second) are not paired. (Dutch: absolute colour preference, criterion C3.)
2. **No repeat pairings** — two players meet again only when no pairing without a repeat
   exists; then the fewest repeats. (Dutch: C1, absolute there; here minimised.)
3. **Never the same seat three times in a row** — two players who each took the same seat in
   both of their last two games are not paired when it can be helped. (Dutch: also part of the
   absolute colour preference.)
4. **The bye** — with an odd number of active players, one bye per round, worth a win; only a
   player with the fewest byes can get it (so nobody gets a second bye while another active
   player has none), and among those the lowest-ranked one, unless that breaks rules 1-3 more.
5. **Score groups** — players meet players on their own score; when someone has to float, the
   smallest gaps: the sum of the squared score differences of the pairs is minimal, so one
   float of 1 point is preferred to one of 2, and two of 1 point to one of 2.
6. **First-player preferences** — players who both lean to the same seat (more games first
   than second, or the same seat last time) are paired with each other as little as possible.
7. **Order inside a score group** — the top half meets the bottom half (1 v 5, 2 v 6...
   in a group of 8), and a floater meets the top of the group below.

Players are ranked by points, then by their initial order (:func:`seed_order`: rating, or a
seeded shuffle when nobody is rated), so round 1 is the top half of the seed list against the
bottom half and the lowest-seeded player gets the bye.

Seats, once the pairs are made, follow the Dutch colour allocation: a player who must take a
seat (rule 1, then rule 3) gets it; then the one further from balance; then the pair takes the
seats opposite to the last round in which they differed; then the higher-ranked player's
preference; in round 1 the higher-ranked player moves first on odd tables and second on even.

Not Dutch-conformant: brackets are not paired one at a time with their exchange and transposition
order, so which players float and the exact pairs inside a group can differ from a Dutch program
(such as JaVaFo or bbpPairings); repeats and the colour limit are minimised, not absolute; no
float history is kept (a player may float down twice in a row); no top-scorer exception in the
last round; accelerated pairings and forfeits are not supported. Withdrawn players are not paired.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import networkx as nx

from pi_app.tournament.model import Pairing, Tournament, TournamentError
from pi_app.tournament.standings import points, seed_order

#: First and second player, as seats.
FIRST: Final = 0
SECOND: Final = 1
#: The most a player's first-player count may differ from their second-player count.
LIMIT: Final = 2


@dataclass
class History:
    """What pairing needs to know about one player from the rounds so far."""

    points: float = 0.0
    met: Counter[str] = field(default_factory=Counter)
    seats: list[int] = field(default_factory=list)   # seat of each game, oldest first
    byes: int = 0

    @property
    def balance(self) -> int:
        """Games as first player minus games as second player."""
        return self.seats.count(FIRST) - self.seats.count(SECOND)

    def must(self) -> int | None:
        """The seat this player must take to stay within :data:`LIMIT`, if any."""
        if self.balance >= LIMIT:
            return SECOND
        if self.balance <= -LIMIT:
            return FIRST
        return None

    def streak(self) -> int | None:
        """The seat that avoids a third game in a row in the same seat, if any."""
        if len(self.seats) >= 2 and self.seats[-1] == self.seats[-2]:
            return 1 - self.seats[-1]
        return None

    def leans(self) -> int | None:
        """The seat that brings this player nearer balance, if unbalanced."""
        return SECOND if self.balance > 0 else FIRST if self.balance < 0 else None

    def alternates(self) -> int | None:
        """For a balanced player: the seat other than last time."""
        return 1 - self.seats[-1] if self.seats and self.balance == 0 else None


def histories(tournament: Tournament) -> dict[str, History]:
    """Every player's history (withdrawn ones too: they stay opponents of others)."""
    scores = points(tournament)
    found = {p.id: History(points=scores[p.id]) for p in tournament.players}
    for _rnd, pairing in tournament.played():
        if pairing.bye:
            if not pairing.half:   # a half-point bye asked for is not the allocated bye
                found[pairing.seats[0]].byes += 1
            continue
        if pairing.result is not None and pairing.result.forfeit:
            continue               # not played: no seat, and the two may still meet
        for seat, pid in enumerate(pairing.seats):
            found[pid].seats.append(seat)
            for other in pairing.seats:
                if other != pid:
                    found[pid].met[other] += 1
    return found


def ranking(tournament: Tournament, hist: dict[str, History]) -> list[str]:
    """The active players in pairing order: points, then initial order."""
    seed = {pid: i for i, pid in enumerate(seed_order(tournament))}
    active = [p.id for p in tournament.active()]
    return sorted(active, key=lambda pid: (-hist[pid].points, seed[pid]))


def _clash(a: int | None, b: int | None) -> int:
    return int(a is not None and a == b)


def _pair_costs(a: str, b: str, hist: dict[str, History],
                place: dict[str, tuple[int, int, int]]) -> tuple[int, ...]:
    """How badly pairing ``a`` (ranked higher) with ``b`` breaks each rule, in rule order."""
    ha, hb = hist[a], hist[b]
    limit = _clash(ha.must(), hb.must())
    need_a = ha.must() if ha.must() is not None else ha.streak()
    need_b = hb.must() if hb.must() is not None else hb.streak()
    streak = 0 if limit else _clash(need_a, need_b)
    gap = round(2 * (ha.points - hb.points))
    soft = 2 * _clash(ha.leans(), hb.leans()) + _clash(ha.alternates(), hb.alternates())
    group_a, pos_a, size_a = place[a]
    group_b, pos_b, _size = place[b]
    if group_a == group_b:
        order = (abs(pos_a - pos_b) - size_a // 2) ** 2
    else:
        order = (size_a - 1 - pos_a) + pos_b
    return (limit, ha.met[b], streak, 0, gap * gap, soft, order)


def _groups(ranked: Sequence[str], hist: dict[str, History]) -> dict[str, tuple[int, int, int]]:
    """Each player's score group (0 = top), place in it and the group's size."""
    sizes = Counter(hist[pid].points for pid in ranked)
    order = sorted(sizes, reverse=True)
    seen: Counter[float] = Counter()
    place = {}
    for pid in ranked:
        score = hist[pid].points
        place[pid] = (order.index(score), seen[score], sizes[score])
        seen[score] += 1
    return place


def _weights(costs: dict[tuple[int, int], tuple[int, ...]],
             pairs: int) -> dict[tuple[int, int], int]:
    """Integer weights whose maximum-weight matching is the lexicographically cheapest one.

    A component's base exceeds what all the pairs of a matching can add up to in the
    components after it, so one unit of an earlier rule outweighs any amount of later ones.
    """
    width = len(next(iter(costs.values())))
    bases = [max(c[k] for c in costs.values()) * pairs + 1 for k in range(width)]
    total = 1
    for base in bases:
        total *= base
    weights = {}
    for edge, cost in costs.items():
        value = 0
        for k in range(width):
            value = value * bases[k] + cost[k]
        weights[edge] = total - value
    return weights


def _seats(a: str, b: str, table: int, hist: dict[str, History]) -> tuple[str, str]:
    """Who moves first at a table of ``a`` (ranked higher) and ``b``: the Dutch colour rules."""
    ha, hb = hist[a], hist[b]

    def give(player: str, seat: int) -> tuple[str, str]:
        other = b if player == a else a
        return (player, other) if seat == FIRST else (other, player)

    for rule in (History.must, History.streak, History.leans):
        want_a, want_b = rule(ha), rule(hb)
        if want_a is not None and want_a != want_b:
            return give(a, want_a)
        if want_b is not None and want_a != want_b:
            return give(b, want_b)
        if want_a is None:
            continue
        # Both want the same seat: a need goes to the higher-ranked; a leaning to the player
        # further from balance, and between equals to the alternation below.
        if rule is not History.leans or abs(ha.balance) > abs(hb.balance):
            return give(a, want_a)
        if abs(hb.balance) > abs(ha.balance):
            return give(b, want_a)
        break
    for seat_a, seat_b in zip(reversed(ha.seats), reversed(hb.seats), strict=False):
        if seat_a != seat_b:
            return give(a, 1 - seat_a)
    if ha.seats:
        return give(a, 1 - ha.seats[-1])
    if hb.seats:
        return give(b, 1 - hb.seats[-1])
    return give(a, FIRST if table % 2 == 1 else SECOND)


def pair_swiss(tournament: Tournament) -> tuple[Pairing, ...]:
    """The next round's tables for a two-player game (results of earlier rounds confirmed).

    Tables are numbered from 1, strongest first (by the pair's points, then rank); a bye, if
    any, is the last "table".
    """
    if not tournament.game.two_player:
        raise TournamentError(f"{tournament.game} is not a two-player game: seat its tables")
    hist = histories(tournament)
    ranked = ranking(tournament, hist)
    if len(ranked) < 2:
        return tuple(Pairing(1, (pid,)) for pid in ranked)
    rank = {pid: i for i, pid in enumerate(ranked)}
    place = _groups(ranked, hist)
    costs: dict[tuple[int, int], tuple[int, ...]] = {}
    for i, a in enumerate(ranked):
        for j in range(i + 1, len(ranked)):
            costs[(i, j)] = _pair_costs(a, ranked[j], hist, place)
    bye_node = len(ranked)
    if len(ranked) % 2:
        fewest = min(hist[pid].byes for pid in ranked)
        candidates = [pid for pid in ranked if hist[pid].byes == fewest]
        for below, pid in enumerate(reversed(candidates)):
            costs[(rank[pid], bye_node)] = (0, 0, 0, below, 0, 0, 0)
    graph: nx.Graph[int] = nx.Graph()
    for (i, j), weight in _weights(costs, len(ranked) // 2 + 1).items():
        graph.add_edge(i, j, weight=weight)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    pairs: list[tuple[str, str]] = []
    bye: str | None = None
    for u, v in matching:
        i, j = sorted((u, v))
        if j == bye_node:
            bye = ranked[i]
        else:
            pairs.append((ranked[i], ranked[j]))
    if 2 * len(pairs) + (bye is not None) != len(ranked):
        raise TournamentError("no pairing of every player was found")  # a complete graph has one
    pairs.sort(key=lambda p: (-max(hist[p[0]].points, hist[p[1]].points),
                              -min(hist[p[0]].points, hist[p[1]].points), rank[p[0]]))
    tables = [Pairing(n, _seats(a, b, n, hist)) for n, (a, b) in enumerate(pairs, start=1)]
    if bye is not None:
        tables.append(Pairing(len(pairs) + 1, (bye,)))
    return tuple(tables)
