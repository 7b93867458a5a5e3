"""Two boards, one game (issue 36): the authority and the tables as pure reducers over messages.

Nothing here does I/O, reads a clock or draws a random number: the authority and each table take
one message and answer with the messages to send, so the protocol can be tested under every
order, duplication and loss of messages (tests/test_remote_protocol.py) before any broker is
involved, and the MQTT transport (docs/remote-play.md) only carries what these produce.

* :class:`Authority` holds the one true record of a game. It validates each proposed move with
  the engine, appends it and only then confirms it (``Accepted``) to every table; the driver
  stores :meth:`Authority.to_json` before it sends what ``handle`` returned, so a confirmed move
  is never lost by a restart (store before confirm, as the station's link does).
* :class:`Table` is one station's view: the record as confirmed to it, the move its own player
  made and has proposed but not yet seen confirmed, and confirmations that arrived too early.

Every message names the game (``game``) and carries the record position it is about (``seq``,
1 for the first move). A move is applied at position ``seq`` only, so a message that arrives
twice finds its place taken and is answered, never applied again; one that arrives early waits
(the table) or is refused with the position expected (the authority) and is sent again by its
sender's :meth:`Table.tick`. A table that restarted says how much it has (``Hello``) and gets
the rest (``Sync``).

The texts on the wire are the engine's move notation made public (``Game.public_text``): the
authority is the only party that needs to know a hidden fact (a TacTiki rank, a Topple card), so
what it sends a table is what anyone at the venue may see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_app.games import Game, GameError
from pi_app.json_types import JSON

Engine = Game[Any, Any]

# Refusal reasons (stable words: the station turns them into a sentence for its screen).
NOT_THIS_GAME = "not-this-game"
NOT_A_PLAYER = "not-a-player"
NOT_YOUR_TURN = "not-your-turn"
ILLEGAL = "illegal"
EARLY = "early"
STALE = "stale"
PAUSED = "paused"


@dataclass(frozen=True)
class Propose:
    """A table's player made ``move`` on their board; it should be the record's ``seq``-th move."""
    game: str
    station: str
    seq: int
    move: str


@dataclass(frozen=True)
class Accepted:
    """The authority's record has ``move`` (made at ``by``) as its ``seq``-th move."""
    game: str
    seq: int
    move: str
    by: str


@dataclass(frozen=True)
class Refused:
    """The authority did not apply ``station``'s proposal at ``seq``; ``expected``: the position
    it would take next (so an early or stale sender knows where it stands)."""
    game: str
    station: str
    seq: int
    reason: str
    expected: int


@dataclass(frozen=True)
class Hello:
    """A table (after a start or a reconnection) has the first ``have`` moves of the record."""
    game: str
    station: str
    have: int


@dataclass(frozen=True)
class Sync:
    """The record from position ``start + 1`` on, for a table that said it has ``start``."""
    game: str
    start: int
    moves: tuple[tuple[str, str], ...]  # (move, by)


@dataclass(frozen=True)
class Presence:
    """The transport saw ``station`` come or go (its MQTT last will, its status)."""
    station: str
    online: bool


@dataclass(frozen=True)
class Paused:
    """Both boards stop: ``missing`` are the tables the authority cannot reach (empty: resume)."""
    game: str
    missing: tuple[str, ...]


Message = Propose | Accepted | Refused | Hello | Sync | Presence | Paused
#: An outgoing message and its addressee (a station id, or ``ALL`` for every table of the game).
Out = tuple[str, Message]
ALL = "*"

_KINDS: dict[str, type[Any]] = {cls.__name__.lower(): cls for cls in
                                 (Propose, Accepted, Refused, Hello, Sync, Presence, Paused)}


def to_json(message: Message) -> JSON:
    """A message as it goes on the wire: its fields plus ``kind``."""
    data: JSON = {"kind": type(message).__name__.lower()}
    for name in message.__dataclass_fields__:
        value = getattr(message, name)
        data[name] = [list(v) for v in value] if name == "moves" else (
            list(value) if isinstance(value, tuple) else value)
    return data


