"""A mosquitto broker for one tournament: its config, password file and ACL, and a process runner.

``write_broker_config(dir, event=..., boards={...}, referee_user=..., referee_password=...)``
writes three files that ``mosquitto -c DIR/mosquitto.conf`` runs with:

* ``mosquitto.conf``: one listener (loopback by default; a LAN address at the venue), no
  anonymous access, persistence on (queued QoS 1 messages for the referee's persistent session
  survive a broker restart), an optional TLS listener (with TLS on, the plain listener stays on
  loopback, for a dashboard on the broker's own machine: nothing crosses the LAN in clear);
* ``use_username_as_clientid true``: every client's id is its user name, so a station cannot
  connect under the dashboard's client id and take over its session (MQTT lets a newcomer with
  the same id disconnect the old client; the dashboard would then lose what was queued for it).
  One user name, one session: a second dashboard (a backup laptop, a share of the boards) needs
  its own user (``readers``), and the referee's user must not be borrowed for a quick
  ``mosquitto_sub``;
* a size limit: ``max_packet_size`` (:data:`MAX_PACKET`) disconnects a client that sends a
  bigger packet, checked on its length header before the broker buffers it (MQTT allows
  256 MB; the largest real payload, a long TacTiki game's state, is about 10 kB). mosquitto
  2.0.11 also drops the connection for ``message_size_limit`` rather than answering with a
  PUBACK, and recommends ``max_packet_size`` instead, so only that one is written;
* ``passwd``: one user per board (user name = board id) and the referee user, hashed by
  ``mosquitto_passwd -U`` (never stored in clear);
* ``acl``: the referee reads the event's tree and writes only ``tiki/EVENT/locks`` (hints off
  for every station); every station writes only the five leaves of its own board (one
  ``pattern write tiki/EVENT/board/%u/LEAF`` line each) and reads only the locks;
* memory bounds: ``max_queued_bytes`` for the referee's queue while the dashboard is away,
  ``memory_limit`` for the whole broker (it refuses new messages past it). With the ACL's five
  leaves a station's credentials retain at most five messages.

The ACL file as written for event ``open25``::

    user referee
    topic read tiki/open25/#
    topic write tiki/open25/locks

    pattern write tiki/open25/board/%u/status
    pattern write tiki/open25/board/%u/state
    pattern write tiki/open25/board/%u/record
    pattern write tiki/open25/board/%u/game
    pattern write tiki/open25/board/%u/events
    pattern read tiki/open25/locks
    pattern read tiki/open25/pairing/%u
    pattern write tiki/open25/remote/%u/up
    pattern read tiki/open25/remote/%u/down

(the referee also writes ``tiki/open25/pairing/+`` and ``tiki/open25/remote/+/down``: the
pairings and the authority's answers of remote play, docs/remote-play.md; a station retains at
most one more message, at its ``remote/BOARD/up``.)

A station that publishes as another board gets its PUBLISH dropped by the broker (MQTT 5 says so
in the PUBACK: reason 135, not authorised; the publisher reports it and keeps the event).
``readers`` (more dashboard users) get the referee's line each.

:class:`BrokerProcess` starts and stops such a broker by pid, for tests, the benchmark and a
one-machine demo; at a venue mosquitto runs as its Debian service with the same files.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_app.errors import TikiError
from pi_app.net import topics
from pi_app.net.topics import ROOT, check_name

MOSQUITTO = "mosquitto"
MOSQUITTO_PASSWD = "mosquitto_passwd"
MAX_PAYLOAD = 256 * 1024
"""Bytes of payload a station may always send (25 times the largest seen in play)."""
MAX_PACKET = MAX_PAYLOAD + 64 * 1024
"""Bytes of one MQTT packet (payload, topic, properties): past it the client is disconnected."""


MAX_QUEUED_BYTES = 128 * 1024 * 1024
"""Bytes queued for one offline client (the referee's persistent session)."""
MEMORY_LIMIT = 512 * 1024 * 1024
"""Bytes the whole broker may hold; past it new messages are refused."""


class BrokerError(TikiError, RuntimeError):
    """mosquitto is missing, will not start, or its files cannot be written."""


@dataclass(frozen=True)
class TlsFiles:
    """Server certificate and key (PEM) for a TLS listener; ``ca`` to require client certs."""

    cert: Path
    key: Path
    port: int = 8883
    ca: Path | None = None


@dataclass(frozen=True)
class BrokerFiles:
    dir: Path
    conf: Path
    passwd: Path
    acl: Path
    port: int
    bind: str
    tls: TlsFiles | None = None

    @property
    def plain_bind(self) -> str:
        """Where the plain (unencrypted) listener listens: loopback only once TLS is on."""
        return self.bind if self.tls is None else "127.0.0.1"


@dataclass(frozen=True)
class Bridge:
    """A venue broker's link to the event's central broker (several venues, or a league).

    The venue's mosquitto connects out to ``host:port`` as ``user`` and forwards its boards'
    topics there (``tiki/EVENT/board/#``, out), and brings the referee's locks and pairings
    back (``tiki/EVENT/locks`` and ``tiki/EVENT/pairing/#``, in); for remote play, a board's
    proposals go out to the authority at the centre (``remote/BOARD/up``) and its answers come
    in (``remote/BOARD/down``), so two boards at two venues can play one game. Stations keep
    talking to their venue's broker: a venue whose line to the centre drops keeps playing, and
    mosquitto queues what the centre has not had yet (``cleansession false``, QoS 1)."""

    host: str
    port: int
    user: str
    password: str


def bridge_lines(event: str, bridge: Bridge) -> list[str]:
    """The venue's ``mosquitto.conf`` lines for ``bridge`` (its password is in clear there:
    the file is written 0600, like the password file)."""
    check_name(event, "event")
    check_name(bridge.user, "bridge user")
    if any(c.isspace() for c in bridge.password + bridge.host) or not bridge.password:
        raise BrokerError("a bridge's host and password have no spaces, and a password is needed")
    return [f"connection tiki-{bridge.user}", f"address {bridge.host}:{bridge.port}",
            f"remote_username {bridge.user}", f"remote_password {bridge.password}",
            f"remote_clientid {bridge.user}", "cleansession false",
            "bridge_protocol_version mqttv311", "try_private true",
            # status messages on $SYS topics: the central ACL would refuse them
            "notifications false",
            f"topic {ROOT}/{event}/board/# out 1", f"topic {ROOT}/{event}/locks in 1",
            f"topic {ROOT}/{event}/pairing/# in 1",
            f"topic {ROOT}/{event}/remote/+/up out 1", f"topic {ROOT}/{event}/remote/+/down in 1"]


def new_password() -> str:
    """A random password a person can still type (about 95 bits)."""
    return secrets.token_urlsafe(12)


def acl_text(event: str, referee_user: str, readers: tuple[str, ...] = (),
             bridges: Mapping[str, Sequence[str]] | None = None) -> str:
    """The ACL; ``bridges``: the central broker's venue bridges (user -> the boards of that
    venue), each may write only those boards' leaves and remote proposals and read only the
    locks and their pairings and remote answers, so one venue's credentials cannot speak for
    another's tables."""
    check_name(event, "event")
    text = (f"# tikiboard tournament {event}: the referee reads everything and writes only\n"
            "# the locks every station reads (hints off in tournament play).\n"
            f"user {referee_user}\n"
            f"topic read {ROOT}/{event}/#\n"
            f"topic write {topics.locks_topic(event)}\n"
            f"topic write {ROOT}/{event}/pairing/+\n"
            f"topic write {ROOT}/{event}/remote/+/down\n\n")
    for reader in readers:
        text += f"user {check_name(reader, 'reader')}\ntopic read {ROOT}/{event}/#\n\n"
    for user, venue_boards in (bridges or {}).items():
        text += f"# the bridge of a venue, for its boards only\nuser {check_name(user, 'bridge')}\n"
        text += f"topic read {topics.locks_topic(event)}\n"
        for board in venue_boards:
            text += "".join(f"topic write {ROOT}/{event}/board/{check_name(board, 'board')}/"
                            f"{leaf}\n" for leaf in topics.LEAVES)
            text += f"topic read {topics.pairing_topic(event, board)}\n"
            text += (f"topic write {topics.remote_up_topic(event, board)}\n"
                     f"topic read {topics.remote_down_topic(event, board)}\n")
        text += "\n"
    # One line per leaf a station publishes: with ``%u/#`` a station's credentials (on every
    # table) could retain any number of topics below its board, each up to MAX_PAYLOAD, and
    # persistence would bring them all back after a restart (issue 29: 300 of 300 KB took the
    # broker from 9 MB to 97 MB).
    leaves = "".join(f"pattern write {ROOT}/{event}/board/%u/{leaf}\n" for leaf in topics.LEAVES)
    return text + ("# Every station writes only the leaves of its own board (user name = board\n"
                   "# id) and reads only the referee's locks and its own pairing.\n"
                   f"{leaves}"
                   f"pattern read {topics.locks_topic(event)}\n"
                   f"pattern read {ROOT}/{event}/pairing/%u\n"
                   "# Remote play (docs/remote-play.md): its proposals up, its answers down.\n"
                   f"pattern write {ROOT}/{event}/remote/%u/up\n"
                   f"pattern read {ROOT}/{event}/remote/%u/down\n")


def conf_text(files: BrokerFiles, *, persistence: bool = True, log: Path | None = None,
              user: str | None = None, bridge: list[str] | None = None) -> str:
    lines = [
        "# tikiboard tournament broker (written by pi_app.net.broker; safe to edit).",
        # Started as root, mosquitto drops to this user (default "mosquitto", who must then own
        # these files); tests and the benchmark keep the user that runs them.
        *([f"user {user}"] if user else []),
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {files.passwd}",
        f"acl_file {files.acl}",
        f"max_packet_size {MAX_PACKET}",
        # Listener options follow their ``listener`` line: one given before any would open
        # mosquitto's default listener, port 1883 on every interface, in clear.
        f"listener {files.port} {files.plain_bind}",
        # A client's id is its user name: nobody takes over the dashboard's session.
        "use_username_as_clientid true",
        "set_tcp_nodelay true",
        # The referee's persistent session queues QoS 1 messages while the dashboard is away:
        # a whole tournament's worth, not mosquitto's default 1000.
        "max_queued_messages 1000000",
        # ... and in bytes, so that queue cannot take the Pi's memory (a tournament's events
        # are about 300 bytes each), and a bound on everything the broker holds: past it,
        # mosquitto refuses new messages rather than grow.
        f"max_queued_bytes {MAX_QUEUED_BYTES}",
        f"memory_limit {MEMORY_LIMIT}",
        "max_inflight_messages 100",
    ]
    if files.tls is not None:
        lines += [f"listener {files.tls.port} {files.bind}", "use_username_as_clientid true",
                  f"certfile {files.tls.cert}", f"keyfile {files.tls.key}",
                  "tls_version tlsv1.2"]
        if files.tls.ca is not None:
            lines += [f"cafile {files.tls.ca}", "require_certificate true"]
    if persistence:
        lines += ["persistence true", f"persistence_location {files.dir / 'data'}/",
                  "autosave_interval 30"]
    else:
        lines.append("persistence false")
    lines.append(f"log_dest file {log}" if log is not None else "log_dest stderr")
    lines.append("log_type error\nlog_type warning\nlog_type notice")
    if bridge:  # last: a bridge's options follow its ``connection`` line
        lines += ["", "# the link to the event's central broker", *bridge]
    return "\n".join(lines) + "\n"


def write_broker_config(directory: str | Path, *, event: str, boards: Mapping[str, str],
                        referee_user: str, referee_password: str, port: int = 1883,
                        bind: str = "127.0.0.1", tls: TlsFiles | None = None,
                        persistence: bool = True, log: Path | None = None,
                        user: str | None = None,
                        readers: Mapping[str, str] | None = None,
                        bridge: Bridge | None = None,
                        bridges: Mapping[str, tuple[str, Sequence[str]]] | None = None
                        ) -> BrokerFiles:
    """Write mosquitto.conf, passwd (hashed) and acl for ``boards`` (board id -> password).

    ``user``: who mosquitto runs as when started as root (``None``: its default, the
    ``mosquitto`` user of the Debian package, who must be able to read these files).
    ``readers``: more users (name -> password) with the referee's rights, one per extra
    dashboard (each user is one MQTT session).
    ``bridge``: this is a venue's broker, linked to the event's central one.
    ``bridges``: this is the central broker; each venue's bridge user -> (its password, the
    boards of that venue).
    """
    check_name(event, "event")
    check_name(referee_user, "referee user")
    readers = dict(readers or {})
    for board in boards:
        check_name(board, "board")
        if board == referee_user or board in readers:
            raise BrokerError(f"board {board!r} has a dashboard's user name")
    tool = shutil.which(MOSQUITTO_PASSWD)
    if tool is None:
        raise BrokerError("mosquitto_passwd not found: install mosquitto "
                          "(apt-get install mosquitto)")
    root = Path(directory).resolve()
    (root / "data").mkdir(parents=True, exist_ok=True)
    files = BrokerFiles(root, root / "mosquitto.conf", root / "passwd", root / "acl", port, bind,
                        tls)
    linked = {user: password for user, (password, _b) in (bridges or {}).items()}
    users = {referee_user: referee_password, **readers, **linked, **boards}
    lines = None if bridge is None else bridge_lines(event, bridge)
    for name, password in users.items():
        if ":" in password or "\n" in password or not password:
            raise BrokerError(f"password of {name!r}: must be non-empty, without ':' or newline")
    old = os.umask(0o077)
    try:
        files.passwd.write_text("".join(f"{u}:{p}\n" for u, p in users.items()),
                                encoding="utf-8")
        run = subprocess.run([tool, "-U", str(files.passwd)], capture_output=True, text=True,
                             timeout=60, check=False)
        if run.returncode != 0:
            raise BrokerError(f"mosquitto_passwd failed: {run.stderr.strip() or run.stdout}")
        files.acl.write_text(acl_text(event, referee_user, tuple(readers), {
            u: b for u, (_p, b) in (bridges or {}).items()}), encoding="utf-8")
        files.conf.write_text(conf_text(files, persistence=persistence, log=log, user=user,
                                        bridge=lines), encoding="utf-8")
    finally:
        os.umask(old)
    return files


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def wait_connectable(host: str, port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return True
        time.sleep(0.02)
    return False


@dataclass
class BrokerProcess:
    """One mosquitto process on ``conf``; start, stop (by pid) and start again."""

    conf: Path
    host: str
    port: int
    log: Path | None = None
    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def start(self, timeout: float = 10.0) -> None:
        exe = shutil.which(MOSQUITTO) or next(
            (p for p in ("/usr/sbin/mosquitto", "/usr/bin/mosquitto") if os.path.exists(p)), None)
        if exe is None:
            raise BrokerError("mosquitto not found: install it (apt-get install mosquitto)")
        out = open(self.log, "ab") if self.log is not None else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen([exe, "-c", str(self.conf)], stdout=out,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            if self.log is not None and not isinstance(out, int):
                out.close()
        if not wait_connectable(self.host, self.port, timeout):
            code = self.proc.poll()
            self.stop()
            raise BrokerError(f"mosquitto did not listen on {self.host}:{self.port} "
                              f"within {timeout} s (exit {code})")

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (mosquitto saves its persistence file), then SIGKILL if it hangs."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout)
