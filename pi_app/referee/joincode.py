"""A station's join code: everything it needs to join a tournament's broker, as one field.

``tikiboard referee setup`` writes one per board (``stations.json`` and a QR code each); the
first-boot form (:mod:`pi_app.referee.firstboot`) takes it in one field, so the person setting
a station up from a phone scans or pastes one thing instead of typing a host, a port, an event,
a board name and a password, any of which, mistyped, left the station refused by the broker
for ever (issue 33).

Form: ``TIKI1-`` then the base32 (RFC 4648, upper case, no padding) of the JSON object
``{"h": host, "p": port, "e": event, "b": board, "k": password, "t": tls}`` followed by its
CRC-32 (4 bytes, big-endian). Base32 keeps to QR's alphanumeric mode, so the code is small, and
is case-blind, so a phone that lower-cases it does not break it. The CRC tells a damaged code
(a character missing or mistyped) from one that is not a join code at all, so the refusal
names the real cause. The code holds the board's broker password: it is as secret as that
password (hand it to the table, not the hall).
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass

from pi_app.errors import UnreadableInput
from pi_app.ids import IdError, check_id

PREFIX = "TIKI1-"


class JoinCodeError(UnreadableInput, ValueError):
    """Not a join code this version reads; the message says why, for the person at the table."""


@dataclass(frozen=True)
class JoinCode:
    """What a station needs to join: the broker, the event, its board name and its password
    (the board name is also its MQTT user name, as the broker's ACL expects)."""

    host: str
    port: int
    event: str
    board: str
    password: str
    tls: bool = False

    def text(self) -> str:
        """The code, as ``referee setup`` prints it and the QR code carries it."""
        data = json.dumps({"h": self.host, "p": self.port, "e": self.event, "b": self.board,
                           "k": self.password, "t": self.tls}, separators=(",", ":"),
                          ensure_ascii=False).encode()
        raw = data + zlib.crc32(data).to_bytes(4, "big")
        return PREFIX + base64.b32encode(raw).decode().rstrip("=")


def read_join_code(text: str) -> JoinCode:
    """The join code in ``text`` (spaces and case do not matter); :class:`JoinCodeError`
    saying whether it is not a join code, damaged, or holds a value that cannot be right."""
    cleaned = "".join(text.split()).upper()
    if not cleaned.startswith(PREFIX):
        raise JoinCodeError(f"not a join code: a join code starts with {PREFIX} (it is in "
                            "stations.json and in the QR code that referee setup wrote)")
    body = cleaned[len(PREFIX):]
    try:
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
    except (binascii.Error, ValueError):
        raise JoinCodeError("the join code is damaged: a character is missing or wrong "
                            "(scan the QR code, or copy the code whole)") from None
    data, check = raw[:-4], raw[-4:]
    if len(raw) < 5 or zlib.crc32(data).to_bytes(4, "big") != check:
        raise JoinCodeError("the join code is damaged: a character is missing or wrong "
                            "(scan the QR code, or copy the code whole)")
    try:
        fields = json.loads(data.decode())
        code = JoinCode(str(fields["h"]), int(fields["p"]), str(fields["e"]), str(fields["b"]),
                        str(fields["k"]), bool(fields.get("t", False)))
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise JoinCodeError("the join code is from another version of tikiboard: make a new "
                            "one with this version's referee setup") from None
    try:
        check_id(code.event, "event")
        check_id(code.board, "board")
    except IdError as exc:
        raise JoinCodeError(f"the join code holds a bad name: {exc}") from None
    if not 0 < code.port < 65536 or not code.host or any(c.isspace() for c in code.host):
        raise JoinCodeError("the join code holds no usable broker address")
    return code
