"""The dashboard's words for what happened at a table: one line a referee reads per event, the
feed's freshness ("live", "3 s behind", "last heard 5 min ago") and a game's result.

The lines are made from an event's kind and data *as the viewer may see them*: the desk hands
in the public form (:mod:`pi_app.net.redact`) unless a referee is logged in, so nothing here
can show more than the raw JSON it replaces. Players are numbered from 1 for people and named
where the game header or the station's snapshot names them (records count from 0).

Clocks: a station's ``t`` is its own clock, which at a venue may be minutes off (a Pi has no
battery clock and the hall may have no NTP). So nothing here subtracts a station time from a
dashboard time directly. :class:`Skew` learns each station's offset as the smallest
``received - t`` seen lately (the best case of "transit + clock offset", as NTP's filters do)
and reads a later event's lag as its excess over that best case; displayed clock times are the
station's ``t`` moved onto the dashboard's clock by the same offset. "Last heard" uses only the
dashboard's clock (when the message arrived).
"""

from __future__ import annotations

import collections
import gettext
import time
from collections.abc import Iterable, Sequence
from typing import Any

from pi_app.board.fixes import Fix, fix_words
from pi_app.board.outcomes import GuidanceKind
from pi_app.i18n import N_
from pi_app.json_types import JSON
from pi_app.records import PlayKind

Words = gettext.NullTranslations
"""A language's translations (:func:`pi_app.i18n.translator`): the words a line is said in."""
_ENGLISH = gettext.NullTranslations()

LIVE_WITHIN = 2.0
"""A feed whose newest event came at most this much later than the station's best is live."""
QUIET_AFTER = 60.0
"""An online station silent for longer says since when (players thinking, or a stuck feed)."""
DASH = "\u2013"
SKEW_WINDOW = 256
"""How many recent events the clock offset is learned from (a station whose clock is set
while it runs is read right again after this many events, or at once if it moved ahead)."""


def who(players: Sequence[Any], index: Any, words: Words | None = None) -> str:
    """Player ``index`` (0-based, as records count) for people: the name, or "player 2"."""
    if isinstance(index, bool) or not isinstance(index, int):
        return "?"
    if 0 <= index < len(players) and players[index]:
        return str(players[index])
    return (words or _ENGLISH).gettext("player {number}").format(number=index + 1)


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def result_text(result: JSON | None, players: Sequence[Any], words: Words | None = None) -> str:
    """"Ben won 11\u20137", "Ana and Ben won 9\u20139\u20134", "draw", "no winner"
    (scores joined by an en dash, as a score is printed), in ``words``' language (a
    :func:`pi_app.i18n.translator`; default English)."""
    _ = (words or _ENGLISH).gettext
    if not isinstance(result, dict):
        return ""
    scores = result.get("scores")
    tally = (DASH.join(_number(s) for s in scores)
             if isinstance(scores, list) and scores else "")
    winners = result.get("winners")
    if isinstance(winners, list) and winners:
        names = [who(players, w, words) for w in winners]
        joined = names[0] if len(names) == 1 else _("{first} and {second}").format(
            first=", ".join(names[:-1]), second=names[-1])
        text = _("{names} won").format(names=joined)
    elif isinstance(winners, list):
        text = _("draw")
    else:
        text = _("no winner")
    return f"{text} {tally}".strip()


def _fixes(data: JSON, words: Words) -> str:
    """A guidance event's fixes, the first three, in the reader's language: said from their
    ``marks`` by :func:`~pi_app.board.fixes.fix_words`, as the station's screen says them;
    as stored (English) for an event stored without marks."""
    marks = data.get("marks")
    fixes = [fix_words(f, words).sentence for f in map(Fix.from_json, marks) if f is not None] \
        if isinstance(marks, list) and marks else \
        [str(f) for f in data.get("fixes") or [] if f is not None]
    more = " " + words.gettext("(+{count} more)").format(count=len(fixes) - 3) \
        if len(fixes) > 3 else ""
    text = "; ".join(fixes[:3]) + more
    return f": {text}" if text else ""


#: What an ``in_sync`` ends, by the guidance before it; :data:`_IN_SYNC` when none was.
_ENDED = {"mismatch": N_("mismatch resolved"), "follow_up": N_("follow-up done")}
_IN_SYNC = N_("board matches the game")


