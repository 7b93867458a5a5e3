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
