"""Publishing one station to the tournament broker: store and forward from the station's SQLite.

The daemon wires it in three lines::

    from pi_app.net.mqtt import BrokerOptions, PublisherConfig, start_publisher
    config = PublisherConfig(event="open25", board=feed.board,
                             broker=BrokerOptions(host="10.0.0.2", username=feed.board,
                                                  password=secret))
    publisher = start_publisher(feed, store, config)      # ... publisher.stop() at exit

or simply ``start_publisher(feed, store, daemon_config)`` with the daemon's ``Config``
(``[station] board`` and ``[mqtt]``: event, host, port, username (default: the board id),
password, tls); ``publisher.cancel()`` stops it like the daemon's other tasks.

Why it is built this way:

* The event store is the queue. Every event the daemon stored is published from
  ``store.unpublished()`` in ``events.id`` order and marked with ``store.mark_published()``
  only after the broker acknowledged it (PUBACK, seen in ``on_publish``). While the broker is
  unreachable nothing is lost: the events wait on disk, across a station restart too.
* Marks cover only the acknowledged *prefix*: if 41 was acknowledged but 40 was not, neither is
  marked, so a restart re-sends 40 and 41 in order (the dashboard drops the repeat of 41).
* Each connection is a fresh paho client with a clean session. paho re-sends its own unacknowledged
  messages on reconnect *after* calling ``on_connect``, which can reorder them behind newer ones;
  a fresh client has no such queue, and this module re-sends from the first unmarked event.
* The publisher runs in its own thread with its *own* SQLite connection to the station's file
  (WAL lets it read while the daemon writes), so a slow broker never blocks the referee, and
  the daemon's transactions never meet the publisher's on one connection.
* MQTT 5, so a PUBACK says when the broker refused a message (reason 135: the ACL says this user
  may not write there, i.e. the station's user name is not its board id). A refused event is
  never marked; the publisher reports the error, drops the connection and tries again later.
* The last will marks the board ``offline`` (retained) when the station vanishes; a clean stop
  says so itself.
* One message comes the other way: the referee's locks (``tiki/EVENT/locks``, retained; only
  the referee may write it). The station subscribes on every connection and is told when they
  change; a payload that does not read keeps the locks it had. Likewise the board's pairing
  (``tiki/EVENT/pairing/BOARD``, retained, only the referee writes it and only this board
  reads it): the table it serves this round, handed to ``on_pairing`` (None: no table).
* Nothing hidden leaves the station while a game is on (:mod:`pi_app.net.redact`, the engines'
  public views): a station's credentials are on every table and the ACL is one mistake away
  from letting anyone read. Events, the game header, ``state`` and ``record`` carry the public
  form; when a game ends (its ``result`` event) the header is sent again with the whole
  ``setup`` and the final ``record``, in order before the result, so the referee's ledger
  exports every record in full; ``state`` and ``record`` of a finished game are whole too.

Topic layout and payloads: :mod:`pi_app.net.topics`.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from pi_app.json_types import JSON
from pi_app.net import topics
from pi_app.net.redact import is_over, public_data, public_record, public_snapshot
from pi_app.net.schema import (
    LocksPayload,
    PairingPayload,
    PayloadError,
    read_locks,
    read_pairing,
)
from pi_app.records import fold
from pi_app.referee.config import Config as StationConfig
from pi_app.referee.feed import StationFeed
from pi_app.referee.store import PLAY_KINDS, Event, EventStore, StoreError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BrokerOptions:
    """Where the broker is and how to log in; TLS is on when ``tls_ca`` is given."""

    host: str = "127.0.0.1"
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls_ca: str | None = None
    """CA certificate (PEM) that signed the broker's certificate; turns TLS on."""
    tls: bool = False
    """TLS with the system's trusted CAs (a broker with a public certificate)."""
    tls_cert: str | None = None
    tls_key: str | None = None
    """Client certificate and key, for a broker that requires them."""
    keepalive: int = 10
    """Seconds; a station that vanishes shows as offline after about 1.5 times this."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], base: Path | None = None) -> BrokerOptions:
        """From a config table; ``password_file`` (relative to ``base``) instead of ``password``.

        Files are relative to the config file's folder, so one folder holds a whole setup.
        """
        def path(key: str) -> str | None:
            value = data.get(key)
            if value is None:
                return None
            p = Path(str(value))
            return str(p if p.is_absolute() or base is None else base / p)

        password = data.get("password")
        password_file = path("password_file")
        if password is None and password_file is not None:
            password = Path(password_file).read_text(encoding="utf-8").strip()
        return cls(host=str(data.get("host", "127.0.0.1")), port=int(data.get("port", 1883)),
                   username=data.get("username"), password=password,
                   tls_ca=path("tls_ca"), tls_cert=path("tls_cert"), tls_key=path("tls_key"),
                   keepalive=int(data.get("keepalive", 10)))


def new_client(client_id: str, options: BrokerOptions, *, manual_ack: bool = False) -> mqtt.Client:
    """A paho 2.x MQTT 5 client with the callback API version 2, credentials and TLS set."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=mqtt.MQTTv5, manual_ack=manual_ack)
    if options.username is not None:
        client.username_pw_set(options.username, options.password)
    if options.tls_ca is not None or options.tls:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=options.tls_ca)
        if options.tls_cert is not None:
            context.load_cert_chain(options.tls_cert, options.tls_key)
        client.tls_set_context(context)
    client.connect_timeout = 5.0
    return client


