"""Feedback: what the station wants to say, as an LED frame and an OLED image.

Everything here is a pure function of a :class:`Scene` (and, for the LEDs, the board geometry
and the time): no hardware, no clock, no state. The daemon builds a scene from the follower's
outcomes and the session, and hands the results to ``LedStrip.show`` and ``Display.show``, which
skip frames equal to the last one. The same scene at the same time always gives the same frame,
so tests and the docs pin every picture exactly (``docs/feedback.md``).

The LED language (:data:`SIGNALS`) is built for a glance across a table and for colour-blind
players: only blue, orange and white are used (the pair deuteranopes and protanopes still tell
apart, plus white), and no two signals share both colour and blink pattern. The signals that
can be lit on cells at the same time (confirm, take off here, put here, remove / unknown tag,
still differs) all differ in pattern too, so the pattern alone tells them apart. Nothing
flashes faster than three times a second.

Guidance follows "one piece at a time, nearest first" (``inference.guidance`` orders the
fixes): the first fix is lit strongly, its from-cell and its to-cell in different patterns,
and every other cell that still differs glows dimly.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from pi_app.board.fixes import Fix, fix_words
from pi_app.board.follower import GuidanceKind, Prompt
from pi_app.board.geometry import Geometry
from pi_app.board.outcomes import PromptKind
from pi_app.games import GAME_NAMES, get_game
from pi_app.hw.leds import RGB
from pi_app.i18n import N_, Said, game_title, translator
from pi_app.referee.feed import Phase

OFF: RGB = (0, 0, 0)

#: The palette, already capped: full scale would glare under a printed board and draw 60 mA an
#: LED; the strip driver scales further by its brightness setting and the power budget.
BLUE: RGB = (0, 48, 192)
ORANGE: RGB = (192, 56, 0)
WHITE: RGB = (144, 144, 144)
#: How bright "the others" glow next to the one fix to do now.
DIM = 0.25

PHASES = tuple(Phase)
GUIDANCE_KINDS = tuple(GuidanceKind)
#: ``confirmed_at`` of a scene with nothing confirmed yet.
NEVER = -1e9
#: How long a confirmation stays lit (seconds).
CONFIRM_S = 1.0
#: Smooth patterns change level at most this often; the daemon need not redraw faster.
STEP_S = 0.05
_LEVELS = 16  # smooth patterns are quantised so a frame repeats exactly and often
_EDGE_SLACK = 1e-6  # float sums land a hair before an edge; count them as past it


class Pattern(enum.Enum):
    """How a signal varies in time. Periodic patterns run on the absolute time, so every LED
    with the same signal blinks in step; ``FADE`` runs once from its signal's start."""

    STEADY = "steady"
    SLOW = "slow blink"          # 0.6 s on, 0.6 s off
    FAST = "fast blink"          # 0.2 s on, 0.2 s off: 2.5 flashes a second
    DOUBLE = "double pulse"      # two 0.15 s flashes, then dark, every 1.4 s
    BREATHE = "breathing"        # a smooth swell and ebb every 2.4 s, never dark
    FADE = "flash, fade out"     # on for 0.5 s, fading out by 1 s, once

    @property
    def period(self) -> float | None:
        return _PERIODS.get(self)

    def level(self, t: float) -> float:
        """Brightness 0..1 at ``t`` seconds (for ``FADE``: seconds since its start)."""
        if self is Pattern.STEADY:
            return 1.0
        if self is Pattern.FADE:
            if not 0 <= t < CONFIRM_S:
                return 0.0
            half = CONFIRM_S / 2
            return 1.0 if t < half else _quantise(1 - (t - half) / half)
        period = _PERIODS[self]
        phase = (t + _EDGE_SLACK) % period  # at an edge from next_change, the new level
        if self is Pattern.BREATHE:
            return _quantise(0.15 + 0.85 * (1 - math.cos(2 * math.pi * phase / period)) / 2)
        return 1.0 if any(a <= phase < b for a, b in _ON[self]) else 0.0

    def next_change(self, t: float) -> float | None:
        """The next edge after ``t`` of a blink; ``t + STEP_S`` while a smooth pattern moves;
        None when the level never changes again."""
        if self is Pattern.STEADY:
            return None
        if self is Pattern.FADE:
            if t >= CONFIRM_S:
                return None
            return 0.0 if t < 0 else (CONFIRM_S / 2 if t < CONFIRM_S / 2 else t + STEP_S)
        if self is Pattern.BREATHE:
            return t + STEP_S
        period = _PERIODS[self]
        first = math.floor(t / period) * period
        edges = [first + k * period + e for k in (0, 1) for pair in _ON[self] for e in pair]
        return min(e for e in edges if e > t + 1e-9)


_PERIODS = {Pattern.SLOW: 1.2, Pattern.FAST: 0.4, Pattern.DOUBLE: 1.4, Pattern.BREATHE: 2.4}
_ON: dict[Pattern, tuple[tuple[float, float], ...]] = {
    Pattern.SLOW: ((0.0, 0.6),),
    Pattern.FAST: ((0.0, 0.2),),
    Pattern.DOUBLE: ((0.0, 0.15), (0.3, 0.45)),
}


