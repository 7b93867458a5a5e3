"""What the referee does with a tournament, as functions from one value to the next.

Each function takes a :class:`~pi_app.tournament.model.Tournament` and returns a new one, or
raises :class:`~pi_app.tournament.model.TournamentError` with a sentence for the referee and
changes nothing. The dashboard keeps the current value, saves it with
:class:`~pi_app.tournament.store.TournamentStore` after each step, and shows the error text.

The course of a round: :func:`pair_next_round` (Swiss for two-player games, seatings for
Topple) -> :func:`assign_boards` (tables to stations) -> each station's result arrives through
:func:`report_result` -> the referee checks it with :func:`confirm_result` (or enters a result
with it where no station reported) -> the next round can be paired once every table is
confirmed. Standings (:func:`pi_app.tournament.standings.standings`) count confirmed results only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from pi_app.tournament.model import (
    Game,
    Pairing,
    Player,
    Result,
    Round,
    Tournament,
    TournamentError,
)
from pi_app.tournament.seating import seat_topple
from pi_app.tournament.swiss import pair_swiss

#: The longest player name: it fits a dashboard cell and a station's screen (as on the station).
NAME_MAX = 24
#: The longest event name.
EVENT_MAX = 80
#: Ratings people use (Elo-like); anything else is a typing mistake.
RATING_RANGE = range(0, 4000)
#: A station's board id, as the MQTT topics allow it (pi_app/net/README.md).
BOARD_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: A name must not start like a spreadsheet formula: the CSV export goes into spreadsheets.
_FORMULA_START = ("=", "+", "-", "@")


def _clean_name(name: str, what: str, longest: int) -> str:
    name = name.strip() if isinstance(name, str) else ""
    if not name:
        raise TournamentError(f"the {what} is empty")
    if len(name) > longest:
        raise TournamentError(f"a {what} has at most {longest} characters; {name[:longest]!r}... "
                              f"has {len(name)}")
    if not name.isprintable():
        raise TournamentError(f"the {what} {name!r} holds a control character")
    if name.startswith(_FORMULA_START):
        raise TournamentError(f"the {what} {name!r} starts with {name[0]!r}: spreadsheets would "
                              "read it as a formula")
    return name


#: The most rounds an event can plan (a long weekend of Swiss has 9; a league a season's weeks).
ROUNDS_MAX = 60


def new_tournament(event: str, game: str, *, seed: int = 0,
                   rounds: int | None = None) -> Tournament:
    """An event with no players yet. ``game`` is a record's game name: topple, manami, tactiki;
    ``rounds`` the number of rounds planned (it can be set later, :func:`plan_rounds`)."""
    try:
        kind = Game(game)
    except ValueError:
        raise TournamentError(f"unknown game {game!r}: choose one of "
                              f"{', '.join(g.value for g in Game)}") from None
    event_name = _clean_name(event, "event name", EVENT_MAX)
    tournament = Tournament(event_name, kind, seed=seed)
    return tournament if rounds is None else plan_rounds(tournament, rounds)


def plan_rounds(tournament: Tournament, rounds: int) -> Tournament:
    """Say how many rounds the event has: no round is paired past the last, and the standings
    are final once it is confirmed. Never fewer than the rounds already paired."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= ROUNDS_MAX:
        raise TournamentError(f"an event has 1 to {ROUNDS_MAX} rounds, not {rounds!r}")
    if rounds < len(tournament.rounds):
        raise TournamentError(f"{len(tournament.rounds)} rounds are already paired: plan at "
                              f"least {len(tournament.rounds)}")
    return replace(tournament, planned=rounds)


def ask_half_bye(tournament: Tournament, player_id: str, wanted: bool = True) -> Tournament:
    """A player asks (or no longer asks) to sit out the next round for half a point, as Swiss
    events allow when asked before the pairing. Two-player games only: Topple's points are
    the games' own points, and half a game has none."""
    player = tournament.player(player_id)
    if not tournament.game.two_player:
        raise TournamentError("Topple counts the games' own points: it has no half-point byes")
    if wanted and player.withdrawn:
        raise TournamentError(f"{player.name} is withdrawn: not paired, no bye to ask for")
    if wanted and tournament.planned is not None and len(tournament.rounds) >= tournament.planned:
        raise TournamentError(f"all {tournament.planned} rounds are paired: no next round")
    asked = tuple(pid for pid in tournament.half_byes if pid != player_id)
    return replace(tournament, half_byes=(*asked, player_id) if wanted else asked)


