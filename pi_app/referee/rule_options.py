"""Rule options chosen at the table: which exist, the station's defaults, presets and labels,
as each engine declares them (``Game.option_names``, ``table_defaults``, ``presets``,
``option_labels``); this module reads those declarations the same way for every game.

A record's ``options`` (docs/records.md) is read by each engine, and a record without an option
keeps the engine's default, so old records replay as they always did. Two of those defaults are
limits the printed rules do not have (Tiki on Manami island's ``quiet_limit`` of 200 turns and
TacTiki's referee draw ``quiet_turns`` after 30): bots, soaks and benchmarks keep them (they call
the engines directly), but at the table they are off unless the players choose them, and the
station writes that choice into every new record explicitly (:func:`table_options`). Players who
want to stop agree a draw instead (the station's ``draw`` prompt).

Unlike a record, whose unknown option keys Tiki Topple and TacTiki ignore, an option chosen at
the table must be one the engine knows (:func:`check_options`): a misspelt variant would
otherwise be played without a word. The rulings behind every option are in ``seeds/*.md``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_app.games import GAME_NAMES, RecordError, get_game
from pi_app.games.base import STANDARD
from pi_app.i18n import N_, Said, translator
from pi_app.json_types import JSON

#: Every option key each engine reads (``seeds/*.md``, Options), except Tiki Topple's
#: ``players``: the players are chosen on their own, and the station writes their count.
KNOWN: dict[str, tuple[str, ...]] = {name: get_game(name).option_names for name in GAME_NAMES}

#: At the table the automatic limits the rulebooks do not have are off (issue 21).
TABLE_DEFAULTS: dict[str, JSON] = {name: dict(get_game(name).table_defaults)
                                   for name in GAME_NAMES}

Preset = tuple[str, Callable[[int], JSON]]
#: What MENU offers at game over for each game, after the game and player count: the rules as
#: printed, then each variant the engine plays (a few, so that the menu stays short).
PRESETS: dict[str, tuple[Preset, ...]] = {
    name: tuple((p.name, p.options) for p in get_game(name).presets) for name in GAME_NAMES}


def check_options(game_name: str, options: Any, players: int = 2) -> JSON:
    """``options`` chosen for a new game of ``game_name``, checked: :class:`ValueError` with a
    sentence for the players when it is not an object, names an option the engine does not
    know, or gives one a value the engine refuses."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError("options must be an object such as {\"rounds\": 6}")
    known = KNOWN.get(game_name, ())
    title = get_game(game_name).title
    for key in options:
        if key not in known:
            raise ValueError(f"{title} has no option {key!r} (its options: "
                             f"{', '.join(known)})")
    try:
        get_game(game_name).new_game(random.Random(0), _with_players(game_name, options, players))
    except RecordError as exc:
        raise ValueError(f"{title}: {exc}") from exc
    return dict(options)


def table_options(game_name: str, chosen: Mapping[str, Any] | None, players: int) -> JSON:
    """The ``options`` a new game at the table is stored with: the table's defaults (no
    automatic limits), then ``chosen`` (checked by :func:`check_options`)."""
    options = {**TABLE_DEFAULTS.get(game_name, {}), **check_options(game_name, chosen, players)}
    return _with_players(game_name, options, players)


def _with_players(game_name: str, options: Mapping[str, Any], players: int) -> JSON:
    if len(get_game(game_name).player_counts) > 1:
        return {**options, "players": players}
    return dict(options)


def preset_options(game_name: str, index: int, players: int) -> JSON:
    """The options of MENU's preset ``index`` (wrapping) for ``game_name``."""
    presets = PRESETS.get(game_name, ((STANDARD.name, STANDARD.options),))
    options: JSON = presets[index % len(presets)][1](players)
    return options


def preset_count(game_name: str) -> int:
    return len(PRESETS.get(game_name, ())) or 1


def labels(game_name: str, options: Any) -> tuple[Said, ...]:
    """Short words for the options a game's record uses that differ from the printed rules,
    for the OLED's play screen and the page (``()``: the rules as printed)."""
    if not isinstance(options, dict) or game_name not in GAME_NAMES:
        return ()
    return get_game(game_name).option_labels(options)


def words(game_name: str, options: Any, lang: str, *, standard: bool = False) -> str:
    """The options a game uses in ``lang``, as the OLED and the page show them ("5 rounds,
    topple bottom"; empty, or with ``standard`` the word for the rules as printed)."""
    said = [label.in_language(lang) for label in labels(game_name, options)]
    return ", ".join(said) or (translator(lang).gettext(STANDARD_WORD) if standard else "")


#: What MENU says of the rules as printed.
STANDARD_WORD = N_("standard")


@dataclass(frozen=True)
class Control:
    """How the station page offers one option key (:data:`CONTROLS`): ``flag``, a tick box
    (ticked: ``true``, and ``implies`` too; unticked: left out), or ``number``, a whole number
    (empty: left out, so the table's default holds). ``label`` is the OLED's word for it
    (marked for translation; the page says it in its viewer's language), ``hint`` says what
    an empty number means."""

    kind: str
    label: str
    hint: str = ""
    implies: Mapping[str, Any] = field(default_factory=dict)


#: The page's control for each option key a game may set (the engine's ``option_names``, so the
#: page offers each game exactly the options its engine reads). Keys whose value is a structure
#: (Manami's own ``tiles``, TacTiki's own ``ranks``) have none: they are for records and the
#: configuration, not a form.
CONTROLS: dict[str, Control] = {
    "rounds": Control("number", N_("rounds"), N_("empty: as printed (longer game: 8)")),
    "topple_bottom": Control("flag", N_("topple bottom")),
    "shaman": Control("flag", N_("shaman")),
    "shaman_off_board": Control("flag", N_("shaman enters"), implies={"shaman": True}),
    "tokens": Control("number", N_("tokens"), N_("empty: as printed")),
    "fruit": Control("number", N_("fruit"), N_("empty: as printed")),
    "quiet_limit": Control("number", N_("turn limit"), N_("empty: none")),
    "strict_statue": Control("flag", N_("strict statue")),
    "attack_frozen": Control("flag", N_("attack frozen")),
    "quiet_turns": Control("number", N_("draw after quiet turns"), N_("empty: none")),
}


def page_controls(game_name: str) -> tuple[tuple[str, Control], ...]:
    """The options the page offers for a new game of ``game_name``, in the engine's order."""
    return tuple((key, CONTROLS[key]) for key in KNOWN.get(game_name, ()) if key in CONTROLS)
