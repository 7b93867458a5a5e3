"""Station configuration: one TOML file, every key documented, every default embedded.

``tikiboard run`` without ``--config`` runs on the embedded defaults: the simulated sensor
board, mock LEDs, display and buttons, no broker. On a Raspberry Pi the service reads
``/etc/tikiboard/tikiboard.toml``; ``tikiboard run --print-config`` prints the defaults below as
a file to start from. A wrong file stops the start with one message that names the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pi_app.board.waits import Waits
from pi_app.errors import UnreadableInput
from pi_app.games import GAME_NAMES
from pi_app.i18n import LANGUAGES

DEFAULTS_TOML = """\
# tikiboard station configuration. Every key is optional; these are the defaults.

[station]
configured = true            # false: the station starts in its first-boot set-up (the page's
                             # /setup, with the one-time code on the screen; docs/raspberry-pi.md)
board = "table-1"            # this station's board id (tournament feeds, records): 1 to 64
                             # letters, digits, "_", "." or "-", starting with a letter or digit
language = "en"              # the screen's language: "en", "nl", "fr" or "it" (English,
                             # Nederlands, Français, Italiano); also the page's, unless the
                             # viewer's browser or ?lang= asks for another of them
game = "topple"              # this station's game: topple, manami, tactiki. A board is built
                             # for one game (its cells, sensors and LEDs: [sensors] geometry,
                             # else hardware/boards/GAME.json), so the station offers only the
                             # games of its board, on the buttons and on the page
players = 2                  # a new game's players: a count (Tiki Topple: 2 to 4, the other
                             # games are for two) or their names, e.g. ["Ana", "Ben", "Caro"]
                             # (trimmed, at most 24 characters each); people see "Player 1",
                             # "Player 2"... where no name is given. The buttons (MENU at game
                             # over) and the page (with the PIN) choose them per game.
data_dir = "~/.local/state/tikiboard"  # the game database and the tag registry live here
seed = -1                    # random deals: -1 draws a fresh seed each game
topple_cards = "tap"         # Tiki Topple: "tap" = players draw Secret Tiki cards and tap them
                             # on the card pad before each round; "deal" = the station deals
tactiki_setup = "players"    # TacTiki: "players" = the players stack their own pieces and the
                             # station reads them (bottom = put down first); "deal" = random
options = {}                 # the rule options of a new game (seeds/*.md, Options), e.g.
                             # {shaman = true} or {rounds = 8}; at the table the limits the
                             # rulebooks lack are off unless named here ({quiet_turns = 30},
                             # {quiet_limit = 200}); MENU at game over and the page choose others
bots = {}                    # the station's seats: {seat = level}, seats from 0 (to_move's),
                             # level random, greedy or search, e.g. {1 = "search"}: on its turn
                             # the station shows its move and a person carries it out
hints = true                 # OK with nothing to confirm (and the page's hint) lights the
                             # best move for the player to move; false: locked (tournaments)

[sensors]
source = "sim"               # "serial": the sensor board on `device`; "sim": simulated firmware
device = "/dev/tikiboard-sensors"
baudrate = 115200
geometry = ""                # a board geometry file; "" = hardware/boards/GAME.json

[timing]                     # seconds; see docs/waits.md
settle = 0.25
settle_long = 1.0
settle_removal = 1.5
grace = 1.2
settle_min = -1.0            # -1: the board's own (hardware/boards/GAME.json)

[leds]
driver = "mock"              # "neopixel" (PWM/PCM pin), "neopixel_spi" (Pi 5, no root), "mock"
brightness = 0.3             # 0..1, before the power cap
max_current_ma = 1500        # the LED supply's budget; frames are scaled down to fit

[display]
driver = "mock"              # "ssd1306", "sh1106", "mock"

[buttons]
driver = "mock"              # "gpio" (pins from hardware/pinmap.json), "mock"

[web]
enabled = false              # the station's own page
host = "127.0.0.1"           # "0.0.0.0" to serve the table's local network
port = 8080
token = ""                   # the page's PIN for actions (undo, new game, override): at least
                             # 6 printable ASCII characters; "" = no actions

[mqtt]
enabled = false              # publish to a tournament broker
host = "127.0.0.1"
port = 1883
event = "event"              # topic prefix tiki/EVENT/board/BOARD/...
username = ""
password = ""
tls = false                  # TLS with the system's trusted CAs (a broker with a public cert)
tls_ca = ""                  # the CA file (PEM) that signed the broker's certificate: TLS on
tls_cert = ""                # a client certificate and key (PEM), for a broker that asks for
tls_key = ""                 # them; paths are absolute or relative to this file's folder
"""


class ConfigError(UnreadableInput, ValueError):
    """A configuration that cannot be used; the message names the file and the key, for
    people. ``key`` names it for code (``"station.board"``; empty when no one key is wrong):
    the first-boot form marks the field by it, never by reading the message."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


#: The shortest station PIN ([web] token). The page's brake allows five free guesses per
#: address and then doubles a wait (to 5 min), but a venue LAN has many addresses: 4 digits
#: are 10,000 guesses, a few dozen phones' worth; 6 are 1,000,000, still typed in seconds.
MIN_PIN = 6