@dataclass(frozen=True)
class PublisherConfig:
    event: str
    board: str
    broker: BrokerOptions
    window: int = 50
    """Events handed to the broker and not yet acknowledged, at most."""
    retry_min: float = 0.2
    retry_max: float = 5.0
    """Seconds between connection attempts: doubling from ``retry_min`` up to ``retry_max``."""
    mark_every: float = 0.05
    """Seconds between ``mark_published`` writes (each is an fsync on the station's disk)."""
    poll: float = 0.5
    """Seconds between looks at the store without a wake-up (events stored by another writer)."""

    @classmethod
    def from_station(cls, config: StationConfig) -> PublisherConfig:
        """From the daemon's config (``[station] board`` and ``[mqtt]``); user name = board."""
        mqtt_ = config.mqtt
        base = Path(config.source).parent if Path(config.source).is_file() else Path.cwd()

        def path(value: str) -> str | None:
            return str(base / Path(value).expanduser()) if value else None

        return cls(event=mqtt_.event, board=config.station.board, broker=BrokerOptions(
            host=mqtt_.host, port=mqtt_.port, username=mqtt_.username or config.station.board,
            password=mqtt_.password or None, tls=mqtt_.tls, tls_ca=path(mqtt_.tls_ca),
            tls_cert=path(mqtt_.tls_cert), tls_key=path(mqtt_.tls_key)))


@dataclass
class _Pending:
    event_id: int
    mid: int
    acked: bool = False


@dataclass
class PublisherStats:
    connected: bool = False
    connections: int = 0
    published: int = 0
    """Events the broker acknowledged."""
    marked: int = 0
    pending: int = 0
    last_marked: int = 0
    idle: bool = False
    """Connected, every stored event acknowledged and marked, the latest snapshot delivered."""
    last_error: str | None = None

    def to_json(self) -> JSON:
        return dict(vars(self))


@dataclass
class _Link:
    """One connection: a fresh client and what this module has handed to it."""

    gen: int
    client: mqtt.Client
    pending: collections.deque[_Pending] = field(default_factory=collections.deque)
    by_mid: dict[int, _Pending] = field(default_factory=dict)
    to_mark: list[int] = field(default_factory=list)
    handed_max: int = 0
    announced: dict[int, str] = field(default_factory=dict)
    """Game id -> its game's name, for the games whose header went out on this connection."""
    state_mid: int | None = None
    sent_version: int = -1
    record_sent: str | None = None
    lost: bool = False
    refused: bool = False
    last_mark: float = 0.0
    backlog: int = 0