def from_json(data: JSON) -> Message | None:
    """The message, or None for anything that is not one (wrong kind, field or type): the
    transport counts and drops it, as the dashboard's desk does with a bad payload."""
    cls = _KINDS.get(str(data.get("kind")))
    if cls is None:
        return None
    fields = cls.__dataclass_fields__
    if set(data) != set(fields) | {"kind"}:
        return None
    values: dict[str, Any] = {}
    for name, spec in fields.items():
        value = data[name]
        kind = str(spec.type)
        if kind == "int" and not (isinstance(value, int) and not isinstance(value, bool)
                                  and value >= 0):
            return None
        if kind in ("str",) and not isinstance(value, str):
            return None
        if kind == "bool" and not isinstance(value, bool):
            return None
        if name == "missing":
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                return None
            value = tuple(value)
        if name == "moves":
            if not (isinstance(value, list) and all(
                    isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
                    for v in value)):
                return None
            value = tuple((v[0], v[1]) for v in value)
        values[name] = value
    message: Message = cls(**values)
    return message


@dataclass
class Authority:
    """The one record of a remote game. ``seats``: station id -> the seats it plays (Manami
    and TacTiki: one each; Topple: one or more players per board)."""
    engine: Engine
    game: str
    seats: dict[str, tuple[int, ...]]
    state: Any
    record: list[tuple[str, str]] = field(default_factory=list)
    online: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._start = self.state
        for move, _by in self.record:  # a restart: replay the stored record
            self.state = self.engine.apply_text(self.state, move)

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.seats) - self.online))

    def handle(self, message: Message) -> list[Out]:
        """The answer to one message. The caller stores :meth:`to_json` before sending it."""
        if isinstance(message, Presence):
            return self._presence(message)
        if isinstance(message, Hello):
            return self._hello(message)
        if isinstance(message, Propose):
            return self._propose(message)
        return []  # confirmations and syncs go the other way

    def _presence(self, message: Presence) -> list[Out]:
        if message.station not in self.seats:
            return []
        before = self.missing
        (self.online.add if message.online else self.online.discard)(message.station)
        return [] if self.missing == before else [(ALL, Paused(self.game, self.missing))]

    def _hello(self, message: Hello) -> list[Out]:
        if message.game != self.game or message.station not in self.seats:
            return []
        have = min(message.have, len(self.record))
        out: list[Out] = [(message.station, Sync(self.game, have, self.public_record()[have:]))]
        out.append((message.station, Paused(self.game, self.missing)))
        return out

    def _refuse(self, message: Propose, reason: str) -> list[Out]:
        return [(message.station, Refused(self.game, message.station, message.seq, reason,
                                          len(self.record) + 1))]

    def _propose(self, message: Propose) -> list[Out]:
        if message.game != self.game:
            return [(message.station, Refused(message.game, message.station, message.seq,
                                              NOT_THIS_GAME, 0))]
        if message.station not in self.seats:
            return self._refuse(message, NOT_A_PLAYER)
        if 1 <= message.seq <= len(self.record):
            # Its place is taken: the same move again is a duplicate (its confirmation may
            # have been lost: send it again), anything else a proposal from a stale view.
            move, by = self.record[message.seq - 1]
            if by == message.station and move == message.move:
                return [(message.station, Accepted(self.game, message.seq,
                                                  self.engine.public_text(move), by))]
            return self._refuse(message, STALE)
        if message.seq != len(self.record) + 1:
            return self._refuse(message, EARLY)
        if self.missing:
            return self._refuse(message, PAUSED)
        if self.engine.to_move(self.state) not in self.seats[message.station]:
            return self._refuse(message, NOT_YOUR_TURN)
        try:
            move = self.engine.parse_move(self.state, message.move)
            state = self.engine.apply(self.state, move)
        except GameError:
            return self._refuse(message, ILLEGAL)
        self.state = state
        self.record.append((message.move, message.station))
        return [(ALL, Accepted(self.game, len(self.record), self.engine.public_text(message.move),
                               message.station))]

    def public_record(self) -> tuple[tuple[str, str], ...]:
        """The record as every table gets it: each move in its public form."""
        return tuple((self.engine.public_text(move), by) for move, by in self.record)

    def to_json(self) -> JSON:
        """What the authority stores before it confirms (its state is the record replayed)."""
        return {"game": self.game, "seats": {k: list(v) for k, v in self.seats.items()},
                "start": self.engine.state_to_json(self._start),
                "record": [list(m) for m in self.record]}

    @classmethod
    def from_json(cls, engine: Engine, data: JSON) -> Authority:
        """The authority after a restart: nobody is online until the transport says so."""
        return cls(engine, str(data["game"]),
                   {str(k): tuple(int(s) for s in v) for k, v in data["seats"].items()},
                   engine.state_from_json(data["start"]),
                   [(str(m), str(b)) for m, b in data["record"]])


