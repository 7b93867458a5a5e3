"""What the dashboard accepts from a station, as typed records, and the one check that enforces it.

Every MQTT payload comes from a station the referee does not control (another version, a bug,
a hand-made ``mosquitto_pub``). One wrongly typed field used to reach the pages and the export
(``"moves": 5`` made the overview fail for everyone, and kept failing after a restart, because
the bad state was stored). So each topic leaf has a dataclass here that says what its payload
must hold; :func:`check` reads those type hints and refuses a payload that does not fit, naming
the field. The desk drops and counts what fails, per board; the ledger's export skips a stored
row that fails (a ledger written by an older version).

Extra keys are allowed (a newer station may add some); missing optional keys take the default.
Numbers: an ``int`` field takes no bool and nothing outside SQLite's 64 bits, a ``float`` field
takes an int too, never NaN or infinity.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar, Union

from pi_app.errors import UnreadableInput
from pi_app.json_types import JSON
from pi_app.net import topics
from pi_app.net.sizes import TooBig, check_bytes, check_sizes
from pi_app.referee.feed import StationStatus

T = TypeVar("T")
_INT_LIMIT = 2**63


class PayloadError(UnreadableInput, ValueError):
    """A payload that does not fit its schema; the message names the field."""


@dataclass(frozen=True)
class StatusPayload:
    """``…/status`` (retained; the last will says ``online: false``)."""

    online: bool
    board: str | None = None
    t: float | None = None
    client: str | None = None


@dataclass(frozen=True)
class Prompt:
    kind: str
    options: list[str] = field(default_factory=list)
    selected: int | None = None


@dataclass(frozen=True)
class StatePayload:
    """``…/state``: the station feed's snapshot (``pi_app.referee.feed``) without the record."""

    status: StationStatus
    board: str | None = None
    game: str | None = None
    title: str | None = None
    game_id: int | None = None
    players: list[str] = field(default_factory=list)
    to_move: int | None = None
    scores: list[float] = field(default_factory=list)
    winners: list[int] | None = None
    moves: list[str] = field(default_factory=list)
    view: dict[str, list[str]] = field(default_factory=dict)
    prompt: Prompt | None = None
    guidance: list[str] = field(default_factory=list)
    text: str | None = None
    seq: int = 0
    updated: float | None = None


@dataclass(frozen=True)
class RecordPayload:
    """``…/record``: the current game's record (``docs/records.md``) and who played it."""

    game: str
    station_game_id: int
    board: str | None = None
    players: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GamePayload:
    """``…/game``: a game's header, sent before its first event."""

    game_id: int
    game: str
    setup: dict[str, Any]
    board: str | None = None
    players: list[str] = field(default_factory=list)
    created: float | None = None
    record: dict[str, Any] | None = None
    """The whole record, in the header sent again when the game ended."""


@dataclass(frozen=True)
class EventPayload:
    """``…/events``: one stored event.

    Its ``data`` is checked by its kind (:data:`EVENT_DATA`) where it is used (a result when it
    arrives, play events when a record is rebuilt), not on the way in: an event is stored
    whatever its data, so its number is never missing from the board's sequence."""

    seq: int
    game_id: int
    kind: str
    data: dict[str, Any]
    board: str | None = None
    n: int = 0
    t: float = 0.0

    def __post_init__(self) -> None:
        if self.seq < 1:
            raise PayloadError(f"seq: must be 1 or more, not {self.seq}")


@dataclass(frozen=True)
class MoveData:
    text: str


@dataclass(frozen=True)
class TakebackData:
    plies: int


@dataclass(frozen=True)
class DealData:
    round: dict[str, Any]


@dataclass(frozen=True)
class CardsData:
    cards: list[list[Any]]


@dataclass(frozen=True)
class ResultData:
    winners: list[int] | None = None
    scores: list[float] = field(default_factory=list)


EVENT_DATA: dict[str, type] = {"move": MoveData, "revise": MoveData, "takeback": TakebackData,
                               "deal": DealData, "cards": CardsData, "result": ResultData}
"""The event kinds whose data the records and results are built from (``store.PLAY_KINDS``)."""

LEAVES: dict[str, type] = {"status": StatusPayload, "state": StatePayload,
                           "record": RecordPayload, "game": GamePayload, "events": EventPayload}


@dataclass(frozen=True)
class LocksPayload:
    """``tiki/EVENT/locks`` (retained, the referee's): what every station of the event refuses.

    Read by the stations, not the desk: the station trusts it because the broker lets only the
    referee write it (``pi_app.net.broker``). An empty retained message clears it: all allowed.
    """

    hints: bool = True
    by: str | None = None
    t: float | None = None


