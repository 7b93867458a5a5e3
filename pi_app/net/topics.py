"""The tournament's MQTT topic layout and payloads, in one place so stations and dashboard agree.

Everything of one event lives under ``tiki/EVENT/board/BOARD/``; a station's MQTT user name is
its board id, so the broker's ACL (``pattern write tiki/EVENT/board/%u/LEAF``, one line per leaf)
lets it write only
there. Leaves:

==========  =========  =======  ====================================================================
leaf        retained   QoS      payload (JSON)
==========  =========  =======  ====================================================================
``status``  yes        1        ``{"board", "online": true|false, "t", "client"}``; the last will
                                sets ``online: false`` when a station vanishes
``state``   yes        1        the station's feed snapshot (``pi_app.referee.feed``) minus record
``record``  yes        1        the game's record (docs/records.md) + board, game id, players
``game``    yes        1        the header of a game: game, setup, players, created
``events``  no         1        one stored event: ``{"board", "seq", "game_id", "n", "t", "kind",
                                "data"}``; ``seq`` is the station's ``events.id``
==========  =========  =======  ====================================================================

One topic goes the other way, from the referee to every station of the event:
``tiki/EVENT/locks`` (retained, QoS 1) ``{"hints": false, "by", "t"}`` says what the stations
must refuse (hints, for now: off in tournament play). The broker's ACL lets only the referee
write it and every user read it; an empty retained message clears it (everything allowed).

And one per board, from the referee to that station only: ``tiki/EVENT/pairing/BOARD``
(retained, QoS 1) ``{"round", "table", "game", "players", "t", "ends_in"}``, the table the
board serves this round with the names in seat order (seat 1 moves first) and the seconds
left on the round clock, so the players only press OK at the station
(``pi_app.net.schema.PairingPayload``). The ACL lets only the referee write it and only that
board read it (``pattern read tiki/EVENT/pairing/%u``); an empty retained message clears it
(the board serves no table). It lives outside ``board/BOARD/`` on purpose: a station
writes every leaf there, and must never write its own pairing.

Remote play (issue 36, docs/remote-play.md) has one pair of topics per board, outside
``board/BOARD/`` so neither the dashboard's ``board/+/+`` nor the publisher's leaves change:
``tiki/EVENT/remote/BOARD/up`` (not retained, QoS 1), the station's proposals and hellos to the
game's authority (``pattern write`` for that board only), and ``tiki/EVENT/remote/BOARD/down``
(not retained, QoS 1), the authority's confirmations, refusals, syncs and pauses for that board
only (``pattern read``; only the referee writes it). A message's sender is its topic's board,
never a field it wrote itself.

``seq`` increases by one per event across a station's games (SQLite AUTOINCREMENT in one file):
the dashboard keeps the highest ``seq`` per board, drops anything at or below it as a duplicate
(QoS 1 delivers at least once) and reports a jump as a gap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pi_app.ids import ID_PATTERN, IdError, check_id
from pi_app.json_types import JSON

ROOT = "tiki"
LEAVES = ("status", "state", "record", "game", "events")
RETAINED = frozenset({"status", "state", "record", "game"})
QOS = 1

#: A bad board or event id (:mod:`pi_app.ids`, the configuration's rule too) or topic leaf.
TopicError = IdError
#: Board and event ids: letters, digits, ``_ . -``; never the MQTT wildcards or ``/``.
check_name = check_id


def board_prefix(event: str, board: str) -> str:
    return f"{ROOT}/{check_name(event, 'event')}/board/{check_name(board, 'board')}"


def topic(event: str, board: str, leaf: str) -> str:
    if leaf not in LEAVES:
        raise TopicError(f"unknown topic leaf {leaf!r}")
    return f"{board_prefix(event, board)}/{leaf}"


def locks_topic(event: str) -> str:
    """The referee's locks for every station of ``event`` (the one topic a station reads)."""
    return f"{ROOT}/{check_name(event, 'event')}/locks"


def pairing_topic(event: str, board: str) -> str:
    """The pairing the referee sends ``board`` (the one topic only that board reads)."""
    return f"{ROOT}/{check_name(event, 'event')}/pairing/{check_name(board, 'board')}"


def remote_up_topic(event: str, board: str) -> str:
    """What ``board`` sends the authority of its remote game."""
    return f"{ROOT}/{check_name(event, 'event')}/remote/{check_name(board, 'board')}/up"


def remote_down_topic(event: str, board: str) -> str:
    """What the authority of a remote game sends ``board`` (only that board reads it)."""
    return f"{ROOT}/{check_name(event, 'event')}/remote/{check_name(board, 'board')}/down"


def remote_board(event: str, name: str, leaf: str) -> str | None:
    """The board of ``tiki/EVENT/remote/BOARD/LEAF``; None for any other topic."""
    parts = name.split("/")
    if (len(parts) != 5 or parts[0] != ROOT or parts[1] != event or parts[2] != "remote"
            or parts[4] != leaf or not ID_PATTERN.fullmatch(parts[3])):
        return None
    return parts[3]


def event_filter(event: str) -> str:
    """The subscription that sees every board of an event."""
    return f"{ROOT}/{check_name(event, 'event')}/board/+/+"


@dataclass(frozen=True)
class Topic:
    event: str
    board: str
    leaf: str


def parse_topic(name: str) -> Topic | None:
    """``tiki/EVENT/board/BOARD/LEAF`` -> its parts; None for anything else."""
    parts = name.split("/")
    if len(parts) != 5 or parts[0] != ROOT or parts[2] != "board" or parts[4] not in LEAVES:
        return None
    if not (ID_PATTERN.fullmatch(parts[1]) and ID_PATTERN.fullmatch(parts[3])):
        return None
    return Topic(parts[1], parts[3], parts[4])


def encode(payload: JSON) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def decode(payload: bytes) -> JSON | None:
    """A JSON object, or None for anything else (an empty retained message clears a topic).
    JSON nested deeper than the interpreter recurses (``[[[[...``) is anything else too: its
    RecursionError once escaped the dashboard's desk uncounted, at every start when retained."""
    try:
        data: Any = json.loads(payload.decode())
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def event_payload(board: str, event: JSON) -> JSON:
    """An ``Event.to_json()`` as published: ``seq`` is the station-wide id, ``n`` the game's."""
    return {"board": board, "seq": event["id"], "game_id": event["game_id"], "n": event["seq"],
            "t": event["t"], "kind": event["kind"], "data": event["data"]}
