"""What one seat may know of a position, and full positions drawn to agree with it.

A bot is handed a *view*, never the referee's state: the view is a function of the full state
and the seat, and holds exactly what that seat may know. Two full states that differ only in
facts hidden from the seat give equal views, so a bot cannot play differently on them.

* Tiki Topple: everything but the other players' Secret Tiki cards while the round is on. The
  cards of earlier rounds were shown at scoring, so the draw pile is public; a card dealt this
  round is not, so it is taken out of the public discards too.
* Tiki (Manami): perfect information; the view is the state.
* TacTiki: the engine's own :func:`~pi_app.games.tactiki.player_view` (ruling R9: own pieces in
  full, enemy ranks only while revealed) plus the public counters the rules need (quiet turns,
  options). A turn is two steps and the first may be a fight whose outcome the seat cannot know
  beforehand, so a view may also name the first step already made: the seat then knows the
  ranks that fight showed (:func:`after_first_step`).

The search bots need full states to run the engines on; :func:`determinize` draws one that agrees
with the view (hidden cards from the cards the seat has not seen, hidden ranks from the ranks the
opponent has left). It reads only the view and the ``rng``. Built on the engines' public API only
(no engine has a per-seat hook for Topple yet).

Each view class says which engine it is for (``game``) and answers for its game what callers
would otherwise ask by game: :meth:`SeatView.determinize`, :meth:`SeatView.unforeseen_step`,
so nothing outside this module and :mod:`pi_app.bots.models` tells the games apart.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pi_app.games import manami, tactiki, topple
from pi_app.games.base import Game
from pi_app.games.topple_deck import deck

Card = tuple[str, str, str]


@dataclass(frozen=True)
class FirstStep:
    """The part of a move a seat can make before it learns what decides the rest (a TacTiki
    first step into a fight against ranks it has not seen): ``step`` as
    :meth:`SeatView.after_step` takes it, ``move`` the step alone as the station shows it,
    ``text`` its words on the screen, ``lift``/``put`` its cells."""

    step: Hashable
    move: Any
    text: str
    lift: tuple[str, ...]
    put: tuple[str, ...]


@dataclass(frozen=True)
class SeatView:
    """What one seat may know; one subclass per game, named by its engine (``game``)."""

    game: ClassVar[Game[Any, Any]]
    seat: int

    @classmethod
    def of(cls, state: Any, seat: int) -> SeatView:
        """What ``seat`` may know of ``state``."""
        raise NotImplementedError

    def determinize(self, rng: random.Random) -> Any:
        """A full state that agrees with everything in the view; hidden facts from ``rng``."""
        raise NotImplementedError

    def unforeseen_step(self, move: Any) -> FirstStep | None:
        """None when the seat can foresee all of ``move``; else its first part, made before
        the seat learns what decides the rest (then ask again on :meth:`after_step`)."""
        return None

    def after_step(self, state: Any, step: FirstStep) -> SeatView:
        """The view once ``step`` (from :meth:`unforeseen_step`) is made in the full ``state``."""
        raise ValueError(f"{self.game.title} turns have no steps")

    def step_made(self) -> Hashable | None:
        """The first part of this turn already made on the board, or None."""
        return None


@dataclass(frozen=True)
class ToppleView(SeatView):
    """A Topple seat's knowledge: the position with every current Secret Tiki card but its own
    blanked (``None``), and the cards the others may hold (deck order, so it never depends on
    hashing)."""

    game: ClassVar[Game[Any, Any]] = topple.GAME
    public: topple.ToppleState
    unseen: tuple[Card, ...]

    @classmethod
    def of(cls, state: topple.ToppleState, seat: int) -> ToppleView:
        return topple_view(state, seat)

    def determinize(self, rng: random.Random) -> topple.ToppleState:
        return _topple_state(self, rng)


@dataclass(frozen=True)
class ManamiView(SeatView):
    """Manami has nothing hidden: the seat and the whole state."""

    game: ClassVar[Game[Any, Any]] = manami.GAME
    state: manami.ManamiState

    @classmethod
    def of(cls, state: manami.ManamiState, seat: int) -> ManamiView:
        return ManamiView(seat, state)

    def determinize(self, rng: random.Random) -> manami.ManamiState:
        return self.state


@dataclass(frozen=True)
class TacTikiView(SeatView):
    """A TacTiki seat's knowledge (ruling R9), the public counters, and the first step of this
    turn if it is already made (then the fight it started has shown its ranks)."""

    game: ClassVar[Game[Any, Any]] = tactiki.GAME
    seen: tactiki.PlayerView
    quiet: int
    options: tactiki.Options
    first: tuple[int, int] | None = None

    @classmethod
    def of(cls, state: tactiki.TacState, seat: int) -> TacTikiView:
        return TacTikiView(seat, tactiki.player_view(state, seat), state.quiet, state.options)

    def determinize(self, rng: random.Random) -> tactiki.TacState:
        return _tactiki_state(self, rng)

    def unforeseen_step(self, move: Any) -> FirstStep | None:
        """A first step into a fight whose outcome the seat cannot know: shown alone (the
        second step depends on what the fight shows)."""
        if not hides_fight(self, move):
            return None
        step = move.steps[0]
        src, dst = tactiki.FIELD_NAMES[step[0]], tactiki.FIELD_NAMES[step[1]]
        return FirstStep(step, tactiki.Steps((step,)), f"{src}-{dst}, then look", (src,), (dst,))

    def after_step(self, state: tactiki.TacState, step: FirstStep) -> TacTikiView:
        first = step.step
        assert isinstance(first, tuple)
        return after_first_step(state, self.seat, (first[0], first[1]))

    def step_made(self) -> tuple[int, int] | None:
        return self.first


#: Each game's view, by its engine's record name.
VIEWS: dict[str, type[SeatView]] = {v.game.name: v for v in (ToppleView, ManamiView, TacTikiView)}


def seat_view(game: Game[Any, Any], state: Any, seat: int) -> SeatView:
    """What ``seat`` may know of ``state``."""
    view = VIEWS.get(game.name)
    if view is None:
        raise ValueError(f"no bot view for game {game.name!r}")
    return view.of(state, seat)


def topple_view(state: topple.ToppleState, seat: int) -> ToppleView:
    table = state.table
    if state.turn is None:  # between rounds and at the end every card has been shown
        return ToppleView(seat, state, ())
    own = table.cards[seat]
    hidden = frozenset(c for p, c in enumerate(table.cards) if p != seat and c is not None)
    public_dealt = table.dealt - hidden
    cards = tuple(c if p == seat else None for p, c in enumerate(table.cards))
    public = replace(state, table=replace(table, cards=cards, dealt=public_dealt))
    pool = [c for c in deck() if c not in public_dealt and c != own]
    others = sum(1 for p in table.seats if p != seat)
    if len(pool) < others:  # the discards were shuffled back (ruling R5)
        pool = [c for c in deck() if c != own]
    return ToppleView(seat, public, tuple(pool))


def after_first_step(state: tactiki.TacState, seat: int, step: tuple[int, int]) -> TacTikiView:
    """The seat's view once it has made ``step`` (the first step of its turn) on the board:
    the same position, but the ranks the step's fight showed are now known to both players."""
    game = tactiki.GAME
    for way in game.ways(state):
        if isinstance(way, tactiki.Steps) and way.steps[0] == step:
            shown = game.trace(state, way)[0].revealed
            break
    else:
        raise ValueError(f"{tactiki.FIELD_NAMES[step[0]]}-{tactiki.FIELD_NAMES[step[1]]}"
                         " is not a first step the player to move can make")
    seen = tactiki.player_view(state._replace(revealed=shown), seat)
    return TacTikiView(seat, seen, state.quiet, state.options, step)