def add_player(tournament: Tournament, name: str, rating: int | None = None) -> Tournament:
    """One more entrant, numbered after the others. Late entries are allowed (no points for
    the rounds they missed)."""
    name = _clean_name(name, "player name", NAME_MAX)
    if any(p.name.casefold() == name.casefold() for p in tournament.players):
        raise TournamentError(f"{name!r} is already entered: give each player a different name")
    if rating is not None and (isinstance(rating, bool) or not isinstance(rating, int)
                               or rating not in RATING_RANGE):
        raise TournamentError(f"a rating is a whole number from {RATING_RANGE.start} to "
                              f"{RATING_RANGE.stop - 1}, not {rating!r}")
    player = Player(f"p{len(tournament.players) + 1}", name, rating)
    return replace(tournament, players=(*tournament.players, player))


def add_players(tournament: Tournament, names: Iterable[str]) -> Tournament:
    """Several unrated entrants at once, in order."""
    for name in names:
        tournament = add_player(tournament, name)
    return tournament


def set_withdrawn(tournament: Tournament, player_id: str, withdrawn: bool = True) -> Tournament:
    """Withdraw a player from the next pairings (or bring them back); their games stay."""
    tournament.player(player_id)
    players = tuple(replace(p, withdrawn=withdrawn) if p.id == player_id else p
                    for p in tournament.players)
    return replace(tournament, players=players)


def pair_next_round(tournament: Tournament) -> Tournament:
    """Pair (two-player games) or seat (Topple) the next round.

    Refused while a table of the current round has no confirmed result, and when fewer than
    two players are active.
    """
    for rnd in tournament.rounds:  # an earlier round too, once a result was taken back
        if not rnd.done:
            waiting = ", ".join(str(p.table) for p in rnd.pairings if not p.done)
            raise TournamentError(f"round {rnd.number} is not finished: table(s) {waiting} "
                                  "have no confirmed result")
    if tournament.planned is not None and len(tournament.rounds) >= tournament.planned:
        raise TournamentError(f"round {tournament.planned} was the last of the "
                              f"{tournament.planned} planned: the standings are final (plan "
                              "more rounds to go on)")
    resting = [p.id for p in tournament.active() if p.id in tournament.half_byes]
    playing = replace(tournament, players=tuple(
        replace(p, withdrawn=True) if p.id in resting else p for p in tournament.players))
    if len(playing.active()) < 2:
        raise TournamentError("at least two active players are needed to pair a round"
                              + (" (the others asked for a half-point bye)" if resting else ""))
    pairings = pair_swiss(playing) if tournament.game.two_player else seat_topple(playing)
    halves = tuple(Pairing(len(pairings) + i, (pid,), half=True)
                   for i, pid in enumerate(resting, start=1))
    number = len(tournament.rounds) + 1
    return replace(tournament, rounds=(*tournament.rounds, Round(number, pairings + halves)),
                   half_byes=())


#: The longest round clock, minutes (a long game of Topple with its tie-break fits in 3 hours).
CLOCK_MAX = 600


def set_round_clock(tournament: Tournament, minutes: int | None, now: float,
                    round_number: int | None = None) -> Tournament:
    """Start the round clock: ``minutes`` from ``now`` (a new time starts it again from now);
    None stops it. Defaults to the current round."""
    rnd = _round(tournament, round_number)
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, int)
                                or not 1 <= minutes <= CLOCK_MAX):
        raise TournamentError(f"a round clock runs 1 to {CLOCK_MAX} minutes, not {minutes!r}")
    clocked = replace(rnd, minutes=minutes, started=None if minutes is None else now)
    return replace(tournament, rounds=tuple(clocked if r.number == rnd.number else r
                                            for r in tournament.rounds))


def _replace_pairing(tournament: Tournament, number: int, pairing: Pairing) -> Tournament:
    rounds = tuple(
        replace(rnd, pairings=tuple(pairing if p.table == pairing.table else p
                                    for p in rnd.pairings)) if rnd.number == number else rnd
        for rnd in tournament.rounds)
    return replace(tournament, rounds=rounds)


