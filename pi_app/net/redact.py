"""What anyone may see of a game while it is on: the station's snapshot and events, made public
by the game's own engine.

Both pages are readable by anyone at the venue (the station's page is seen by the opponent, the
dashboard's overview hangs in the hall), and a station's MQTT credentials are on every table. So
until a game is over the pages and the tournament feed carry only its public form: no Secret
Tiki card (Tiki Topple), no rank of any piece (TacTiki), as ``seeds/*.md`` rule (R15 of each).

What is hidden is the engine's knowledge, not this module's: the engine's ``public_record``,
``public_view`` and ``public_text`` (:class:`pi_app.games.base.Game`) say what of a record, a
sensor view and a text about the game anyone may see. This module only knows the *station's*
vocabulary: which fields a snapshot (:mod:`pi_app.referee.feed`) and each kind of stored event
(:mod:`pi_app.referee.store`) have, and what each field is (a move text, a view, a part of the
record). It fails closed: an event kind or a field it does not know is left out, so a new kind
of event stays off the public pages until it is listed here.

Once the game is over everything is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from pi_app.board.fixes import Fix
from pi_app.games import Game, GameError, get_game
from pi_app.json_types import JSON

Engine = Game[Any, Any]
#: Makes one field public; returns :data:`HIDDEN` to leave the field out.
Shape = Callable[[Engine | None, Any], Any]

HIDDEN = object()


def _plain(_game: Engine | None, value: Any) -> Any:
    """Station facts that say nothing about the hidden game: numbers, flags, station words."""
    scalar = (str, int, float, bool, type(None))
    if isinstance(value, scalar):
        return value
    if isinstance(value, list) and all(isinstance(v, scalar) for v in value):
        return list(value)
    return HIDDEN


def _text(game: Engine | None, value: Any) -> Any:
    """A move, a prompt's option, a guidance line."""
    return game.public_text(value) if game is not None and isinstance(value, str) else HIDDEN


def _texts(game: Engine | None, value: Any) -> Any:
    if game is None or not isinstance(value, list):
        return HIDDEN
    return [game.public_text(v) if isinstance(v, str) else None for v in value]


def _said(game: Engine | None, value: Any) -> Any:
    """Language -> one text (the rule options in each language), each made public as a text."""
    if game is None or not isinstance(value, dict):
        return HIDDEN
    return {str(lang): game.public_text(text) for lang, text in value.items()
            if isinstance(text, str)}


def _view(game: Engine | None, value: Any) -> Any:
    """Cell -> piece names, bottom first."""
    if game is None or not isinstance(value, dict):
        return HIDDEN
    return game.public_view({str(cell): [str(p) for p in pieces] if isinstance(pieces, list)
                             else [] for cell, pieces in value.items()})


def _marks(game: Engine | None, value: Any) -> Any:
    """The guidance's fixes as the picture marks them: what to do (a station word), where
    (cell names of the board) and which piece, named as the public view names it."""
    if game is None or not isinstance(value, list):
        return HIDDEN
    fixes = (Fix.from_json(mark) for mark in value)  # one not well formed is left out
    return [replace(fix, piece=game.public_piece(fix.piece)).to_json()
            for fix in fixes if fix is not None]


def _numbers(_game: Engine | None, value: Any) -> Any:
    """Cell -> a number (Manami's village values: printed on the tiles, open to all)."""
    if not isinstance(value, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value.values()):
        return HIDDEN
    return {str(cell): v for cell, v in value.items()}


def _seats(_game: Engine | None, value: Any) -> Any:
    """Seat -> the level of the station's bot that plays it: who plays, open to all."""
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and k.isdigit() and isinstance(v, str) for k, v in value.items()):
        return HIDDEN
    return dict(value)


def _record(game: Engine | None, value: Any) -> Any:
    return game.public_record(value) if game is not None and isinstance(value, dict) else HIDDEN


def _part(wrap: Callable[[Any], JSON], unwrap: Callable[[JSON], Any]) -> Shape:
    """A part of the game record (as :func:`pi_app.records.fold` puts it there), made public
    by the engine's :meth:`~pi_app.games.base.Game.public_record` of a record holding it."""
    def shape(game: Engine | None, value: Any) -> Any:
        if game is None:
            return HIDDEN
        try:
            return unwrap(game.public_record(wrap(value)))
        except (KeyError, IndexError, TypeError):
            return HIDDEN
    return shape


def _nested(fields: Mapping[str, Shape]) -> Shape:
    def shape(game: Engine | None, value: Any) -> Any:
        return _fields(game, value, fields) if isinstance(value, dict) else HIDDEN
    return shape