def _quantise(level: float) -> float:
    return round(max(0.0, min(1.0, level)) * _LEVELS) / _LEVELS


@dataclass(frozen=True)
class Signal:
    """One word of the LED language."""

    key: str
    label: str
    """A word or two for a legend (marked for the catalogs: translated where shown)."""
    colour: RGB
    pattern: Pattern
    where: str  # "cells" or "status"
    meaning: str
    strength: float = 1.0


#: The LED language, in the order of the docs' table.
SIGNALS: dict[str, Signal] = {s.key: s for s in (
    Signal("confirm", N_("confirm"), WHITE, Pattern.FADE, "cells",
           "move accepted and stored: the cells it changed"),
    Signal("your_turn", N_("your turn"), BLUE, Pattern.STEADY, "status",
           "the player to move (their status LED)"),
    Signal("extra", N_("take off here"), ORANGE, Pattern.FAST, "cells",
           "a piece too many here: the from-cell of the fix to do now"),
    Signal("missing", N_("put here"), BLUE, Pattern.SLOW, "cells",
           "a piece missing here: the to-cell of the fix to do now"),
    Signal("follow_up", N_("remove (rules)"), BLUE, Pattern.DOUBLE, "cells",
           "the rules say this piece leaves now (defeated, village cleared)"),
    Signal("unknown", N_("unknown tag"), ORANGE, Pattern.DOUBLE, "cells",
           "a tag the station does not know: take it off"),
    Signal("differs", N_("still differs"), ORANGE, Pattern.STEADY, "cells",
           "a wrong move or mismatch: cells to fix after the lit one", DIM),
    Signal("ambiguity", N_("question"), BLUE, Pattern.BREATHE, "cells",
           "a question is on the screen: the cells it is about; press a button"),
    Signal("takeback", N_("take back"), WHITE, Pattern.SLOW, "cells",
           "a move taken back: put these cells back as they were"),
    Signal("station_lift", N_("station: lift"), WHITE, Pattern.DOUBLE, "cells",
           "the station's move, for a person to carry out: take the piece from here"),
    Signal("station_put", N_("station: put"), BLUE, Pattern.FAST, "cells",
           "the station's move: put the piece (or the shifted pieces) here"),
    Signal("hint", N_("hint"), ORANGE, Pattern.SLOW, "cells",
           "a hint, the best move for the player to move: the cells it changes"),
    Signal("winner", N_("winner"), WHITE, Pattern.STEADY, "status",
           "game over: the winners' status LEDs"),
    Signal("link_down", N_("link down"), WHITE, Pattern.BREATHE, "status",
           "sensors unplugged: reconnecting (every status LED)"),
    Signal("store_error", N_("store error"), WHITE, Pattern.FAST, "status",
           "moves cannot be saved, so none is confirmed (every status LED)"),
)}


@dataclass(frozen=True)
class Scene:
    """Everything the LEDs and the screen show at one moment. Immutable and comparable: the
    daemon redraws the screen only when the scene changes, the LEDs whenever time passes.

    ``phase`` is one of :data:`PHASES`. ``confirmed`` / ``confirmed_at``: the cells the last
    accepted move changed, and when it was accepted (the same clock as ``t``). ``guidance_kind``
    (``follow_up`` or ``mismatch``) and ``fixes``: what to do to the board, nearest first.
    ``prompt``: the open question; ``prompt_cells``: the cells it is about. ``takeback``: cells
    to put back after a move was taken back. ``store_error``: why moves cannot be saved (empty
    when they can); while set, nothing is confirmed. ``menu_game`` and ``menu_players``: the
    game and player count OK starts at game over (0: the count is not chosen);
    ``menu_choices``: every (game, count) the board offers, for the menu's list.
    ``link_detail``: why the sensor link is down, for the feed (the screen has no room for it).
    ``players``: names for the screen (``P1``, ``P2``... where missing or the default
    "Player 1", "Player 2"...: the screen is small). ``store_damaged``:
    the game database cannot be used as it is and waits for the players to confirm setting it
    aside (what is wrong and what would be kept); it takes the whole screen.
    """

    phase: Phase = Phase.PLAY
    game: str = ""
    title: str = ""
    board: str = ""
    players: tuple[str, ...] = ()
    to_move: int | None = None
    scores: tuple[int, ...] = ()
    winners: tuple[int, ...] | None = None
    last_move: str = ""
    confirmed: tuple[str, ...] = ()
    confirmed_at: float = NEVER
    guidance_kind: GuidanceKind | None = None
    fixes: tuple[Fix, ...] = ()
    prompt: Prompt | None = None
    prompt_cells: tuple[str, ...] = ()
    takeback: tuple[str, ...] = ()
    message: str = ""
    link_detail: str = ""
    store_error: str = ""
    menu_game: str = ""
    menu_players: int = 0
    menu_choices: tuple[tuple[str, int], ...] = ()
    store_damaged: str = ""
    confirming: bool = False
    page_url: str = ""
    """The station page's address: the game-over screen shows it as a QR code (empty: no
    page)."""
    setup_code: str = ""
    """The first-boot set-up's one-time code (:mod:`pi_app.referee.firstboot`): while set, the
    set-up screen shows it with ``setup_url`` and a QR code of ``setup_qr``."""
    setup_url: str = ""
    setup_qr: str = ""
    options: str = ""
    """The rule options in use, in short words (empty: the rules as printed); in the menu,
    those of the chosen preset."""
    round_minutes: int | None = None
    """Whole minutes left on the tournament round's clock, rounded up (0: time is up; None:
    no clock). Minutes, not seconds: the screen is redrawn when the scene changes."""
    language: str = "en"
    """The station's language (:data:`pi_app.i18n.LANGUAGES`): the screen's words are in it."""
    shown_kind: str = ""
    """A move to show (:mod:`pi_app.referee.opponent`): ``station`` (the station's own, to
    carry out) or ``hint``; ``shown_lift`` / ``shown_put``: its from- and to-cells. Lit only
    while the board shows the position (no fix, takeback or question)."""
    shown_lift: tuple[str, ...] = ()
    shown_put: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.phase not in PHASES:
            raise ValueError(f"unknown phase {self.phase!r} (one of {', '.join(PHASES)})")
        if self.guidance_kind is not None and self.guidance_kind not in GUIDANCE_KINDS:
            raise ValueError(f"unknown guidance kind {self.guidance_kind!r}")


