"""The dashboard's MQTT side: one persistent session that sees every board of the event.

* MQTT 5 with ``clean_start=False`` and a week's session expiry, under a fixed client id: while
  the dashboard is away (restart, laptop lid) the broker queues its QoS 1 messages, and with
  mosquitto's persistence on they survive a broker restart as well. The client id is the
  dashboard's MQTT user name, which is what the tournament broker uses anyway
  (``use_username_as_clientid``, :mod:`pi_app.net.broker`): only the referee's credentials can
  reach the referee's session, so no station can connect under its id and take the queue.
* Manual acknowledgement: paho normally sends PUBACK as soon as ``on_message`` returns; here the
  desk acknowledges only after its ledger committed the message, so a crash in between makes
  the broker send it again instead of losing it.
* Messages are handed to the desk's event loop with ``call_soon_threadsafe``; the paho thread
  never touches the model or the database.
* The referee's locks (``tiki/EVENT/locks``, retained) are subscribed on every connection and
  handed to ``on_locks`` (not to the desk); :meth:`Subscriber.publish_locks` is the one thing the
  dashboard ever publishes.
* Acknowledgements carry the connection they belong to; after a reconnect, old message ids mean
  nothing, and the broker re-sends those messages anyway (the desk drops the repeats).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from pi_app.net import topics
from pi_app.net.desk import Incoming
from pi_app.net.mqtt import BrokerOptions, new_client
from pi_app.net.schema import LocksPayload, PairingPayload, PayloadError, read_locks

SESSION_EXPIRY = 7 * 24 * 3600


class Subscriber:
    def __init__(self, options: BrokerOptions, event: str, deliver: Callable[[Incoming], None],
                 *, client_id: str | None = None,
                 on_ready: Callable[[], None] | None = None,
                 on_locks: Callable[[LocksPayload], None] | None = None) -> None:
        self.options = options
        self.event = topics.check_name(event, "event")
        self.deliver = deliver
        self.client_id = client_id or options.username or f"tiki-referee-{event}"
        self.client = new_client(self.client_id, options, manual_ack=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self.client.on_publish = self._on_publish
        self._refused: set[int] = set()
        """Ids of our publishes the broker refused (PUBACK reason 135: the ACL)."""
        self.on_ready = on_ready
        self.on_locks = on_locks
        self.locks_topic = topics.locks_topic(self.event)
        self.client.reconnect_delay_set(1, 5)
        self._gen = 0
        self._lock = threading.Lock()
        self.connected = threading.Event()
        self.last_error: str | None = None

    def start(self) -> None:
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = SESSION_EXPIRY
        self.client.connect_async(self.options.host, self.options.port, self.options.keepalive,
                                  clean_start=False, properties=props)
        self.client.loop_start()

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client: mqtt.Client, _userdata: object, flags: mqtt.ConnectFlags,
                    rc: ReasonCode, _props: Properties | None) -> None:
        if rc.is_failure:
            self.last_error = f"the broker refused the referee: {rc}"
            return
        with self._lock:
            self._gen += 1
        self.last_error = None
        self.connected.set()
        if self.on_locks is not None:  # every time: the retained locks come with it
            client.subscribe(self.locks_topic, qos=topics.QOS)
        if not flags.session_present:
            client.subscribe(topics.event_filter(self.event), qos=topics.QOS)
        elif self.on_ready is not None:
            self.on_ready()

    def _on_subscribe(self, _client: mqtt.Client, _userdata: object, _mid: int,
                      codes: list[ReasonCode], _props: Properties | None) -> None:
        if any(c.is_failure for c in codes):
            self.last_error = f"the broker refused the subscription: {codes}"
        elif self.on_ready is not None:
            self.on_ready()

    def _on_disconnect(self, _client: mqtt.Client, _userdata: object,
                       _flags: mqtt.DisconnectFlags, rc: ReasonCode,
                       _props: Properties | None) -> None:
        self.connected.clear()
        self.last_error = f"lost the broker: {rc}"

    def _on_message(self, _client: mqtt.Client, _userdata: object,
                    message: mqtt.MQTTMessage) -> None:
        if message.topic == self.locks_topic:
            self._locks(message)
            return
        with self._lock:
            gen = self._gen
        self.deliver(Incoming(message.topic, bytes(message.payload), message.mid, message.qos,
                              gen, time.time(), retained=bool(message.retain)))

    def _locks(self, message: mqtt.MQTTMessage) -> None:
        """The locks as the broker holds them (acknowledged at once: nothing to store)."""
        if message.qos > 0:
            self.client.ack(message.mid, message.qos)
        try:
            locks = read_locks(bytes(message.payload))
        except PayloadError as exc:
            self.last_error = f"the locks on the broker do not read: {exc}"
            return
        if self.on_locks is not None:
            self.on_locks(locks)

    def _on_publish(self, _client: mqtt.Client, _userdata: object, mid: int, rc: ReasonCode,
                    _props: Properties | None) -> None:
        if rc.is_failure:
            with self._lock:
                self._refused.add(mid)

    def publish_locks(self, locks: LocksPayload, timeout: float = 3.0) -> bool:
        """Send the referee's locks to every station (retained); True once the broker took
        them. Blocks up to ``timeout``: call it off the event loop."""
        payload = topics.encode({"hints": locks.hints, "by": locks.by, "t": locks.t})
        try:
            info = self.client.publish(self.locks_topic, payload, qos=topics.QOS, retain=True)
            info.wait_for_publish(timeout)
        except (RuntimeError, ValueError):  # not connected, or the queue is full
            return False
        with self._lock:
            refused = info.mid in self._refused
            self._refused.discard(info.mid)
        if refused:
            self.last_error = "the broker refused the locks (may this user write them?)"
        return info.is_published() and not refused

    def publish_pairing(self, board: str, pairing: PairingPayload | None,
                        timeout: float = 3.0) -> bool:
        """Send ``board`` its table of the round (retained; None clears it); True once the
        broker took it. Blocks up to ``timeout``: call it off the event loop."""
        topic = topics.pairing_topic(self.event, board)
        payload = b"" if pairing is None else topics.encode(dataclasses.asdict(pairing))
        try:
            info = self.client.publish(topic, payload, qos=topics.QOS, retain=True)
            info.wait_for_publish(timeout)
        except (RuntimeError, ValueError):  # not connected, or the queue is full
            return False
        with self._lock:
            refused = info.mid in self._refused
            self._refused.discard(info.mid)
        if refused:
            self.last_error = f"the broker refused the pairing of {board} (may this user write it?)"
        return info.is_published() and not refused

    def ack(self, messages: list[Incoming]) -> None:
        """PUBACK what the desk committed (only messages of the current connection)."""
        with self._lock:
            gen = self._gen
        for message in messages:
            if message.qos > 0 and message.gen == gen:
                self.client.ack(message.mid, message.qos)
