"""What the table reads from the players before play, beyond the position the station dealt.

The engine says what its rules need (``Game.setup_input``); the station runs the flow here for
it, with no move accepted until it is done (:meth:`Station.blocked`):

* secret cards (Tiki Topple): at each round's start every seat draws a Secret Tiki card from
  the real deck and taps it on the card pad; the station never shows them. Its own seats'
  cards it draws itself once the people's are in, from the cards the deck still holds.
* start stacks (TacTiki): the players stack their hidden ranks on their start fields; the
  station reads each field bottom first, in the order the pieces were put down
  (:mod:`pi_app.referee.setup_reader`), asks about fields whose order it did not see, and
  stores the set-up read as the game's own (the same game, its dealt set-up replaced).

These are the station's flows, apart from its move loop so that ``station.py`` stays about
moves; they read and write the station's status (``cards``, ``reading``, ``message``,
``prompt``) as the loop does.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from pi_app.board.follower import Follower, Prompt, PromptKind
from pi_app.board.geometry import Geometry
from pi_app.games.base import Card, SetupInput
from pi_app.i18n import N_, Said
from pi_app.json_types import JSON
from pi_app.referee import feedback as fb
from pi_app.referee.config import Config
from pi_app.referee.feed import Phase
from pi_app.referee.opponent import Opponent
from pi_app.referee.session import STATION_SEATS, Session
from pi_app.referee.setup_reader import StackOrder, stacks_record, start_state
from pi_app.referee.status import Status
from pi_app.referee.store import Event, EventStore, StoreError


class Station(Protocol):
    """What these flows use of the station (:class:`pi_app.referee.station.Station`): its
    parts, and its three ways to store; nothing of its move loop."""

    config: Config
    store: EventStore
    status: Status
    session: Session
    follower: Follower
    opponent: Opponent
    geometry: Geometry

    def player_names(self) -> tuple[str, ...]: ...

    def persist(self, write: Callable[[], Event], now: float) -> None: ...

    def note(self, kind: str, data: JSON) -> None: ...

    def store_failed(self, why: str, now: float) -> None: ...


def start_if_due(station: Station) -> None:
    """At a game's start (or a new round's), begin reading what the engine needs from the
    players, when the table is configured to read it and it was not read already."""
    kind = station.session.game.setup_input
    if kind is SetupInput.SECRET_CARDS:
        _await_cards_if_due(station)
    elif kind is SetupInput.START_STACKS:
        _read_stacks_if_due(station)


def read(station: Station, now: float) -> None:
    """After each sensor event: take in what the flow under way waits for."""
    if station.status.cards is not None:
        _read_cards(station, now)
    if station.status.reading is not None:
        _read_stacks(station, now)


# -- secret cards ----------------------------------------------------------------------------------
def _await_cards_if_due(station: Station) -> None:
    """At a round's start, wait for each player to tap the secret card they drew."""
    session = station.session
    if (station.config.station.topple_cards != "tap"
            or not session.game.secret_card_seats(session.state)):
        return
    if _round_cards_tapped(station):
        return
    station.status.cards = []
    _card_message(station)


def _round_cards_tapped(station: Station) -> bool:
    """True when this round's cards were tapped already (a resumed game)."""
    for event in reversed(station.store.events(station.session.game_id, ("deal", "cards"))):
        return event.kind == "cards"
    return False


def _people(station: Station) -> list[int]:
    """The seats whose cards people tap (the station draws its own seats')."""
    session = station.session
    return [s for s in session.game.secret_card_seats(session.state)
            if not station.opponent.plays(s)]


def _card_message(station: Station) -> None:
    cards = station.status.cards or []
    who = fb.player_name(fb.Scene(players=station.player_names()),
                         _people(station)[len(cards)])
    station.status.message = Said.gettext("{name}: tap your Secret Tiki card on the pad",
                                          name=who)