class Publisher:
    """Publishes one station's store and feed snapshots; see the module docstring."""

    def __init__(self, store_path: str | Path, config: PublisherConfig, *,
                 on_link: Callable[[str], None] | None = None,
                 on_locks: Callable[[LocksPayload], None] | None = None,
                 on_pairing: Callable[[PairingPayload | None], None] | None = None) -> None:
        topics.check_name(config.event, "event")
        topics.check_name(config.board, "board")
        if str(store_path) == ":memory:":
            raise ValueError("the publisher needs the station's database file, not :memory:")
        self.store_path = Path(store_path)
        self.config = config
        self.client_id = f"tiki-{config.event}-{config.board}"
        self._cond = threading.Condition()
        self._inbox: collections.deque[tuple[str, int, int, ReasonCode | None]] = (
            collections.deque())
        self._snapshot: JSON | None = None
        self._version = 0
        # Bumped by every feed event and wake: the thread calls itself idle only if nothing
        # poked it since it last looked, so ``wait_idle`` never returns on a stale verdict.
        self._pokes = 0
        self._stopping = False
        self._gen = 0
        self._thread: threading.Thread | None = None
        self._stats = PublisherStats()
        self._on_link = on_link
        """Told, from the publishing thread, what the station's screen should say about the
        broker: :func:`refusal_notice` when it refused the login, "" once connected."""
        self._refused_said = ""
        self._on_locks = on_locks
        """Told, from paho's thread, the referee's locks each time they change (the retained
        message arrives on every connection; an unchanged one is not passed on)."""
        self._locks: LocksPayload | None = None
        self._on_pairing = on_pairing
        """Told, from paho's thread, the pairing the referee sent this board when it changes
        (None: the board serves no table now)."""
        self._pairing: PairingPayload | bool | None = False   # False: none heard yet

    def topic(self, leaf: str) -> str:
        return topics.topic(self.config.event, self.config.board, leaf)

    # -- the daemon's side -----------------------------------------------------------------------
    def on_feed(self, kind: str, payload: JSON) -> None:
        """A :class:`StationFeed` listener: never blocks, only notes and wakes the thread."""
        with self._cond:
            if kind == "status":
                self._snapshot = payload
                self._version += 1
            self._poke()

    def wake(self) -> None:
        """Look at the store now (an event was stored by something that is not the feed)."""
        with self._cond:
            self._poke()

    def _poke(self) -> None:
        """(Under the lock.) Something may have changed: not idle until the thread has looked."""
        self._pokes += 1
        self._stats.idle = False
        self._cond.notify_all()

    def start(self) -> Publisher:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"mqtt-{self.config.board}")
            self._thread.start()
        return self

    def cancel(self) -> None:
        """The daemon stops its network tasks with ``cancel()``: same as :meth:`stop`."""
        self.stop()

    def stop(self, timeout: float = 5.0) -> None:
        """Say ``offline``, write the last marks and disconnect."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def stats(self) -> PublisherStats:
        with self._cond:
            return PublisherStats(**vars(self._stats))

    def wait_idle(self, timeout: float) -> bool:
        """Block until everything stored so far is published and marked (tests, benchmark)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._stats.idle:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
            return True

    # -- the publishing thread -------------------------------------------------------------------
    def _post(self, kind: str, gen: int, mid: int = 0, rc: ReasonCode | None = None) -> None:
        with self._cond:
            self._inbox.append((kind, gen, mid, rc))
            self._cond.notify_all()

    def _run(self) -> None:
        store = EventStore(self.store_path)
        delay = self.config.retry_min
        try:
            while not self._stopping:
                was_up = self._connection(store)
                if self._stopping:
                    break
                delay = self.config.retry_min if was_up else min(delay * 2, self.config.retry_max)
                with self._cond:
                    self._cond.wait_for(lambda: self._stopping, timeout=delay)
        finally:
            store.close()
            with self._cond:
                self._stats.connected = False
                self._stats.idle = False
                self._cond.notify_all()

    def _error(self, message: str) -> None:
        log.warning("%s: %s", self.config.board, message)
        with self._cond:
            self._stats.last_error = message

    def _connection(self, store: EventStore) -> bool:
        """One connection, from connect to loss (or stop). True if it was established."""
        self._gen += 1
        gen = self._gen
        try:
            client = new_client(self.client_id, self.config.broker)
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError: a bad CA or key file
            self._error(f"cannot set up the connection: {exc}")
            return False
        client.will_set(self.topic("status"), topics.encode(self._status(False)), qos=topics.QOS,
                        retain=True)
        client.on_connect = lambda _c, _u, _f, rc, _p: self._post("connect", gen, 0, rc)
        client.on_disconnect = lambda _c, _u, _f, rc, _p: self._post("disconnect", gen, 0, rc)
        client.on_publish = lambda _c, _u, mid, rc, _p: self._post("puback", gen, mid, rc)
        client.on_message = lambda _c, _u, message: self._locks_message(message)
        client.max_inflight_messages_set(self.config.window + 8)
        with self._cond:
            self._inbox.clear()
        try:
            client.connect(self.config.broker.host, self.config.broker.port,
                           self.config.broker.keepalive, clean_start=True)
        except (OSError, ssl.SSLError, ValueError) as exc:
            self._error(f"cannot reach the broker {self.config.broker.host}:"
                        f"{self.config.broker.port}: {exc}")
            return False
        client.loop_start()
        link = _Link(gen, client)
        try:
            if not self._await_connack(link):
                return False
            with self._cond:
                self._stats.connected = True
                self._stats.connections += 1
                self._stats.last_error = None
            broker = self.config.broker
            log.info("MQTT: connected to %s:%d as %s", broker.host, broker.port,
                     self.config.board)
            self._refused_said = ""
            self._tell("")
            if self._on_locks is not None:
                client.subscribe(topics.locks_topic(self.config.event), qos=topics.QOS)
            if self._on_pairing is not None:
                client.subscribe(topics.pairing_topic(self.config.event, self.config.board),
                                 qos=topics.QOS)
            self._session(store, link)
            return True
        finally:
            self._teardown(store, link)

    def _await_connack(self, link: _Link) -> bool:
        deadline = time.monotonic() + link.client.connect_timeout + 1
        with self._cond:
            while True:
                while self._inbox:
                    kind, gen, _mid, rc = self._inbox.popleft()
                    if gen != link.gen:
                        continue
                    if kind == "connect" and rc is not None and not rc.is_failure:
                        return True
                    if kind in ("connect", "disconnect"):
                        self._stats.last_error = f"the broker refused the connection: {rc}"
                        if kind == "connect":
                            self._refused(rc)
                        return False
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping:
                    self._stats.last_error = "no answer from the broker"
                    return False
                self._cond.wait(left)

    def _refused(self, rc: ReasonCode | None) -> None:
        """The broker answered the login with a refusal (CONNACK): said in the log and on the
        screen once per reason (it is tried again every few seconds, in case the broker's
        password file is what gets fixed)."""
        notice = refusal_notice(rc)
        if notice == self._refused_said:
            return
        self._refused_said = notice
        broker = self.config.broker
        log.error("MQTT: the broker %s:%d refused board %s (user %s): %s (%s); trying again "
                  "every %.0f s", broker.host, broker.port, self.config.board, broker.username,
                  rc, notice.removeprefix("MQTT: "), self.config.retry_max)
        self._tell(notice)

    def _locks_message(self, message: mqtt.MQTTMessage) -> None:
        """The referee's locks or this board's pairing (paho's thread). A payload that does not
        read keeps what the station had: a tournament station must not unlock itself on a
        garbled message (the players can still start their game by hand)."""
        payload = bytes(message.payload)
        if message.topic == topics.pairing_topic(self.config.event, self.config.board):
            if self._on_pairing is not None:
                self._deliver("pairing does not read, not offered", "_pairing", read_pairing,
                              payload, self._on_pairing)
        elif message.topic == topics.locks_topic(self.config.event) and \
                self._on_locks is not None:
            self._deliver("locks do not read, kept as they were", "_locks", read_locks,
                          payload, self._on_locks)

    def _deliver(self, refused: str, kept: str, read: Callable[[bytes], Any], payload: bytes,
                 listener: Callable[[Any], None]) -> None:
        """Read one of the referee's retained messages and tell ``listener`` when it changed
        what the station holds (``kept``, an attribute): one that does not read is logged
        (``refused`` says what) and dropped; the listener's failure never stops the
        publishing."""
        try:
            value = read(payload)
        except PayloadError as exc:
            self._error(f"the referee's {refused}: {exc}")
            return
        if value == getattr(self, kept):
            return
        setattr(self, kept, value)
        try:
            listener(value)
        except Exception:  # the station's side must never stop the publishing
            log.exception("could not apply the referee's message %r", value)

    def _tell(self, notice: str) -> None:
        if self._on_link is None:
            return
        try:
            self._on_link(notice)
        except Exception:  # the screen's news must never stop the publishing
            log.exception("could not show %r", notice)

    def _status(self, online: bool) -> JSON:
        return {"board": self.config.board, "online": online,
                "t": time.time() if online else None, "client": self.client_id}

    def _publish(self, link: _Link, leaf: str, payload: JSON) -> int | None:
        info = link.client.publish(self.topic(leaf), topics.encode(payload), qos=topics.QOS,
                                   retain=leaf in topics.RETAINED)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            link.lost = True
            return None
        return info.mid

    def _session(self, store: EventStore, link: _Link) -> None:
        self._publish(link, "status", self._status(True))
        while not link.lost:
            with self._cond:
                if self._stopping:
                    return
                inbox = list(self._inbox)
                self._inbox.clear()
                version, snapshot, pokes = self._version, self._snapshot, self._pokes
            for kind, gen, mid, rc in inbox:
                if gen == link.gen:
                    self._on_message(link, kind, mid, rc)
            if link.lost or link.refused:
                return
            self._mark(store, link, force=not link.pending)
            self._pump(store, link)
            if version != link.sent_version and link.state_mid is None and snapshot is not None:
                self._send_snapshot(store, link, snapshot, version)
            self._update_stats(link, version, pokes)
            with self._cond:
                # (a new snapshot version always comes with a poke)
                if not self._inbox and not self._stopping and self._pokes == pokes:
                    wait = self.config.poll
                    if link.to_mark:
                        wait = min(wait, max(0.0, link.last_mark + self.config.mark_every
                                             - time.monotonic()))
                    self._cond.wait(wait)

    def _on_message(self, link: _Link, kind: str, mid: int, rc: ReasonCode | None) -> None:
        if kind == "disconnect":
            link.lost = True
            self._error(f"lost the broker: {rc}")
            return
        if kind != "puback":
            return
        failed = rc is not None and rc.is_failure
        if mid == link.state_mid:
            link.state_mid = None
        entry = link.by_mid.pop(mid, None)
        if failed:
            what = f"event {entry.event_id}" if entry is not None else "a message"
            self._error(refused_write(what, self.topic("events"), self.config.board,
                                      self.config.broker.username or "", rc))
            link.refused = True
            return
        if entry is not None:
            entry.acked = True
            with self._cond:
                self._stats.published += 1

    def _mark(self, store: EventStore, link: _Link, *, force: bool) -> None:
        while link.pending and link.pending[0].acked:
            link.to_mark.append(link.pending.popleft().event_id)
        now = time.monotonic()
        if not link.to_mark or not (force or len(link.to_mark) >= 100
                                    or now - link.last_mark >= self.config.mark_every):
            return
        try:
            store.mark_published(link.to_mark)
        except StoreError as exc:  # locked or full: the events stay unmarked and are re-sent
            self._error(str(exc))
            return
        with self._cond:
            self._stats.marked += len(link.to_mark)
            self._stats.last_marked = link.to_mark[-1]
        link.to_mark = []
        link.last_mark = now

    def _pump(self, store: EventStore, link: _Link) -> None:
        room = self.config.window - len(link.pending)
        if room <= 0:
            return
        try:
            events = store.unpublished(len(link.to_mark) + len(link.pending) + room)
        except StoreError as exc:
            self._error(str(exc))
            return
        fresh = [e for e in events if e.id > link.handed_max]
        link.backlog = len(fresh)
        for event in fresh[:room]:
            if event.game_id not in link.announced or event.kind == "result":
                self._announce(store, link, event.game_id, final=event.kind == "result")
            mid = self._publish(link, "events", topics.event_payload(
                self.config.board, self._public(link, event)))
            if mid is None:
                return
            entry = _Pending(event.id, mid)
            link.pending.append(entry)
            link.by_mid[mid] = entry
            link.handed_max = event.id

    def _public(self, link: _Link, event: Event) -> JSON:
        """An event as published: its public data (an event of a kind that is secret as a
        whole keeps its number and kind, with no data, so the dashboard sees no gap)."""
        data = public_data(link.announced.get(event.game_id), event.kind, event.data)
        return {**event.to_json(), "data": {} if data is None else data}

    def _announce(self, store: EventStore, link: _Link, game_id: int, *,
                  final: bool = False) -> None:
        """The game's header, before its first event on this connection: its public set-up
        while the game is on; ``final`` (the game ended): the whole set-up and the record."""
        try:
            row = store.game(game_id)
            plays = store.events(game_id, PLAY_KINDS) if final else []
        except StoreError:
            return
        link.announced[game_id] = row.game
        header: JSON = {"board": self.config.board, "game_id": row.id, "game": row.game,
                        "setup": public_record(row.setup), "players": row.players,
                        "created": row.created}
        if final:
            header["setup"] = row.setup
            header["record"] = fold(row.setup, [(e.kind, e.data) for e in plays])
        self._publish(link, "game", header)

    def _send_snapshot(self, store: EventStore, link: _Link, snapshot: JSON,
                       version: int) -> None:
        game_id = snapshot.get("game_id")
        if isinstance(game_id, int) and game_id not in link.announced:
            self._announce(store, link, game_id)
        over = is_over(snapshot)
        state = {k: v for k, v in public_snapshot(snapshot).items() if k != "record"}
        state["board"] = self.config.board
        link.state_mid = self._publish(link, "state", state)
        link.sent_version = version
        record = snapshot.get("record")
        if isinstance(record, dict) and isinstance(game_id, int):
            record = record if over else public_record(record)
            payload = {**record, "board": self.config.board, "station_game_id": game_id,
                       "players": snapshot.get("players", [])}
            text = topics.encode(payload).decode()
            if text != link.record_sent:
                self._publish(link, "record", payload)
                link.record_sent = text

    def _update_stats(self, link: _Link, version: int, pokes: int) -> None:
        with self._cond:
            self._stats.pending = len(link.pending)
            self._stats.idle = (self._pokes == pokes
                                and not link.pending and not link.to_mark and link.backlog == 0
                                and link.state_mid is None
                                and (self._snapshot is None or link.sent_version == version))
            self._cond.notify_all()

    def _teardown(self, store: EventStore, link: _Link) -> None:
        client = link.client
        if self._stopping and not link.lost and client.is_connected():
            mid = self._publish(link, "status", self._status(False))
            deadline = time.monotonic() + 1.0
            with self._cond:
                while mid is not None and time.monotonic() < deadline:
                    if any(k == "puback" and g == link.gen and m == mid
                           for k, g, m, _ in self._inbox):
                        break
                    self._cond.wait(0.02)
                inbox = list(self._inbox)
                self._inbox.clear()
            for kind, gen, m, rc in inbox:
                if gen == link.gen:
                    self._on_message(link, kind, m, rc)
        self._mark(store, link, force=True)
        with contextlib.suppress(Exception):
            client.disconnect()
        client.loop_stop()
        with self._cond:
            self._stats.connected = False
            self._stats.idle = False
            self._stats.pending = 0


