"""The station page's address as a QR code, for the page and the OLED (segno, pure Python).

One code for both, so the phone that scans the screen and the one that scans the page open
the same address. segno comes with the ``net`` extra: a station without it has no page, and
so nothing to encode; it is imported only when a code is drawn.
"""

from __future__ import annotations

from typing import Any


def qr_text(url: str) -> str:
    """The text the code carries: an address without a path in capitals (its scheme and host
    are case-blind), which QR's alphanumeric mode packs small enough for the 64-pixel OLED
    (version 2, 25 modules, for ``http://192.168.178.100:8080/``); any other URL as it is."""
    _scheme, sep, rest = url.partition("://")
    if sep and rest.rstrip("/").count("/") == 0 and not any(c in rest for c in "?#"):
        return url.upper()
    return url


def qr_code(url: str) -> Any:
    """The ``segno.QRCode`` of ``url`` (error correction M or better, never a Micro QR, which
    phones do not read)."""
    import segno

    return segno.make(qr_text(url), error="m", micro=False)
