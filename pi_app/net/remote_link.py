"""Remote play over MQTT: carries :mod:`pi_app.net.remote`'s messages, nothing more.

The protocol's safety is in the reducers (positions, idempotent answers, resync); this module
only moves their messages through the broker and keeps the two promises a transport owes them:

* the authority stores its record (atomically: a temporary file renamed over the old) before it
  publishes the answer to a message, so a confirmation never outlives a crash of its store;
* a message's sender is the board of the topic it arrived on (the broker's ACL lets a board
  write only its own ``remote/BOARD/up``), never the ``station`` field it wrote: a proposal
  that claims another board is dropped and counted.

Presence comes from the boards' retained ``status`` (their MQTT last will sets it offline), so
a board whose link drops pauses the game on both boards without any message of its own.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from pi_app.net import remote, topics
from pi_app.net.mqtt import BrokerOptions, new_client
from pi_app.net.remote import Authority, Table


def _no_delay(_client: mqtt.Client, _userdata: Any, sock: Any) -> None:
    """Send each small message at once. Without it Nagle's algorithm holds a proposal back
    until the broker acknowledges the previous packet, which its delayed ACK postpones by about
    40 ms on Linux: the median move took 43 ms on loopback before this option, 2 ms with it
    (``python -m tools.bench.remote``)."""
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class AuthorityLink:
    """The authority of one remote game on the broker (run by the referee's user)."""

    def __init__(self, authority: Authority, options: BrokerOptions, event: str,
                 store: Path) -> None:
        self.authority = authority
        self.event = event
        self.store = store
        self.dropped = 0
        self._lock = threading.Lock()
        self.client = new_client(f"remote-authority-{authority.game}", options)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_socket_open = _no_delay
        self._options = options

    def start(self) -> AuthorityLink:
        self.client.connect(self._options.host, self._options.port, self._options.keepalive)
        self.client.loop_start()
        return self

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client: mqtt.Client, _u: Any, _f: Any, rc: Any, _p: Any = None) -> None:
        if rc.is_failure:
            return
        for board in self.authority.seats:
            client.subscribe(topics.remote_up_topic(self.event, board), qos=topics.QOS)
            client.subscribe(topics.topic(self.event, board, "status"), qos=topics.QOS)

    def _on_message(self, _c: mqtt.Client, _u: Any, message: mqtt.MQTTMessage) -> None:
        data = topics.decode(bytes(message.payload))
        parsed = topics.parse_topic(message.topic)
        with self._lock:
            if parsed is not None and parsed.leaf == "status":
                online = data is not None and data.get("online") is True
                self._answer(remote.Presence(parsed.board, online))
                return
            board = topics.remote_board(self.event, message.topic, "up")
            incoming = remote.from_json(data) if data is not None else None
            if (board is None or incoming is None
                    or getattr(incoming, "station", None) != board
                    or not isinstance(incoming, (remote.Propose, remote.Hello))):
                self.dropped += 1
                return
            self._answer(incoming)

    def _answer(self, incoming: remote.Message) -> None:
        out = self.authority.handle(incoming)
        if not out:
            return
        self._save()  # store before confirm
        for to, message in out:
            for board in (self.authority.seats if to == remote.ALL else (to,)):
                self.client.publish(topics.remote_down_topic(self.event, board),
                                    topics.encode(remote.to_json(message)), qos=topics.QOS)

    def _save(self) -> None:
        temporary = self.store.with_suffix(".tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            json.dump(self.authority.to_json(), out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.store)


class TableLink:
    """One station's side of a remote game on the broker (run with the board's own user).

    ``on_change`` is called (on the MQTT thread) after every message that changed the table:
    the station shows a newly confirmed move of the other board, or the pause screen."""

    def __init__(self, table: Table, options: BrokerOptions, event: str, *,
                 on_change: Callable[[Table], None] | None = None, tick: float = 1.0,
                 status: bool = True) -> None:
        self.table = table
        self.event = event
        self.on_change = on_change
        self.received: list[bytes] = []
        self._tick = tick
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._options = options
        self.client = new_client(f"remote-{table.station}", options)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_socket_open = _no_delay
        self._status = status
        if status:  # without the station's publisher, this link says whether the board is on
            self.client.will_set(self._status_topic, self._status_payload(False), topics.QOS,
                                 retain=True)
        self._timer = threading.Thread(target=self._ticks, daemon=True,
                                       name=f"remote-tick-{table.station}")

    @property
    def up(self) -> str:
        return topics.remote_up_topic(self.event, self.table.station)

    @property
    def _status_topic(self) -> str:
        return topics.topic(self.event, self.table.station, "status")

    def _status_payload(self, online: bool) -> bytes:
        return topics.encode({"board": self.table.station, "online": online, "t": time.time(),
                              "client": f"remote-{self.table.station}"})

    def start(self) -> TableLink:
        self.client.connect(self._options.host, self._options.port, self._options.keepalive)
        self.client.loop_start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._timer.join(5)
        if self._status:
            self.client.publish(self._status_topic, self._status_payload(False), topics.QOS,
                                retain=True).wait_for_publish(5)
        self.client.disconnect()
        self.client.loop_stop()

    def propose(self, move: str) -> None:
        """The local player's move, at rest on the board and accepted by the station."""
        with self._lock:
            self._send(self.table.propose(move))

    def _send(self, messages: list[remote.Message]) -> None:
        for message in messages:
            self.client.publish(self.up, topics.encode(remote.to_json(message)), qos=topics.QOS)

    def _ticks(self) -> None:
        while not self._stop.wait(self._tick):
            with self._lock:
                if self.client.is_connected():
                    self._send(self.table.tick())

    def _on_connect(self, client: mqtt.Client, _u: Any, _f: Any, rc: Any, _p: Any = None) -> None:
        if rc.is_failure:
            return
        client.subscribe(topics.remote_down_topic(self.event, self.table.station),
                         qos=topics.QOS)
        if self._status:
            client.publish(self._status_topic, self._status_payload(True), topics.QOS,
                           retain=True)
        with self._lock:
            self._send(self.table.tick())  # resynchronise after every (re)connection

    def _on_message(self, _c: mqtt.Client, _u: Any, message: mqtt.MQTTMessage) -> None:
        self.received.append(bytes(message.payload))
        data = topics.decode(bytes(message.payload))
        incoming = remote.from_json(data) if data is not None else None
        if incoming is None:
            return
        with self._lock:
            before = (len(self.table.record), self.table.paused, self.table.pending)
            self._send(self.table.handle(incoming))
            after = (len(self.table.record), self.table.paused, self.table.pending)
        if after != before and self.on_change is not None:
            self.on_change(self.table)


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``condition`` until it holds; TimeoutError naming ``what`` past ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.002)
