"""The review of the game that just ended (:mod:`pi_app.bots.review`), off the station's loop.

A review values every move of the game, which on a Pi takes a good part of a second or more:
never on the loop that referees the board. It runs on one worker thread of its own (a bot
thinking for a station's seat keeps its worker), bounded by :data:`REVIEW_SECONDS`, and the
station polls it on each step as it polls its bots. It is tied to the game it was asked for, so
a review that finishes after a new game started (or after the game's last move was taken
back and another played) is never shown with it.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor

from pi_app.bots.review import Review, review
from pi_app.json_types import JSON

log = logging.getLogger(__name__)

#: The most a review may think, in seconds (a long TacTiki game takes about 0.1 s on x86).
REVIEW_SECONDS = 3.0


class PostGame:
    """At most one review, pending or done: of the game and move count ``key``."""

    def __init__(self, seconds: float = REVIEW_SECONDS) -> None:
        self.seconds = seconds
        self.key: tuple[int, int] | None = None
        self.result: JSON | None = None
        self._job: Future[Review] | None = None
        self._pool: ThreadPoolExecutor | None = None

    def start(self, key: tuple[int, int], record: JSON) -> None:
        """Review the finished game ``record`` (``key``: its id and number of moves), unless
        it is already."""
        if self.key == key:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="tikiboard-review")
        self.key, self.result = key, None
        self._job = self._pool.submit(review, record, seconds=self.seconds)

    def poll(self) -> bool:
        """Collect a finished review; True when one just arrived (the page must hear of it)."""
        job = self._job
        if job is None or not job.done():
            return False
        self._job = None
        try:
            self.result = job.result().to_json()
        except Exception:  # a review's bug must never stop the referee: none is shown
            log.exception("the review of game %s failed", self.key)
            self.result = {"done": True, "slips": [], "failed": True}
        return True

    def busy(self) -> bool:
        return self._job is not None

    def wait(self, timeout: float = 30.0) -> None:
        """Block until the review is done (tests)."""
        if self._job is not None:
            self._job.exception(timeout)

    def of(self, key: tuple[int, int]) -> JSON | None:
        """What the page shows of the review of ``key``: ``{"done": false}`` while it is
        thought out, the review when done, None for any other game or position."""
        if self.key != key:
            return None
        return self.result if self.result is not None else {"done": False}

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