@dataclass
class Table:
    """One station's side of a remote game.

    ``record`` is what the authority confirmed to this table, in order: the station shows each
    move of the other board on its LEDs for its player to carry out (as its own bot's moves),
    and its player's own move is sent as ``pending`` until it comes back confirmed."""
    game: str
    station: str
    record: list[tuple[str, str]] = field(default_factory=list)
    pending: Propose | None = None
    early: dict[int, tuple[str, str]] = field(default_factory=dict)
    paused: tuple[str, ...] = ()
    refused: list[Refused] = field(default_factory=list)

    def propose(self, move: str) -> list[Message]:
        """The local player made ``move``. One proposal at a time: a second move before the
        first is confirmed is the station's to refuse on its own board (not this module's)."""
        if self.pending is not None:
            raise ValueError("a proposal is still waiting for its confirmation")
        self.pending = Propose(self.game, self.station, len(self.record) + 1, move)
        return [self.pending]

    def tick(self) -> list[Message]:
        """A timer's turn (or a reconnection): send again what may have been lost."""
        out: list[Message] = [Hello(self.game, self.station, len(self.record))]
        if self.pending is not None:
            out.append(self.pending)
        return out

    def handle(self, message: Message) -> list[Message]:
        """A message from the authority; answers with what to send back (a ``Hello`` when a gap
        shows that something was lost)."""
        if isinstance(message, Paused):
            if message.game == self.game:
                self.paused = message.missing
            return []
        if isinstance(message, Accepted):
            if message.game != self.game:
                return []
            return self._confirmed(message.seq, (message.move, message.by))
        if isinstance(message, Sync):
            if message.game != self.game:
                return []
            out: list[Message] = []
            for i, entry in enumerate(message.moves):
                out += self._confirmed(message.start + 1 + i, entry)
            return out
        if isinstance(message, Refused):
            return self._refused(message)
        return []

    def _confirmed(self, seq: int, entry: tuple[str, str]) -> list[Message]:
        if seq <= len(self.record):
            if self.record[seq - 1] != entry:  # the authority never rewrites its record
                raise RuntimeError(f"move {seq} confirmed twice, differently")
            return []
        if seq > len(self.record) + 1:
            self.early[seq] = entry
            return [Hello(self.game, self.station, len(self.record))]
        self.record.append(entry)
        while len(self.record) + 1 in self.early:
            self.record.append(self.early.pop(len(self.record) + 1))
        self.early = {k: v for k, v in self.early.items() if k > len(self.record)}
        pending = self.pending
        if pending is not None and pending.seq <= len(self.record):
            self.pending = None
            if self.record[pending.seq - 1] != (pending.move, self.station):
                # its place went to another move: it was proposed from a stale view
                self.refused.append(Refused(self.game, self.station, pending.seq, STALE,
                                            len(self.record) + 1))
        return []

    def _refused(self, message: Refused) -> list[Message]:
        pending = self.pending
        if message.game != self.game or pending is None or message.seq != pending.seq:
            return []  # an answer to an older proposal
        if message.reason in (EARLY, PAUSED):
            return []  # sent again by tick() once the record or the pause catches up
        self.pending = None
        self.refused.append(message)
        return [Hello(self.game, self.station, len(self.record))]


def replay(engine: Engine, start: Any, moves: Sequence[tuple[str, str]]) -> Any:
    """The state after ``moves``: what a table's board should show."""
    state = start
    for move, _by in moves:
        state = engine.apply_text(state, move)
    return state