def _round(tournament: Tournament, number: int | None) -> Round:
    if not tournament.rounds:
        raise TournamentError("no round has been paired yet")
    if number is None:
        return tournament.rounds[-1]
    for rnd in tournament.rounds:
        if rnd.number == number:
            return rnd
    raise TournamentError(f"there is no round {number}")


def assign_boards(tournament: Tournament, boards: Mapping[int, str] | Sequence[str],
                  round_number: int | None = None) -> Tournament:
    """Put tables on stations: ``{table: board_id}``, or a list of board ids for tables 1, 2...
    in order (extra boards stay free). Defaults to the current round.

    A board serves one table a round; a table that already has a result keeps its board.
    """
    if isinstance(boards, str):
        raise TournamentError("give a list of board ids, or a board id for each table")
    rnd = _round(tournament, round_number)
    playing = [p.table for p in rnd.pairings if not p.bye]
    if isinstance(boards, Mapping):
        wanted = dict(boards)
        unknown = sorted(set(wanted) - set(playing))
        if unknown:
            raise TournamentError(f"round {rnd.number} has no table {unknown[0]} to put on a board")
    else:
        wanted = dict(zip(playing, boards, strict=False))
    for board in wanted.values():
        if not isinstance(board, str) or not BOARD_ID.fullmatch(board):
            raise TournamentError(f"{board!r} is not a board id (1-64 of A-Z a-z 0-9 _ . -)")
    pairings = {p.table: p for p in rnd.pairings}
    for table, board in wanted.items():
        held = pairings[table].result
        if held is not None and pairings[table].board != board:
            raise TournamentError(f"table {table} already has a result from board "
                                  f"{pairings[table].board}; it stays there")
    final = {p.table: wanted.get(p.table, p.board) for p in rnd.pairings if not p.bye}
    taken = [b for b in final.values() if b is not None]
    twice = next((b for b in taken if taken.count(b) > 1), None)
    if twice is not None:
        raise TournamentError(f"board {twice} is given to two tables of round {rnd.number}")
    for table, assigned in final.items():
        tournament = _replace_pairing(tournament, rnd.number,
                                      replace(pairings[table], board=assigned))
    return tournament


def _seat_list(seats: Sequence[int]) -> str:
    """Seats as people count them (from 1): ``seat 2`` or ``seats 1 and 2``; ``nobody``."""
    if not seats:
        return "nobody"
    people = [str(s + 1) for s in seats]
    if len(people) == 1:
        return f"seat {people[0]}"
    return f"seats {', '.join(people[:-1])} and {people[-1]}"


def rule_breach(game: Game, scores: Sequence[int], winners: Sequence[int]) -> str | None:
    """Why these scores and winners cannot both be true in ``game``, or None when they can.

    The rules the games' own code decides with (pi_app/games): Manami's most fruit wins and a
    tie is a draw (the record names both players or nobody); TacTiki scores 1 for the winner
    and 0 for the loser, 0 : 0 for a draw; Topple's highest total wins, and a tie on the total
    is decided by a tie-break round or shared, so the winners are one or more of the leaders.
    A hand entry such as "scores 3 5, winner seat 1" contradicts itself: refusing it keeps a
    typing slip out of the standings.
    """
    if any(s < 0 for s in scores):
        return "a score is never below 0"
    best = max(scores)
    leaders = tuple(i for i, s in enumerate(scores) if s == best)
    shown = " : ".join(str(s) for s in scores)
    said = _seat_list(winners)
    if game is Game.TACTIKI:
        if any(s not in (0, 1) for s in scores) or sum(scores) > 1:
            return (f"TacTiki scores 1 for the winner and 0 for the loser (0 : 0 for a draw), "
                    f"not {shown}")
        expected: tuple[tuple[int, ...], ...] = (leaders,) if best == 1 else ((), (0, 1))
        rule = "the seat that scored 1 wins; 0 : 0 is a draw"
    elif game is Game.MANAMI:
        expected = (leaders,) if len(leaders) == 1 else ((), leaders)
        rule = "most fruit wins; a tie is a draw"
    else:
        if len(leaders) == 1:
            expected = (leaders,)
        elif winners and set(winners) <= set(leaders):
            return None
        else:
            return (f"the scores {shown} make one or more of {_seat_list(leaders)} the "
                    f"winners, not {said} (topple: the highest total wins; a tie is decided "
                    "by a tie-break round or shared)")
        rule = "the highest total wins"
    if tuple(winners) in expected:
        return None
    right = " or ".join(_seat_list(e) for e in expected)
    return f"the scores {shown} make {right} the winner, not {said} ({game.value}: {rule})"


