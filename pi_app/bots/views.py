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
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from pi_app.games import manami, tactiki, topple
from pi_app.games.base import Game
from pi_app.games.topple_deck import deck

Card = tuple[str, str, str]


@dataclass(frozen=True)
class ToppleView:
    """A Topple seat's knowledge: the position with every current Secret Tiki card but its own
    blanked (``None``), and the cards the others may hold (deck order, so it never depends on
    hashing)."""

    seat: int
    public: topple.ToppleState
    unseen: tuple[Card, ...]


@dataclass(frozen=True)
class ManamiView:
    """Manami has nothing hidden: the seat and the whole state."""

    seat: int
    state: manami.ManamiState


@dataclass(frozen=True)
class TacTikiView:
    """A TacTiki seat's knowledge (ruling R9), the public counters, and the first step of this
    turn if it is already made (then the fight it started has shown its ranks)."""

    seat: int
    seen: tactiki.PlayerView
    quiet: int
    options: tactiki.Options
    first: tuple[int, int] | None = None


SeatView = ToppleView | ManamiView | TacTikiView


def seat_view(game: Game[Any, Any], state: Any, seat: int) -> SeatView:
    """What ``seat`` may know of ``state``."""
    if game.name == "topple":
        return topple_view(state, seat)
    if game.name == "manami":
        return ManamiView(seat, state)
    if game.name == "tactiki":
        return TacTikiView(seat, tactiki.player_view(state, seat), state.quiet, state.options)
    raise ValueError(f"no bot view for game {game.name!r}")


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
    if isinstance(view, ManamiView):
        return view.state
    if isinstance(view, ToppleView):
        return _topple_state(view, rng)
    return _tactiki_state(view, rng)


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
    table = replace(table, cards=tuple(cards), dealt=table.dealt | frozenset(drawn))
    return replace(public, table=table)


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
