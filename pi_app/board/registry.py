"""The tag registry: which physical piece carries which NFC tag.

Every piece, card and token carries a tag with a unique ID (UID, upper-case hex). The registry
maps UIDs to the piece names the engines use in ``expected_view`` (a tiki's name, ``p0`` for a
token of player 0, a TacTiki piece id) and to card names for the Topple card pad
(``card:Hookipa/Lokahi/Nani`` for a Secret Tiki card, ``action:up1`` for an action card).
Tokens of one player are interchangeable, so many UIDs may map to the same name.

Persisted as a small JSON file ``{"version": 1, "tags": {UID: name}}``, written atomically so a
power cut during registration never leaves a half-written file. An unknown UID is an answer
(``None``), never an error: the tracker reports it on its cell.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from pi_app.errors import UnreadableInput

_UID = re.compile(r"^[0-9A-F]{8,20}$")


class RegistryError(UnreadableInput, ValueError):
    """A registry file or registration that cannot be used; the message says why."""


def normalise_uid(uid: str) -> str:
    """``04:a2:...`` or ``04a2...`` to ``04A2...``; :class:`RegistryError` when not a UID."""
    clean = uid.replace(":", "").replace(" ", "").upper()
    if not _UID.match(clean) or len(clean) % 2:
        raise RegistryError(f"{uid!r} is not a tag UID (4 to 10 bytes in hex)")
    return clean


class TagRegistry(Mapping[str, str]):
    """UID -> piece name, optionally backed by a file."""

    def __init__(self, tags: Mapping[str, str] | None = None, path: Path | None = None) -> None:
        self._tags: dict[str, str] = {}
        self.path = path
        for uid, name in (tags or {}).items():
            self._tags[normalise_uid(uid)] = _check_name(name)

    # Mapping
    def __getitem__(self, uid: str) -> str:
        return self._tags[uid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tags)

    def __len__(self) -> int:
        return len(self._tags)

    def lookup(self, uid: str) -> str | None:
        """The piece carrying ``uid``, or None for a tag nobody registered."""
        return self._tags.get(uid)

    def uids_of(self, name: str) -> list[str]:
        """Every UID registered for ``name`` (several for interchangeable tokens)."""
        return sorted(uid for uid, n in self._tags.items() if n == name)

    def register(self, uid: str, name: str, *, replace: bool = False) -> None:
        """Record that ``uid`` is on ``name``; re-registering a UID needs ``replace``."""
        uid = normalise_uid(uid)
        name = _check_name(name)
        old = self._tags.get(uid)
        if old is not None and old != name and not replace:
            raise RegistryError(f"tag {uid} is already registered as {old}")
        self._tags[uid] = name
        if self.path is not None:
            self.save()

    def forget(self, uid: str) -> None:
        self._tags.pop(normalise_uid(uid), None)
        if self.path is not None:
            self.save()

    def save(self, path: Path | None = None) -> None:
        """Write atomically (temporary file, fsync, rename)."""
        target = path or self.path
        if target is None:
            raise RegistryError("this registry has no file to save to")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps({"version": 1, "tags": dict(sorted(self._tags.items()))}, indent=1)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".registry-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(data + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> TagRegistry:
        """Read a registry file; a missing file is an empty registry that saves there."""
        if not path.exists():
            return cls(path=path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RegistryError(f"{path}: not a readable tag registry: {exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("tags"), dict):
            raise RegistryError(f"{path}: a tag registry is {{'version': 1, 'tags': {{...}}}}")
        try:
            return cls(data["tags"], path=path)
        except RegistryError as exc:
            raise RegistryError(f"{path}: {exc}") from exc

    @classmethod
    def synthetic(cls, names: Iterable[str], per_name: int = 1, salt: int = 0) -> TagRegistry:
        """A registry with made-up UIDs (7-byte, NXP-style ``04...``), for the simulator."""
        tags: dict[str, str] = {}
        serial = salt * 100_000
        for name in names:
            for _ in range(per_name):
                serial += 1
                tags[f"04{serial:012X}"] = name
        return cls(tags)


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name or len(name) > 64:
        raise RegistryError(f"{name!r} is not a piece name")
    return name
