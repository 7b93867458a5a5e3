"""The station as a player: its seats' moves and the hints, as the board must show them.

A seat may be the station's (``[station] bots = {seat: level}``, or the page's ``new_game``
action with ``bots``): on its turn a bot from :mod:`pi_app.bots` chooses the move from that seat's
view only (:func:`pi_app.bots.play.decide`, which for TacTiki asks again after a first step that
starts a fight), and the station shows it: the cells a piece leaves and the cells a piece
arrives on, each with its own LED signal, and the move in words on the screen. A person carries
it out and the follower checks it like any move.

Thinking takes up to a second, so it never runs on the loop that referees the board: a job goes
to one worker thread and the station polls it on each step (the bots are pure and the states
immutable, so nothing is shared). Every answer is tied to the position it was asked for, so an
answer that arrives after the position changed (a takeback, a new game) is never shown.

Hints (``[station] hints``) use the same machinery, from the view of the player to move; they
are locked at the table by that key set to false, and at a tournament by the referee from the
dashboard (``Station.lock_hints``, through the broker's ``tiki/EVENT/locks``).

Chance: each decision draws from a ``random.Random`` seeded by the station's seed, the game and
the ply, so a game with a fixed seed and a playout budget plays the same; with no seed the
seed comes from :mod:`secrets`.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from pi_app.bots import ALL_LEVELS
from pi_app.bots.base import Budget
from pi_app.bots.hints import HINT_LEVEL, hint_budget, hint_rng
from pi_app.bots.levels import make_bot
from pi_app.bots.play import decide
from pi_app.bots.views import seat_view
from pi_app.games.base import Card, Game, GameError

#: What a station's move (and a hint) may spend: the playouts the bench measured the search's
#: strength at, capped at a second so a slow Pi never keeps the person waiting longer. TacTiki
#: has its own: an iteration there plays two greedy turns, and 15 is what a Pi 4 affords within
#: the second at p95 (README, Bots), so the cap is a safety net there too, not the budget.
BUDGET = Budget(playouts=300, seconds=1.0)
BUDGETS: dict[str, Budget] = {"tactiki": Budget(playouts=15, seconds=1.0)}
#: Hints: :mod:`pi_app.bots.hints` (the same hint for the same position, at its level).
#: How often the station looks for a finished answer while a bot thinks (seconds).
POLL_S = 0.05



@dataclass(frozen=True)
class Shown:
    """A move to show on the board: ``kind`` ``station`` (the station's own move, to carry
    out) or ``hint``; ``state`` is the position it is for, ``text`` its canonical words,
    ``lift`` the cells a piece leaves, ``put`` the cells a piece arrives on."""

    kind: str
    seat: int
    state: Any
    move: Any
    text: str
    lift: tuple[str, ...]
    put: tuple[str, ...]


#: The level of a seat played at another board (issue 36, docs/remote-play.md).
REMOTE = "remote"


class RemoteMoves(Protocol):
    """The other board of a remote game, as the station needs it (the network's side,
    ``pi_app.net.remote_station``, implements it: the referee never imports the network).

    The station treats a remote seat as its own bot's: its moves are *shown* (LEDs, screen)
    for the local player to carry out, and anything else is a wrong execution, guided back."""

    def move_at(self, ply: int) -> str | None:
        """The move at ``ply`` (from 0) of the game's record as the authority confirmed it,
        if it has arrived; None while it has not (the station waits, showing nothing)."""

    def away(self) -> tuple[str, ...]:
        """The boards of the game the authority cannot reach: while any is, the game is
        paused on both boards (a move made meanwhile is sent once it is back)."""

    def confirmed(self) -> int:
        """How many moves of the record the authority has confirmed to this board."""

    def made(self, ply: int, text: str) -> None:
        """The local player's move at ``ply``, stored by the station: send it to the other
        board. Called on every step while the record lacks it (after a restart the station's
        store is the only place it is kept): the table sends a move at most once per
        position, and never one it cannot place yet or one the authority refused."""


def parse_bots(raw: Mapping[Any, Any], players: int | None = None) -> dict[int, str]:
    """``{seat: level}`` (seats from 0, as ``to_move`` counts them; keys may be the digits a
    TOML table or JSON object holds) checked: :class:`ValueError` saying what is wrong."""
    out: dict[int, str] = {}
    for key, level in raw.items():
        try:
            seat = int(key)
        except (TypeError, ValueError):
            raise ValueError(f"bots: seat {key!r} is not a number (seats count from 0)") from None
        if seat < 0 or (players is not None and seat >= players) or seat > 3:
            raise ValueError(f"bots: there is no seat {seat} (seats count from 0)")
        if level not in ALL_LEVELS:
            raise ValueError(f"bots: no level {level!r} (known: {', '.join(ALL_LEVELS)})")
        out[seat] = str(level)
    if players is not None and len(out) >= players:
        raise ValueError("bots: at least one seat must be a person's")
    return out


def move_cells(game: Game[Any, Any], state: Any, move: Any) -> tuple[tuple[str, ...],
                                                                       tuple[str, ...]]:
    """(cells to lift from, cells to put on) to carry ``move`` out by hand: the cells whose
    pieces change between the position and the move's placement (before any follow-up the
    rules then ask for); a cell only losing pieces is lifted from, one gaining any is put on.

    A cell is a stack, bottom first: what arrived is what stands above the part the move left
    alone. Sensors name a piece by owner and rank only, so a piece put on a stack that already
    holds one of the same name (a TacTiki T3 on a column with a T3 in it) must not count as
    nothing arriving: that would show its cell as lifted from, and a turn with no cell to put
    on at all."""
    before = game.expected_view(state)
    after = game.placement_view(state, move)
    lift: list[str] = []
    put: list[str] = []
    for cell in list(before) + [c for c in after if c not in before]:
        was, now = tuple(before.get(cell, ())), tuple(after.get(cell, ()))
        if was == now:
            continue
        kept = next((i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b),
                    min(len(was), len(now)))
        (put if len(now) > kept else lift).append(cell)
    if not lift and len(put) > 1:  # a shuffle in place (a Topple line): no single from-cell
        return (), tuple(put)
    return tuple(lift), tuple(put)


def _seed(base: int, *parts: object) -> int:
    """A per-decision seed: the same station seed, game and ply give the same one."""
    digest = hashlib.sha256(repr((base, *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


class Opponent:
    """The station's seats and the one worker that thinks for them and for hints."""

    def __init__(self, levels: Mapping[int, str], *, seed: int = -1, hints: bool = True,
                 budget: Budget | None = None) -> None:
        self.levels = dict(levels)
        self.seed = seed if seed >= 0 else secrets.randbits(63)
        self.hints = hints
        #: None: each game's own (:data:`BUDGETS`, else :data:`BUDGET`).
        self.budget = budget
        self.shown: Shown | None = None
        #: The other board of a remote game (its seats have the level :data:`REMOTE`).
        self.remote: RemoteMoves | None = None
        self._job: tuple[str, Any, Future[Shown]] | None = None
        self._pool: ThreadPoolExecutor | None = None

    def budget_for(self, game_name: str) -> Budget:
        """What one decision in ``game_name`` may spend."""
        return self.budget or BUDGETS.get(game_name, BUDGET)

    def plays(self, seat: int | None) -> bool:
        """True when ``seat`` is the station's."""
        return seat is not None and seat in self.levels

    # -- asking and polling ----------------------------------------------------------------------
    def want(self, kind: str, game: Game[Any, Any], state: Any, ply: int) -> Shown | None:
        """The ``kind`` move for ``state`` if it is ready; else make sure it is being thought
        about (a job for another position or kind is dropped). Poll again later."""
        shown = self.shown
        if shown is not None and shown.kind == kind and shown.state == state:
            return shown
        job = self._job
        if job is not None and job[0] == kind and job[1] == state:
            if not job[2].done():
                return None
            self._job = None
            try:
                self.shown = job[2].result()
            except Exception:  # a bot's bug must never stop the referee: no move shown
                import logging

                logging.getLogger(__name__).exception("the %s bot failed", kind)
                return None
            return self.shown
        seat = game.to_move(state)
        if seat is None:
            return None
        if kind == "station" and self.levels.get(seat) == REMOTE:
            return self._remote_move(game, state, seat, ply)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="tikiboard-bot")
        if kind == "station":
            level = self.levels.get(seat, HINT_LEVEL)
            rng = random.Random(_seed(self.seed, game.name, ply, kind, seat))
            budget = self.budget_for(game.name)
        else:  # the same hint for the same position, whenever and wherever it is asked
            level, rng, budget = HINT_LEVEL, hint_rng(game, state), hint_budget(game.name)
        self._job = (kind, state, self._pool.submit(
            think, kind, game, state, seat, level, rng, budget))
        return None

    def _remote_move(self, game: Game[Any, Any], state: Any, seat: int, ply: int) -> Shown | None:
        """The remote seat's move at ``ply``, shown as the station's own would be, once the
        authority confirmed it. A move that does not parse here is not shown (the boards
        disagree on the position: the station keeps waiting and logs it)."""
        if self.remote is None:
            return None
        text = self.remote.move_at(ply)
        if text is None:
            return None
        try:
            move = game.parse_move(state, text)
        except GameError:
            import logging

            logging.getLogger(__name__).error("remote move %d %r does not fit here", ply, text)
            return None
        lift, put = move_cells(game, state, move)
        self.shown = Shown("station", seat, state, move, followed_text(game, state, move),
                           lift, put)
        return self.shown

    def pending(self, kind: str, state: Any) -> bool:
        """True while a ``kind`` job for ``state`` waits to be collected by :meth:`want`."""
        return self._job is not None and self._job[0] == kind and self._job[1] == state

    def thinking(self) -> bool:
        return self._job is not None and not self._job[2].done()

    def wait(self, timeout: float = 30.0) -> None:
        """Block until the current job is done (tests and the command line)."""
        if self._job is not None:
            self._job[2].exception(timeout)

    def forget(self, kind: str | None = None) -> None:
        """Stop showing a move (of ``kind``; None: any)."""
        if self.shown is not None and kind in (None, self.shown.kind):
            self.shown = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    # -- secret cards (Tiki Topple's Secret Tiki cards) -----------------------------------------
    def draw_cards(self, game: Game[Any, Any], state: Any, tapped: Sequence[Card], ply: int,
                   round_no: int) -> dict[int, Card]:
        """The station's seats' secret cards for round ``round_no`` (from 0) starting in
        ``state``, drawn from the cards no player can hold (``Game.secret_card_pool``: not out
        from an earlier round, not tapped by a person this round). The station draws after the
        people tapped theirs, since their cards came off the real deck, which still holds any
        card the station draws."""
        seats = [s for s in game.secret_card_seats(state) if s in self.levels]
        pool = game.secret_card_pool(state, tapped, len(seats))
        rng = random.Random(_seed(self.seed, "cards", round_no, ply))
        return dict(zip(seats, rng.sample(pool, len(seats)), strict=True))


