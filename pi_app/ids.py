"""Board and event ids: what a name may be, one rule for the station's configuration and the
network.

The board id doubles as the station's MQTT user name, which mosquitto substitutes for ``%u`` in
ACL patterns, and both ids are topic levels: a ``+``, ``#`` or ``/`` in one would widen a
station's rights. The configuration checks the id when it loads (naming the key), the network
when it builds a topic; both use this module, which imports nothing of the station.
"""

from __future__ import annotations

import re

from pi_app.errors import UnreadableInput

#: 1-64 letters, digits, ``_ . -``, starting with a letter or digit.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class IdError(UnreadableInput, ValueError):
    """A board or event id that cannot be a topic level (or an MQTT user name)."""


def check_id(name: str, what: str = "name") -> str:
    """``name`` if it is a usable id, else :class:`IdError` saying what an id may be."""
    if not isinstance(name, str) or not ID_PATTERN.fullmatch(name):
        raise IdError(f"{what} {name!r}: use 1-64 letters, digits, '_', '.' or '-' "
                      "(starting with a letter or digit)")
    return name