def _read_cards(station: Station, now: float) -> None:
    """A new secret card on the pad is the next player's; all in: the round starts."""
    cards = station.status.cards
    if cards is None:
        return
    session = station.session
    game = session.game
    observation = station.follower.tracker.observation(now)
    for cell in station.geometry.names("pad"):
        for piece in observation.pieces.get(cell, ()):
            card = game.secret_card_of(piece)
            if card is not None and card not in cards:
                cards.append(card)
    seats = game.secret_card_seats(session.state)
    if len(cards) < len(_people(station)):
        _card_message(station)
        return
    cards[:] = _with_station_cards(station, cards)
    state = game.with_secret_cards(session.state, cards[:len(seats)])
    station.persist(partial(session.cards_tapped, cards[:len(seats)], state), now)
    station.follower.reset(state, list(session.history))
    station.status.cards = None
    station.status.message = ""


def _with_station_cards(station: Station, cards: list[Card]) -> list[Card]:
    """The round's secret cards in seat order: the people's as tapped (in their seat order),
    the station's seats' drawn by the station once the people's are in."""
    session = station.session
    seats = session.game.secret_card_seats(session.state)
    tapped = list(cards[:len(_people(station))])
    rounds = session.record.get("rounds")
    drawn = station.opponent.draw_cards(session.game, session.state, tapped,
                                        len(session.history),
                                        len(rounds) - 1 if isinstance(rounds, list) else 0)
    mine = iter(tapped)
    return [drawn[s] if s in drawn else next(mine) for s in seats]


# -- start stacks ----------------------------------------------------------------------------------
def _read_stacks_if_due(station: Station) -> None:
    """Before the game's first move, read the stacks the players build."""
    session = station.session
    if (station.config.station.tactiki_setup != "players" or session.moves()
            or station.store.events(session.game_id, ("setup_read",))):
        return
    station.status.reading = StackOrder()
    station.status.message = N_("Stack two pieces on each start field")


def _read_stacks(station: Station, now: float) -> None:
    order = station.status.reading
    if order is None:
        return
    tracker = station.follower.tracker
    observation = tracker.observation(now)
    order.update(observation.pieces, station.follower.cells)
    _ask_order(station, now, order.unsure())
    game = station.session.game
    record, why = stacks_record(game, order, station.session.record.get("options", {}))
    if record is None:
        station.status.message = why
        return
    if now - tracker.last_change < 1.0 or not observation.complete:
        station.status.message = N_("set-up complete: hands off the board")
        return
    state = start_state(record)
    session = station.session
    setup = game.setup_record(state)
    if STATION_SEATS in session.record:
        setup[STATION_SEATS] = session.record[STATION_SEATS]
    # The same game, its set-up replaced: a game stored, abandoned and stored anew would
    # leave a closed game whose record holds the ranks of the pieces on the board.
    try:
        station.store.replace_setup(session.game_id, setup)
    except StoreError as exc:
        station.store_failed(str(exc), now)
        return
    station.session = Session(station.store, game, session.game_id, setup, state)
    station.note("setup_read", {"setup": record["setup"]})
    station.follower.reset(state)
    station.status.reading = None
    station.status.message = ""
    station.status.phase = Phase.PLAY


def _ask_order(station: Station, now: float, unsure: tuple[str, ...]) -> None:
    """Ask about the fields whose stack order the sensors did not see (two pieces arrived
    in one reading): the question (kind ``order``, options: those fields) lights them and
    asks to lift the pieces off and put them back one at a time. It names fields only:
    the opponent reads the screen too, and a piece's name (``T4``) is its hidden rank."""
    asked = station.status.prompt
    if unsure:
        if asked is None or asked.kind != PromptKind.ORDER or asked.options != unsure:
            station.status.prompt = Prompt(now, PromptKind.ORDER, unsure)
    elif asked is not None and asked.kind == PromptKind.ORDER:
        station.status.prompt = None
