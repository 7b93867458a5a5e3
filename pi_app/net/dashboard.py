"""``tikiboard referee``: the tournament referee dashboard and the tools around it.

The lead wires it into ``pi_app/cli.py`` with two lines::

    from pi_app.net.dashboard import register as register_referee
    register_referee(sub)            # sub = parser.add_subparsers(...)

Subcommands:

* ``tikiboard referee setup --dir D --event E --boards table-1 table-2 ...``: the broker's
  ``mosquitto.conf``, ``passwd`` and ``acl`` (see :mod:`pi_app.net.broker`), ``stations.json``
  (each station's MQTT settings and password) and ``referee.toml`` for the dashboard;
* ``tikiboard referee hash-password``: a referee password hash for ``[referees]``;
* ``tikiboard referee run --config referee.toml``: the dashboard (MQTT subscriber + web);
* ``tikiboard referee export --config referee.toml [--out FILE]``: every record of the event
  from the dashboard's ledger, as one JSON list (also ``GET /export.json`` when logged in).

``referee.toml``::

    event = "open25"
    db = "referee.sqlite"                   # relative paths are relative to this file
    tournament = "tournament.sqlite"        # the tournament (players, rounds, results), 0600
    spectator_delay = 0                     # seconds the spectators' /watch page is late
    stations_file = "stations.json"         # the event's boards (written by setup), or:
    # boards = ["table-1", "table-2"]       # listed here instead
    [broker]
    host = "127.0.0.1"
    port = 1883
    username = "referee"
    password_file = "referee.password"      # or password = "..."
    # tls_ca = "ca.crt"                     # TLS to the broker
    [web]
    host = "127.0.0.1"
    port = 8090
    secret_file = "cookie.key"              # signs referee sessions; made when missing (0600)
    secure_cookie = false                   # true behind HTTPS
    [referees]
    alice = "pbkdf2_sha256$200000$..."      # from tikiboard referee hash-password

This module imports only the standard library at load time (the web and MQTT stacks are
imported when a subcommand runs), so building the ``tikiboard`` parser stays fast.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import secrets
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_app.errors import UnreadableInput

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from pi_app.net.desk import Desk
    from pi_app.net.mqtt import BrokerOptions


class ConfigError(UnreadableInput, ValueError):
    """The dashboard's config file cannot be used; the message names the file and key."""


@dataclass(frozen=True)
class DashboardConfig:
    event: str
    db: Path
    broker: BrokerOptions
    host: str = "127.0.0.1"
    port: int = 8090
    secret: bytes = b""
    secure_cookie: bool = False
    referees: dict[str, str] = field(default_factory=dict)
    boards: tuple[str, ...] = ()
    """The event's boards: the overview lists each, "never connected" until its station
    speaks (a table whose station never came up is otherwise invisible)."""
    tournament: Path | None = None
    """The tournament's file (``/tournament``); None: ``tournament.sqlite`` next to ``db``."""
    spectator_delay: float = 0.0
    """Seconds the spectators' page (``/watch``) shows the boards late (0: live), as chess
    broadcasts delay the moves (:mod:`pi_app.net.spectate`)."""
    client_id: str | None = None
    """MQTT client id of the dashboard's session (default: its MQTT user name, which the
    tournament broker enforces; another id matters only on a broker without that rule)."""


def load_config(path: str | Path) -> DashboardConfig:
    from pi_app.net.mqtt import BrokerOptions
    from pi_app.net.topics import TopicError, check_name

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not TOML: {exc}") from exc
    base = path.resolve().parent
    try:
        event = check_name(str(data.get("event", "")), "event")
    except TopicError as exc:
        raise ConfigError(f"{path}: event: {exc}") from exc
    web: dict[str, Any] = data.get("web", {})
    referees = data.get("referees", {})
    if not isinstance(referees, dict) or not all(isinstance(v, str) for v in referees.values()):
        raise ConfigError(f"{path}: [referees] maps names to password hashes")
    secret_file = base / str(web.get("secret_file", "cookie.key"))
    if not secret_file.exists():
        old = os.umask(0o077)
        try:
            secret_file.write_text(secrets.token_hex(32), encoding="utf-8")
        finally:
            os.umask(old)
    try:
        broker = BrokerOptions.from_mapping(data.get("broker", {}), base)
    except OSError as exc:
        raise ConfigError(f"{path}: [broker]: {exc}") from exc
    return DashboardConfig(
        event=event, db=base / str(data.get("db", "referee.sqlite")), broker=broker,
        tournament=base / str(data.get("tournament", "tournament.sqlite")),
        boards=_boards(path, data, base),
        host=str(web.get("host", "127.0.0.1")), port=int(web.get("port", 8090)),
        secret=read_secret(secret_file),
        secure_cookie=bool(web.get("secure_cookie", False)), referees=dict(referees),
        spectator_delay=_delay(path, data))


