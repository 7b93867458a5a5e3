"""The tournament as CSV for spreadsheets and federations, and the list of its games' records.

Two tables, each with a header row, one row per player or per table, as text to be sent or
written as UTF-8 (``text.encode("utf-8")``):

- :func:`standings_csv`: the standings (:mod:`pi_app.tournament.standings`), confirmed results
  only, with the tie-break columns of the tournament's game;
- :func:`pairings_csv`: every round's tables with seats in move order, the board, the result
  and who confirmed it.

Numbers are printed as people write them (``1.5``, ``2``); names are the players' own (they
cannot start like a spreadsheet formula: :mod:`pi_app.tournament.director` refuses those).
The records of the games themselves live in the dashboard's ledger under (board, game id);
:func:`game_refs` lists which ones belong to the tournament, in round and table order.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from pi_app.tournament.model import Pairing, Tournament
from pi_app.tournament.standings import TIEBREAKS_TOPPLE, TIEBREAKS_TWO_PLAYER, standings


def number_text(value: float) -> str:
    """``1.0`` -> ``"1"``, ``2.5`` -> ``"2.5"``, ``3.25`` -> ``"3.25"``."""
    return f"{value:g}"


def _csv(rows: Sequence[Sequence[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerows(rows)
    return out.getvalue()


def standings_csv(tournament: Tournament) -> str:
    """One row per player, best first."""
    tiebreaks = TIEBREAKS_TWO_PLAYER if tournament.game.two_player else TIEBREAKS_TOPPLE
    extra = [name for name in tiebreaks if name != "wins"]
    header: list[object] = ["rank", "number", "name", "points", "games", "wins", "draws",
                            "losses", "byes", "game_points", *extra, "withdrawn"]
    rows: list[list[object]] = [header]
    for line in standings(tournament):
        rows.append([line.rank, line.number, line.name, number_text(line.points), line.games,
                     line.wins, line.draws, line.losses, line.byes, line.game_points,
                     *(number_text(getattr(line, name)) for name in extra),
                     "yes" if line.withdrawn else ""])
    return _csv(rows)


def result_text(pairing: Pairing) -> str:
    """A table's result in a word: ``1-0``, ``0-1``, ``½-½``, ``bye``, ``½ bye``, a forfeit
    ``1-0 forfeit`` (``0-0 forfeit``: neither came), the Topple points (``12-7-5``), or empty
    while there is none."""
    if pairing.bye:
        return "½ bye" if pairing.half else "bye"
    result = pairing.result
    if result is None:
        return ""
    if result.forfeit:   # not FIDE's "+:-": a cell starting with + is a spreadsheet formula
        return "-".join("1" if seat in result.winners else "0"
                        for seat in range(len(pairing.seats))) + " forfeit"
    if len(pairing.seats) != 2:
        return "-".join(str(s) for s in result.scores)
    if result.is_draw(2):
        return "½-½"
    return "1-0" if result.winners == (0,) else "0-1"


def _status(pairing: Pairing) -> str:
    if pairing.bye:
        return "bye"
    if pairing.result is None:
        return "playing" if pairing.board else "waiting"
    return "confirmed" if pairing.result.confirmed else "reported"


def pairings_csv(tournament: Tournament) -> str:
    """One row per table of every round, seats in move order (seat 1 moves first)."""
    seats = max((len(p.seats) for _r, p in tournament.played()),
                default=2 if tournament.game.two_player else 4)
    header: list[object] = ["round", "table", "board"]
    for seat in range(1, seats + 1):
        header += [f"seat{seat}_number", f"seat{seat}_name"]
    header += ["result", "scores", "winners", "status", "confirmed_by", "corrected", "game_id"]
    rows: list[list[object]] = [header]
    for rnd, pairing in tournament.played():
        row: list[object] = [rnd.number, pairing.table, pairing.board or ""]
        for seat in range(seats):
            if seat < len(pairing.seats):
                pid = pairing.seats[seat]
                row += [tournament.number(pid), tournament.player(pid).name]
            else:
                row += ["", ""]
        result = pairing.result
        row += [result_text(pairing),
                " ".join(str(s) for s in result.scores) if result else "",
                "; ".join(tournament.player(pairing.seats[w]).name for w in result.winners)
                if result else "",
                _status(pairing),
                result.confirmed_by or "" if result else "",
                "yes" if result and result.corrected else "",
                "" if result is None or result.game_id is None else result.game_id]
        rows.append(row)
    return _csv(rows)


@dataclass(frozen=True)
class GameRef:
    """Where a tournament game's record is: the station's board and its game id there."""

    round: int
    table: int
    board: str
    game_id: int
    seats: tuple[str, ...]


def game_refs(tournament: Tournament) -> list[GameRef]:
    """Every game of the tournament that a station reported, in round and table order."""
    refs = []
    for rnd, pairing in tournament.played():
        result = pairing.result
        if result is not None and result.board is not None and result.game_id is not None:
            refs.append(GameRef(rnd.number, pairing.table, result.board, result.game_id,
                                pairing.seats))
    return refs


# -- FIDE's Tournament Report File -------------------------------------------------------------
#: Where each field of a TRF16 player line starts (1-based columns, FIDE Handbook C.04 Annex 2).
TRF_START, TRF_NAME, TRF_RATING, TRF_POINTS, TRF_RANK, TRF_ROUNDS = 5, 15, 49, 81, 86, 92


def _trf_put(line: list[str], column: int, text: str) -> None:
    """Write ``text`` into ``line`` from 1-based ``column`` on, growing it with spaces."""
    end = column - 1 + len(text)
    if len(line) < end:
        line.extend(" " * (end - len(line)))
    line[column - 1:end] = list(text)


def _trf_round(tournament: Tournament, number: int, player_id: str) -> str:
    """One round of a player in TRF16's 8 columns: the opponent's starting rank (``0000``:
    none), the seat (``w`` moved first, ``b`` second, ``-`` none) and the result: ``1 = 0``
    over the board, ``+ -`` a forfeit won or lost, ``U`` the round's allocated bye (a full
    point here), ``H`` a half-point bye, ``Z`` not paired (withdrawn, or not entered yet),
    blank while the result waits for a referee."""
    rnd = tournament.rounds[number - 1]
    pairing = next((p for p in rnd.pairings if player_id in p.seats), None)
    if pairing is None:
        return "0000 - Z"
    if pairing.bye:
        return f"0000 - {'H' if pairing.half else 'U'}"
    seat = pairing.seats.index(player_id)
    other = tournament.number(pairing.seats[1 - seat])
    colour = "w" if seat == 0 else "b"
    result = pairing.result
    if result is None or not result.confirmed:
        mark = " "
    elif result.forfeit:
        mark = "+" if seat in result.winners else "-"
    elif len(result.winners) != 1:
        mark = "="
    else:
        mark = "1" if seat in result.winners else "0"
    return f"{other:04d} {colour} {mark}"


def trf(tournament: Tournament) -> str:
    """The tournament as FIDE's Tournament Report File (TRF16), the fixed-column text rating
    officers and pairing programs (JaVaFo, bbpPairings, Swiss-Manager) read: the name (012),
    the number of players (062), the type (092), then a ``001`` line per player in starting
    rank (the player's number): name, rating (the event's own, if given), points, rank, and
    per round the opponent, the seat and the result (:func:`_trf_round`). Confirmed results
    only, as the standings. Two-player games only: :class:`ValueError` for Tiki Topple,
    whose tables of 3 and 4 the format has no way to write."""
    if not tournament.game.two_player:
        raise ValueError("TRF has one opponent a round: Tiki Topple's tables of 3 or 4 do "
                         "not fit it; use pairings.csv")
    lines = [f"012 {tournament.event}", f"062 {len(tournament.players)}",
             f"092 Swiss, {tournament.game.value} (tikiboard)"]
    ranks = {line.player_id: line for line in standings(tournament)}
    for number, player in enumerate(tournament.players, start=1):
        line = list("001")
        _trf_put(line, TRF_START, f"{number:4d}")
        _trf_put(line, TRF_NAME, player.name[:33])
        if player.rating is not None:
            _trf_put(line, TRF_RATING, f"{player.rating:4d}"[-4:])
        standing = ranks[player.id]
        _trf_put(line, TRF_POINTS, f"{standing.points:4.1f}")
        _trf_put(line, TRF_RANK, f"{standing.rank:4d}")
        for rnd in tournament.rounds:
            _trf_put(line, TRF_ROUNDS + 10 * (rnd.number - 1),
                     _trf_round(tournament, rnd.number, player.id))
        lines.append("".join(line))  # not stripped: a blank result is a column too
    return "\r\n".join(lines) + "\r\n"
