"""Registering tags: teach the station which tag is on which piece.

A pure state machine, so the CLI (``tikiboard register``) and the daemon can both drive it: it
is told which pieces to register, watches reader events, and registers the first tag that
appears on any reader and is not registered yet. Tags already known are reported, never
overwritten unless asked; a tag that appears together with another new one is refused (two
new tags at once cannot be told apart).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pi_app.board.registry import RegistryError, TagRegistry
from pi_app.readings import SensorEvent, Snapshot, TagsSeen


@dataclass
class Registrar:
    registry: TagRegistry
    pieces: Sequence[str]
    replace: bool = False
    done: list[tuple[str, str]] = field(default_factory=list)
    _seen: dict[int, frozenset[str]] = field(default_factory=dict)

    @property
    def waiting_for(self) -> str | None:
        """The piece to put on a reader next, or None when all are registered."""
        return self.pieces[len(self.done)] if len(self.done) < len(self.pieces) else None

    def feed(self, event: SensorEvent) -> list[str]:
        """Messages for the person registering (what happened)."""
        readings: list[tuple[int, frozenset[str]]] = []
        if isinstance(event, TagsSeen):
            readings = [(event.reader, event.tags)]
        elif isinstance(event, Snapshot):
            readings = list(enumerate(event.tags))
        messages: list[str] = []
        for reader, tags in readings:
            new = tags - self._seen.get(reader, frozenset())
            self._seen[reader] = tags
            piece = self.waiting_for
            if piece is None or not new:
                continue
            if len(new) > 1:
                messages.append(f"reader {reader}: {len(new)} new tags at once; put one piece "
                                "down at a time")
                continue
            uid = next(iter(new))
            known = self.registry.lookup(uid)
            if known is not None and not self.replace:
                messages.append(f"tag {uid} is already {known}; take it away "
                                "(or register with --replace)")
                continue
            try:
                self.registry.register(uid, piece, replace=self.replace)
            except RegistryError as exc:
                messages.append(str(exc))
                continue
            self.done.append((uid, piece))
            messages.append(f"registered tag {uid} as {piece}")
        return messages
