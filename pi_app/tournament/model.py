"""A tournament as plain, immutable values: players, rounds, pairings and their results.

Everything the referee's tournament desk knows is one :class:`Tournament` value. Operations
(:mod:`pi_app.tournament.director`) return a new value instead of changing one, so a request
that fails half-way leaves nothing half-done, and the store (:mod:`pi_app.tournament.store`)
saves whole values.

Identities: a player's ``id`` (``"p1"``, ``"p2"``...) never changes and never comes back, even
when the player withdraws; people see the player's *number*, their 1-based place in the entry
list (:meth:`Tournament.number`). Seats are 0-based like a record's player indices
(``docs/records.md``): seat 0 moves first, and a station's player ``i`` is the pairing's seat ``i``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from pi_app.errors import TikiError


class TournamentError(TikiError, ValueError):
    """A request the tournament cannot take; the message says why, for the referee."""


class Game(StrEnum):
    """The game a tournament plays; the values are the records' ``"game"`` names."""

    TOPPLE = "topple"
    MANAMI = "manami"
    TACTIKI = "tactiki"

    @property
    def two_player(self) -> bool:
        """Paired by the Swiss system (two seats a table); Topple is seated 3-4 a table."""
        return self is not Game.TOPPLE


@dataclass(frozen=True)
class Player:
    """One entrant. ``rating`` orders the first round (higher first); None for unrated."""

    id: str
    name: str
    rating: int | None = None
    withdrawn: bool = False


@dataclass(frozen=True)
class Result:
    """What a table's game ended with, per seat.

    ``scores`` are the game's own points per seat (Topple points, Manami fruit, TacTiki 1 for
    the winner); ``winners`` are seat indices: one seat, several on a shared win, none (or every
    seat) on a draw. ``board``/``game_id`` say which station game it came from (None for a
    result the referee entered by hand). It counts in the standings only once a referee
    confirmed it (``confirmed_by``); ``corrected`` says the referee's ruling differs from what
    the station reported. ``forfeit``: the game was not played (a player did not come); the
    winner, if any, is the seat that did, the scores are 0, and only the points count (no
    game, no opponent for tie-breaks, no seat or meeting for the pairings, as FIDE's rules
    treat forfeits).
    """

    scores: tuple[int, ...]
    winners: tuple[int, ...]
    board: str | None = None
    game_id: int | None = None
    confirmed_by: str | None = None
    corrected: bool = False
    forfeit: bool = False

    @property
    def confirmed(self) -> bool:
        return self.confirmed_by is not None

    def is_draw(self, seats: int) -> bool:
        """Nobody won, or everybody did."""
        return not self.winners or len(set(self.winners)) == seats


@dataclass(frozen=True)
class Pairing:
    """One table of a round: the players' ids in seat order (seat 0 moves first).

    A bye is a "table" of one player who does not play; it has no board and no result, and
    scores a win in a two-player tournament (nothing in Topple). ``board`` is the station the
    table plays on, once the referee assigned one. ``half``: a half-point bye the player asked
    for before the round was paired (½ point; it is not the round's allocated bye, which still
    goes to someone who has had none).
    """

    table: int
    seats: tuple[str, ...]
    board: str | None = None
    result: Result | None = None
    half: bool = False

    @property
    def bye(self) -> bool:
        return len(self.seats) == 1

    @property
    def done(self) -> bool:
        """Nothing left to wait for: a bye, or a confirmed result."""
        return self.bye or (self.result is not None and self.result.confirmed)


@dataclass(frozen=True)
class Round:
    """A round's tables, numbered from 1 in order of strength; a bye comes last.

    ``minutes`` and ``started`` are the round clock the referee set (the referee's wall clock,
    seconds since the epoch): the round ends at ``started + minutes * 60``. What happens to a
    table still playing then is the referee's ruling, logged with its time like any other.
    """

    number: int
    pairings: tuple[Pairing, ...]
    minutes: int | None = None
    started: float | None = None

    @property
    def ends(self) -> float | None:
        """When the round's time is up, or None without a clock."""
        if self.minutes is None or self.started is None:
            return None
        return self.started + self.minutes * 60

    @property
    def done(self) -> bool:
        return all(p.done for p in self.pairings)

    def table(self, number: int) -> Pairing:
        for pairing in self.pairings:
            if pairing.table == number:
                return pairing
        raise TournamentError(f"round {self.number} has no table {number}")


@dataclass(frozen=True)
class Tournament:
    """An event: its game, its entrants in entry order, and the rounds paired so far.

    ``seed`` makes the first round's order reproducible when nobody has a rating. ``planned``
    is the number of rounds the event has (None: not said yet); no round is paired past it,
    and once its last round is confirmed the standings are final. ``half_byes`` are the
    players who asked for a half-point bye in the next round to be paired.
    """

    event: str
    game: Game
    players: tuple[Player, ...] = ()
    rounds: tuple[Round, ...] = ()
    seed: int = 0
    planned: int | None = None
    half_byes: tuple[str, ...] = ()

    def player(self, player_id: str) -> Player:
        for player in self.players:
            if player.id == player_id:
                return player
        raise TournamentError(f"no player {player_id!r} in {self.event}")

    def number(self, player_id: str) -> int:
        """The player's number for people: 1 for the first entry."""
        for i, player in enumerate(self.players):
            if player.id == player_id:
                return i + 1
        raise TournamentError(f"no player {player_id!r} in {self.event}")

    def active(self) -> tuple[Player, ...]:
        """The players to pair next round (not withdrawn), in entry order."""
        return tuple(p for p in self.players if not p.withdrawn)

    def played(self) -> Iterator[tuple[Round, Pairing]]:
        """Every table of every round, byes included, in order."""
        for rnd in self.rounds:
            for pairing in rnd.pairings:
                yield rnd, pairing

    @property
    def finished(self) -> bool:
        """Every planned round is paired and confirmed: the standings are final."""
        return (self.planned is not None and len(self.rounds) >= self.planned
                and all(rnd.done for rnd in self.rounds))

    @property
    def current(self) -> Round | None:
        """The latest round, or None before the first pairing."""
        return self.rounds[-1] if self.rounds else None