@dataclass(frozen=True)
class Station:
    configured: bool = True
    """False: start in the first-boot set-up (:mod:`pi_app.referee.firstboot`)."""
    board: str = "table-1"
    language: str = "en"
    """The station's language (:data:`pi_app.i18n.LANGUAGES`): its screen and its page's
    default."""
    game: str = "topple"
    players: int | tuple[str, ...] = 2
    """A count, or the players' names (a list in the file)."""
    data_dir: str = "~/.local/state/tikiboard"
    seed: int = -1
    topple_cards: str = "tap"
    tactiki_setup: str = "players"
    options: dict[str, Any] = field(default_factory=dict)
    """New games' rule options (:mod:`pi_app.referee.rule_options`), checked against the
    configured game when the file is read."""
    bots: dict[str, Any] = field(default_factory=dict)
    """The station's seats and their bots' levels, ``{seat: level}`` (seats from 0;
    :mod:`pi_app.referee.opponent`)."""
    hints: bool = True
    """OK with nothing to confirm (and the page's ``hint``) shows the best move; false locks
    hints (tournament mode)."""

    @property
    def player_names(self) -> tuple[str, ...]:
        """The configured names (none when ``players`` is a count)."""
        return self.players if isinstance(self.players, tuple) else ()

    @property
    def player_count(self) -> int:
        return len(self.players) if isinstance(self.players, tuple) else self.players


@dataclass(frozen=True)
class Sensors:
    source: str = "sim"
    device: str = "/dev/tikiboard-sensors"
    baudrate: int = 115200
    geometry: str = ""


@dataclass(frozen=True)
class Timing:
    """The follower's configurable waits; their defaults are the follower's own (:class:`Waits`,
    the values the accuracy benches measure). The station once shipped ``settle_long`` 0.7 s
    after the follower had moved to 1.0 s for slow Topple swaps (issue 18), so the product ran
    a wait no bench had measured."""

    settle: float = Waits.settle
    settle_long: float = Waits.settle_long
    settle_removal: float = Waits.settle_removal
    grace: float = Waits.grace
    settle_min: float = -1.0


@dataclass(frozen=True)
class Leds:
    driver: str = "mock"
    brightness: float = 0.3
    max_current_ma: int = 1500


@dataclass(frozen=True)
class Display:
    driver: str = "mock"


@dataclass(frozen=True)
class Buttons:
    driver: str = "mock"


@dataclass(frozen=True)
class Web:
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 8080
    token: str = ""
    public_url: str = ""
    """The page's address as shown to people (the QR code); empty: found from the network."""


@dataclass(frozen=True)
class Mqtt:
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 1883
    event: str = "event"
    username: str = ""
    password: str = ""
    tls: bool = False
    tls_ca: str = ""
    tls_cert: str = ""
    tls_key: str = ""


@dataclass(frozen=True)
class Config:
    station: Station = field(default_factory=Station)
    sensors: Sensors = field(default_factory=Sensors)
    timing: Timing = field(default_factory=Timing)
    leds: Leds = field(default_factory=Leds)
    display: Display = field(default_factory=Display)
    buttons: Buttons = field(default_factory=Buttons)
    web: Web = field(default_factory=Web)
    mqtt: Mqtt = field(default_factory=Mqtt)
    source: str = "(embedded defaults)"

    @property
    def data_dir(self) -> Path:
        return Path(self.station.data_dir).expanduser()


#: Allowed values of the keys that take one of a few words.
CHOICES = {
    ("station", "game"): GAME_NAMES,
    ("station", "language"): LANGUAGES,
    ("station", "topple_cards"): ("tap", "deal"),
    ("station", "tactiki_setup"): ("players", "deal"),
    ("sensors", "source"): ("serial", "sim"),
    ("leds", "driver"): ("neopixel", "neopixel_spi", "mock"),
    ("display", "driver"): ("ssd1306", "sh1106", "mock"),
    ("buttons", "driver"): ("gpio", "mock"),
}
#: Numeric ranges (inclusive).
RANGES: dict[tuple[str, str], tuple[float, float]] = {
    ("station", "players"): (2, 4),
    ("station", "seed"): (-1, 2**63),
    ("sensors", "baudrate"): (1200, 4_000_000),
    ("timing", "settle"): (0, 10), ("timing", "settle_long"): (0, 10),
    ("timing", "settle_removal"): (0, 10), ("timing", "grace"): (0.1, 60),
    ("timing", "settle_min"): (-1, 5),
    ("leds", "brightness"): (0, 1), ("leds", "max_current_ma"): (50, 100_000),
    ("web", "port"): (1, 65535), ("mqtt", "port"): (1, 65535),
}


def load_config(path: str | Path | None = None) -> Config:
    """The configuration in ``path`` over the embedded defaults (None: defaults only)."""
    if path is None:
        return Config()
    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not text: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from exc
    except RecursionError as exc:  # tomllib recurses once per level of nested arrays
        raise ConfigError(f"{where}: not valid TOML: nested too deeply") from exc
    return parse_config(data, where)


