"""Seatings for Tiki Topple: tables of 4, and of 3 where the number of players needs it.

Each round the active players are ranked by the standings (points, then tables won, then
initial order) and seated so that:

1. **Table sizes** — as many tables of 4 as possible with everybody seated: ``n`` players make
   ``(-n) % 4`` tables of 3 and the rest of 4 (10 players: 4+3+3). Counts that 3s and 4s cannot
   make use Topple's smaller games: 2 players sit at one table of 2, 5 at a 3 and a 2, and a
   lone player gets a bye (no points).
2. **Few meetings again** — the number of pairs of players at the same table who have shared a
   table before (counted once per earlier meeting) is the smallest the search finds.
3. **Grouped by standing** — among those seatings, each table's spread in the ranking (its
   lowest-ranked player's place minus its highest's, summed over the tables) is smallest, so the
   leaders play the leaders; with no earlier meetings that is simply 1-4, 5-8, ... (tables of 3
   at the bottom).

The plain seating in ranking order (1-4, 5-8, ... with the tables of 3 at the bottom) is the
answer whenever nobody there meets again. Otherwise a depth-first branch-and-bound search on
(meetings, spread) looks for better: each table is opened by the best player not yet seated and
filled from the next :data:`WINDOW` players in the ranking, fewest meetings first. It never does
worse than the plain seating and it is exact for fields up to ``WINDOW + 1`` (12) players. Past
:data:`BUDGET` table choices it keeps the best seating found and swaps players between tables
while a swap lowers (meetings, spread); on 40 players over 7 rounds that leaves a handful of
meetings again, all in the last rounds (measured: docs/tournament.md).

Seat order at each table rotates who moves first: seat 0 goes to the player who has moved first
least often, then to whoever sat furthest from the first seat before, then to the higher-ranked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Final

from pi_app.tournament.model import Game, Pairing, Tournament, TournamentError
from pi_app.tournament.standings import seed_order, standings

#: The most table choices the search tries before it settles for the best seating so far.
BUDGET: Final = 20_000
#: How far down the ranking a table may reach for players: the best unseated player and the
#: next WINDOW. A field of up to WINDOW + 1 players is searched in full.
WINDOW: Final = 11


def table_sizes(count: int) -> list[int]:
    """The table sizes for ``count`` players, largest first (a lone player's bye not counted)."""
    if count <= 1:
        return []
    if count in (2, 5):
        return [3, 2] if count == 5 else [2]
    threes = (-count) % 4
    return [4] * ((count - 3 * threes) // 4) + [3] * threes


def meetings(tournament: Tournament) -> Counter[frozenset[str]]:
    """How often each pair of players has shared a table."""
    met: Counter[frozenset[str]] = Counter()
    for _rnd, pairing in tournament.played():
        for a, b in combinations(pairing.seats, 2):
            met[frozenset((a, b))] += 1
    return met


def topple_ranking(tournament: Tournament) -> list[str]:
    """The active players in seating order: the standings, ties by initial order."""
    seed = {pid: i for i, pid in enumerate(seed_order(tournament))}
    line = {s.player_id: (-s.points, *(-v for v in s.tiebreaks(tournament.game)))
            for s in standings(tournament)}
    active = [p.id for p in tournament.active()]
    return sorted(active, key=lambda pid: (line[pid], seed[pid]))


def _cost(tables: Sequence[tuple[str, ...]], met: Counter[frozenset[str]],
          index: dict[str, int]) -> tuple[int, int]:
    """(meetings again, spread) of a seating whose tables list players best first."""
    again = sum(met[frozenset(pair)] for table in tables for pair in combinations(table, 2))
    return again, sum(index[table[-1]] - index[table[0]] for table in tables)


def group(ranked: Sequence[str], met: Counter[frozenset[str]],
          budget: int = BUDGET) -> list[tuple[str, ...]]:
    """The tables (each best first) that minimise (meetings again, spread).

    ``ranked`` is best first. Each table is opened by the best player not yet seated, with a
    size still to be used, and completed by players from the next :data:`WINDOW` in the
    ranking, the choices with fewer meetings and a smaller spread tried first.
    """
    sizes = Counter(table_sizes(len(ranked)))
    index = {pid: i for i, pid in enumerate(ranked)}
    plain: list[tuple[str, ...]] = []
    at = 0
    for size in sorted(sizes.elements(), reverse=True):
        plain.append(tuple(ranked[at:at + size]))
        at += size
    best_cost, best = _cost(plain, met, index), plain
    tries = 0

    def search(free: list[str], tables: list[tuple[str, ...]], again: int, spread: int) -> None:
        nonlocal tries, best_cost, best
        if not free:
            if (again, spread) < best_cost:
                best_cost, best = (again, spread), list(tables)
            return
        head, rest = free[0], free[1:]
        choices = []
        for size in (s for s in sorted(sizes, reverse=True) if sizes[s]):
            for others in combinations(rest[:WINDOW], size - 1):
                table = (head, *others)
                more = sum(met[frozenset(pair)] for pair in combinations(table, 2))
                choices.append((more, index[table[-1]] - index[head], size, table))
        choices.sort(key=lambda c: (c[0], c[1], -c[2]))
        for more, wider, size, table in choices:
            tries += 1
            if tries > budget:
                return
            if (again + more, spread + wider) >= best_cost:
                continue
            sizes[size] -= 1
            search([pid for pid in rest if pid not in table], [*tables, table],
                   again + more, spread + wider)
            sizes[size] += 1

    if best_cost[0]:
        search(list(ranked), [], 0, 0)
    if best_cost[0] and tries > budget:
        best = _swap_down(best, met, index)
    return best


def _swap_down(tables: list[tuple[str, ...]], met: Counter[frozenset[str]],
               index: dict[str, int]) -> list[tuple[str, ...]]:
    """Swap two players of different tables while that lowers (meetings again, spread): what
    a search cut short by its budget left in the tables it never went back to."""
    def ordered(table: Sequence[str]) -> tuple[str, ...]:
        return tuple(sorted(table, key=index.__getitem__))

    tables = list(tables)
    cost = _cost(tables, met, index)
    better = True
    while better and cost[0]:
        better = False
        for i, j in combinations(range(len(tables)), 2):
            for a in tables[i]:
                for b in tables[j]:
                    trial = list(tables)
                    trial[i] = ordered([b if p == a else p for p in tables[i]])
                    trial[j] = ordered([a if p == b else p for p in tables[j]])
                    trial_cost = _cost(trial, met, index)
                    if trial_cost < cost:
                        tables, cost, better = trial, trial_cost, True
                        break
                if better:
                    break
            if better:
                break
    tables.sort(key=lambda table: index[table[0]])
    return tables


def _seat_order(table: Sequence[str], firsts: Counter[str], lateness: Counter[str],
                rank: dict[str, int]) -> tuple[str, ...]:
    return tuple(sorted(table, key=lambda pid: (firsts[pid], -lateness[pid], rank[pid])))


def seat_topple(tournament: Tournament) -> tuple[Pairing, ...]:
    """The next round's tables for Tiki Topple, numbered from 1 (top of the standings first);
    a lone player left over gets a bye, the last "table"."""
    if tournament.game is not Game.TOPPLE:
        raise TournamentError(f"{tournament.game} is a two-player game: pair it by the Swiss "
                              "system")
    ranked = topple_ranking(tournament)
    rank = {pid: i for i, pid in enumerate(ranked)}
    firsts: Counter[str] = Counter()
    lateness: Counter[str] = Counter()
    for _rnd, pairing in tournament.played():
        if pairing.bye:
            continue
        firsts[pairing.seats[0]] += 1
        for seat, pid in enumerate(pairing.seats):
            lateness[pid] += seat
    if len(ranked) == 1:
        return (Pairing(1, (ranked[0],)),)
    tables = group(ranked, meetings(tournament))
    return tuple(Pairing(n, _seat_order(table, firsts, lateness, rank))
                 for n, table in enumerate(tables, start=1))
