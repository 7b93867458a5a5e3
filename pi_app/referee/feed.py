"""The station feed: what one station tells the world, and the actions it takes from outside.

The daemon is the only producer. It calls :meth:`StationFeed.update` with a status snapshot
whenever something a person would see changes, and :meth:`StationFeed.event` with every event it
stored. Consumers (the station's web page, the MQTT publisher, the terminal demo) read
:attr:`StationFeed.snapshot`, register a listener, or await :meth:`StationFeed.subscribe` for
server-sent events. Actions from outside (undo, new game, override a ruling) go through
:meth:`StationFeed.act`, which calls the handler the daemon registered; the web layer checks the
PIN or token before it calls.

Snapshot (a JSON object)::

    {"board": "table-7", "game": "topple", "title": "Tiki Topple", "game_id": 3,
     "players": ["Ana", "Ben"], "status": "playing",   # a StationStatus value
     "to_move": 0, "scores": [12, 7], "winners": null,
     "moves": ["up1 Nani", ...],                         # this game's moves, in order
     "record": {...},                                    # the game record so far
     "view": {"s1": ["Nani"], ...},                      # what should stand on each cell
     "prompt": {"kind": "ambiguous", "options": [...], "selected": 0} | null,
     "guidance": ["move Nani from s2 to s1", ...],       # what to fix, nearest first
     "marks": [{"kind": "move", "piece": "Nani", "cell": "s2", "to": "s1"}, ...],  # the same
     "island": {...} | null,                             # Game.table_facts
     "text": "...",                                      # the engine's plain-text picture
     "options": ["no toast", ...],                       # Game.option_labels of the record
     "notice": "", "review": {...} | null, "station_seats": {"1": "easy"},
     "round_left": 754 | null,                           # seconds of the round clock left
     "seq": 41,                                          # the last stored event's id
     "updated": 1764433000.0}

A producer builds it as a :class:`FeedSnapshot` (:meth:`FeedSnapshot.of` a session): the real
station and the simulated one (``pi_app.net.simstation``) share that one builder, so a consumer
cannot tell them apart by the keys or their types. ``board`` and ``seq`` are the feed's own.

``status`` is a :class:`StationStatus`: the one list of words the station, the simulated station,
the MQTT feed and the referee dashboard share (a station once said ``play`` where the dashboard
expected ``playing``, and every table showed "waiting").
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypedDict

from pi_app.board.fixes import Fix
from pi_app.board.follower import GuidanceKind, Prompt
from pi_app.errors import TikiError
from pi_app.i18n import LANGUAGES
from pi_app.json_types import JSON
from pi_app.referee.rule_options import words as option_words
from pi_app.referee.session import Session
from pi_app.referee.store import Event


class Phase(StrEnum):
    """What the station's screen shows (``Scene.phase``, the station's own ``Status.phase``);
    the feed says it as a :class:`StationStatus` (:meth:`StationStatus.of_phase`)."""

    MENU = "menu"          # game over, choosing the next game
    SETUP = "setup"        # the pieces are being put in place
    PLAY = "play"
    PROMPT = "prompt"      # a question is on the screen
    OVER = "over"
    OFFLINE = "offline"    # the sensor board is unplugged
    ERROR = "error"        # moves cannot be stored


class StationStatus(StrEnum):
    """What a station is doing, as its feed says it (``snapshot["status"]``)."""

    IDLE = "idle"              # no game yet
    SETUP = "setup"            # the pieces are being put in place (cards, stacks, a new round)
    PLAYING = "playing"        # the board matches the game; moves are coming in
    PROMPT = "prompt"          # a question is on the screen (look-alike moves, a takeback)
    MISMATCH = "mismatch"      # the board does not match the game: the station guides the fix
    FOLLOW_UP = "follow_up"    # the rules say a piece leaves now (a fight's loser, a village)
    OVER = "over"              # the game ended
    OFFLINE = "offline"        # the sensor board is unplugged
    ERROR = "error"            # moves cannot be stored

    @classmethod
    def of_phase(cls, phase: Phase,
                 guidance_kind: GuidanceKind | None = None) -> StationStatus:
        """The status of a station's screen phase and its guidance."""
        if phase is Phase.PLAY and guidance_kind is GuidanceKind.MISMATCH:
            return cls.MISMATCH
        if phase is Phase.PLAY and guidance_kind is GuidanceKind.FOLLOW_UP:
            return cls.FOLLOW_UP
        return _PHASES.get(phase, cls.IDLE)


_PHASES = {Phase.SETUP: StationStatus.SETUP, Phase.PLAY: StationStatus.PLAYING,
           Phase.PROMPT: StationStatus.PROMPT, Phase.OVER: StationStatus.OVER,
           Phase.MENU: StationStatus.OVER, Phase.OFFLINE: StationStatus.OFFLINE,
           Phase.ERROR: StationStatus.ERROR}


class PromptShown(TypedDict):
    """The open question, as the feed shows it."""

    kind: str
    options: list[str]
    selected: int


class Mark(TypedDict):
    """One fix to the board (:class:`~pi_app.board.inference.Fix`) for a picture of it."""

    kind: str
    piece: str
    cell: str
    to: str | None


