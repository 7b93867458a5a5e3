"""Limits every web server of the project keeps: request body size and live-stream count.

Both pages are open to anyone on the venue LAN, so one careless or hostile client must not be
able to exhaust the station's memory or event loop:

* :class:`BodyLimit` refuses a request body larger than ``max_bytes`` with 413, checked on the
  ``Content-Length`` header before anything is read and again while a chunked body streams in,
  so a 150 MB upload is cut off at the limit instead of being buffered whole.
* :class:`StreamCap` counts open server-sent-event streams per client address and in total;
  each stream costs a queue and a task on the loop that also referees the game, so past the cap
  a new stream is refused with 503 (the page falls back to its own periodic reload).

Both are plain ASGI / plain Python (no Starlette internals), so the station page and the referee
dashboard share them.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

from pi_app.errors import UnreadableInput

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY = 64 * 1024
"""The largest request body either page needs is a login form or a ruling: a few hundred bytes."""


class BodyTooLarge(UnreadableInput):
    """Raised inside ``receive`` once a streamed body passes the limit."""


class BodyLimit:
    """ASGI middleware: 413 for a request body over ``max_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.max_bytes
            except ValueError:
                too_big = True  # a length that is not a number is not a request we serve
            if too_big:
                await _too_large(send, self.max_bytes)
                return
        seen = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyTooLarge:
            if not started:
                await _too_large(send, self.max_bytes)


async def _too_large(send: Send, limit: int) -> None:
    body = json.dumps({"error": f"request body over {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class StreamCap:
    """How many live streams one client address, and all clients together, may hold open."""

    def __init__(self, per_client: int = 8, total: int = 64) -> None:
        self.per_client = per_client
        self.total = total
        self._open: Counter[str] = Counter()

    @property
    def open(self) -> int:
        return sum(self._open.values())

    def admit(self, who: str) -> bool:
        """Take a place for ``who``; False (and nothing taken) when a cap is reached."""
        if self._open[who] >= self.per_client or self.open >= self.total:
            return False
        self._open[who] += 1
        return True

    def release(self, who: str) -> None:
        self._open[who] -= 1
        if self._open[who] <= 0:
            del self._open[who]

    @contextlib.contextmanager
    def held(self, who: str) -> Iterator[None]:
        """Release ``who``'s place when the block ends (call only after :meth:`admit` said yes)."""
        try:
            yield
        finally:
            self.release(who)
