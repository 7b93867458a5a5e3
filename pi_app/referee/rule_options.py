"""Rule options chosen at the table: which exist, the station's defaults, presets and labels.

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
from typing import Any

from pi_app.games import RecordError, get_game
from pi_app.games.base import JSON
from pi_app.games.topple import default_rounds

#: Every option key each engine reads (``seeds/*.md``, Options), except Tiki Topple's
#: ``players``: the players are chosen on their own, and the station writes their count.
KNOWN: dict[str, tuple[str, ...]] = {
    "topple": ("rounds", "topple_bottom"),
    "manami": ("tokens", "fruit", "shaman", "shaman_off_board", "quiet_limit", "tiles"),
    "tactiki": ("ranks", "strict_statue", "attack_frozen", "quiet_turns"),
}

#: At the table the automatic limits the rulebooks do not have are off (issue 21).
TABLE_DEFAULTS: dict[str, JSON] = {
    "topple": {}, "manami": {"quiet_limit": None}, "tactiki": {"quiet_turns": 0}}

Preset = tuple[str, Callable[[int], JSON]]
#: What MENU offers at game over for each game, after the game and player count: the rules as
#: printed, then each variant the engine plays (a few, so that the menu stays short).
PRESETS: dict[str, tuple[Preset, ...]] = {
    "topple": (("standard", lambda _n: {}),
               ("longer game", lambda n: {"rounds": 2 * default_rounds(n)}),
               ("topple bottom", lambda _n: {"topple_bottom": True})),
    "manami": (("standard", lambda _n: {}),
               ("shaman", lambda _n: {"shaman": True}),
               ("shaman enters", lambda _n: {"shaman": True, "shaman_off_board": True})),
    "tactiki": (("standard", lambda _n: {}),
                ("strict statue", lambda _n: {"strict_statue": True}),
                ("attack frozen", lambda _n: {"attack_frozen": True})),
}


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
    presets = PRESETS.get(game_name, (("standard", lambda _n: {}),))
    options: JSON = presets[index % len(presets)][1](players)
    return options


def preset_count(game_name: str) -> int:
    return len(PRESETS.get(game_name, ())) or 1


def labels(game_name: str, options: Any) -> tuple[str, ...]:
    """Short words for the options a game's record uses that differ from the printed rules,
    for the OLED's play screen and the page (``()``: the rules as printed)."""
    if not isinstance(options, dict):
        return ()
    out: list[str] = []
    if game_name == "topple":
        players = options.get("players", 2)
        rounds = options.get("rounds")
        if isinstance(players, int) and isinstance(rounds, int) \
                and rounds != default_rounds(players):
            out.append(f"{rounds} rounds")
        if options.get("topple_bottom") is True:
            out.append("topple bottom")
    elif game_name == "manami":
        if options.get("shaman") is True:
            out.append("shaman enters" if options.get("shaman_off_board") is True else "shaman")
        for key, word in (("tokens", "tokens"), ("fruit", "fruit")):
            value, default = options.get(key), {"tokens": 8, "fruit": 7}[key]
            if isinstance(value, int) and value != default:
                out.append(f"{value} {word}")
        if "tiles" in options:
            out.append("own tiles")
        limit = options.get("quiet_limit", 200)
        if isinstance(limit, int):
            out.append(f"{limit}-turn limit")
    elif game_name == "tactiki":
        for key, word in (("strict_statue", "strict statue"), ("attack_frozen", "attack frozen")):
            if options.get(key) is True:
                out.append(word)
        ranks = options.get("ranks")
        if isinstance(ranks, list) and sorted(ranks) != [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]:
            out.append("own ranks")
        quiet = options.get("quiet_turns", 30)
        if isinstance(quiet, int) and quiet > 0:
            out.append(f"draw after {quiet}")
    return tuple(out)