@dataclass(frozen=True)
class FeedSnapshot:
    """A station's status as its feed carries it (the module's schema, less ``board`` and
    ``seq``, which the feed adds). Built by :meth:`of`; :meth:`to_json` is what goes out."""

    game: str
    title: str
    game_id: int
    players: list[str]
    status: StationStatus
    to_move: int | None
    scores: list[int]
    winners: list[int] | None
    moves: list[str]
    record: JSON
    view: dict[str, list[str]]
    island: JSON | None
    text: str
    options: list[str]
    updated: float
    prompt: PromptShown | None = None
    guidance: list[str] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    notice: str = ""
    review: JSON | None = None
    station_seats: dict[str, str] = field(default_factory=dict)
    #: ``options`` said in each language the station speaks (one feed serves every viewer of
    #: the page, each in their own language): language -> "6 manches, ...".
    option_words: dict[str, str] = field(default_factory=dict)
    #: Seconds left on the tournament round's clock when the snapshot was made (None: no
    #: clock; 0: time is up). A count, not a time: the page counts down from when it got it.
    round_left: float | None = None

    @classmethod
    def of(cls, session: Session, players: Sequence[str], status: StationStatus | None = None,
           *, draw_agreed: bool = False, prompt: Prompt | None = None,
           fixes: Sequence[Fix] = (), notice: str = "", review: JSON | None = None,
           station_seats: Mapping[int, str] | None = None,
           round_left: float | None = None,
           clock: Callable[[], float] = time.time) -> FeedSnapshot:
        """The snapshot of ``session``'s game; ``status`` by default says whether it is over.
        ``draw_agreed``: the players agreed a draw the engine does not know of (no winners).
        ``fixes`` are as the public may see them (the station masks hidden pieces first)."""
        game, state, record = session.game, session.state, session.record
        winners = () if draw_agreed else game.winners(state)
        options = record.get("options")
        labels = game.option_labels(options) if isinstance(options, dict) else ()
        return cls(
            game=game.name, title=game.title, game_id=session.game_id, players=list(players),
            status=status or (StationStatus.OVER if game.is_over(state)
                              else StationStatus.PLAYING),
            to_move=game.to_move(state), scores=list(game.scores(state)),
            winners=None if winners is None else list(winners),
            moves=session.moves(), record=record,
            view={cell: list(pieces) for cell, pieces in game.expected_view(state).items()},
            island=game.table_facts(state), text=game.describe(state),
            options=list(labels),
            updated=clock(),
            prompt=None if prompt is None else PromptShown(
                kind=prompt.kind, options=list(prompt.options), selected=prompt.selected),
            guidance=[str(f) for f in fixes],
            marks=[Mark(kind=f.kind, piece=f.piece, cell=f.cell, to=f.to) for f in fixes],
            notice=notice, review=review,
            station_seats={str(seat): level for seat, level in sorted(
                (station_seats or {}).items())},
            option_words={lang: option_words(game.name, options, lang) for lang in LANGUAGES}
            if labels else {},
            round_left=None if round_left is None else round(round_left))

    def to_json(self) -> JSON:
        """The JSON object the feed sends (the values as they are, not copies)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


Listener = Callable[[str, JSON], None]
"""Called with ("status", snapshot) or ("event", event JSON)."""
Action = Callable[..., Awaitable[JSON]]


class ActionError(TikiError, ValueError):
    """An action that cannot be done now; the message says why (shown to the person)."""


class StationFeed:
    def __init__(self, board: str) -> None:
        self.board = board
        self.snapshot: JSON = {"board": board, "status": StationStatus.IDLE, "seq": 0}
        self.seq = 0
        """The id of the last stored event told (:meth:`event`): the snapshot's ``seq``."""
        self._listeners: list[Listener] = []
        self._queues: set[asyncio.Queue[tuple[str, JSON]]] = set()
        self._actions: dict[str, Action] = {}
        self.games: tuple[str, ...] = ()
        """The games this station's board plays (set by the station; empty: not said), for
        the page's "New game" list."""

    # -- producer side ---------------------------------------------------------------------------
    def update(self, snapshot: FeedSnapshot | JSON) -> None:
        """Tell the status (a plain JSON object is taken as it is: tests stand in for a
        station with one; its own ``seq`` wins)."""
        shown = snapshot.to_json() if isinstance(snapshot, FeedSnapshot) else snapshot
        self.snapshot = {"board": self.board, "seq": self.seq, **shown}
        self._emit("status", self.snapshot)

    def event(self, event: Event) -> None:
        self.seq = max(self.seq, event.id)
        self._emit("event", {"board": self.board, **event.to_json()})

    def handle(self, name: str, action: Action) -> None:
        """Register what an outside action does (the daemon's undo, new game, ...)."""
        self._actions[name] = action

    def _emit(self, kind: str, payload: JSON) -> None:
        for listener in list(self._listeners):
            try:
                listener(kind, payload)
            except Exception:  # a broken consumer must never stop the referee
                self._listeners.remove(listener)
        for queue in list(self._queues):
            if queue.qsize() < 1000:
                queue.put_nowait((kind, payload))

    # -- consumer side ---------------------------------------------------------------------------
    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def subscribe(self) -> asyncio.Queue[tuple[str, JSON]]:
        queue: asyncio.Queue[tuple[str, JSON]] = asyncio.Queue()
        queue.put_nowait(("status", self.snapshot))
        self._queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[tuple[str, JSON]]) -> None:
        self._queues.discard(queue)

    @property
    def actions(self) -> tuple[str, ...]:
        return tuple(self._actions)

    async def act(self, name: str, **args: Any) -> JSON:
        """Run an outside action; :class:`ActionError` when it is unknown or refused."""
        action = self._actions.get(name)
        if action is None:
            raise ActionError(f"unknown action {name!r}")
        return await action(**args)
