"""Game records (``docs/records.md``): reading them and replaying them through an engine.

A record is the project's PGN. Replay is one loop for every game: the engine splits the record
into :class:`~pi_app.games.base.Segment` s (a set-up, then moves) and this module applies them in
order, stopping at the first illegal move with its location and a reason a player understands.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pi_app.games import Game, IllegalMove, RecordError, get_game
from pi_app.games.base import FinalResult
from pi_app.i18n import said_of
from pi_app.json_types import JSON


@dataclass(frozen=True)
class ReplayError:
    """Where a record first breaks the rules: ``where`` has ``move`` (and ``round`` for Topple)."""

    where: dict[str, int]
    text: str
    reason: str

    def to_json(self) -> JSON:
        return {**self.where, "text": self.text, "reason": self.reason}


@dataclass(frozen=True)
class Replay:
    """The outcome of replaying a record: the last legal state and the first error, if any."""

    game: Game[Any, Any]
    state: Any
    error: ReplayError | None
    moves_applied: int
    draw_agreed: bool = False
    """The players agreed a draw after the record's last move (``"draw_agreed": true``)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def finished(self) -> bool:
        """Over by the rules, or ended by the players' agreed draw."""
        return bool(self.game.is_over(self.state)) or self.draw_agreed

    def result(self) -> FinalResult | None:
        """How the game ended: the engine's result, or for a draw the players agreed, a draw
        nobody won; None while it goes on."""
        result = self.game.result(self.state)
        if result is None and self.draw_agreed:
            return FinalResult(tuple(self.game.scores(self.state)), (), draw=True)
        return result

    def winners(self) -> list[int] | None:
        """The winners; ``[]`` for a draw the players agreed (nobody won); None while on."""
        result = self.result()
        return None if result is None else list(result.winners)

    def to_json(self) -> JSON:
        """The object ``tikiboard replay --json`` prints (``docs/records.md``)."""
        game, state = self.game, self.state
        return {
            "ok": self.ok,
            "error": None if self.error is None else self.error.to_json(),
            "finished": self.finished,
            "scores": list(game.scores(state)),
            "winner": self.winners(),
            "state": game.state_to_json(state),
        }


def load_record(path: str | Path) -> JSON:
    """Read a record file; :class:`RecordError` with one clear sentence when it cannot be used."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    return parse_record(text)


def load_records(path: str | Path) -> JSON | list[Any]:
    """Read a record file, or a list of records as ``tikiboard export`` writes a station's
    games without ``--game`` (issue 31: export and replay meet). A list is returned as it is:
    each entry is checked by :func:`check_record` when it is replayed, so one bad entry does
    not hide the others. :class:`RecordError` with one clear sentence when the file cannot be
    used at all."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise RecordError("not a usable record: nested too deeply") from exc
    if isinstance(data, list):
        if not data:
            raise RecordError("an empty list: no games to replay (tikiboard export wrote none)")
        if not any(isinstance(entry, dict) for entry in data):
            check_record(data)  # a list of no records at all is not what export writes
        return data
    return check_record(data)


def check_record(record: Any) -> JSON:
    """``record`` when it is an object with the one field every record needs, else
    :class:`RecordError` naming what a record must be."""
    if not isinstance(record, dict):
        raise RecordError("a record must be a JSON object (or a file a list of them, as "
                          "tikiboard export writes; export --game ID writes one)")
    name = record.get("game")
    if not isinstance(name, str):
        raise RecordError("a record needs a 'game' string: topple, manami or tactiki")
    return record


def parse_record(text: str) -> JSON:
    """Parse record JSON text and check the one field every record needs."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise RecordError("not a usable record: nested too deeply") from exc
    if not isinstance(record, dict):
        raise RecordError("a record must be a JSON object")
    name = record.get("game")
    if not isinstance(name, str):
        raise RecordError("a record needs a 'game' string: topple, manami or tactiki")
    return record


def replay(record: JSON) -> Replay:
    """Apply every move of ``record``; raises :class:`RecordError` when it is malformed."""
    game = get_game(record["game"])
    agreed = record.get("draw_agreed", False)
    if type(agreed) is not bool:
        raise RecordError("'draw_agreed' must be true or false")
    segments = game.record_segments(record)
    state: Any = None
    applied = 0
    for segment in segments:
        where = dict(segment.where)
        try:
            started = segment.start(state)
        except IllegalMove as exc:
            if state is None:  # nothing legal yet: the set-up itself is unusable
                raise RecordError(str(exc)) from exc
            return Replay(game, state, ReplayError({**where, "move": 0}, "", said_of(exc)),
                          applied)
        state = started
        for index, text in enumerate(segment.moves):
            if not isinstance(text, str):
                raise RecordError(f"move {index} is not a text: {text!r}")
            try:
                state = game.apply_text(state, text)
            except IllegalMove as exc:
                error = ReplayError({**where, "move": index}, text, said_of(exc))
                return Replay(game, state, error, applied)
            applied += 1
    if state is None:
        raise RecordError("the record has nothing to play")
    # An agreed draw ends a game still on; one the rules ended already keeps its result.
    return Replay(game, state, None, applied, agreed and not game.is_over(state))


# -- building records from a station's events -----------------------------------------------------
def _moves_of(record: JSON) -> list[str]:
    """The move list new moves go to: the last round's (Topple) or the record's own."""
    rounds = record.get("rounds")
    if isinstance(rounds, list):
        moves: list[str] = rounds[-1].setdefault("moves", [])
        return moves
    moves = record.setdefault("moves", [])
    return moves


class PlayKind(StrEnum):
    """The station's stored events that change a game's record (:func:`fold`); the store keeps
    other kinds (notes, prompts) for the feed and logs."""

    MOVE = "move"
    REVISE = "revise"
    TAKEBACK = "takeback"
    DEAL = "deal"
    CARDS = "cards"
    RESULT = "result"


def fold(setup: JSON, events: Iterable[tuple[str, JSON]]) -> JSON:
    """The record of a game: its set-up record with the station's play events applied.

    ``move`` appends, ``revise`` replaces the last move, ``takeback`` removes moves (never past
    the start of a Topple round), ``deal`` starts a Topple round, ``cards`` sets the current
    Topple round's Secret Tiki cards, a ``result`` marked ``draw_agreed`` sets the record's
    ``draw_agreed``; other kinds are ignored.
    """
    record: JSON = json.loads(json.dumps(setup))
    for kind, data in events:
        if kind == PlayKind.MOVE:
            _moves_of(record).append(data["text"])
        elif kind == PlayKind.REVISE:
            moves = _moves_of(record)
            if moves:
                moves[-1] = data["text"]
        elif kind == PlayKind.TAKEBACK:
            moves = _moves_of(record)
            del moves[max(0, len(moves) - int(data["plies"])):]
        elif kind == PlayKind.DEAL:
            record.setdefault("rounds", []).append(dict(data["round"], moves=[]))
        elif kind == PlayKind.CARDS and "cards" in data:  # the cards the players really drew
            # (absent from the public form of the event, pi_app.net.redact)
            record["rounds"][-1]["cards"] = [list(c) for c in data["cards"]]
        elif kind == PlayKind.RESULT and data.get("draw_agreed") is True:
            record["draw_agreed"] = True
    return record
