"""What a station is doing at this moment, for the LEDs, the screen and the feed.

Apart from :mod:`pi_app.referee.station` so that the flows the station runs (its set-up reading,
:mod:`pi_app.referee.setup_flow`) can name it without importing the station.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pi_app.board.follower import Guidance, Prompt
from pi_app.games.base import Card
from pi_app.json_types import JSON
from pi_app.referee.feed import Phase
from pi_app.referee.setup_reader import StackOrder


@dataclass
class Status:
    """What the station is doing, for the LEDs, the screen and the feed."""

    phase: Phase = Phase.SETUP
    link_up: bool = True
    link_detail: str = ""
    store_error: str = ""
    faults: dict[tuple[str, int | None], str] = field(default_factory=dict)
    prompt: Prompt | None = None
    guidance: Guidance | None = None
    confirmed: tuple[str, ...] = ()
    confirmed_at: float = -1e9
    last_move: str = ""
    takeback: tuple[str, ...] = ()
    reading: StackOrder | None = None
    """Start stacks the players build (TacTiki): the arrival order being read (a StackOrder),
    or None when no set-up is being read (:mod:`pi_app.referee.setup_flow`)."""
    cards: list[Card] | None = None
    """Secret cards the players tap (Tiki Topple): the cards tapped so far this round (None
    when no round waits for its cards)."""
    message: str = ""
    menu_game: str = ""
    menu_players: int = 0
    """At game over: the game and player count OK starts (MENU cycles them)."""
    menu_preset: int = 0
    """At game over: MENU's rule-option preset for the chosen game (0: the configured options;
    others: :data:`pi_app.referee.rule_options.PRESETS`)."""
    change: JSON | None = None
    """A new game asked for on the page while this one is on (its ``game``, ``players`` and
    ``options``): it waits for the station's OK, at the table, or BACK refuses it. One person
    with the PIN must not end a game alone (issue 29)."""
    notice: str = ""
    """A lasting condition outside the game (the page is off: its port is taken), shown when
    no game message is; set by the daemon, cleared when it ends."""
    round_end: float | None = None
    """When the tournament round's clock runs out, on this station's own clock (None: no
    clock): the pairing's ``ends_in`` added to the time it arrived, since the referee's clock
    may be minutes off this one. Cleared with the pairing."""