def parse_config(data: dict[str, Any], where: str = "config") -> Config:
    sections: dict[str, Any] = {}
    known = {f.name: f for f in fields(Config) if f.name != "source"}
    for name, value in data.items():
        if name not in known:
            raise ConfigError(f"{where}: unknown section [{name}] (known: "
                              + ", ".join(known) + ")")
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: [{name}] must be a table of keys")
        cls = known[name].default_factory
        sections[name] = _section(cls, name, value, where)
    return Config(**sections, source=where)


def _section(cls: Any, name: str, values: dict[str, Any], where: str) -> Any:
    defaults = cls()
    allowed = {f.name: type(getattr(defaults, f.name)) for f in fields(cls)}
    out: dict[str, Any] = {}
    for key, raw in values.items():
        qualified = f"{name}.{key}"
        try:
            if key not in allowed:
                raise ConfigError(f"{where}: unknown key {qualified} (known in [{name}]: "
                                  + ", ".join(allowed) + ")")
            kind = allowed[key]
            if (name, key) == ("station", "players") and isinstance(raw, list):
                out[key] = _player_names(raw, values.get("game", defaults.game),
                                         f"{where}: {qualified}")
                continue
            value = float(raw) if kind is float and type(raw) is int else raw
            if type(value) is not kind:
                raise ConfigError(f"{where}: {qualified} must be {_kind_name(kind)}, "
                                  f"not {value!r}")
            choices = CHOICES.get((name, key))
            if choices is not None and value not in choices:
                raise ConfigError(f"{where}: {qualified} must be one of {', '.join(choices)}, "
                                  f"not {value!r}")
            bounds = RANGES.get((name, key))
            if bounds is not None and not bounds[0] <= value <= bounds[1]:
                raise ConfigError(f"{where}: {qualified} must be from {bounds[0]} to {bounds[1]}, "
                                  f"not {value!r}")
            if isinstance(value, str) and "\0" in value:  # no path or name can hold it
                raise ConfigError(f"{where}: {qualified} must not contain a NUL character")
            if (name, key) == ("sensors", "geometry") and isinstance(value, str) and value:
                _check_geometry(value, f"{where}: {qualified}")
            if (name, key) == ("web", "token"):
                _check_pin(str(value), f"{where}: {qualified}")
            if (name, key) == ("station", "board"):
                _check_board(str(value), f"{where}: {qualified}")
            if (name, key) == ("station", "bots") and isinstance(value, dict):
                from pi_app.referee.opponent import parse_bots

                try:
                    parse_bots(value)
                except ValueError as exc:
                    raise ConfigError(f"{where}: {qualified}: {exc}") from exc
            if (name, key) == ("station", "options") and isinstance(value, dict):
                _check_options(value, values.get("game", defaults.game), f"{where}: {qualified}")
            out[key] = value
        except ConfigError as exc:  # whatever check refused it, the key is this one
            exc.key = exc.key or qualified
            raise
    return cls(**out)


def _check_options(options: dict[str, Any], game: Any, where: str) -> None:
    """``[station] options`` must be options the configured game knows, with good values."""
    from pi_app.referee.rule_options import check_options

    if game not in GAME_NAMES:
        return  # the unknown game is reported on its own key
    try:
        check_options(game, options)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _player_names(raw: list[Any], game: Any, where: str) -> tuple[str, ...]:
    """``[station] players`` as names: checked by the same rule as names typed on the page,
    and their number against the configured game's player counts."""
    from pi_app.referee.players import clean_names

    try:
        return clean_names(raw, game if game in GAME_NAMES else None)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _check_pin(pin: str, where: str) -> None:
    """A PIN the page can take: long enough to resist guessing (:data:`MIN_PIN`), and
    printable ASCII without spaces at its ends, since a browser cannot send other characters
    in the header that carries it and the page strips the ends. The message never shows it."""
    if not pin:
        return  # no PIN: no actions at all
    if len(pin) < MIN_PIN:
        raise ConfigError(f"{where} (the station page's PIN) must be at least {MIN_PIN} "
                          f"characters, not {len(pin)}")
    if not (pin.isascii() and pin.isprintable()) or pin != pin.strip():
        raise ConfigError(f"{where} (the station page's PIN) must be printable ASCII "
                          "characters without spaces at its ends")


def _check_board(board: str, where: str) -> None:
    """A board id the tournament can use: it is the station's MQTT user name and a topic
    level (:func:`pi_app.net.topics.check_name`), so a wrong one fails at the start, naming
    the key, not later at the broker."""
    from pi_app.ids import IdError as TopicError
    from pi_app.ids import check_id as check_name

    try:
        check_name(board, "the board id")
    except TopicError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _check_geometry(path: str, where: str) -> None:
    """A board geometry file that will not load fails here, naming the key, not later in the
    daemon with a traceback."""
    from pi_app.board.geometry import GeometryError, load_geometry

    try:
        load_geometry(path)
    except GeometryError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _kind_name(kind: type) -> str:
    return {bool: "true or false", int: "a whole number", float: "a number",
            str: "a text"}.get(kind, kind.__name__)
