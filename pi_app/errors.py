"""The project's own errors, under one root.

Every error the station raises on purpose derives from :class:`TikiError`, so the daemon's
last line of defence and the command line tell a refusal from a bug by its type, never by its
wording. Input that cannot be read as what it claims to be (a record or JSON state, a serial
frame or message, a configuration, board, pin-map or tag file, a trace, a payload or request
body) is an :class:`UnreadableInput`: the input is wrong, not the play, and it stays apart from
an illegal move (:class:`pi_app.games.base.IllegalMove`), which is a rule saying no to a
well-formed move. Each subclass also keeps the built-in base it always had (``ValueError``,
``RuntimeError``), so existing handlers catch what they caught.

This module imports nothing: every layer, the rules engines included, may use it.
"""

from __future__ import annotations


class TikiError(Exception):
    """Base of every error the station raises on purpose; the message is meant for a person."""


class UnreadableInput(TikiError):
    """Input that cannot be read as what it claims to be; the message says what is wrong."""
