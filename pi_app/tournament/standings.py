"""Standings: points and the usual tie-breaks, from the confirmed results only.

Two-player games (Manami, TacTiki), as in chess Swiss events:

- points: a win 1, a draw ½, a loss 0; a bye scores a win (1 point, no game played), a
  half-point bye the player asked for ½; a forfeit 1 to the player who came, 0 to the one who
  did not, and it is no game: no win or loss over the board, no opponent for the tie-breaks;
- tie-breaks, in this order: Buchholz Cut-1 (Buchholz without the lowest opponent's score),
  Buchholz (the sum of the opponents' points), Sonneborn-Berger (the points of the opponents
  beaten, plus half those of the opponents drawn), then the number of games won over the board.
  A bye has no opponent, so it adds nothing to Buchholz or Sonneborn-Berger (FIDE's 2023
  regulations count a "virtual opponent" instead; we keep the simpler rule and say so).

Tiki Topple (3-4 players a table): points are the game's own points summed over the rounds
(the issue's "total points"), then the number of tables won (a shared win counts for each
winner). A Topple bye (one player left over) scores nothing.

Only confirmed results count: a result a station reported but no referee confirmed yet is not
in the table, so what is shown and exported is what the referee stands behind. Players equal on
every key share a rank ("3=" in print); withdrawn players keep their line.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, replace

from pi_app.tournament.model import Game, Pairing, Tournament

#: Names of the tie-break columns, in the order they break ties.
TIEBREAKS_TWO_PLAYER = ("buchholz_cut1", "buchholz", "sonneborn_berger", "wins")
TIEBREAKS_TOPPLE = ("wins",)


@dataclass(frozen=True)
class Standing:
    """One player's line. ``rank`` is 1-based and shared by players equal on every key."""

    rank: int
    player_id: str
    number: int
    name: str
    points: float
    games: int
    wins: int
    draws: int
    losses: int
    byes: int
    game_points: int
    buchholz: float
    buchholz_cut1: float
    sonneborn_berger: float
    withdrawn: bool

    def tiebreaks(self, game: Game) -> tuple[float, ...]:
        names = TIEBREAKS_TWO_PLAYER if game.two_player else TIEBREAKS_TOPPLE
        return tuple(float(getattr(self, name)) for name in names)


def seed_order(tournament: Tournament) -> list[str]:
    """Every player's id in initial ranking order, the order the first round pairs by.

    Rated players first, higher rating first, then the unrated in entry order. When nobody
    has a rating the order is a shuffle by the tournament's seed, so the draw is random but
    the same every time it is computed (a restart must not change the pairings).
    """
    ids = [p.id for p in tournament.players]
    if all(p.rating is None for p in tournament.players):
        random.Random(tournament.seed).shuffle(ids)
        return ids
    entry = {p.id: i for i, p in enumerate(tournament.players)}
    rating = {p.id: p.rating for p in tournament.players}
    return sorted(ids, key=lambda pid: (rating[pid] is None, -(rating[pid] or 0), entry[pid]))


def _counted(pairing: Pairing) -> bool:
    return pairing.bye or (pairing.result is not None and pairing.result.confirmed)


def points(tournament: Tournament) -> dict[str, float]:
    """Each player's points (the primary score) from the confirmed results and byes."""
    total: dict[str, float] = {p.id: 0.0 for p in tournament.players}
    two = tournament.game.two_player
    for _rnd, pairing in tournament.played():
        if not _counted(pairing):
            continue
        if pairing.bye:
            total[pairing.seats[0]] += (0.5 if pairing.half else 1.0) if two else 0.0
            continue
        assert pairing.result is not None
        result = pairing.result
        for seat, pid in enumerate(pairing.seats):
            if result.forfeit:
                total[pid] += 1.0 if seat in result.winners else 0.0
            elif not two:
                total[pid] += result.scores[seat]
            elif result.is_draw(len(pairing.seats)):
                total[pid] += 0.5
            elif seat in result.winners:
                total[pid] += 1.0
    return total


