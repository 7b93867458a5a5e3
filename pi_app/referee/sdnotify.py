"""Tell systemd how the daemon is doing (``sd_notify``), in plain Python.

The service is ``Type=notify`` with a watchdog (``systemd/tikiboard.service``): systemd counts
the station as started only once it hears ``READY=1``, and restarts it when ``WATCHDOG=1``
stops arriving, which is how a hung event loop gets noticed. The protocol is one datagram of
``KEY=VALUE`` lines to the AF_UNIX socket named in ``$NOTIFY_SOCKET`` (a path, or ``@name``
in the abstract namespace). It is small enough that a dependency would cost more than it saves,
and the daemon must run the same with and without systemd, so every failure is a ``False``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping


def notify(message: str, env: Mapping[str, str] | None = None) -> bool:
    """Send ``message`` (e.g. ``"READY=1"``, ``"WATCHDOG=1"``, ``"STATUS=..."``) to systemd.

    Returns True when it was sent; False when not under systemd (no ``NOTIFY_SOCKET``), for an
    address this module does not speak (``vsock:``), or when the send failed.
    """
    address = (os.environ if env is None else env).get("NOTIFY_SOCKET", "")
    if address.startswith("@"):
        target = "\0" + address[1:]  # abstract namespace: a leading NUL byte, no file
    elif address.startswith("/"):
        target = address
    else:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(target)
            sock.sendall(message.encode("utf-8"))
    except OSError:
        return False
    return True