@dataclass(frozen=True)
class PairingPayload:
    """``tiki/EVENT/pairing/BOARD`` (retained, the referee's): the table this board serves in
    the current round, names in seat order (seat 1 moves first). Read by that station only: it
    offers the game, and the players start it with OK (``Station.offer_pairing``)."""

    round: int
    table: int
    game: str
    players: list[str]
    t: float | None = None
    ends_in: float | None = None
    """Seconds of the round clock left when this was sent (None: no clock). A count, not a
    time of day: a station's clock at a venue may be minutes off the referee's."""


def read_pairing(payload: bytes) -> PairingPayload | None:
    """The pairing a retained ``…/pairing/BOARD`` message says; None for an empty one (the
    board serves no table now); :class:`PayloadError` for anything else."""
    if not payload:
        return None
    try:
        check_bytes("pairing", payload)
        data = topics.decode(payload)
        if data is None:
            raise PayloadError("pairing: not a JSON object")
        check_sizes("pairing", data)
    except TooBig as exc:
        raise PayloadError(str(exc)) from None
    pairing = parse(PairingPayload, data, "pairing")
    if not pairing.players or not all(isinstance(p, str) for p in pairing.players):
        raise PayloadError("pairing: players is a list of names")
    return pairing


def read_locks(payload: bytes) -> LocksPayload:
    """The locks a retained ``…/locks`` message says (empty: none); :class:`PayloadError` for
    anything else, so a station keeps the locks it had rather than guess."""
    if not payload:
        return LocksPayload()
    data = topics.decode(payload)
    if data is None:
        raise PayloadError("locks: not a JSON object")
    return parse(LocksPayload, data, "locks")


def check(leaf: str, payload: JSON, board: str | None = None) -> JSON:
    """``payload`` if it fits the schema of ``leaf`` (and names ``board``, when it names one)."""
    schema = LEAVES.get(leaf)
    if schema is None:
        raise PayloadError(f"unknown topic leaf {leaf!r}")
    parsed: object = parse(schema, payload, leaf)
    said = getattr(parsed, "board", None)
    if board is not None and said is not None and said != board:
        raise PayloadError(f"{leaf}.board: {said!r} sent on board {board!r}'s topic")
    return payload


def check_event_data(kind: str, data: JSON) -> None:
    schema = EVENT_DATA.get(kind)
    if schema is not None:
        parse(schema, data, f"events.data ({kind})")


def parse(schema: type[T], data: Any, where: str = "payload") -> T:
    """An instance of the dataclass ``schema`` from JSON ``data``; :class:`PayloadError` else."""
    if not isinstance(data, dict):
        raise PayloadError(f"{where}: must be an object, not {_kind(data)}")
    hints = _hints(schema)
    values: dict[str, Any] = {}
    for spec in dataclasses.fields(schema):  # type: ignore[arg-type]
        if spec.name not in data:
            if spec.default is dataclasses.MISSING and \
                    spec.default_factory is dataclasses.MISSING:
                raise PayloadError(f"{where}.{spec.name}: missing")
            continue
        values[spec.name] = _value(hints[spec.name], data[spec.name], f"{where}.{spec.name}")
    try:
        return schema(**values)
    except PayloadError as exc:
        raise PayloadError(f"{where}.{exc}") from None


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(schema: type) -> dict[str, Any]:
    """A dataclass's resolved type hints, worked out once (every message needs them)."""
    hints = _HINTS.get(schema)
    if hints is None:
        hints = _HINTS[schema] = typing.get_type_hints(schema)
    return hints


def _value(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        errors = []
        for option in typing.get_args(hint):
            if option is type(None):
                if value is None:
                    return None
                continue
            try:
                return _value(option, value, where)
            except PayloadError as exc:
                errors.append(exc)
        raise errors[0] if errors else PayloadError(f"{where}: must be null")
    if origin is list:
        if not isinstance(value, list):
            raise PayloadError(f"{where}: must be a list, not {_kind(value)}")
        (item,) = typing.get_args(hint)
        return [_value(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise PayloadError(f"{where}: must be an object, not {_kind(value)}")
        _, item = typing.get_args(hint)
        return {k: _value(item, v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError:
            words = ", ".join(str(m.value) for m in hint)
            raise PayloadError(f"{where}: {value!r} is not one of {words}") from None
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return parse(hint, value, where)
    if hint is bool:
        if not isinstance(value, bool):
            raise PayloadError(f"{where}: must be true or false, not {_kind(value)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= _INT_LIMIT:
            raise PayloadError(f"{where}: must be a whole number, not {_kind(value)}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                (isinstance(value, float) and not math.isfinite(value)) or \
                (isinstance(value, int) and abs(value) >= _INT_LIMIT):
            raise PayloadError(f"{where}: must be a number, not {_kind(value)}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise PayloadError(f"{where}: must be a text, not {_kind(value)}")
        return value
    raise TypeError(f"schema type {hint!r} at {where} is not supported")


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    text = "null" if value is None else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