def _fields(game: Engine | None, data: Mapping[str, Any], fields: Mapping[str, Shape]) -> JSON:
    out: JSON = {}
    for key, value in data.items():
        shape = fields.get(key)
        if shape is None:
            continue  # a field nobody said is public
        public = shape(game, value)
        if public is not HIDDEN:
            out[key] = public
    return out


def _round_cards(record: JSON) -> Any:
    return record["rounds"][0].get("cards", HIDDEN)


#: Every kind of event a station stores (``pi_app/referee/store.py``, the station's notes and
#: the follower's guidance kinds) and what each field of its data is.
EVENT_FIELDS: dict[str, dict[str, Shape]] = {
    "move": {"text": _text, "player": _plain, "how": _plain, "lifts_only": _plain},
    "revise": {"replaced": _text, "text": _text},
    "takeback": {"plies": _plain, "left": _view},
    "deal": {"round": _part(lambda v: {"rounds": [v]}, lambda r: r["rounds"][0])},
    "cards": {"cards": _part(lambda v: {"rounds": [{"cards": v}]}, _round_cards)},
    "setup_read": {"setup": _part(lambda v: {"setup": v}, lambda r: r.get("setup", HIDDEN))},
    "result": {"scores": _plain, "winners": _plain},
    "prompt": {"kind": _plain, "options": _texts},
    "mismatch": {"fixes": _texts, "marks": _marks},  # marks: the same fixes, for the reader's
    "follow_up": {"fixes": _texts, "marks": _marks},  # language (pi_app.board.fixes)
    "in_sync": {},
    "fault": {"source": _plain, "index": _plain, "ok": _plain, "detail": _plain},
}
EVENT_KINDS = frozenset(EVENT_FIELDS)

#: The station snapshot's fields (``pi_app/referee/feed.py``). ``record`` and ``text`` (the
#: engine's plain-text picture) are not among them: a public snapshot has neither.
SNAPSHOT_FIELDS: dict[str, Shape] = {
    **{key: _plain for key in ("board", "game", "title", "game_id", "status", "to_move",
                               "seq", "updated", "notice", "round_left")},
    "players": _plain, "scores": _plain, "winners": _plain,
    "moves": _texts, "view": _view, "guidance": _texts, "marks": _marks,
    "island": _nested({"villages": _numbers, "supply": _plain, "spoiled": _plain}),
    "prompt": _nested({"kind": _plain, "options": _texts, "selected": _plain}),
    "options": _texts,  # the rule options' short words (pi_app.referee.rule_options.labels)
    "option_words": _said,  # the same in each language (rule_options.words)
    "station_seats": _seats,
}


def engine(name: Any) -> Engine | None:
    """The engine of a snapshot's or record's ``game``; None for none or an unknown one."""
    if not isinstance(name, str):
        return None
    try:
        return get_game(name)
    except GameError:
        return None


def is_over(snapshot: JSON) -> bool:
    """The game has an outcome (the engine's ``winners``; ``[]`` for a draw). The station's
    status word is not trusted for it: a wrong word must not open the secrets."""
    return snapshot.get("winners") is not None


def public_snapshot(snapshot: JSON) -> JSON:
    """``snapshot`` as anyone may see it (a copy; the input is left alone): everything once the
    game is over, else only the fields :data:`SNAPSHOT_FIELDS` lists, made public by the
    engine."""
    if is_over(snapshot):
        return dict(snapshot)
    return _fields(engine(snapshot.get("game")), snapshot, SNAPSHOT_FIELDS)


def public_data(game: str | None, kind: str, data: Any) -> JSON | None:
    """A stored event's data as anyone may see it; None for a kind that is secret as a whole
    (every kind :data:`EVENT_FIELDS` does not list)."""
    fields = EVENT_FIELDS.get(kind)
    if fields is None:
        return None
    return _fields(engine(game), data if isinstance(data, dict) else {}, fields)


def public_event(game: str | None, event: JSON) -> JSON | None:
    """An event (``kind`` and ``data`` and its plain envelope) as anyone may see it; None when
    its kind is secret as a whole."""
    data = public_data(game, str(event.get("kind")), event.get("data"))
    return None if data is None else {**event, "data": data}


def public_record(record: JSON) -> JSON:
    """A game record (``docs/records.md``, with a station's extra fields) as anyone may see it; a
    record of an unknown game keeps only its ``game``."""
    game = engine(record.get("game"))
    return {"game": record.get("game")} if game is None else game.public_record(record)