def event_words(kind: str, data: JSON, players: Sequence[Any], move: int | None,
                guided: str | None = None, words: Words | None = None) -> str:
    """One event without its time: "move 14: Ana — up1 Nani", "takeback 2 moves", in
    ``words``' language (default English; a move's own notation is never translated).

    ``move`` is the move's number in its game (moves still standing after takebacks, 1 for the
    first); ``guided`` the kind of guidance (mismatch, follow_up) the board was under before an
    ``in_sync``, so the line says what ended."""
    said = words or _ENGLISH
    _ = said.gettext
    if kind == PlayKind.MOVE:
        player = data.get("player")
        if player is None:
            return _("move {number}: {move}").format(number=move, move=data.get("text", "?"))
        return _("move {number}: {player} \u2014 {move}").format(
            number=move, player=who(players, player, words), move=data.get("text", "?"))
    if kind == PlayKind.REVISE:
        return _("move {number} read again: {old} \u2192 {new}").format(
            number=move, old=data.get("replaced", "?"), new=data.get("text", "?"))
    if kind == PlayKind.TAKEBACK:
        plies = data.get("plies", "?")
        count = plies if isinstance(plies, int) else 2
        return said.ngettext("takeback {count} move", "takeback {count} moves",
                             count).format(count=plies)
    if kind == "deal":
        return _("new round dealt")
    if kind == "cards":
        return _("Secret Tiki cards read")
    if kind == "setup_read":
        return _("set-up read from the board")
    if kind == "result":
        return _("result: {result}").format(result=result_text(data, players, words))
    if kind == "prompt":
        options = [str(o) for o in data.get("options") or [] if o is not None]
        what = _("which move?") if data.get("kind") == "ambiguous" else \
            _("question ({kind})").format(kind=data.get("kind", "?"))
        return f"{what} {' / '.join(options)}".strip()
    if kind == GuidanceKind.MISMATCH:
        return _("mismatch") + _fixes(data, said)
    if kind == GuidanceKind.FOLLOW_UP:
        return _("follow-up") + _fixes(data, said)
    if kind == "in_sync":
        return _(_ENDED.get(guided or "", _IN_SYNC))
    if kind == "fault":
        part = f"{data.get('source', '?')} {data.get('index', '')}".strip()
        if data.get("ok"):
            return _("fault cleared: {part}").format(part=part)
        detail = data.get("detail")
        return _("fault: {part}").format(part=part) + (f" ({detail})" if detail else "")
    return kind


def clock(t: float) -> str:
    """A dashboard-clock time as the hall reads it."""
    return time.strftime("%H:%M:%S", time.localtime(t))


def event_lines(events: Iterable[JSON], players_of: dict[int, Sequence[Any]],
                moves_before: dict[int, int], offset: float,
                words: Words | None = None) -> list[str]:
    """Each event as a line, oldest first. ``moves_before[game]`` is how many of the game's
    moves stood before the first event given (so numbers are right in a tail of the log);
    ``offset`` moves station times onto the dashboard's clock; ``words``: the reader's
    language (default English)."""
    standing = dict(moves_before)
    guided: dict[int, str | None] = {}
    out = []
    for e in events:
        game, kind = int(e.get("game_id", 0)), str(e.get("kind"))
        data = e.get("data") if isinstance(e.get("data"), dict) else {}
        assert isinstance(data, dict)
        number = standing.get(game, 0)
        if kind == PlayKind.MOVE:
            number += 1
            standing[game] = number
        elif kind == PlayKind.TAKEBACK and isinstance(data.get("plies"), int):
            standing[game] = max(0, number - int(data["plies"]))
        line = event_words(kind, data, players_of.get(game, ()), number or None,
                           guided.get(game), words)
        if kind in (GuidanceKind.MISMATCH, GuidanceKind.FOLLOW_UP):
            guided[game] = kind
        elif kind == "in_sync":
            guided[game] = None
        out.append(f"{clock(float(e.get('t', 0.0)) + offset)} {line}")
    return out


def standing_moves(kinds: Iterable[tuple[str, JSON]]) -> int:
    """How many moves stand after these events (moves minus what takebacks undid)."""
    count = 0
    for kind, data in kinds:
        if kind == PlayKind.MOVE:
            count += 1
        elif kind == PlayKind.TAKEBACK and isinstance(data.get("plies"), int):
            count = max(0, count - int(data["plies"]))
    return count


class Skew:
    """One station's clock offset against the dashboard's, learned from its events."""

    def __init__(self, window: int = SKEW_WINDOW) -> None:
        self.raw: collections.deque[float] = collections.deque(maxlen=window)
        self.last: float | None = None
        """The newest event's ``received - t``."""

    def add(self, station_t: float, received: float) -> None:
        self.last = received - station_t
        self.raw.append(self.last)

    @property
    def offset(self) -> float:
        """Add to a station time to read it on the dashboard's clock (0 before any event)."""
        return min(self.raw) if self.raw else 0.0

    def behind(self) -> float | None:
        """How much later than its best the newest event came (None before any event)."""
        return None if self.last is None else max(0.0, self.last - self.offset)


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def feed_text(*, heard: float | None, online: bool | None, behind: float | None,
              now: float, known: bool = False, words: dict[str, str] | None = None) -> str:
    """How fresh a board's feed is, for the overview: "never connected", "live",
    "3 s behind", "live · quiet 4 min", "last heard 5 min ago" (in ``words``' language:
    :func:`pi_app.net.pages.dashboard_words`; default English).

    ``known`` with no ``heard``: the broker's retained copies tell of the station, but it has
    not spoken since this dashboard started (and no earlier time is stored)."""
    said = {**_FEED_WORDS, **(words or {})}
    if heard is None:
        return said["not_heard"] if known else said["s_never"]
    quiet = now - heard
    if online is False:
        return said["last_heard"].format(ago=_ago(quiet))
    text = said["live"] if behind is None or behind <= LIVE_WITHIN else \
        said["behind"].format(ago=_ago(behind))
    if quiet > QUIET_AFTER:
        text += " · " + said["quiet"].format(ago=_ago(quiet))
    return text


#: :func:`feed_text`'s words in English (the dashboard's words replace them).
_FEED_WORDS = {"not_heard": "not heard since start", "s_never": "never connected",
               "last_heard": "last heard {ago} ago", "live": "live", "behind": "{ago} behind",
               "quiet": "quiet {ago}"}
