"""A session: one game on one board, kept in the event store.

The session is the only writer of a game's events. It turns what the follower decided into
stored events (commit first, then the caller may confirm on the LEDs), keeps the game record
up to date, and rebuilds a game from the store after a restart: the record is its set-up with
the play events folded in (:func:`pi_app.records.fold`), and the position is that record
replayed by the engine, so a resumed game is exactly the game that was stored.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic

from pi_app.board.follower import Acceptance
from pi_app.games import Game, get_game
from pi_app.games.base import Card, M, S
from pi_app.json_types import JSON
from pi_app.records import PlayKind, fold, replay
from pi_app.referee.store import PLAY_KINDS, Event, EventStore, GameRow, StoreError

#: The record's top-level field for the seats the station's bots played, ``{"1": "search"}``
#: (seat as a text, as JSON object keys are; level one of :data:`pi_app.bots.LEVELS`). An extra
#: field of docs/records.md: the engines and ``tikiboard replay`` skip it.
STATION_SEATS = "station_seats"


def station_seats(record: JSON) -> dict[int, str]:
    """The seats a stored game's station plays (``{}``: people only, also for a record without
    the field, or with one that is not seat: level texts: a person then takes the seat over
    rather than the station refusing to resume the game)."""
    raw = record.get(STATION_SEATS)
    if not isinstance(raw, dict):
        return {}
    return {int(seat): level for seat, level in raw.items()
            if isinstance(seat, str) and seat.isdigit() and isinstance(level, str)}


@dataclass
class Session(Generic[S, M]):
    """One stored game, generic over the engine's state and move types (plain ``Session``
    where the game is chosen at run time, by its name)."""

    store: EventStore
    game: Game[S, M]
    game_id: int
    record: JSON
    state: S
    history: list[tuple[S, str]] = field(default_factory=list)
    """(state before, move text) of the moves of the current round, for the follower."""

    # -- starting and resuming -------------------------------------------------------------------
    @classmethod
    def new(cls, store: EventStore, game_name: str, *, rng: random.Random | None = None,
            state: S | None = None, options: JSON | None = None, board: str = "",
            players: Sequence[str] = (),
            station_seats: Mapping[int, str] | None = None) -> Session[S, M]:
        """Start a game: a random set-up from ``rng`` (or ``state``), stored before play.
        ``station_seats``: the seats the station's bots play, ``{seat: level}``, written into
        the record's header (:data:`STATION_SEATS`) so that a restart plays them again."""
        game = get_game(game_name)
        if state is None:
            state = game.new_game(rng or random.Random(), options)
        setup = game.setup_record(state)
        if station_seats:
            setup[STATION_SEATS] = {str(s): level for s, level in sorted(station_seats.items())}
        game_id = store.new_game(game_name, setup, board=board, players=players)
        return cls(store, game, game_id, setup, state)

    @classmethod
    def resume(cls, store: EventStore, row: GameRow) -> Session[S, M]:
        """Rebuild a stored game; :class:`StoreError` when its events do not replay."""
        game = get_game(row.game)
        events = store.events(row.id, PLAY_KINDS)
        try:  # rows that read as JSON but not as the station wrote them (a hand-edited file)
            record = fold(row.setup, [(e.kind, e.data) for e in events])
            result = replay(record)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise StoreError(f"game {row.id} does not replay: {type(exc).__name__}: "
                             f"{exc}") from exc
        if not result.ok:
            raise StoreError(f"game {row.id} does not replay: {result.error}")
        session = cls(store, game, row.id, record, result.state)
        session.history = _round_history(game, record)
        return session

    # -- what happens ----------------------------------------------------------------------------
    def moved(self, text: str, player: int | None, state: S,
              how: Acceptance | None = None, lifts_only: bool = False) -> Event:
        """Store an accepted move (call before confirming it to anyone), with how it was
        accepted: a restarted station must know whether the board alone took it from a
        picture with pieces gone (then a piece that comes back still undoes it)."""
        data: JSON = {"text": text, "player": player}
        if how is not None:
            data["how"] = how.value  # the stored word (docs/records.md), a plain string
        if lifts_only:
            data["lifts_only"] = True
        event = self.store.append(self.game_id, PlayKind.MOVE, data)
        self.history.append((self.state, text))
        self._advance(PlayKind.MOVE, event.data, state)
        return event

    def revised(self, replaced: str, text: str, state: S) -> Event:
        event = self.store.append(self.game_id, PlayKind.REVISE,
                                  {"replaced": replaced, "text": text})
        if self.history:
            before, _ = self.history.pop()
            self.history.append((before, text))
        self._advance(PlayKind.REVISE, event.data, state)
        return event

    def taken_back(self, plies: int, state: S,
                   left: Sequence[tuple[str, Sequence[str]]] | None = None) -> Event:
        """Store a takeback, with the picture BACK ``left`` on the board (the moves still on
        it, cell by cell): until the board shows the position, a restarted station must not
        take that picture for the move again."""
        data: JSON = {"plies": plies}
        if left is not None:
            data["left"] = {cell: list(pieces) for cell, pieces in left if pieces}
        event = self.store.append(self.game_id, PlayKind.TAKEBACK, data)
        del self.history[max(0, len(self.history) - plies):]
        self._advance(PlayKind.TAKEBACK, event.data, state)
        return event

    def dealt(self, state: S, round_record: JSON) -> Event:
        """A new Topple round was dealt (``state`` is its first position)."""
        event = self.store.append(self.game_id, PlayKind.DEAL, {"round": round_record})
        self.history = []
        self._advance(PlayKind.DEAL, event.data, state)
        return event

    def cards_tapped(self, cards: Sequence[Card], state: S) -> Event:
        """The Secret Tiki cards the players drew (Topple), before the round's first card."""
        event = self.store.append(self.game_id, PlayKind.CARDS,
                                  {"cards": [list(c) for c in cards]})
        self._advance(PlayKind.CARDS, event.data, state)
        return event

    def note(self, kind: str, data: JSON) -> Event:
        """Anything else worth keeping for the feed and the logs (prompts, mismatches)."""
        return self.store.append(self.game_id, kind, data)

    def finish_if_over(self) -> Event | None:
        """Close the game in the store once the engine says it is over."""
        result = self.game.result(self.state)
        if result is None:
            return None
        return self.store.finish(self.game_id, result.to_json())

    def _advance(self, kind: str, data: JSON, state: S) -> None:
        self.record = fold(self.record, [(kind, data)])
        self.state = state

    def moves(self) -> list[str]:
        """Every move of the game in order (all rounds)."""
        rounds = self.record.get("rounds")
        if isinstance(rounds, list):
            return [m for r in rounds for m in r.get("moves", [])]
        return list(self.record.get("moves", []))

    def export(self) -> JSON:
        """The game as a record (``docs/records.md``), with the station's extra fields."""
        row = self.store.game(self.game_id)
        extra: JSON = {"board": row.board, "station_game_id": row.id}
        if row.players:
            extra["players"] = row.players
        return {**self.record, **extra}


def _round_history(game: Game[S, M], record: JSON) -> list[tuple[S, str]]:
    """(state before, text) for the moves of the last round, from the record."""
    rounds = record.get("rounds")
    moves = rounds[-1].get("moves", []) if isinstance(rounds, list) else record.get("moves", [])
    if not moves:
        return []
    trimmed = copy.deepcopy(record)
    if isinstance(rounds, list):
        trimmed["rounds"][-1]["moves"] = []
    else:
        trimmed["moves"] = []
    state = replay(trimmed).state
    out = []
    for text in moves:
        out.append((state, text))
        state = game.apply_text(state, text)
    return out
