"""Connections a web server takes at all: a deadline for a request's headers, a cap per peer and
in all, and accept errors logged once a minute.

uvicorn (0.54) waits for a request's headers as long as the client keeps sending: ~600
connections that each send one header line every 10 s took all 512 descriptors of the station
daemon (its unit's ``LimitNOFILE``), the page timed out for the whole attack, and asyncio logged
~227,000 ``EMFILE`` traceback lines in 45 s (issue 29). :func:`guarded_h11` is uvicorn's own
HTTP/1.1 protocol with the missing limits:

* a request's headers must be in within ``header_s`` of the connection (or of the previous
  response, on a kept-alive one), else the connection is closed;
* at most ``per_peer`` connections per client (:func:`pi_app.net.auth.peer_key`: an IPv6 client
  by its /64): one more is closed as soon as it is accepted; and ``total`` in all: one more
  closes the connection that has waited longest for its headers, or is closed itself when
  every connection has a request under way. So the process never runs out of descriptors
  (``total`` stays well below ``LimitNOFILE``, which the database, the serial link and the
  broker's socket share), and a page still gets in while half-requests fill the rest;
* :func:`quiet_accept_errors`: the event loop's "out of system resource" reports (one per failed
  ``accept``) are logged once a minute, with how many were left out.

Live streams hold their connection after their headers: they are capped by
:class:`pi_app.net.limits.StreamCap` (fewer per client than ``per_peer``), not by the deadline.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from pi_app.net.auth import peer_key

log = logging.getLogger(__name__)

HEADER_S = 10.0
"""Seconds a client has to send a request's headers (a phone on a poor Wi-Fi needs well under
one)."""
PER_PEER = 24
"""Connections per client: a page, its live streams (8 at most) and a few requests."""
TOTAL = 256
"""Connections in all: half the station unit's ``LimitNOFILE`` (512)."""
ACCEPT_LOG_S = 60.0


@dataclass
class Guard:
    """The connections a server holds, per peer; one per server."""

    header_s: float = HEADER_S
    per_peer: int = PER_PEER
    total: int = TOTAL
    peers: collections.Counter[str] = field(default_factory=collections.Counter)
    waiting: dict[asyncio.Transport, None] = field(default_factory=dict)
    """Connections with no request under way (waiting for headers), oldest first."""
    refused: int = 0
    evicted: int = 0
    timed_out: int = 0

    @property
    def open(self) -> int:
        return sum(self.peers.values())

    def admit(self, peer: str) -> bool:
        """Room for one more connection of ``peer``? With every place taken, the connection
        that has waited longest for its headers makes room: slow half-requests from many
        addresses then cost each other their places, not the players theirs."""
        if self.peers[peer] >= self.per_peer:
            self.refused += 1
            return False
        if self.open >= self.total:
            if not self.waiting:
                self.refused += 1
                return False
            oldest = next(iter(self.waiting))
            del self.waiting[oldest]
            self.evicted += 1
            oldest.abort()
        self.peers[peer] += 1
        return True

    def release(self, peer: str) -> None:
        self.peers[peer] -= 1
        if self.peers[peer] <= 0:
            del self.peers[peer]


def guarded_h11(guard: Guard) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol under ``guard`` (``uvicorn.Config(http=...)`` takes it)."""

    class Guarded(H11Protocol):
        _peer: str | None = None
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            peer = peer_key(self.client[0]) if self.client else "?"
            if not guard.admit(peer):
                transport.abort()  # closed at once: its descriptor is free again
                return
            self._peer = peer
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            guard.waiting.pop(self.transport, None)
            if self._peer is not None:
                guard.release(self._peer)
                self._peer = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:
                guard.waiting.pop(self.transport, None)  # its request is under way

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()  # a kept-alive connection: the next request's headers, in time

        def _arm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = self.loop.call_later(guard.header_s, self._headers_late)
            guard.waiting.pop(self.transport, None)
            guard.waiting[self.transport] = None  # the newest waiting

        def _headers_late(self) -> None:
            """No request under way since the deadline was set: the headers are late."""
            self._deadline = None
            if self.cycle is not None and not self.cycle.response_complete:
                return  # a request is being answered (a live stream, a slow body)
            if not self.transport.is_closing():
                guard.timed_out += 1
                self.transport.abort()

    return Guarded


def quiet_accept_errors(loop: asyncio.AbstractEventLoop,
                        clock: Callable[[], float] = time.monotonic,
                        every: float = ACCEPT_LOG_S) -> None:
    """Log the loop's ``accept`` failures (EMFILE, ENFILE, ENOBUFS) once per ``every`` seconds
    with a count, instead of one traceback each; everything else as the loop would."""
    state = {"last": -1e18, "left_out": 0}
    before = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if "out of system resource" not in str(context.get("message", "")):
            if before is not None:
                before(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        now = clock()
        if now - state["last"] < every:
            state["left_out"] += 1
            return
        log.error("connections cannot be accepted: %s (%d more such failures since the last "
                  "report)", context.get("exception"), state["left_out"])
        state["last"], state["left_out"] = now, 0

    loop.set_exception_handler(handler)