#: CONNACK reason codes (MQTT 5) and what the station's screen says about them: short, the
#: OLED has about 21 characters a line. Mosquitto answers a wrong password (or an unknown
#: user) with 135 "Not authorized", others with 134 "Bad user name or password": both are
#: the login the station was given; the log names the broker's own reason.
REFUSALS = {134: "MQTT: wrong password", 135: "MQTT: wrong password",
            138: "MQTT: not allowed", 133: "MQTT: bad client id",
            140: "MQTT: wrong login method"}


def refused_write(what: str, topic: str, board: str, username: str,
                  rc: ReasonCode | None) -> str:
    """Why the broker refused a message it let the station log in for, named as it is: the
    broker's ACL lets user U write only ``tiki/EVENT/board/U/...`` of the event it was set up
    for, so the login was right and the event or the board name is not the broker's."""
    if username and username != board:
        cause = (f"the station logs in as {username!r} but is board {board!r}: the broker lets "
                 "a station write only under its own user name")
    else:
        event = topic.split("/")[1] if topic.count("/") >= 2 else "?"
        cause = (f"the broker was not set up for event {event!r} with board {board!r} (another "
                 "event, or a board name it does not know)")
    return (f"the broker refused {what} on {topic}: {rc}; {cause}. Set the station up again "
            "with the join code that referee setup wrote for this board")


