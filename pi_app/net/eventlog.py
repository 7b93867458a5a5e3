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
import time
from collections.abc import Iterable, Sequence
from typing import Any

from pi_app.games.base import JSON

LIVE_WITHIN = 2.0
"""A feed whose newest event came at most this much later than the station's best is live."""
QUIET_AFTER = 60.0
"""An online station silent for longer says since when (players thinking, or a stuck feed)."""
DASH = "\u2013"
SKEW_WINDOW = 256
"""How many recent events the clock offset is learned from (a station whose clock is set
while it runs is read right again after this many events, or at once if it moved ahead)."""


def who(players: Sequence[Any], index: Any) -> str:
    """Player ``index`` (0-based, as records count) for people: the name, or "player 2"."""
    if isinstance(index, bool) or not isinstance(index, int):
        return "?"
    if 0 <= index < len(players) and players[index]:
        return str(players[index])
    return f"player {index + 1}"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def result_text(result: JSON | None, players: Sequence[Any]) -> str:
    """"Ben won 11\u20137", "Ana and Ben won 9\u20139\u20134", "draw", "no winner"
    (scores joined by an en dash, as a score is printed)."""
    if not isinstance(result, dict):
        return ""
    scores = result.get("scores")
    tally = (DASH.join(_number(s) for s in scores)
             if isinstance(scores, list) and scores else "")
    winners = result.get("winners")
    if isinstance(winners, list) and winners:
        names = [who(players, w) for w in winners]
        text = (names[0] if len(names) == 1
                else ", ".join(names[:-1]) + " and " + names[-1]) + " won"
    elif isinstance(winners, list):
        text = "draw"
    else:
        text = "no winner"
    return f"{text} {tally}".strip()


def _fixes(data: JSON) -> str:
    fixes = [str(f) for f in data.get("fixes") or [] if f is not None]
    text = "; ".join(fixes[:3]) + (f" (+{len(fixes) - 3} more)" if len(fixes) > 3 else "")
    return f": {text}" if text else ""


def _plural(count: Any, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def event_words(kind: str, data: JSON, players: Sequence[Any], move: int | None,
                guided: str | None = None) -> str:
    """One event without its time: "move 14: Ana — up1 Nani", "takeback 2 moves".

    ``move`` is the move's number in its game (moves still standing after takebacks, 1 for the
    first); ``guided`` the kind of guidance (mismatch, follow_up) the board was under before an
    ``in_sync``, so the line says what ended."""
    if kind == "move":
        player = data.get("player")
        by = f"{who(players, player)} — " if player is not None else ""
        return f"move {move}: {by}{data.get('text', '?')}"
    if kind == "revise":
        return f"move {move} read again: {data.get('replaced', '?')} → {data.get('text', '?')}"
    if kind == "takeback":
        return f"takeback {_plural(data.get('plies', '?'), 'move')}"
    if kind == "deal":
        return "new round dealt"
    if kind == "cards":
        return "Secret Tiki cards read"
    if kind == "setup_read":
        return "set-up read from the board"
    if kind == "result":
        return f"result: {result_text(data, players)}"
    if kind == "prompt":
        options = [str(o) for o in data.get("options") or [] if o is not None]
        what = "which move?" if data.get("kind") == "ambiguous" else \
            f"question ({data.get('kind', '?')})"
        return f"{what} {' / '.join(options)}".strip()
    if kind == "mismatch":
        return "mismatch" + _fixes(data)
    if kind == "follow_up":
        return "follow-up" + _fixes(data)
    if kind == "in_sync":
        return {"mismatch": "mismatch resolved", "follow_up": "follow-up done"}.get(
            guided or "", "board matches the game")
    if kind == "fault":
        part = f"{data.get('source', '?')} {data.get('index', '')}".strip()
        if data.get("ok"):
            return f"fault cleared: {part}"
        detail = data.get("detail")
        return f"fault: {part}" + (f" ({detail})" if detail else "")
    return kind


def clock(t: float) -> str:
    """A dashboard-clock time as the hall reads it."""
    return time.strftime("%H:%M:%S", time.localtime(t))


def event_lines(events: Iterable[JSON], players_of: dict[int, Sequence[Any]],
                moves_before: dict[int, int], offset: float) -> list[str]:
    """Each event as a line, oldest first. ``moves_before[game]`` is how many of the game's
    moves stood before the first event given (so numbers are right in a tail of the log);
    ``offset`` moves station times onto the dashboard's clock."""
    standing = dict(moves_before)
    guided: dict[int, str | None] = {}
    out = []
    for e in events:
        game, kind = int(e.get("game_id", 0)), str(e.get("kind"))
        data = e.get("data") if isinstance(e.get("data"), dict) else {}
        assert isinstance(data, dict)
        number = standing.get(game, 0)
        if kind == "move":
            number += 1
            standing[game] = number
        elif kind == "takeback" and isinstance(data.get("plies"), int):
            standing[game] = max(0, number - int(data["plies"]))
        words = event_words(kind, data, players_of.get(game, ()), number or None,
                            guided.get(game))
        if kind in ("mismatch", "follow_up"):
            guided[game] = kind
        elif kind == "in_sync":
            guided[game] = None
        out.append(f"{clock(float(e.get('t', 0.0)) + offset)} {words}")
    return out


def standing_moves(kinds: Iterable[tuple[str, JSON]]) -> int:
    """How many moves stand after these events (moves minus what takebacks undid)."""
    count = 0
    for kind, data in kinds:
        if kind == "move":
            count += 1
        elif kind == "takeback" and isinstance(data.get("plies"), int):
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