def hides_fight(view: TacTikiView, move: Any) -> bool:
    """True when ``move``'s first step attacks an enemy piece whose rank the seat has not seen,
    so the fight's outcome (and with it which second steps exist) is unknown until it is made."""
    if view.first is not None or not isinstance(move, tactiki.Steps):
        return False
    column = view.seen.board[move.steps[0][1]]
    for piece in reversed(column):  # the attack goes down through enemy pieces (ruling R3)
        if piece.owner == view.seat:
            return False
        if piece.rank is None:
            return True
    return False


def determinize(view: SeatView, rng: random.Random) -> Any:
    """A full state that agrees with everything in ``view``; hidden facts drawn from ``rng``."""
    return view.determinize(rng)


def _topple_state(view: ToppleView, rng: random.Random) -> topple.ToppleState:
    public = view.public
    table = public.table
    others = [p for p in table.seats if p != view.seat and table.cards[p] is None]
    if not others or public.turn is None:
        return public
    drawn = rng.sample(view.unseen, len(others))
    cards = list(table.cards)
    for p, card in zip(others, drawn, strict=True):
        cards[p] = card
    # built directly, not with dataclasses.replace: a search draws one state per playout
    table = topple.Table(table.players, table.rounds, table.round, table.seats, table.first,
                         tuple(cards), table.totals, table.round_scores, table.topple_bottom,
                         table.dealt | frozenset(drawn))
    return topple.ToppleState(table, public.line, public.hands, public.opened, public.turn,
                              public.over, public.winners)


def _tactiki_state(view: TacTikiView, rng: random.Random) -> tactiki.TacState:
    """Own pieces keep their ids; each enemy piece gets an id of its rank, the unseen ranks
    being the opponent's ranks less the ones on show, shuffled."""
    tables = view.options.tables
    enemy = 1 - view.seat
    prefix = tactiki.ID_PREFIX[enemy]
    free: dict[int, list[str]] = {}
    for name in tables.ids:
        if name.startswith(prefix):
            free.setdefault(int(name[1]), []).append(name)
    seen = view.seen
    spots = [piece for col in seen.board for piece in col] + list(seen.graveyards[enemy])
    unknown = list(view.options.ranks)
    for piece in spots:
        if piece.owner == enemy and piece.rank is not None:
            unknown.remove(piece.rank)
    rng.shuffle(unknown)
    draw = iter(unknown)
    revealed = 0

    def index(piece: tactiki.SeenPiece) -> int:
        nonlocal revealed
        if piece.owner != enemy:
            assert piece.piece is not None
            return tables.index[piece.piece]
        rank = piece.rank if piece.rank is not None else next(draw)
        p = tables.index[free[rank].pop()]
        if piece.rank is not None:
            revealed |= 1 << p
        return p

    columns = tuple(tuple(index(piece) for piece in col) for col in seen.board)
    graves = tuple(tuple(sorted(index(piece) for piece in grave)) for grave in seen.graveyards)
    player = seen.to_move if seen.to_move is not None else view.seat
    return tactiki.TacState(columns, (graves[0], graves[1]), player, revealed, view.quiet,
                            None, False, view.options)
