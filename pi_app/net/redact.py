"""What a spectator may see: the station's snapshot without the game's hidden information.

Both pages are readable by anyone at the venue, and a page at the table is seen by the opponent.
While a game is on, a public view must not show what the rules keep secret:

* Tiki Topple: each player's Secret Tiki card (in the record's ``cards``);
* TacTiki: the rank of every piece (in the record's ``setup``, in the sensor view's piece names
  ``T4``/``C2``, in guidance such as "put T4 on c2", and in ``reincarnate 3 c1``, since which
  piece came back is secret).

So the public snapshot drops the record and the engine's plain-text picture, and masks TacTiki
ranks everywhere as ``?``. Once the game is over everything is shown. Over MQTT the station
sends everything: the broker's ACL lets only the referee read it, and the referee dashboard
shows the full snapshot to a logged-in referee (rulings need it).
"""

from __future__ import annotations

import re
from typing import Any

from pi_app.games.base import JSON

_RANK = re.compile(r"\b([TC])[1-9]\b")
_REINCARNATE = re.compile(r"\b(reincarnate) [0-9]+\b", re.IGNORECASE)
SECRET_KEYS = ("record", "text")


def is_over(snapshot: JSON) -> bool:
    return snapshot.get("status") == "over" or snapshot.get("winners") is not None


def mask_ranks(value: Any) -> Any:
    """Every TacTiki rank in strings (nested in lists and dicts) replaced by ``?``."""
    if isinstance(value, str):
        return _REINCARNATE.sub(r"\1 ?", _RANK.sub(r"\1?", value))
    if isinstance(value, list | tuple):
        return [mask_ranks(v) for v in value]
    if isinstance(value, dict):
        return {k: mask_ranks(v) for k, v in value.items()}
    return value


def public_snapshot(snapshot: JSON) -> JSON:
    """``snapshot`` as anyone may see it (a copy; the input is left alone)."""
    if is_over(snapshot):
        return dict(snapshot)
    out = {k: v for k, v in snapshot.items() if k not in SECRET_KEYS}
    if snapshot.get("game") == "tactiki":
        masked: JSON = mask_ranks(out)
        return masked
    return out


def public_event(game: str | None, event: JSON) -> JSON | None:
    """An event as a spectator may see it; None when it is secret as a whole (a Topple deal)."""
    if event.get("kind") == "deal":
        return None
    if game == "tactiki":
        masked: JSON = mask_ranks(event)
        return masked
    return event