def refusal_notice(rc: ReasonCode | None) -> str:
    """The screen's words for a refused login."""
    value = getattr(rc, "value", None)
    return REFUSALS.get(value, f"MQTT: refused ({value})") if isinstance(value, int) \
        else "MQTT: refused"


def start_publisher(feed: StationFeed, store: EventStore,
                    config: PublisherConfig | StationConfig, *,
                    on_link: Callable[[str], None] | None = None,
                    on_locks: Callable[[LocksPayload], None] | None = None,
                    on_pairing: Callable[[PairingPayload | None], None] | None = None
                    ) -> Publisher:
    """Publish ``feed``'s station: listens to the feed, reads ``store``'s file, starts a thread.

    ``config`` is a :class:`PublisherConfig`, or the daemon's whole config (its ``[mqtt]``).
    ``on_link``: told from the publisher's thread what the screen should say about the broker
    (:func:`refusal_notice`, "" once connected); hand it to your loop thread-safely.
    ``on_locks``: told, from paho's thread, the referee's locks (``tiki/EVENT/locks``) when they
    change; without it the station does not subscribe. ``on_pairing`` likewise for the
    board's pairing (``tiki/EVENT/pairing/BOARD``).
    """
    if not isinstance(config, PublisherConfig):
        config = PublisherConfig.from_station(config)
    publisher = Publisher(store.path, config, on_link=on_link, on_locks=on_locks,
                          on_pairing=on_pairing)
    feed.listen(publisher.on_feed)
    publisher.on_feed("status", feed.snapshot)
    return publisher.start()


__all__ = ["BrokerOptions", "Publisher", "PublisherConfig", "PublisherStats",
           "new_client", "refusal_notice", "start_publisher"]