def think(kind: str, game: Game[Any, Any], state: Any, seat: int, level: str,
          rng: random.Random, budget: Budget) -> Shown:
    """One decision (on the worker): the station's whole turn, or a hint from the seat's
    view alone. A TacTiki hint whose first step starts a fight the seat cannot foresee shows
    that step only: the second depends on what the fight shows."""
    bot = make_bot(game.name, level)
    if kind == "station":
        move = decide(game, state, bot, rng, budget)
    else:
        view = seat_view(game, state, seat)
        move = bot.choose(view, rng, budget)
        step = view.unforeseen_step(move)
        if step is not None:
            return Shown(kind, seat, state, step.move, step.text, step.lift, step.put)
    lift, put = move_cells(game, state, move)
    return Shown(kind, seat, state, move, followed_text(game, state, move), lift, put)


def followed_text(game: Game[Any, Any], state: Any, move: Any) -> str:
    """The text the follower takes ``move`` under: of every way to the same position for the
    rules, the lowest text (as :meth:`pi_app.board.inference.Position.build` names its
    options). ``game.move_text`` alone may give another of them (a TacTiki turn with its two
    steps the other way round, a Manami walk told from its other end); the station would then
    refuse its own move carried out, as not the one it showed, again and again."""
    key = game.position_key(game.apply(state, move))
    return min(str(game.move_text(state, way)) for way in game.ways(state)
               if game.position_key(game.apply(state, way)) == key)
