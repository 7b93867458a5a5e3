"""First-boot set-up: a new station is named, given its game, PIN and network at the table.

Typing a table name and a PIN with three buttons is miserable, so the set-up happens on the
station's page (``/setup``, :mod:`pi_app.net.setup_app`), but only for someone standing at the
table: the screen shows the page's address, its QR code and a one-time six-digit code, drawn
fresh at every start from :mod:`secrets` and never put on the page, in the feed or on MQTT.
The form asks for that code, and wrong codes are braked like PINs.

When: ``[station] configured = false`` in the configuration file, or (``tikiboard run
--first-boot``, as the service runs it) no configuration file at all. A typo in a hand-typed
``--config`` stays an error: it must not open a set-up page on every address.

What the set-up writes: the answers are put into the configuration file (its other keys and
comments kept, ``tomlkit``), checked by the configuration loader itself
(:func:`pi_app.referee.config.parse_config`: a value the loader would refuse at the next start
is refused now, naming the field), then written atomically (a temporary file in the same folder,
fsync, rename) with mode 0640: the file holds the PIN and the broker's password.

Applied by restarting the station in the same process (:func:`serve_configured`): the running
station stops as at a shutdown (every move is already stored), the file is read back by the
loader, and the station starts again on it, with its new name, game and PIN. That is the
same path as a start, so nothing half-applied can remain; no exit and no reliance on systemd
restarting the daemon, which would also count against the unit's start limit. The set-up code
dies with the first station: the new one has none.

The venue's Wi-Fi is not part of the file: NetworkManager keeps it (Raspberry Pi OS Bookworm),
and :class:`Wifi` asks it with ``nmcli device wifi connect SSID password PASS`` before the
restart, so the new station shows its new address. Its outcome is the new station's notice.

Without a set-up nothing is stuck: OK on the set-up screen hides it and the table plays the
configured (default) game at once; the code keeps working until the station restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import shutil
import subprocess
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pi_app.errors import UnreadableInput
from pi_app.games import GAME_NAMES, get_game
from pi_app.i18n import LANGUAGE_NAMES, LANGUAGES, N_, Said
from pi_app.referee.config import Config, ConfigError, load_config, parse_config
from pi_app.referee.joincode import JoinCodeError, read_join_code

log = logging.getLogger(__name__)

CODE_DIGITS = 6
#: How long NetworkManager may take to join the venue's network (``nmcli --wait``), seconds.
WIFI_WAIT_S = 60
#: Seconds between the set-up's answer and the restart, so the answer reaches the phone first.
RESTART_DELAY_S = 0.3

#: The form's fields and the configuration keys they fill (the loader's messages name keys).
FIELD_KEYS = {"board": "station.board", "game": "station.game", "players": "station.players",
              "language": "station.language",
              "pin": "web.token", "mqtt_host": "mqtt.host", "mqtt_port": "mqtt.port",
              "mqtt_password": "mqtt.password"}
#: What people call each field (the page's labels).
FIELD_LABELS = {"code": N_("Set-up code"), "join": N_("Join code"), "board": N_("Table name"),
                "game": N_("Game"),
                "language": N_("Language"),
                "players": N_("Players"), "count": N_("Number of players"), "pin": N_("PIN"),
                "ssid": N_("Wi-Fi network"), "passphrase": N_("Wi-Fi password"),
                "mqtt_host": N_("Broker"), "mqtt_port": N_("Broker port"),
                "mqtt_password": N_("Broker password")}


class SetupError(UnreadableInput, ValueError):
    """An answer the set-up cannot take: ``field`` is the form's field, the message says why
    (never showing a PIN or a password); :meth:`words` says it in the reader's language."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name
        self.message = message

    def words(self, lang: str) -> str:
        """The message in ``lang`` (a reason from the configuration's checks stays English)."""
        said = self.message
        return said.in_language(lang) if isinstance(said, Said) else said


def _label(field_name: str) -> Said:
    return Said.gettext(FIELD_LABELS[field_name])


def new_code() -> str:
    """A one-time set-up code: six random digits (1 in a million per guess; the page's brake
    makes guessing slower still)."""
    return f"{secrets.randbelow(10 ** CODE_DIGITS):0{CODE_DIGITS}d}"


