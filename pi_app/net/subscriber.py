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
* Acknowledgements carry the connection they belong to; after a reconnect, old message ids mean
  nothing, and the broker re-sends those messages anyway (the desk drops the repeats).
"""

from __future__ import annotations

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

SESSION_EXPIRY = 7 * 24 * 3600


class Subscriber:
    def __init__(self, options: BrokerOptions, event: str, deliver: Callable[[Incoming], None],
                 *, client_id: str | None = None,
                 on_ready: Callable[[], None] | None = None) -> None:
        self.options = options
        self.event = topics.check_name(event, "event")
        self.deliver = deliver
        self.client_id = client_id or options.username or f"tiki-referee-{event}"
        self.client = new_client(self.client_id, options, manual_ack=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self.on_ready = on_ready
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
        with self._lock:
            gen = self._gen
        self.deliver(Incoming(message.topic, bytes(message.payload), message.mid, message.qos,
                              gen, time.time(), retained=bool(message.retain)))

    def ack(self, messages: list[Incoming]) -> None:
        """PUBACK what the desk committed (only messages of the current connection)."""
        with self._lock:
            gen = self._gen
        for message in messages:
            if message.qos > 0 and message.gen == gen:
                self.client.ack(message.mid, message.qos)