# -- helpers for the daemon ----------------------------------------------------------------------
def changed_cells(before: Mapping[str, Sequence[str]],
                  after: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Cells whose pieces differ between two views (a missing cell is an empty one), in the
    order of ``before`` and then of ``after``: what a confirmation or a takeback lights."""
    names = list(before) + [c for c in after if c not in before]
    return tuple(c for c in names if tuple(before.get(c, ())) != tuple(after.get(c, ())))


def option_cells(game: Any, state: Any, options: Iterable[str]) -> tuple[str, ...]:
    """The cells an open question is about: every cell some option changes (its placement,
    or for a decision the view after it). Options that do not parse are skipped."""
    here = game.expected_view(state)
    out: list[str] = []
    for text in options:
        try:
            move = game.parse_move(state, text)
            after = game.placement_view(state, move)
            if after == here:
                after = game.expected_view(game.apply(state, move))
        except Exception:  # a question's text is for people; never let it stop the LEDs
            continue
        out += [c for c in changed_cells(here, after) if c not in out]
    return tuple(out)


# -- LEDs ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lamp:
    """A signal on one LED: ``start`` is when a one-shot pattern began (0 for periodic ones)."""

    signal: Signal
    start: float = 0.0


def _first_fix_signals(kind: GuidanceKind | None, fix: Fix) -> list[tuple[str, str]]:
    """(cell, signal key) for the fix to do now: from-cell and to-cell in their own patterns."""
    if fix.kind == "unknown":
        return [(fix.cell, "unknown")]
    if fix.kind == "place":
        return [(fix.cell, "missing")]
    take = "follow_up" if kind is GuidanceKind.FOLLOW_UP else "extra"
    out = [(fix.cell, take)]
    if fix.kind == "move" and fix.to is not None:
        out.append((fix.to, "missing"))
    return out


def cell_signals(scene: Scene, t: float) -> dict[str, Lamp]:
    """Which signal each lit cell shows at ``t``; one per cell, the most urgent wins:
    takeback, the fix to do now, the question, the confirmation, the station's move or a hint
    (only while the board shows the position), then the dim "differs"."""
    if scene.phase in (Phase.OFFLINE, Phase.MENU) or (scene.phase == Phase.ERROR
                                                      and not scene.store_error):
        return {}  # blind sensors, no game, or a broken station: the board says nothing
    out: dict[str, Lamp] = {}

    def light(cells: Iterable[str], key: str, start: float = 0.0) -> None:
        for cell in cells:
            out.setdefault(cell, Lamp(SIGNALS[key], start))

    if scene.takeback:
        light(scene.takeback, "takeback")
    elif scene.fixes:
        for cell, key in _first_fix_signals(scene.guidance_kind, scene.fixes[0]):
            light([cell], key)
    if scene.prompt is not None:
        light(scene.prompt_cells, "ambiguity")
    since = t - scene.confirmed_at
    if not scene.store_error and 0 <= since < CONFIRM_S:
        light(scene.confirmed, "confirm", scene.confirmed_at)
    if scene.shown_kind == "station" and not (scene.fixes or scene.takeback or scene.prompt):
        light(scene.shown_lift, "station_lift")
        light(scene.shown_put, "station_put")
    elif scene.shown_kind == "hint" and not (scene.fixes or scene.takeback or scene.prompt):
        light(scene.shown_lift + scene.shown_put, "hint")
    for fix in scene.fixes if scene.takeback else scene.fixes[1:]:
        light(fix.cells, "differs")
    return out


def status_signals(scene: Scene, geometry: Geometry) -> dict[str, Lamp]:
    """Which signal each status LED group (``p0``, ``p1``, ...) shows."""
    groups = list(geometry.status_leds)
    if scene.store_error or scene.phase == Phase.ERROR:
        return {g: Lamp(SIGNALS["store_error"]) for g in groups}
    if scene.phase == Phase.OFFLINE:
        return {g: Lamp(SIGNALS["link_down"]) for g in groups}
    if scene.phase == Phase.OVER:
        return {f"p{w}": Lamp(SIGNALS["winner"]) for w in scene.winners or ()
                if f"p{w}" in geometry.status_leds}
    if scene.phase in (Phase.PLAY, Phase.PROMPT) and scene.to_move is not None:
        key = f"p{scene.to_move}"
        return {key: Lamp(SIGNALS["your_turn"])} if key in geometry.status_leds else {}
    return {}


def lamps(scene: Scene, geometry: Geometry, t: float) -> dict[int, Lamp]:
    """LED index -> the signal it shows at ``t`` (unlit LEDs are absent). Cells the geometry
    does not know are ignored: a stale name must never stop the referee."""
    names = {c.name for c in geometry.cells}
    out: dict[int, Lamp] = {}
    for name, lamp in cell_signals(scene, t).items():
        if name in names:
            for led in geometry.cell(name).leds:
                out[led] = lamp
    for group, lamp in status_signals(scene, geometry).items():
        for led in geometry.status_leds[group]:
            out[led] = lamp
    return out


def colour_at(lamp: Lamp, t: float) -> RGB:
    """The colour of one lamp at ``t``."""
    signal = lamp.signal
    level = signal.pattern.level(t - lamp.start) * signal.strength
    r, g, b = signal.colour
    return round(r * level), round(g * level), round(b * level)


def led_frame(scene: Scene, geometry: Geometry, t: float) -> list[RGB]:
    """The whole strip at ``t`` seconds: one (r, g, b) per LED of ``geometry``."""
    frame = [OFF] * geometry.led_count
    for led, lamp in lamps(scene, geometry, t).items():
        frame[led] = colour_at(lamp, t)
    return frame


def next_change(scene: Scene, geometry: Geometry, t: float) -> float | None:
    """When to draw the LEDs next: the exact next edge of a blink, :data:`STEP_S` on for a
    smooth pattern (breathing, fading), or None when the frame stays as it is until the scene
    changes. The daemon can sleep until then instead of redrawing at a fixed rate."""
    times: list[float] = []
    for lamp in lamps(scene, geometry, t).values():
        edge = lamp.signal.pattern.next_change(t - lamp.start)
        if edge is not None:
            times.append(edge + lamp.start)
    if not scene.store_error and t < scene.confirmed_at:
        times.append(scene.confirmed_at)  # a confirmation still to come (a scene from ahead)
    return min((x for x in times if x > t), default=None)


# -- the screen ----------------------------------------------------------------------------------
SIZE = (128, 64)
CHAR_W = 6       # the bitmap font's advance
INK_TOP = 2      # its glyphs' ink starts on this row of the 11-row cell...
INK_H = 9        # ...and takes this many rows (descenders included)
_ROW = 13        # option rows on a question
_BAR_BOTTOM = 10  # the header bar's last row
_FOOTER_Y = 54


@cache
def _font() -> ImageFont.ImageFont:
    """PIL's built-in bitmap font: no file, no download, identical pixels on every machine.
    Its glyphs are 6 pixels wide, capitals 6 high; :func:`text_mask` doubles it for big text."""
    loader = getattr(ImageFont, "load_default_imagefont", None)
    font = loader() if loader is not None else ImageFont.load_default()
    assert isinstance(font, ImageFont.ImageFont)
    return font


_REPLACE = {"\u2014": "-", "\u2013": "-", "\u2026": "..", "\u2192": "->", "\u2018": "'",
            "\u2019": "'", "\u201c": '"', "\u201d": '"'}


def printable(text: str) -> str:
    """``text`` in the font's Latin-1 (anything else becomes ``?``)."""
    for old, new in _REPLACE.items():
        text = text.replace(old, new)
    return text.encode("latin-1", "replace").decode("latin-1")


def text_width(text: str, scale: int = 1) -> int:
    return len(printable(text)) * CHAR_W * scale


def fit(text: str, width: int, scale: int = 1) -> str:
    """``text`` cut to ``width`` pixels, ending in ``..`` when cut."""
    text = printable(text)
    room = width // (CHAR_W * scale)
    return text if len(text) <= room else text[:max(room - 2, 0)] + ".."


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` pixels, broken at spaces; a word longer than a
    line (a path) is broken where it must."""
    room = max(width // CHAR_W, 1)
    lines: list[str] = []
    for word in printable(text).split():
        if lines and len(lines[-1]) + 1 + len(word) <= room:
            lines[-1] += " " + word
        else:
            lines += [word[i:i + room] for i in range(0, len(word), room)]
    return lines


def text_mask(text: str, scale: int = 1) -> Image.Image:
    """A mode "1" mask of ``text``: ``INK_H * scale`` rows, ``CHAR_W * scale`` per character."""
    return _cell_mask(text, INK_TOP, scale)


def accent_mask(text: str, scale: int = 1) -> Image.Image | None:
    """The tops of ``text``'s accents: the font draws a capital's accent (``É``, ``À``...) and
    the top of some small letters' (``é``) in the ``INK_TOP`` rows above the ink every ASCII
    glyph starts on. None when there are none (all of English). :meth:`_Canvas.text` draws
    them just above the line, so lines keep their height and an English screen its pixels."""
    text = printable(text)
    if text.isascii():
        return None
    high = "".join(ch if ord(ch) > 0x7F else " " for ch in text)
    mask = _cell_mask(high, 0, scale, INK_TOP)
    return mask if mask.getbbox() else None


def _cell_mask(text: str, top: int, scale: int, rows: int = INK_H) -> Image.Image:
    text = printable(text)
    mask = Image.new("1", (max(len(text) * CHAR_W, 1), 11))
    ImageDraw.Draw(mask).text((0, 0), text, font=_font(), fill=1)
    mask = mask.crop((0, top, mask.width, top + rows))
    if scale != 1:
        mask = mask.resize((mask.width * scale, mask.height * scale), Image.Resampling.NEAREST)
    return mask


class _Canvas:
    """A 1-bit screen with the few layout tools the screens share."""

    def __init__(self, size: tuple[int, int], lang: str = "en") -> None:
        self.image = Image.new("1", size, 0)
        self.draw = ImageDraw.Draw(self.image)
        self.width, self.height = size
        self._ = translator(lang).gettext
        """The screen's words in the station's language (English texts are the keys)."""
        self.ngettext = translator(lang).ngettext

    def text(self, x: int, y: int, text: str, scale: int = 1, fill: int = 1) -> int:
        """Draw ``text`` with its ink's top-left at (x, y); returns its width."""
        mask = text_mask(text, scale)
        self.image.paste(fill, (x, y), mask)
        accents = accent_mask(text, scale)
        if accents is not None:
            self.image.paste(fill, (x, y - INK_TOP * scale), accents)
        return mask.width

    def centred(self, y: int, text: str, scale: int = 1) -> None:
        self.text(max((self.width - text_width(text, scale)) // 2, 0), y, text, scale)

    def line(self, y: int, text: str, big: bool = False) -> int:
        """A centred line, big when it fits; returns the y of the next line."""
        scale = 2 if big and text_width(text, 2) <= self.width else 1
        if scale == 2 and accent_mask(text) is not None and y - INK_TOP * 2 <= _BAR_BOTTOM:
            scale = 1  # a big capital's accent would vanish into the header bar
        self.centred(y, fit(text, self.width, scale), scale)
        return y + INK_H * scale + scale

    def header(self, left: str, right: str = "") -> None:
        """An inverted bar on top: what this screen is about, and a short tag on the right."""
        self.draw.rectangle((0, 0, self.width - 1, _BAR_BOTTOM), fill=1)
        right = fit(right, self.width // 2)
        room = self.width - 4 - (text_width(right) + CHAR_W if right else 0)
        self.text(2, 1, fit(left, room), fill=0)
        if right:
            self.text(self.width - 2 - text_width(right), 1, right, fill=0)

    def keys(self, pairs: Sequence[tuple[str, str]]) -> None:
        """The button legend at the bottom: each key name inverted, then what it does."""
        x = 0
        for key, action in pairs:  # the keys are the buttons' printed names: never translated
            w = text_width(key) + 3
            self.draw.rectangle((x, _FOOTER_Y, x + w - 1, _FOOTER_Y + 9), fill=1)
            self.text(x + 2, _FOOTER_Y + 1, key, fill=0)
            x += w + 2
            if action == "next":  # a small down triangle: the highlight moves down
                self.draw.polygon([(x, _FOOTER_Y + 3), (x + 6, _FOOTER_Y + 3),
                                   (x + 3, _FOOTER_Y + 7)], fill=1)
                x += 7
            else:
                x += self.text(x, _FOOTER_Y + 1, self._(action))
            x += 5
        if x - 5 > self.width:
            raise ValueError(f"button legend {pairs} is {x - 5} pixels wide")

    def options(self, options: Sequence[str], selected: int) -> None:
        """Up to three option rows; the selected one inverted, scrolled into view."""
        count = len(options)
        first = min(max(selected - 1, 0), max(count - 3, 0))
        for row, i in enumerate(range(first, min(first + 3, count))):
            y = 13 + row * _ROW
            fill = 1
            if i == selected:
                self.draw.rectangle((0, y, self.width - 1, y + _ROW - 2), fill=1)
                fill = 0
            room = self.width - (12 if count > 3 else 4)
            self.text(3, y + 2, fit(options[i], room), fill=fill)
            if (row == 0 and first > 0) or (row == 2 and first + 3 < count):
                up = row == 0
                tip, base = (y + 2, y + 6) if up else (y + 8, y + 4)
                self.draw.polygon([(self.width - 8, base), (self.width - 2, base),
                                   (self.width - 5, tip)], fill=fill)


def player_name(scene: Scene, player: int) -> str:
    """A player as the screen names them: their name if the scene has one, else P1, P2...
    (counted from 1, as people count; "Player 2", the name a game without names gets, is P2
    here too, so it fits a column of the scores)."""
    short = translator(scene.language).gettext("P{number}").format(number=player + 1)
    if player < len(scene.players) and scene.players[player]:
        name = scene.players[player]
        return short if name == f"Player {player + 1}" else name
    return short


def screen_name(scene: Scene) -> str:
    """Which screen a scene shows; the most urgent wins. One of ``store-damaged``,
    ``firstboot``, ``store-error``, ``error``, ``offline``, ``menu``, ``prompt``, ``over``,
    ``takeback``, ``guidance``, ``setup``, ``play``."""
    if scene.store_damaged:
        return "store-damaged"
    if scene.setup_code:  # before "offline": a new station's sensors may not be plugged yet
        return "firstboot"
    if scene.store_error:
        return "store-error"
    if scene.phase in (Phase.ERROR, Phase.OFFLINE, Phase.MENU):
        return scene.phase
    if scene.prompt is not None:
        return "prompt"
    if scene.phase == Phase.OVER:
        return "over"
    if scene.takeback:
        return "takeback"
    if scene.fixes and scene.phase != Phase.SETUP:
        return "guidance"
    return "setup" if scene.phase == Phase.SETUP else "play"


def screen(scene: Scene, size: tuple[int, int] = SIZE) -> Image.Image:
    """The OLED picture of ``scene``: mode "1", ``size`` pixels (128x64 on the station)."""
    canvas = _Canvas(size, scene.language)
    _SCREENS[screen_name(scene)](canvas, scene)
    return canvas.image


def _scores(c: _Canvas, scene: Scene, y: int, marked: Iterable[int]) -> None:
    """One column per player, ``P1 12`` or ``Ana 12``; the marked players (mover, winners)
    inverted. A name too long for its column is cut, never the score."""
    count = len(scene.scores)
    if not count:
        return
    marked = set(marked)
    width = c.width // count
    for i, score in enumerate(scene.scores):
        x = i * width
        room = (width - 2) // CHAR_W - len(str(score)) - 1
        label = printable(f"{player_name(scene, i)[:max(room, 1)]} {score}")
        fill = 1
        if i in marked:
            c.draw.rectangle((x, y - 1, x + width - 2, y + INK_H), fill=1)
            fill = 0
        c.text(x + max((width - 1 - text_width(label)) // 2, 0), y, label, fill=fill)


def _title(scene: Scene) -> str:
    if scene.title:
        return game_title(scene.title, translator(scene.language).gettext)
    return scene.game or "tikiboard"


def _game_title(name: str, lang: str = "en") -> str:
    """A game's title as the edition in ``lang`` prints it."""
    try:
        return game_title(get_game(name).title, translator(lang).gettext)
    except Exception:
        return name


# Rows of the layout (ink tops): under the header, two big lines or a small and a big line,
# then the last two small rows (the second is the button legend's).
_TOP, _BIG2, _ROW4, _ROW5 = 13, 33, 44, 55


def _round_clock(c: _Canvas, scene: Scene) -> str:
    """The header's tag during a tournament round: the minutes left, or that time is up; the
    board's name otherwise."""
    if scene.round_minutes is None:
        return scene.board
    if scene.round_minutes <= 0:
        return c._("time up")
    return c._("{minutes} min").format(minutes=scene.round_minutes)


def _play(c: _Canvas, scene: Scene) -> None:
    c.header(_title(scene), _round_clock(c, scene))
    if scene.to_move is not None:
        y = c.line(_TOP, c._("{name} to move").format(name=player_name(scene, scene.to_move)),
                   big=True)
    else:
        y = c.line(_TOP, _said(c, scene.message) or c._("Wait"), big=True)
    _scores(c, scene, y + 1, () if scene.to_move is None else (scene.to_move,))
    if scene.last_move:
        c.text(0, _ROW4, fit(c._("Last: {move}").format(move=scene.last_move), c.width))
    if scene.message and scene.to_move is not None:
        c.text(0, _ROW5, fit(_said(c, scene.message), c.width))
    elif scene.options:
        c.text(0, _ROW5, fit(scene.options, c.width))


def _said(c: _Canvas, message: str) -> str:
    """The station's message in the screen's language where the catalog has it (the station
    marks its fixed messages with ``N_``); any other (a reason naming a file, a count) as it
    is. A message with values (:class:`~pi_app.i18n.Said`) is said with them in the screen's
    language. Never looks up "": gettext's "" is the catalog's header."""
    if isinstance(message, Said):
        return message.say(c._, c.ngettext)
    return c._(message) if message else ""


def _fix_lines(c: _Canvas, fix: Fix, lang: str) -> None:
    """The fix to do now: the piece, then the cells in big letters (:func:`fix_words`)."""
    said = fix_words(fix, translator(lang))
    c.line(c.line(_TOP, said.action), said.place, big=True)


def _setup(c: _Canvas, scene: Scene) -> None:
    left = len(scene.fixes)
    c.header(_title(scene), c._("{count} to go").format(count=left) if left else c._("set up"))
    if scene.fixes:
        _fix_lines(c, scene.fixes[0], scene.language)
    else:
        c.line(_TOP, c._("Set up"), big=True)
        c.line(_BIG2, c._("Place the pieces"))
        c.line(_ROW4 - 1, c._("as the lights show"))
    for i, text in enumerate(wrap(_said(c, scene.message), c.width)[:2]):
        c.text(0, _ROW4 + 1 + i * 10, text)


def _guidance(c: _Canvas, scene: Scene) -> None:
    follow = scene.guidance_kind is GuidanceKind.FOLLOW_UP
    count = len(scene.fixes)
    c.header(c._("Finish the move") if follow else c._("Fix the board"),
             f"1/{count}" if count > 1 else "")
    _fix_lines(c, scene.fixes[0], scene.language)
    if count > 1:
        c.line(_ROW4 + 1, c._("then {count} more").format(count=count - 1))


def _takeback(c: _Canvas, scene: Scene) -> None:
    c.header(c._("Taking back"), scene.board)
    if scene.fixes:
        _fix_lines(c, scene.fixes[0], scene.language)
    else:
        c.line(c.line(_TOP, c._("Put back")), " ".join(scene.takeback), big=True)
    c.line(_ROW4 + 1, c._("Put the pieces back"))


_QUESTIONS = {
    "ambiguous": (N_("Which move?"), (("OK", N_("pick")), ("MENU", "next"), ("BACK", N_("no")))),
    "takeback": (N_("Take back?"), (("OK", N_("yes")), ("BACK", N_("no")))),
    "draw": (N_("Agree a draw?"), (("OK", N_("agree")), ("BACK", N_("no")))),
    "decision": (N_("Your choice"), (("OK", N_("pick")), ("MENU", "next"))),
}


def _order(c: _Canvas, fields: Sequence[str]) -> None:
    """TacTiki's set-up: a field's stack order is not known. The answer is done with the
    pieces, not the buttons, and the screen names the field only (a piece's name is its
    hidden rank, and the opponent reads this screen too)."""
    more = c._("+{count} more").format(count=len(fields) - 1) if len(fields) > 1 else ""
    c.header(c._("Stack order?"), more)
    y = c.line(_TOP, c._("Lift the pieces off"))
    c.line(y + 1, fields[0] if fields else "?", big=True)
    c.line(_ROW4, c._("and put them back"))
    c.line(_ROW5, c._("one at a time"))


def _prompt(c: _Canvas, scene: Scene) -> None:
    prompt = scene.prompt
    assert prompt is not None
    if prompt.kind == PromptKind.ORDER:
        _order(c, prompt.options)
        return
    heading, keys = _QUESTIONS.get(prompt.kind, (N_("Question"), (("OK", N_("pick")),
                                                                  ("MENU", "next"))))
    c.header(c._(heading), player_name(scene, scene.to_move) if scene.to_move is not None else "")
    options = prompt.options or (c._("(no options)"),)
    if prompt.kind == PromptKind.TAKEBACK and prompt.plies > 0:  # the follower words it in English
        options = (c.ngettext("take back {count} move", "take back {count} moves",
                              prompt.plies).format(count=prompt.plies),)
    c.options(options, min(max(prompt.selected, 0), len(options) - 1))
    c.keys(keys)


def choice_words(game: str, players: int, width: int, lang: str = "en") -> str:
    """A game and player count as a menu row of ``width`` pixels: the count only where the
    game's rules allow several, said as long as it fits."""
    title = _game_title(game, lang)
    try:
        several = len(get_game(game).player_counts) > 1
    except Exception:
        several = False
    if not players or not several:
        return title
    _ = translator(lang).gettext
    words = (_("{game}, {count} players").format(game=title, count=players),
             _("{game}, {count} pl.").format(game=title, count=players),
             _("{count} players").format(count=players))
    return next((w for w in words if text_width(w) <= width), words[-1])


def _menu(c: _Canvas, scene: Scene) -> None:
    c.header(c._("Choose game"), scene.options or scene.board)
    current = scene.menu_game or scene.game
    if scene.menu_choices:
        choices = list(scene.menu_choices)
        room = c.width - (12 if len(choices) > 3 else 4)
        at = (current, scene.menu_players)
        c.options([choice_words(g, n, room, scene.language) for g, n in choices],
                  choices.index(at) if at in choices else 0)
    else:
        names = list(GAME_NAMES)
        c.options([_game_title(n, scene.language) for n in names],
                  names.index(current) if current in names else 0)
    c.keys((("OK", "start"), ("MENU", "next")))


def _qr(c: _Canvas, url: str) -> int:
    """Draw ``url``'s QR code (:mod:`pi_app.referee.qr`) in the screen's bottom-right corner,
    dark modules unlit on a lit quiet zone that joins the lit header bar; returns its width.
    Two pixels a module when it fits under the header (a version-2 code does), else one."""
    from pi_app.referee.qr import qr_code

    matrix = [list(row) for row in qr_code(url).matrix]
    quiet = 2 if len(matrix) * 2 + 4 <= c.height - 10 else 1
    scale = 2 if quiet == 2 else 1
    side = len(matrix) * scale + 2 * quiet
    x0, y0 = c.width - side, c.height - side
    c.draw.rectangle((x0, y0, c.width - 1, c.height - 1), fill=1)
    for row, modules in enumerate(matrix):
        for col, dark in enumerate(modules):
            if dark:
                x, y = x0 + quiet + col * scale, y0 + quiet + row * scale
                c.draw.rectangle((x, y, x + scale - 1, y + scale - 1), fill=0)
    return side


def _firstboot(c: _Canvas, scene: Scene) -> None:
    """The first-boot set-up: the code in the header bar, the set-up address (as typed, no
    scheme) left, its QR code right; OK plays at once on the defaults."""
    c.header(c._("Set-up code"), scene.setup_code)
    full = c.width
    if scene.setup_qr:
        c.width -= _qr(c, scene.setup_qr) + 1
    address = scene.setup_url.partition("://")[2] or scene.setup_url
    for row, text in enumerate([c._("Scan or open"), *_address_lines(address, c.width)][:4]):
        c.text(0, 13 + row * 10, fit(text, c.width))
    c.keys((("OK", N_("play now")),))
    c.width = full


def _address_lines(address: str, width: int) -> list[str]:
    """An address in lines of ``width`` pixels, broken after a dot or colon or before a slash
    (``192.168.178.`` / ``100:8080`` / ``/setup``), where people read its parts."""
    room = max(width // CHAR_W, 1)
    lines: list[str] = []
    for part in re.split(r"(?<=[.:])|(?=/)", printable(address)):
        if lines and len(lines[-1]) + len(part) <= room:
            lines[-1] += part
        else:
            lines += [part[i:i + room] for i in range(0, len(part), room)] or [""]
    return [line for line in lines if line]


def _winner_words(c: _Canvas, scene: Scene) -> str:
    winners = scene.winners or ()
    if not winners:
        return c._("No winner")
    names = [player_name(scene, w) for w in winners]
    if len(names) == 1:
        return c._("{name} wins!").format(name=names[0])
    words = c._("{names} win").format(names=" & ".join(names))
    # Too long for the line (a long name, a language's longer verb): the scores under it
    # mark the winners, so the line only needs to say the win is shared.
    return words if text_width(words) <= c.width else c._("Tie!")


def _over(c: _Canvas, scene: Scene) -> None:
    """The station's idle screen between games: who won, what OK starts, and (when the
    station has a page) the page's QR code on the right, the words left of it."""
    c.header(c._("Game over"), scene.board)
    full = c.width
    if scene.page_url:
        c.width -= _qr(c, scene.page_url) + 1
    y = c.line(_TOP, _winner_words(c, scene), big=True)
    _scores(c, scene, y + 1, scene.winners or ())
    game = scene.menu_game or scene.game
    following = c._("Next: {game}").format(game=_game_title(game, scene.language))
    if scene.menu_players:
        lead = text_width(c._("Next: {game}").format(game=""))
        words = choice_words(game, scene.menu_players, c.width - lead, scene.language)
        following = c._("Next: {game}").format(game=words) \
            if words.startswith(_game_title(game, scene.language)) else \
            choice_words(game, scene.menu_players, c.width, scene.language)
    c.text(0, _ROW4, fit(following, c.width))
    c.keys((("OK", N_("go") if scene.page_url else N_("start")), ("MENU", "next")))
    c.width = full


def _offline(c: _Canvas, scene: Scene) -> None:
    c.header(_title(scene), scene.board)
    c.line(_TOP, c._("Sensors"), big=True)
    c.line(_BIG2, c._("unplugged"), big=True)
    c.line(_ROW5, c._("reconnecting..."))


def _store_error(c: _Canvas, scene: Scene) -> None:
    c.header(c._("Cannot save moves"), "!")
    c.line(_TOP, c._("Check"), big=True)
    c.line(_BIG2, c._("storage"), big=True)
    c.line(_ROW5, c._("Moves not confirmed"))


def _store_damaged(c: _Canvas, scene: Scene) -> None:
    """What is wrong with the game database and what setting it aside keeps; a second OK
    (after the first asked "sure?") confirms, so one stray press never replaces it."""
    c.header(c._("Sure? OK again") if scene.confirming else c._("Game database"), "!")
    for i, text in enumerate(wrap(scene.store_damaged, c.width)[:4]):
        c.text(0, _TOP + i * 10, text)
    c.keys((("OK", N_("set aside")), ("BACK", N_("no"))) if scene.confirming
           else (("OK", N_("x2 set it aside")),))


def _error(c: _Canvas, scene: Scene) -> None:
    c.header(c._("Error"), scene.board)
    hint = c._("see journalctl -u tikiboard")
    for i, text in enumerate(wrap(scene.message or hint, c.width)[:5]):
        c.text(0, _TOP + i * 10, text)


_SCREENS = {
    "play": _play, "setup": _setup, "guidance": _guidance, "takeback": _takeback,
    "prompt": _prompt, "menu": _menu, "over": _over, "offline": _offline,
    "store-error": _store_error, "error": _error, "store-damaged": _store_damaged,
    "firstboot": _firstboot,
}