def _checked(game: Game, pairing: Pairing, scores: Sequence[int],
             winners: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    seats = len(pairing.seats)
    if len(scores) != seats or not all(isinstance(s, int) and not isinstance(s, bool)
                                       for s in scores):
        raise TournamentError(f"table {pairing.table} has {seats} players: give {seats} whole "
                              f"scores, not {list(scores)!r}")
    if not all(isinstance(w, int) and not isinstance(w, bool) and 0 <= w < seats
               for w in winners) or len(set(winners)) != len(winners):
        raise TournamentError(f"the winners are seats 1 to {seats}, each once, not "
                              f"{[w + 1 if isinstance(w, int) else w for w in winners]!r}")
    ordered = tuple(sorted(winners))
    breach = rule_breach(game, scores, ordered)
    if breach is not None:
        raise TournamentError(f"table {pairing.table}: {breach}")
    return tuple(scores), ordered


class LateCorrection(TournamentError):
    """A ruling on a round that later rounds were already paired after: refused until the
    referee says again that it is meant (``late_ok``). ``touched`` are the later tables, as
    ``(round, table)``, where the ruled table's players sit: their pairing was made on the
    points this ruling changes, and it stays as it is (a paired round is never re-paired)."""

    def __init__(self, message: str, touched: tuple[tuple[int, int], ...]) -> None:
        super().__init__(message)
        self.touched = touched


def later_tables(tournament: Tournament, round_number: int, table: int) -> tuple[
        tuple[int, int], ...]:
    """The tables of the rounds after ``round_number`` that seat a player of its ``table``."""
    seated = set(_round(tournament, round_number).table(table).seats)
    return tuple((rnd.number, p.table) for rnd in tournament.rounds
                 if rnd.number > round_number for p in rnd.pairings if seated & set(p.seats))


def _warn_late(tournament: Tournament, rnd: Round, table: int, what: str) -> None:
    touched = later_tables(tournament, rnd.number, table)
    if not touched:
        return
    where = ", ".join(f"round {r} table {t}" for r, t in touched)
    raise LateCorrection(
        f"{what} table {table} of round {rnd.number} changes the points that later pairings "
        f"were made on ({where}); those pairings stay as they are. Send it again to go ahead.",
        touched)


def report_result(tournament: Tournament, board: str, game_id: int, scores: Sequence[int],
                  winners: Sequence[int]) -> Tournament:
    """A station's result for the current round's table on ``board``, waiting for a referee.

    ``scores`` and ``winners`` are in the station's player order, which is the table's seat
    order (the dashboard starts the station's game with the names in seat order). A result
    already confirmed is not replaced: the station's late word goes to the referee instead,
    as a :class:`TournamentError`.
    """
    rnd = _round(tournament, None)
    pairing = next((p for p in rnd.pairings if p.board == board and not p.bye), None)
    if pairing is None:
        raise TournamentError(f"board {board} has no table in round {rnd.number}")
    if pairing.result is not None and pairing.result.confirmed:
        raise TournamentError(f"table {pairing.table} already has a confirmed result "
                              f"(by {pairing.result.confirmed_by}); board {board} reported game "
                              f"{game_id} after it")
    checked_scores, checked_winners = _checked(tournament.game, pairing, scores, winners)
    result = Result(checked_scores, checked_winners, board=board, game_id=game_id)
    return _replace_pairing(tournament, rnd.number, replace(pairing, result=result))


def confirm_result(tournament: Tournament, table: int, referee: str, *,
                   scores: Sequence[int] | None = None, winners: Sequence[int] | None = None,
                   round_number: int | None = None, late_ok: bool = False,
                   forfeit: bool = False) -> Tournament:
    """The referee confirms a table's reported result as it is, or rules one (``scores`` and
    ``winners`` in seat order): a correction, or a result where no station reported.

    Scores and winners that contradict each other under the game's rules are refused
    (:func:`rule_breach`). A result of an earlier round can be confirmed or corrected too; the
    standings follow, but a round already paired is not re-paired, so a ruling that changes
    what later pairings counted raises :class:`LateCorrection` naming those tables unless
    ``late_ok`` (the referee saw the warning and sent it again).

    ``forfeit``: the game was not played; ``winners`` is the seat whose player came (none when
    neither did), the scores are 0 (two-player games: a Topple table plays on without an
    absent player, who is withdrawn instead).
    """
    referee = _clean_name(referee, "referee name", NAME_MAX)
    if forfeit:
        return _forfeit(tournament, table, referee, winners, round_number, late_ok)
    rnd = _round(tournament, round_number)
    pairing = rnd.table(table)
    if pairing.bye:
        raise TournamentError(f"table {table} of round {rnd.number} is a bye: nothing to confirm")
    reported = pairing.result
    if reported is None and (scores is None or winners is None):
        raise TournamentError(f"table {table} has no reported result to confirm: give the scores "
                              "and the winners")
    if reported is None:
        reported = Result((), (), board=pairing.board)
    new_scores, new_winners = _checked(
        tournament.game, pairing, reported.scores if scores is None else scores,
        reported.winners if winners is None else winners)
    corrected = (reported.corrected or reported.game_id is None
                 or (new_scores, new_winners) != (reported.scores, reported.winners))
    if not late_ok:
        _warn_changed(tournament, rnd, pairing, (new_scores, new_winners, False))
    result = replace(reported, scores=new_scores, winners=new_winners, confirmed_by=referee,
                     corrected=corrected, forfeit=False)
    return _replace_pairing(tournament, rnd.number, replace(pairing, result=result))


def _warn_changed(tournament: Tournament, rnd: Round, pairing: Pairing,
                  ruled: tuple[tuple[int, ...], tuple[int, ...], bool]) -> None:
    """A late warning when the ruling changes what counts (the same result again does not)."""
    counted = pairing.result if pairing.result is not None and pairing.result.confirmed else None
    if counted is None or (counted.scores, counted.winners, counted.forfeit) != ruled:
        _warn_late(tournament, rnd, pairing.table,
                   "confirming" if counted is None else "correcting")


def _forfeit(tournament: Tournament, table: int, referee: str, winners: Sequence[int] | None,
             round_number: int | None, late_ok: bool) -> Tournament:
    if not tournament.game.two_player:
        raise TournamentError("a Topple table plays on without an absent player: withdraw the "
                              "player instead of ruling a forfeit")
    rnd = _round(tournament, round_number)
    pairing = rnd.table(table)
    if pairing.bye:
        raise TournamentError(f"table {table} of round {rnd.number} is a bye: nothing to forfeit")
    present = tuple(sorted(winners or ()))
    if len(present) > 1 or not all(w in (0, 1) for w in present):
        raise TournamentError("a forfeit is won by the seat whose player came (1 or 2), or by "
                              f"nobody when neither came, not {[w + 1 for w in present]!r}")
    if not late_ok:
        _warn_changed(tournament, rnd, pairing, ((0, 0), present, True))
    held = pairing.result or Result((), (), board=pairing.board)
    result = replace(held, scores=(0, 0), winners=present, confirmed_by=referee,
                     corrected=True, forfeit=True)
    return _replace_pairing(tournament, rnd.number, replace(pairing, result=result))


def unconfirm_result(tournament: Tournament, table: int, *, round_number: int | None = None,
                     late_ok: bool = False) -> Tournament:
    """Take a confirmed result back out of the standings: a ruling made by mistake.

    A station's result goes back to waiting for a referee, as reported; a result entered by
    hand is removed (nothing was reported to wait with). The store logs who did it
    (:meth:`~pi_app.tournament.store.TournamentStore.save`). Like a correction, it warns
    (:class:`LateCorrection`) when later rounds were paired on it, unless ``late_ok``.
    """
    rnd = _round(tournament, round_number)
    pairing = rnd.table(table)
    result = pairing.result
    if pairing.bye or result is None or not result.confirmed:
        raise TournamentError(f"table {table} of round {rnd.number} has no confirmed result to "
                              "take back")
    if not late_ok:
        _warn_late(tournament, rnd, table, "taking back")
    back = None if result.game_id is None else replace(result, confirmed_by=None)
    return _replace_pairing(tournament, rnd.number, replace(pairing, result=back))
