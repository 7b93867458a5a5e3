"""Who plays: the players' names and count of a new game, by one rule everywhere.

Names come from the station page (with the PIN), from the buttons (a count only: the names are
then the configured ones, or "Player 1", "Player 2"...) and from the configuration
(``[station] players``). They are stored with the game and written into its record, and every
screen, page and summary shows them; where a game has none (a game stored before names
existed) people see "Player 1", "Player 2"...: numbers for people start at 1, while records keep
their 0-based indices (``docs/records.md``).

A name is trimmed and must be short enough for the station's screen and the dashboard's grid
(:data:`NAME_MAX`), printable, and different from the other names of the game: a result read
"Ana won" must say which Ana.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_app.games import get_game

#: The longest name, in characters: a whole name still fits a dashboard cell and a phone's row.
NAME_MAX = 24


def person(index: int) -> str:
    """A player as people count them: index 0 is "Player 1"."""
    return f"Player {index + 1}"


def default_names(count: int) -> tuple[str, ...]:
    return tuple(person(i) for i in range(count))


def names_or_numbers(names: Sequence[str], count: int) -> tuple[str, ...]:
    """``count`` names for people: the given ones, then "Player N" for any missing."""
    given = [str(n) for n in names[:count]]
    return tuple(given) + default_names(count)[len(given):]


def counts_text(game_name: str) -> str:
    """The player counts a game allows, for a message: "2", "2 to 4"."""
    counts = get_game(game_name).player_counts
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low} to {high}"


def check_count(game_name: str, count: int) -> None:
    """:class:`ValueError` unless ``game_name``'s engine allows ``count`` players."""
    game = get_game(game_name)
    if count not in game.player_counts:
        raise ValueError(f"{game.title} is for {counts_text(game_name)} players, not {count}")


def clean_names(raw: object, game_name: str | None = None) -> tuple[str, ...]:
    """Names as given (a list of texts), trimmed and checked; with ``game_name``, their number
    is checked against the game's player counts. :class:`ValueError` says what is wrong."""
    if not isinstance(raw, list | tuple) or not all(isinstance(n, str) for n in raw):
        raise ValueError("the players must be a list of names")
    names = tuple(n.strip() for n in raw)
    for i, name in enumerate(names):
        if not name:
            raise ValueError(f"the name of {person(i)} is empty")
        if len(name) > NAME_MAX:
            raise ValueError(f"a name has at most {NAME_MAX} characters; "
                             f"{name[:NAME_MAX]!r}... has {len(name)}")
        if not name.isprintable():
            raise ValueError(f"the name of {person(i)} holds a control character")
    folded = [n.casefold() for n in names]
    twice = next((n for i, n in enumerate(names) if folded.index(folded[i]) != i), None)
    if twice is not None:
        raise ValueError(f"two players are called {twice!r}: give each a different name")
    if game_name is not None:
        check_count(game_name, len(names))
    return names
