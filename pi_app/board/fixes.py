"""A fix to the board, and the one place a fix is put into words.

Guidance (``pi_app.board.inference.guidance``) tells the players, one :class:`Fix` at a time,
how to make the board match the game. The same fix is said in three places: a sentence in the
stored events, the feed's guidance list and the event log ("move Nani from s2 to s1"), and two
short lines on the station's small screen ("Move Nani" over a big "s2 -> s1"). Every form
comes from :func:`fix_words`, in the reader's language, so a new kind of fix, or a better
wording, is written once and said alike everywhere.
"""

from __future__ import annotations

import gettext
import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

_ENGLISH = gettext.NullTranslations()

#: What a fix asks (see :class:`Fix`): typed, so a misspelt kind is a type error where it is
#: written, and a stored mark of another kind is not read as a fix.
FixKind = Literal["move", "remove", "place", "unknown"]
_KINDS: dict[str, FixKind] = {kind: kind for kind in get_args(FixKind)}


@dataclass(frozen=True)
class Fix:
    """One thing a player must do to make the board right.

    ``kind`` is ``move`` (take ``piece`` from ``cell`` to ``to``), ``remove`` (take ``piece`` off
    ``cell``), ``place`` (put ``piece`` on ``cell``) or ``unknown`` (take the unregistered tag
    ``piece`` off ``cell``).
    """

    kind: FixKind
    piece: str
    cell: str
    to: str | None = None

    def __str__(self) -> str:
        """The English sentence (stored events, traces, the feed's guidance)."""
        return fix_words(self).sentence

    @property
    def cells(self) -> tuple[str, ...]:
        return (self.cell,) if self.to is None else (self.cell, self.to)

    @classmethod
    def from_json(cls, data: Any) -> Fix | None:
        """A fix from its JSON form (the feed's and the events' ``marks``); None for anything
        else (a stored event is read, never trusted)."""
        if not isinstance(data, dict):
            return None
        kind, piece, cell, to = (data.get(k) for k in ("kind", "piece", "cell", "to"))
        fix_kind = _KINDS.get(kind) if isinstance(kind, str) else None
        if fix_kind is None or not all(isinstance(v, str) for v in (piece, cell)) or \
                not isinstance(to, str | None):
            return None
        return cls(fix_kind, str(piece), str(cell), to)

    def to_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "piece": self.piece, "cell": self.cell, "to": self.to}


@dataclass(frozen=True)
class FixWords:
    """A fix in words: ``sentence`` for a line of text; ``action`` and ``place`` for the
    station's screen, a line with the piece over the cells in big letters (so short)."""

    sentence: str
    action: str
    place: str


#: A player's token as the engines name it in a view (``p0`` is a token of player 0:
#: :mod:`pi_app.games.base`): a record's id, which people never say.
_TOKEN = re.compile(r"p(\d)")


def piece_words(piece: str, words: gettext.NullTranslations | None = None,
                short: bool = False) -> str:
    """A piece as people name it: a player's token as "Player 1's token" (players counted
    from 1, as everywhere people read; ``short``: "P1's token", for the small screen), any
    other piece by its own name (a tiki's name, a TacTiki piece's public word)."""
    token = _TOKEN.fullmatch(piece)
    if token is None:
        return piece
    _ = (words or _ENGLISH).gettext
    said = _("P{number}'s token") if short else _("Player {number}'s token")
    return said.format(number=int(token[1]) + 1)


def fix_words(fix: Fix, words: gettext.NullTranslations | None = None) -> FixWords:
    """``fix`` in ``words``' language (a :func:`pi_app.i18n.translator`; default English)."""
    _ = (words or _ENGLISH).gettext
    cell, to = fix.cell, fix.to
    piece = fix.piece if fix.kind == "unknown" else piece_words(fix.piece, words)
    short = fix.piece if fix.kind == "unknown" else piece_words(fix.piece, words, short=True)
    if fix.kind == "move":
        return FixWords(
            _("move {piece} from {cell} to {to}").format(piece=piece, cell=cell, to=to),
            _("Move {piece}").format(piece=short), f"{cell} -> {to}")
    if fix.kind == "remove":
        return FixWords(_("remove {piece} from {cell}").format(piece=piece, cell=cell),
                        _("Remove {piece}").format(piece=short),
                        _("from {cell}").format(cell=cell))
    if fix.kind == "place":
        return FixWords(_("put {piece} on {cell}").format(piece=piece, cell=cell),
                        _("Put {piece}").format(piece=short), _("on {cell}").format(cell=cell))
    return FixWords(
        _("remove the unknown tag {piece} from {cell}").format(piece=piece, cell=cell),
        _("Remove unknown tag"), _("from {cell}").format(cell=cell))