def load_for_run(path: str | Path | None, *, first_boot: bool = False,
                 ) -> tuple[Config, FirstBoot | None]:
    """The configuration ``tikiboard run`` starts on, and the set-up when one is due.

    ``first_boot``: a missing file starts the set-up on the defaults (else it is an error, as
    for any unreadable file). In set-up the page is on, and on every address unless the file
    names ``[web] host``: the phone that sets the station up is on the venue's network.
    """
    if path is None:
        return load_config(None), None
    path = Path(path)
    if first_boot and not path.exists():
        raw: dict[str, Any] = {}
        config = parse_config({}, f"{path} (not there yet: first-boot set-up)")
        config = replace(config, station=replace(config.station, configured=False))
    else:
        config = load_config(path)
        if config.station.configured:
            return config, None
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    named_host = isinstance(raw.get("web"), dict) and "host" in raw["web"]
    config = replace(config, web=replace(config.web, enabled=True,
                                         host=config.web.host if named_host else "0.0.0.0"))
    return config, FirstBoot(path, config)


class Wifi:
    """The venue's Wi-Fi through NetworkManager's ``nmcli`` (Raspberry Pi OS Bookworm).

    The SSID and the passphrase are separate argv items of a process started without a shell,
    so no character in them can be read as anything else. ``nmcli`` is looked up on ``PATH``
    at each call (the tests put a fake one first). The passphrase is on nmcli's command line
    for the second or so it runs: visible to local users who list processes, as with any nmcli
    use; a station has no other users."""

    def __init__(self, nmcli: str = "nmcli", wait: int = WIFI_WAIT_S) -> None:
        self.nmcli = nmcli
        self.wait = wait

    def argv(self, exe: str, ssid: str, passphrase: str) -> list[str]:
        argv = [exe, "--wait", str(self.wait), "device", "wifi", "connect", ssid]
        return argv + (["password", passphrase] if passphrase else [])

    def connect(self, ssid: str, passphrase: str) -> str:
        """Join ``ssid``; "" when joined, else why not (the passphrase never in it)."""
        if ssid.startswith("-"):
            return "a network name that begins with '-' would be read as an nmcli option"
        exe = shutil.which(self.nmcli)
        if exe is None:
            return "nmcli (NetworkManager) is not installed"
        try:
            run = subprocess.run(self.argv(exe, ssid, passphrase), capture_output=True,
                                 text=True, timeout=self.wait + 30, check=False,
                                 env={**os.environ, "LC_ALL": "C"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"nmcli failed: {type(exc).__name__}"
        if run.returncode == 0:
            return ""
        said = (run.stderr or run.stdout).strip().splitlines()
        why = said[-1] if said else f"nmcli exit status {run.returncode}"
        return why.replace(passphrase, "***") if passphrase else why


@dataclass
class FirstBoot:
    """One station's set-up: its code, what it may choose, and writing the answers."""

    path: Path
    config: Config
    """The configuration the station runs on while it waits for its set-up."""
    code: str = field(default_factory=new_code)
    wifi: Wifi = field(default_factory=Wifi)
    done: bool = False
    """The set-up was written (or this station was started from a finished one): the code
    is no longer valid."""
    restart: bool = False
    """The station is to start again on the written file."""
    join: tuple[str, str] | None = None
    """The venue's network to join before the restart: SSID and passphrase."""
    news: str = ""
    """What the new station says once (the Wi-Fi's outcome)."""
    on_done: Callable[[], None] | None = None
    """Called (after :data:`RESTART_DELAY_S`) once the answers are written: stops the station."""

    # -- what the form offers --------------------------------------------------------------------
    @property
    def games(self) -> tuple[str, ...]:
        """The games this station's board can play. A configured geometry file fixes the board
        and so the game; without one, the game names the board (``hardware/boards/GAME.json``),
        so each game is a choice: the person setting up says which board was built."""
        if not self.config.sensors.geometry:
            return GAME_NAMES
        from pi_app.board.geometry import load_geometry
        from pi_app.referee.station import board_games

        return board_games(load_geometry(self.config.sensors.geometry), self.config.station.game)

    def defaults(self) -> dict[str, str]:
        """The form's starting values: the current configuration's (never a PIN or password)."""
        station, mqtt = self.config.station, self.config.mqtt
        return {"board": station.board, "game": station.game, "language": station.language,
                "players": ", ".join(station.player_names),
                "count": str(station.player_count),
                "mqtt_host": mqtt.host if mqtt.enabled else "",
                "mqtt_port": str(mqtt.port)}

    def check_code(self, given: str) -> bool:
        """True for this boot's code, compared in constant time; False once the set-up is done."""
        return not self.done and hmac.compare_digest(given.strip().encode(), self.code.encode())

    # -- checking and writing --------------------------------------------------------------------
    def answers_to_toml(self, form: Mapping[str, str]) -> tuple[str, Config]:
        """The configuration file the answers make (the current file with them in), and what
        the loader reads from it; :class:`SetupError` names the first wrong field."""
        import tomlkit

        text = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        doc = tomlkit.parse(text)
        game = form.get("game", "").strip()
        if game not in self.games:
            raise SetupError("game", Said.gettext(
                "Game: this board plays {games}",
                games=" / ".join(get_game(g).title for g in self.games)))
        language = form.get("language", "").strip() or self.config.station.language
        if language not in LANGUAGES:
            raise SetupError("language", Said.gettext(
                "Language: one of {languages}",
                languages=", ".join(LANGUAGE_NAMES[code] for code in LANGUAGES)))
        join = form.get("join", "").strip()
        code = None
        if join:
            try:
                code = read_join_code(join)
            except JoinCodeError as exc:
                raise SetupError("join", Said.gettext("{label}: {reason}", label=_label("join"),
                                                      reason=str(exc))) from None
        pin = form.get("pin", "")
        if not pin:
            raise SetupError("pin", Said.gettext(
                "PIN: needed, for the page's actions (undo, new game)"))
        station = _table(doc, "station")
        station["configured"] = True
        station["board"] = form.get("board", "").strip()
        station["game"] = game
        station["language"] = language
        station["players"] = _players(form, game)
        web = _table(doc, "web")
        web["enabled"] = True
        web["token"] = pin
        if "host" not in web:
            web["host"] = self.config.web.host
        if "port" not in web:
            web["port"] = self.config.web.port
        broker = "" if code is not None else form.get("mqtt_host", "").strip()
        if code is not None:  # the join code says it all: the table name is its board
            station["board"] = code.board
            mqtt = _table(doc, "mqtt")
            mqtt["enabled"] = True
            mqtt["host"] = code.host
            mqtt["port"] = code.port
            mqtt["event"] = code.event
            mqtt["username"] = code.board
            mqtt["password"] = code.password
            mqtt["tls"] = code.tls
        if broker:
            mqtt = _table(doc, "mqtt")
            mqtt["enabled"] = True
            mqtt["host"] = broker
            mqtt["port"] = _whole(form.get("mqtt_port", "").strip() or "1883", "mqtt_port")
            if form.get("mqtt_password"):
                mqtt["password"] = form["mqtt_password"]
            if any(c.isspace() or c in "/#+" for c in broker) or len(broker) > 253:
                raise SetupError("mqtt_host", Said.gettext(
                    "Broker: a host name or address, nothing else"))
        self.join = _wifi_answer(form)
        out = tomlkit.dumps(doc)
        return out, self._check(out)

    def _check(self, text: str) -> Config:
        """The file as the loader will read it at the next start: its refusal names a key,
        which names the field."""
        try:
            return parse_config(tomllib.loads(text), "set-up")
        except ConfigError as exc:
            message = str(exc).removeprefix("set-up: ")
            for name, key in FIELD_KEYS.items():
                if exc.key == key:
                    raise SetupError(name, Said.gettext("{label}: {reason}", label=_label(name),
                                                        reason=message)) from exc
            raise SetupError("", message) from exc

    def write(self, text: str) -> None:
        """Write the configuration file atomically with mode 0640 and mark the set-up done;
        :class:`OSError` when the folder cannot be written (the code stays valid)."""
        write_private(self.path, text)
        self.done = self.restart = True
        log.info("first-boot set-up written to %s; the station starts again on it", self.path)

    def restart_soon(self) -> None:
        """Stop this station (:attr:`on_done`) once the answer had time to leave; on the
        daemon's loop, after :meth:`write`."""
        if self.on_done is not None:
            asyncio.get_running_loop().call_later(RESTART_DELAY_S, self.on_done)

    # -- the running station ---------------------------------------------------------------------
    def attach(self, station: Any, say: Callable[[str, str], None] | None = None) -> None:
        """Show this set-up on ``station``'s screen (the code, the address, its QR code);
        ``say(source, text)``: the station's notice, for the Wi-Fi's outcome (None: the
        notice is set directly)."""
        if self.news:
            if say is not None:
                say("setup", self.news)
            else:
                station.status.notice = self.news
        if self.done:  # the station that the set-up started
            if not station.session.history:  # nothing played yet: the set-up's game now
                station.new_game(station.config.station.game)
            return
        from pi_app.referee.address import page_address

        address = page_address(self.config)
        station.setup_code = self.code
        station.setup_url = address.rstrip("/") + "/setup"
        station.setup_qr = qr_address(address)
        station.render(station.clock())
        log.warning("first-boot set-up: open %s on a phone on this network and enter the "
                    "set-up code shown on the station's screen (%s)", station.setup_url,
                    self.code)

    def join_network(self) -> str:
        """Join the Wi-Fi the set-up asked for (blocking: call it in a thread); what the new
        station says about it."""
        if self.join is None:
            return ""
        ssid, passphrase = self.join
        problem = self.wifi.connect(ssid, passphrase)
        if problem:
            log.error("Wi-Fi %r not joined: %s", ssid, problem)
            return f"Wi-Fi {ssid} not joined: {problem}"
        log.info("joined the Wi-Fi %r", ssid)
        return ""


def qr_address(address: str) -> str:
    """The set-up address as the screen's QR code carries it: ``HTTP://HOST:PORT/SETUP`` in
    capitals when the page's address has no path (scheme and host are case-blind, and the
    set-up answers at ``/SETUP`` too), which QR packs small enough to draw two pixels a module
    on the 64-pixel screen; else the address as it is, plus ``setup``."""
    _scheme, sep, rest = address.partition("://")
    if sep and "/" not in rest.rstrip("/") and not any(c in rest for c in "?#"):
        return (address.rstrip("/") + "/setup").upper()
    return address.rstrip("/") + "/setup"


def _table(doc: Any, name: str) -> Any:
    import tomlkit

    if name not in doc:
        doc[name] = tomlkit.table()
    return doc[name]


def _players(form: Mapping[str, str], game: str) -> Any:
    """Names ("Ana, Ben"), checked by the loader's own rule; else a count."""
    from pi_app.referee.players import check_count

    names = [n.strip() for n in form.get("players", "").split(",")]
    if any(names):
        return names
    count = _whole(form.get("count", "").strip() or "2", "count")
    try:
        check_count(game, count)
    except ValueError as exc:
        raise SetupError("count", Said.gettext("{label}: {reason}", label=_label("count"),
                                               reason=str(exc))) from exc
    return count


def _whole(text: str, name: str) -> int:
    if not text.isdigit() or len(text) > 6:
        raise SetupError(name, Said.gettext("{label}: a whole number, not {text}",
                                            label=_label(name), text=repr(text[:12])))
    return int(text)


def _wifi_answer(form: Mapping[str, str]) -> tuple[str, str] | None:
    """The network to join, checked as WPA2 takes it: an SSID of 1 to 32 bytes, a passphrase of
    8 to 63 printable ASCII characters (or 64 hex digits), or none for an open network."""
    ssid, passphrase = form.get("ssid", ""), form.get("passphrase", "")
    if not ssid:
        if passphrase:
            raise SetupError("ssid", Said.gettext(
                "Wi-Fi network: the name of the network the password is for"))
        return None
    if len(ssid.encode()) > 32 or not ssid.isprintable():
        raise SetupError("ssid", Said.gettext(
            "Wi-Fi network: 1 to 32 bytes of printable characters"))
    if ssid.startswith("-"):  # nmcli would read it as one of its options
        raise SetupError("ssid", Said.gettext(
            "Wi-Fi network: a name that begins with '-' cannot be joined from here"))
    if passphrase:
        hex64 = len(passphrase) == 64 and all(c in "0123456789abcdefABCDEF" for c in passphrase)
        if not hex64 and not (8 <= len(passphrase) <= 63 and passphrase.isascii()
                              and passphrase.isprintable()):
            raise SetupError("passphrase", Said.gettext(
                "Wi-Fi password: 8 to 63 printable ASCII characters"))
    return ssid, passphrase


def write_private(path: Path, text: str) -> None:
    """``text`` as ``path``, all or nothing: a temporary file beside it (mode 0640: it holds
    secrets), flushed to the card, then renamed over it, and the folder flushed so the rename
    survives a power cut. A failure leaves the old file (or none) and no temporary file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o640)  # whatever the umask says
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


async def serve_configured(config: Config, setup: FirstBoot | None, *,
                           stop: asyncio.Event | None = None, **kwargs: Any) -> None:
    """Run the station (:func:`pi_app.referee.daemon.serve`) until ``stop``; after a set-up was
    written, join its network, read the file back with the loader and start again on it."""
    from pi_app.referee.daemon import serve

    outer = stop or asyncio.Event()
    while True:
        inner = asyncio.Event()
        relay = asyncio.ensure_future(_forward(outer, inner))
        if setup is not None:
            setup.on_done = inner.set
        try:
            await serve(config, stop=inner, setup=setup, **kwargs)
        finally:
            relay.cancel()
        if setup is None or not setup.restart or outer.is_set():
            return
        news = await asyncio.to_thread(setup.join_network)
        config = load_config(setup.path)
        setup = FirstBoot(setup.path, config, wifi=setup.wifi, done=True, news=news)


async def _forward(outer: asyncio.Event, inner: asyncio.Event) -> None:
    """``inner`` is set when ``outer`` is: the caller's stop stops every round."""
    await outer.wait()
    inner.set()