def _delay(path: Path, data: dict[str, Any]) -> float:
    """``spectator_delay``: seconds, 0 or more (0 by default)."""
    value = data.get("spectator_delay", 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{path}: spectator_delay: seconds, 0 or more, not {value!r}")
    return float(value)


def _boards(path: Path, data: dict[str, Any], base: Path) -> tuple[str, ...]:
    """The event's boards: ``boards`` in the config, else the keys of ``stations_file``
    (``stations.json`` by default, which ``referee setup`` rewrites with every board it is
    given; the dashboard reads only the names). None listed: only boards heard from."""
    from pi_app.net.topics import TopicError, check_name

    names: Any = data.get("boards")
    where = "boards"
    if names is None:
        stations = base / str(data.get("stations_file", "stations.json"))
        where = str(stations)
        if not stations.exists():
            return ()
        try:
            names = list(json.loads(stations.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
            raise ConfigError(f"{path}: cannot read the boards from {stations}: {exc}") from exc
    if not isinstance(names, list):
        raise ConfigError(f"{path}: {where}: a list of board ids")
    try:
        return tuple(dict.fromkeys(check_name(str(b), "board") for b in names))
    except TopicError as exc:
        raise ConfigError(f"{path}: {where}: {exc}") from exc


def read_secret(secret_file: Path) -> bytes:
    """The cookie signing key; refuses an empty, short or garbled one.

    Anyone who knows the key can sign a referee's cookie, and an empty key is known to all: the
    dashboard does not start on one (delete the file and a new key is made at the next start,
    which logs every referee out)."""
    from pi_app.net.auth import MIN_SECRET

    try:
        text = secret_file.read_text(encoding="utf-8").strip()
        secret = bytes.fromhex(text)
    except OSError as exc:
        raise ConfigError(f"{secret_file}: cannot read the cookie key: "
                          f"{exc.strerror or exc}") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{secret_file}: the cookie key is not hex digits; delete the file "
                          "and a new key is made at the next start") from exc
    if len(secret) < MIN_SECRET:
        what = "empty" if not secret else "too short"
        raise ConfigError(f"{secret_file}: the cookie key is {what}"
                          f" ({len(secret)} bytes, at least {MIN_SECRET} needed): anyone could "
                          "sign a referee's cookie. Delete the file and a new key is made at "
                          "the next start")
    return secret


def build_dashboard(config: DashboardConfig) -> tuple[Starlette, Desk]:
    """The app and its desk; the app's lifespan runs the MQTT subscriber on the app's loop."""
    import asyncio
    import contextlib
    from collections.abc import AsyncIterator

    from pi_app.net.dashboard_app import create_dashboard_app
    from pi_app.net.desk import Desk, Incoming
    from pi_app.net.guard import quiet_accept_errors
    from pi_app.net.ledger import Ledger
    from pi_app.net.schema import LocksPayload, PairingPayload
    from pi_app.net.subscriber import Subscriber
    from pi_app.net.tournament_app import TournamentDesk, tournament_routes

    desk = Desk(Ledger(config.db), config.event, boards=config.boards)
    tournament = TournamentDesk(desk, config.tournament or config.db.with_name(
        "tournament.sqlite"))
    desk.result_listeners.append(tournament.on_result)
    desk.ruling_listeners.append(tournament.on_ruling)
    desk.spectate(config.spectator_delay)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        quiet_accept_errors(loop)

        def deliver(message: Incoming) -> None:
            loop.call_soon_threadsafe(desk.receive, message)

        def locks(payload: LocksPayload) -> None:  # paho's thread
            loop.call_soon_threadsafe(tournament.on_locks, payload)

        def ready() -> None:  # paho's thread: connected; boards get their pairings again
            desk.ready.set()
            with contextlib.suppress(RuntimeError):  # the loop closed while stopping
                loop.call_soon_threadsafe(tournament.push_pairings, True)

        subscriber = Subscriber(config.broker, config.event, deliver, on_ready=ready,
                                client_id=config.client_id, on_locks=locks)
        desk.acker = subscriber.ack
        tournament.send_locks = subscriber.publish_locks

        def pairing(board: str, payload: PairingPayload | None) -> None:  # on the loop
            async def send() -> None:
                if not await asyncio.to_thread(subscriber.publish_pairing, board, payload):
                    tournament.notice(f"board {board}: its pairing did not reach the broker "
                                      f"({subscriber.last_error or 'not connected'}); the "
                                      "players can start the game by hand")
            task = loop.create_task(send())
            pending.add(task)
            task.add_done_callback(pending.discard)

        pending: set[asyncio.Task[None]] = set()
        tournament.send_pairing = pairing
        subscriber.start()
        try:
            yield
        finally:
            subscriber.stop()
            desk.flush()
            desk.ledger.close()
            tournament.close()

    app = create_dashboard_app(desk, users=config.referees, secret=config.secret,
                               secure_cookie=config.secure_cookie, lifespan=lifespan,
                               extra=tournament_routes(tournament))
    return app, desk


# -- commands ------------------------------------------------------------------------------------
def _fail(message: str) -> int:
    print(f"tikiboard referee: {message}", file=sys.stderr)
    return 2


def cmd_run(args: argparse.Namespace) -> int:
    import uvicorn

    from pi_app.net.guard import Guard, guarded_h11
    from pi_app.net.web import PEER_ONLY

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        return _fail(str(exc))
    app, _desk = build_dashboard(config)
    host = args.host or config.host
    port = args.port or config.port
    print(f"referee dashboard for {config.event} on http://{host}:{port}/", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2,
                http=guarded_h11(Guard()), **PEER_ONLY)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from pi_app.net.ledger import Ledger

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        return _fail(str(exc))
    if not config.db.exists():
        return _fail(f"{config.db}: no ledger yet (has the dashboard run?)")
    ledger = Ledger(config.db)
    try:
        text = json.dumps(ledger.export(config.event), indent=1)
    finally:
        ledger.close()
    if args.out:
        # Every record of the event, hidden facts included: readable by its owner only.
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        print(text)
    return 0


def cmd_hash_password(_args: argparse.Namespace) -> int:
    from pi_app.net.auth import hash_password

    password = (getpass.getpass("referee password: ") if sys.stdin.isatty()
                else sys.stdin.readline().rstrip("\n"))
    if len(password) < 8:
        return _fail("use at least 8 characters")
    print(hash_password(password))
    return 0


def cmd_setup(args: argparse.Namespace) -> int:
    from pi_app.net.broker import (
        Bridge,
        BrokerError,
        TlsFiles,
        new_password,
        write_broker_config,
    )
    from pi_app.net.topics import TopicError, board_prefix
    from pi_app.referee.joincode import JoinCode
    from pi_app.referee.qr import qr_code

    directory = Path(args.dir).resolve()
    boards = {b: new_password() for b in args.boards}
    referee_password = new_password()
    tls = None
    if args.tls_cert or args.tls_key:
        if not (args.tls_cert and args.tls_key):
            return _fail("--tls-cert and --tls-key go together")
        tls = TlsFiles(Path(args.tls_cert).resolve(), Path(args.tls_key).resolve(),
                       args.tls_port)
    bridges: dict[str, tuple[str, list[str]]] = {}
    for given in args.bridges:
        venue, _, names = given.partition("=")
        listed = [b for b in names.split(",") if b]
        unknown = [b for b in listed if b not in boards]
        if not venue or not listed or unknown:
            return _fail(f"--bridges {given!r}: VENUE=BOARD,BOARD with boards of --boards"
                         + (f" ({', '.join(unknown)} is not)" if unknown else ""))
        bridges[venue] = (new_password(), listed)
    bridge = None
    if args.central:
        host, _, port_text = args.central.rpartition(":")
        if not host or not port_text.isdigit() or not args.bridge_user \
                or not args.bridge_password_file:
            return _fail("--central HOST:PORT goes with --bridge-user and "
                         "--bridge-password-file (the central setup's bridges.json)")
        try:
            secret = Path(args.bridge_password_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            return _fail(f"cannot read the bridge password: {exc}")
        bridge = Bridge(host, int(port_text), args.bridge_user, secret)
    try:
        files = write_broker_config(directory / "broker", event=args.event, boards=boards,
                                    referee_user=args.referee_user,
                                    referee_password=referee_password, port=args.port,
                                    bind=args.bind, tls=tls, bridge=bridge, bridges=bridges)
        prefixes = {b: board_prefix(args.event, b) for b in boards}
    except (BrokerError, TopicError) as exc:
        return _fail(str(exc))
    old = os.umask(0o077)
    try:
        host, port = args.public_host or args.bind, tls.port if tls else args.port
        joins = {b: JoinCode(host, port, args.event, b, p, tls is not None).text()
                 for b, p in boards.items()}
        stations = {b: {"event": args.event, "board": b, "host": host,
                        "port": port, "username": b, "password": p,
                        "tls": tls is not None, "topics": prefixes[b] + "/#", "join": joins[b]}
                    for b, p in boards.items()}
        qr_dir = directory / "join"
        qr_dir.mkdir(exist_ok=True)
        for b, text in joins.items():  # one QR code per table, for the phone that sets it up
            qr_code(text).save(str(qr_dir / f"{b}.svg"), scale=4, border=2)
        (directory / "stations.json").write_text(json.dumps(stations, indent=1) + "\n",
                                                 encoding="utf-8")
        (directory / "referee.password").write_text(referee_password + "\n", encoding="utf-8")
        if bridges:
            (directory / "bridges.json").write_text(json.dumps(
                {v: {"user": v, "password": p, "boards": b} for v, (p, b) in bridges.items()},
                indent=1) + "\n", encoding="utf-8")
        config = directory / "referee.toml"
        if not config.exists():
            config.write_text(
                f'event = "{args.event}"\ndb = "referee.sqlite"\n'
                '# the boards: from stations.json (or boards = ["table-1", ...])\n'
                'stations_file = "stations.json"\n\n[broker]\n'
                f'host = "127.0.0.1"\nport = {args.port}\nusername = "{args.referee_user}"\n'
                'password_file = "referee.password"\n\n[web]\nhost = "127.0.0.1"\n'
                'port = 8090\nsecret_file = "cookie.key"\n\n[referees]\n'
                '# name = "hash from: tikiboard referee hash-password"\n', encoding="utf-8")
    finally:
        os.umask(old)
    print(f"broker:   mosquitto -c {files.conf}")
    print(f"stations: {directory / 'stations.json'} (one password per board: keep it secret)")
    print(f"join:     {directory / 'join'}/BOARD.svg, a QR code of each board's join code for "
          "its first-boot form (as secret as its password)")
    for b, text in joins.items():
        print(f"  {b}: {text}")
    print(f"referee:  tikiboard referee run --config {config}")
    if bridges:
        print(f"bridges:  {directory / 'bridges.json'}: give each venue its user and password "
              "(referee setup --central HOST:PORT --bridge-user VENUE --bridge-password-file F)")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``referee`` and its subcommands to the ``tikiboard`` parser."""
    referee = subparsers.add_parser("referee", help="tournament: broker set-up and dashboard")
    sub = referee.add_subparsers(dest="referee_command", required=True)

    p = sub.add_parser("run", help="run the referee dashboard")
    p.add_argument("--config", required=True, help="referee.toml")
    p.add_argument("--host", help="web address to listen on (default from the config)")
    p.add_argument("--port", type=int, help="web port (default from the config)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("setup", help="write broker config, ACL, passwords and referee.toml")
    p.add_argument("--dir", required=True, help="folder for all the files")
    p.add_argument("--event", required=True, help="event id (letters, digits, _ . -)")
    p.add_argument("--boards", nargs="+", required=True, help="board ids, one per station")
    p.add_argument("--referee-user", default="referee", help="the dashboard's MQTT user")
    p.add_argument("--port", type=int, default=1883, help="broker port")
    p.add_argument("--bind", default="127.0.0.1", help="broker address (the venue LAN's)")
    p.add_argument("--public-host", help="address stations use to reach the broker")
    p.add_argument("--tls-cert", help="broker certificate (PEM): adds a TLS listener")
    p.add_argument("--tls-key", help="broker private key (PEM)")
    p.add_argument("--tls-port", type=int, default=8883, help="TLS listener port")
    p.add_argument("--bridges", nargs="+", default=[], metavar="VENUE=BOARD,BOARD",
                   help="central broker of several venues: a bridge user per venue, allowed "
                        "only that venue's boards (passwords into bridges.json)")
    p.add_argument("--central", metavar="HOST:PORT",
                   help="a venue's broker: bridge to the event's central broker")
    p.add_argument("--bridge-user", help="with --central: this venue's bridge user")
    p.add_argument("--bridge-password-file",
                   help="with --central: the file holding its password (from bridges.json)")
    p.set_defaults(func=cmd_setup)

    p = sub.add_parser("hash-password", help="hash a referee password (read from stdin)")
    p.set_defaults(func=cmd_hash_password)

    p = sub.add_parser("export", help="every record of the event, from the ledger")
    p.add_argument("--config", required=True, help="referee.toml")
    p.add_argument("--out", help="write to this file instead of stdout")
    p.set_defaults(func=cmd_export)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pi_app.net.dashboard run --config ...`` (same as ``tikiboard referee``)."""
    parser = argparse.ArgumentParser(prog="tikiboard")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["referee", *(sys.argv[1:] if argv is None else argv)])
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
