"""How big anything a station sends the dashboard may be, by what a game can hold.

The schema (:mod:`pi_app.net.schema`) says what types a payload holds; it says nothing of sizes,
and a schema-valid ``state`` with 60,000 pieces on one cell (300 KB) cost the dashboard 10-12 MB
and 1.5 s of its event loop per anonymous page (issue 29). Every count here is a bound no real
game reaches, taken from the games: a board has at most 25 fields plus its pads, a TacTiki field
holds a stack of a few pieces, Tiki Topple seats four, a name has
:data:`pi_app.referee.players.NAME_MAX` characters. What is over is refused whole (the desk
counts it as malformed, names the field, and keeps the board's last good payload): a payload
cut to size would be a position the station never had.
"""

from __future__ import annotations

from typing import Any

from pi_app.errors import UnreadableInput
from pi_app.referee.players import NAME_MAX

#: Bytes of one MQTT payload, per topic leaf. A record grows with its moves (a few dozen bytes
#: each; a long TacTiki game has a few hundred moves), a state with the board.
MAX_BYTES = {"state": 64 * 1024, "record": 256 * 1024, "game": 64 * 1024,
             "events": 16 * 1024, "status": 1024, "locks": 1024, "pairing": 2048}
MAX_BYTES_OTHER = 4 * 1024

MAX_CELLS = 64  # fields of a board's view (Manami 21, TacTiki 25, Topple 9 and its pad)
MAX_STACK = 16  # pieces on one field, bottom first
MAX_PIECES = 128  # pieces in a whole view
MAX_MOVES = 2000  # moves of a game (rounds together)
MAX_PLAYERS = 4
MAX_TEXT = 200  # one move, piece, guidance line or prompt option
MAX_PICTURE = 4000  # the engine's plain-text picture of the position
MAX_LINES = 32  # guidance lines, prompt options
MAX_DEPTH = 12  # nesting of any payload (a record's rounds of moves is 4 deep)
MAX_ITEMS = 4096  # entries of any one list or object


class TooBig(UnreadableInput, ValueError):
    """A payload over one of the sizes above; the message names the field and the bound."""


def check_bytes(leaf: str, payload: bytes) -> None:
    limit = MAX_BYTES.get(leaf, MAX_BYTES_OTHER)
    if len(payload) > limit:
        raise TooBig(f"{leaf}: {len(payload)} bytes, more than {limit}")


def check_shape(value: Any, where: str = "payload", depth: int = 0) -> None:
    """No payload nests deeper than :data:`MAX_DEPTH` or has a list or object longer than
    :data:`MAX_ITEMS` (walked without recursion past the bound)."""
    if depth > MAX_DEPTH:
        raise TooBig(f"{where}: nested more than {MAX_DEPTH} deep")
    if isinstance(value, dict | list):
        if len(value) > MAX_ITEMS:
            raise TooBig(f"{where}: {len(value)} entries, more than {MAX_ITEMS}")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            check_shape(item, f"{where}.{key}", depth + 1)


def _at_most(where: str, count: int, limit: int) -> None:
    if count > limit:
        raise TooBig(f"{where}: {count}, more than {limit}")


def _texts(where: str, values: Any, count: int, length: int = MAX_TEXT) -> None:
    if not isinstance(values, list):
        return
    _at_most(f"{where} (entries)", len(values), count)
    for i, text in enumerate(values):
        if isinstance(text, str):
            _at_most(f"{where}[{i}] (characters)", len(text), length)


def check_view(where: str, view: Any) -> None:
    """A board's view: cells, each stack's height and the pieces in all, each name's length."""
    if not isinstance(view, dict):
        return
    _at_most(f"{where} (fields)", len(view), MAX_CELLS)
    total = 0
    for cell, pieces in view.items():
        _at_most(f"{where} field name (characters)", len(str(cell)), MAX_TEXT)
        if isinstance(pieces, list):
            _texts(f"{where}.{cell}", pieces, MAX_STACK)
            total += len(pieces)
    _at_most(f"{where} (pieces)", total, MAX_PIECES)


def check_sizes(leaf: str, payload: Any) -> None:
    """Every size of a decoded payload of topic ``leaf``; :class:`TooBig` names the first over."""
    check_shape(payload, leaf)
    if not isinstance(payload, dict):
        return
    _texts(f"{leaf}.players", payload.get("players"), MAX_PLAYERS, NAME_MAX)
    if leaf == "state":
        check_view(f"{leaf}.view", payload.get("view"))
        _texts(f"{leaf}.moves", payload.get("moves"), MAX_MOVES)
        _texts(f"{leaf}.guidance", payload.get("guidance"), MAX_LINES)
        _texts(f"{leaf}.scores", payload.get("scores"), MAX_PLAYERS)
        _texts(f"{leaf}.winners", payload.get("winners"), MAX_PLAYERS)
        prompt = payload.get("prompt")
        if isinstance(prompt, dict):
            _texts(f"{leaf}.prompt.options", prompt.get("options"), MAX_LINES)
        text = payload.get("text")
        if isinstance(text, str):
            _at_most(f"{leaf}.text (characters)", len(text), MAX_PICTURE)
        for key in ("title", "game", "board"):
            value = payload.get(key)
            if isinstance(value, str):
                _at_most(f"{leaf}.{key} (characters)", len(value), MAX_TEXT)
    elif leaf == "record":
        moves = payload.get("moves")
        rounds = payload.get("rounds")
        count = len(moves) if isinstance(moves, list) else 0
        if isinstance(rounds, list):
            count += sum(len(r.get("moves") or []) for r in rounds if isinstance(r, dict))
        _at_most(f"{leaf}.moves", count, MAX_MOVES)