def standings(tournament: Tournament) -> list[Standing]:
    """The standings table, best first."""
    game = tournament.game
    pts = points(tournament)
    games: dict[str, int] = defaultdict(int)
    wins: dict[str, int] = defaultdict(int)
    draws: dict[str, int] = defaultdict(int)
    byes: dict[str, int] = defaultdict(int)
    game_points: dict[str, int] = defaultdict(int)
    opponents: dict[str, list[float]] = defaultdict(list)
    sonneborn: dict[str, float] = defaultdict(float)
    for _rnd, pairing in tournament.played():
        if not _counted(pairing):
            continue
        if pairing.bye:
            byes[pairing.seats[0]] += 1
            continue
        assert pairing.result is not None
        result = pairing.result
        if result.forfeit:
            continue   # not played: its points only (above), no game and no opponent
        draw = result.is_draw(len(pairing.seats))
        for seat, pid in enumerate(pairing.seats):
            games[pid] += 1
            game_points[pid] += result.scores[seat]
            if draw and game.two_player:
                draws[pid] += 1
            elif seat in result.winners:
                wins[pid] += 1
            if game.two_player:
                other = pairing.seats[1 - seat]
                opponents[pid].append(pts[other])
                if draw:
                    sonneborn[pid] += pts[other] / 2
                elif seat in result.winners:
                    sonneborn[pid] += pts[other]
    lines = []
    for number, player in enumerate(tournament.players, start=1):
        pid = player.id
        scores = opponents[pid]
        buchholz = sum(scores)
        lines.append(Standing(
            rank=0, player_id=pid, number=number, name=player.name, points=pts[pid],
            games=games[pid], wins=wins[pid], draws=draws[pid],
            losses=games[pid] - wins[pid] - draws[pid], byes=byes[pid],
            game_points=game_points[pid], buchholz=buchholz,
            buchholz_cut1=buchholz - min(scores) if scores else 0.0,
            sonneborn_berger=sonneborn[pid], withdrawn=player.withdrawn))

    def key(line: Standing) -> tuple[float, ...]:
        return (-line.points, *(-v for v in line.tiebreaks(game)))

    lines.sort(key=lambda line: (key(line), line.number))
    ranked: list[Standing] = []
    for i, line in enumerate(lines):
        shared = i > 0 and key(lines[i - 1]) == key(line)
        rank = ranked[-1].rank if shared else i + 1
        ranked.append(replace(line, rank=rank))
    return ranked


def crosstable(tournament: Tournament) -> dict[str, list[str]]:
    """Each player's games round by round, in the people's numbers, for the crosstable.

    Two-player games: ``W5`` / ``D5`` / ``L5`` a win, draw or loss against player 5, ``+5`` /
    ``-5`` a forfeit won or lost (the usual crosstable signs), ``bye`` and ``½ bye``; Topple:
    the game's points at the table, ``*`` after them for a win. ``…`` a result not confirmed
    yet, empty a round the player was not in. Words stay short and in English: the page says
    what the letters mean in its reader's language.
    """
    cells = {p.id: [""] * len(tournament.rounds) for p in tournament.players}
    two = tournament.game.two_player
    for i, rnd in enumerate(tournament.rounds):
        for pairing in rnd.pairings:
            if pairing.bye:
                cells[pairing.seats[0]][i] = "½ bye" if pairing.half else "bye"
                continue
            result = pairing.result
            for seat, pid in enumerate(pairing.seats):
                if result is None or not result.confirmed:
                    cells[pid][i] = "\u2026"
                elif not two:
                    cells[pid][i] = f"{result.scores[seat]}{'*' if seat in result.winners else ''}"
                else:
                    other = tournament.number(pairing.seats[1 - seat])
                    won = seat in result.winners
                    if result.forfeit:
                        mark = "+" if won else "-"
                    else:
                        mark = "D" if result.is_draw(2) else "W" if won else "L"
                    cells[pid][i] = f"{mark}{other}"
    return cells
