"""The station page's address as people at the venue type it.

The referee needs it whether or not this process serves the page: the game-over screen's QR
code and the first-boot set-up screen show it; the page (``pi_app.net.web``) shows it too.
It is worked out from the configuration alone, so it lives with the referee, below the network.
"""

from __future__ import annotations

import contextlib
import socket

from pi_app.referee.config import Config


def page_address(config: Config) -> str:
    """The page's address as people on the venue's network type it: ``[web] public_url`` when
    set; else the bound address when the page listens on one; else (it listens on every
    address) the machine's first non-loopback IPv4 address; else the bound host."""
    if config.web.public_url:
        return config.web.public_url
    host = config.web.host
    if host in ("", "0.0.0.0", "::"):
        host = lan_address() or host or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{config.web.port}/"


def lan_address() -> str | None:
    """The machine's first non-loopback IPv4 address: the one its default route leaves from
    (a UDP socket "connected" sends nothing), else one its host name resolves to."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere real
        address = str(udp.getsockname()[0])
        if not address.startswith("127.") and address != "0.0.0.0":
            return address
    with contextlib.suppress(OSError):
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            address = str(info[4][0])
            if not address.startswith("127."):
                return address
    return None
