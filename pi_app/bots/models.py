"""What the bots need to know about each game beyond the engine's interface.

One :class:`Model` per game: the moves a seat chooses among (from a full state drawn to agree
with its view), how a move splits into the decisions a player makes one after the other (a
TacTiki turn is two steps, and the tree searches them one at a time so that the first steps
share their statistics), where a playout stops, what a finished or cut-off playout is worth to
each player, and the one-move evaluation the greedy level maximises.

Every value is a number in ``[0, 1]`` per player: 1 is a win (or the best round), 0 a loss, so
the tree can back up one scale for every game. Evaluations read full states; the bots only
ever pass them states drawn from a view (:mod:`pi_app.bots.views`), so they learn nothing the
seat does not know.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Hashable, Sequence
from typing import Any

from pi_app.bots import topple_rollout
from pi_app.bots.views import SeatView
from pi_app.games import manami, tactiki, topple
from pi_app.games.base import Game


def _squash(x: float) -> float:
    """A score difference as a value in (0, 1): 0.5 is even."""
    return 1.0 / (1.0 + math.exp(-x))


class Model:
    """The defaults suit a perfect-information game whose moves are single decisions."""

    game: Game[Any, Any]
    #: Full states a greedy bot averages its evaluation over (1: nothing hidden matters to it).
    greedy_samples = 1
    #: Random decisions a playout makes before it is cut off and evaluated (None: to the end).
    playout_depth: int | None = None

    def moves(self, state: Any) -> list[Any]:
        """The moves the tree branches on."""
        result: list[Any] = self.game.legal_moves(state)
        return result

    def root_moves(self, view: SeatView, state: Any) -> list[Any]:
        """The moves the seat chooses among, in a full state drawn from its view."""
        return self.moves(state)

    def chunks(self, move: Any) -> tuple[Hashable, ...]:
        """The decisions a move is made of, in order."""
        return (move,)

    #: Share of random moves in a playout; the rest are the mover's greedy move. Random
    #: opponents in playouts make a plan look better than it is, but a greedy move costs an
    #: apply and an evaluation per legal move, so 1.0 (all random) suits a game whose
    #: evaluation means little a few moves early.
    playout_random = 1.0
    #: Expand a node's decisions best first by :meth:`evaluate` instead of at random: worth
    #: its cost where many moves are plainly bad (TacTiki's fights), so the tree need not try
    #: each of them before it looks at the replies to the good ones.
    ordered = False
    #: UCB1's exploration constant for values in [0, 1]; smaller where values are evaluations
    #: (close together) rather than results of finished games.
    exploration = 0.7
    #: Root moves the tree tries: the greedy level's best this many (None: every move).
    candidates: int | None = None
    #: The tree holds the seat's own move only; everything after it is the playout.
    flat = False
    #: Progressive widening ``(c, alpha)`` of every node (:func:`pi_app.bots.mcts._width`);
    #: None lets every child in before any is revisited.
    widening: tuple[float, float] | None = None
    #: Every move is one decision and :meth:`chunks` is ``(move,)`` with no move listed twice,
    #: so the tree keys its nodes by the moves themselves (the same tree, built faster).
    single_decisions = False

    def playout_move(self, state: Any, rng: random.Random) -> Any:
        """A playout's move: at random, or the mover's greedy move (with its drawn facts)."""
        if rng.random() < self.playout_random:
            return self.game.random_move(state, rng)
        seat = self.game.to_move(state)
        assert seat is not None, "a playout stops where nobody is to move"
        best = None
        best_score = float("-inf")
        for move in self.moves(state):
            score = self.evaluate(self.game.apply(state, move), seat)
            if score > best_score:
                best, best_score = move, score
        return best

    def rollout(self, state: Any, rng: random.Random) -> tuple[float, ...]:
        """A playout from ``state`` (:meth:`playout_move` until :meth:`done` or
        :attr:`playout_depth` moves) and what its end is worth to each player."""
        game = self.game
        left = self.playout_depth
        while not self.done(state) and (left is None or left > 0):
            state = game.apply(state, self.playout_move(state, rng))
            if left is not None:
                left -= 1
        return self.values(state)

    def done(self, state: Any) -> bool:
        """Where a playout ends: nobody is to move (the game, or a Topple round, is over)."""
        return self.game.to_move(state) is None

    def values(self, state: Any) -> tuple[float, ...]:
        """What ``state`` (finished, or where a playout was cut off) is worth to each player."""
        raise NotImplementedError

    def evaluate(self, state: Any, seat: int) -> float:
        """The greedy level's evaluation of ``state`` for ``seat`` (larger is better)."""
        return self.values(state)[seat]


class ToppleModel(Model):
    """A search looks to the end of the round: rounds are short (at most 24 cards), and the
    next deal is chance nobody can plan for. A seat values a round by its points against the
    best of the others'."""

    game = topple.GAME
    playout_random = 0.3
    single_decisions = True

    def values(self, state: topple.ToppleState) -> tuple[float, ...]:
        table = state.table
        if state.turn is None:
            points = table.round_scores[-1]
        else:
            points = tuple(0 if c is None else topple.score_card(state.line, c)
                           for c in table.cards)
        return self._against_best(points)

    @staticmethod
    def _against_best(points: Sequence[int]) -> tuple[float, ...]:
        """Each seat's round points against the best of the others', as a value in [0, 1]."""
        out = []
        for p, mine in enumerate(points):
            best_other = max((q for i, q in enumerate(points) if i != p), default=0)
            out.append(0.5 + (mine - best_other) / 32.0)
        return tuple(out)

    def rollout(self, state: topple.ToppleState, rng: random.Random) -> tuple[float, ...]:
        """The round played out on plain lists (:mod:`pi_app.bots.topple_rollout`: the same
        rules and policy as :meth:`playout_move` without an engine state per candidate)."""
        return self._against_best(topple_rollout.playout(state, rng, self.playout_random))

    def evaluate(self, state: topple.ToppleState, seat: int) -> float:
        """The seat's own card only (the others' are not known): the points it would score if
        the round ended now, plus a share for tikis of the card close to their scoring place
        (:func:`~pi_app.bots.topple_rollout.line_value`)."""
        card = state.table.cards[seat]
        if card is None:
            return 0.0
        return topple_rollout.line_value(state.line, card)


class ManamiModel(Model):
    """Perfect information. Playouts are cut after a few turns (random games wander for
    hundreds) and valued by fruit, plus a little for totems topped on valuable villages."""

    game = manami.GAME
    playout_depth = 12

    def values(self, state: manami.ManamiState) -> tuple[float, ...]:
        winners = self.game.winners(state)
        if winners is not None:
            return tuple(1.0 if len(winners) == 1 and p in winners else
                         0.5 if len(winners) == 2 else 0.0 for p in (0, 1))
        v = _squash(0.9 * self._edge(state))
        return (v, 1.0 - v)

    @staticmethod
    def _edge(state: manami.ManamiState) -> float:
        """Player 0's lead: fruit, plus a share of each village's value for the owner of its
        top token, more the taller the totem (the nearer it is to being influenced)."""
        lead = float(state.fruit[0] - state.fruit[1])
        for value, stack in zip(state.values, state.stacks, strict=True):
            if stack and value:
                share = 0.15 * value * len(stack)
                lead += share if stack[-1] == 0 else -share
        return lead

    def evaluate(self, state: manami.ManamiState, seat: int) -> float:
        winners = self.game.winners(state)
        if winners is not None:
            return 100.0 if winners == (seat,) else 0.0 if len(winners) == 1 else 50.0
        lead = self._edge(state)
        return 50.0 + (lead if seat == 0 else -lead)


#: Piece worth by rank: a 1 is worth more than a 2 because it is the only answer to a 5.
_RANK_WORTH = (0.0, 2.5, 2.0, 3.0, 4.0, 5.0)


#: The fields of both start rows, where a statue grows.
_START_ROWS = (*range(5), *range(20, 25))


@functools.cache
def _signed_worth(piece_rank: tuple[int, ...]) -> tuple[tuple[float, ...], ...]:
    """For each field (row by row) and piece, what the piece there adds to TIKI's lead: its
    rank's worth and 0.15 a row advanced, negative for the opponent's pieces. Piece ids follow
    the rank list of the game's options (hidden ranks are drawn as ids, not as new lists), so
    there is one table per rank option in play."""
    table = []
    for f in range(25):
        row = f // 5
        values = []
        for p, rank in enumerate(piece_rank):
            owner = p // tactiki.PIECES_PER_PLAYER
            worth = _RANK_WORTH[rank] + 0.15 * (row if owner == 0 else 4 - row)
            values.append(worth if owner == 0 else -worth)
        table.append(tuple(values))
    return tuple(table)


class TacTikiModel(Model):
    """Moves branch step by step (:meth:`chunks`); the seat's own moves come from
    :meth:`~pi_app.games.tactiki.TacTikiGame.ways` (every step pair, none merged), so that a
    first step can be chosen before its fight is settled.

    A seat has up to a few hundred ways to play a turn and a Pi's second affords some sixty
    iterations, so the search is a flat two-ply look (see :mod:`pi_app.bots.mcts`): the greedy
    level's best eight turns, each tried in fresh guesses of the hidden ranks, answered by the
    opponent's greedy turn and the seat's own greedy turn after it (so that a threat the
    seat's turn makes counts), then valued by the evaluation (material on the board, the
    tallest column toward a statue). Random turns are mostly blunders (a piece thrown into a
    fight), so the playouts are greedy. Against the greedy level this scored 37 of 40 games
    (60 playouts) where the full tree with no playouts scored 21 of 40 (300 playouts); one
    greedy turn instead of two scored 27 of 40, and a race-to-the-statue term in the
    evaluation added nothing (19 of 20 either way)."""

    game = tactiki.GAME
    greedy_samples = 4
    playout_depth = 2
    playout_random = 0.0
    ordered = True
    exploration = 0.2
    candidates = 8
    flat = True

    def moves(self, state: tactiki.TacState) -> list[Any]:
        return self.game.ways(state)

    def root_moves(self, view: SeatView, state: tactiki.TacState) -> list[Any]:
        moves = self.game.ways(state)
        first = view.step_made()
        if first is not None:
            moves = [m for m in moves if isinstance(m, tactiki.Steps) and m.steps[0] == first]
        return moves

    def chunks(self, move: Any) -> tuple[Hashable, ...]:
        if isinstance(move, tactiki.Steps):
            return (move.steps[0], move.steps[1] if len(move.steps) == 2 else None)
        return (move,)

    def values(self, state: tactiki.TacState) -> tuple[float, ...]:
        if state.winner is not None:
            return (1.0, 0.0) if state.winner == 0 else (0.0, 1.0)
        if state.draw:
            return (0.5, 0.5)
        v = _squash(0.25 * self._edge(state))
        return (v, 1.0 - v)

    @staticmethod
    def _edge(state: tactiki.TacState) -> float:
        """TIKI's lead: the worth of the pieces on the board, each player's tallest run of own
        pieces on an enemy start field (a statue needs five; it grows quadratically), and a
        little for pieces advanced.

        A greedy playout evaluates every way to play a turn, so this runs some hundred thousand
        times a decision: each piece's signed worth on each field comes from a table made once
        per rank list (:func:`_signed_worth`), added in the same order as the plain sum so the
        value is the same to the last bit and the bots choose exactly as before."""
        columns = state.columns
        lead = 0.0
        for worth, col in zip(_signed_worth(state.options.tables.piece_rank), columns, strict=True):
            for p in col:
                lead += worth[p]
        tallest = [0, 0]
        for f in _START_ROWS:
            col = columns[f]
            if col:
                top = col[-1] // tactiki.PIECES_PER_PLAYER
                if (top == 0) == (f >= 20):  # own pieces on the opponent's start row
                    run = 0
                    for p in reversed(col):
                        if p // tactiki.PIECES_PER_PLAYER != top:
                            break
                        run += 1
                    tallest[top] = max(tallest[top], run)
        return lead + 1.5 * (tallest[0] ** 2 - tallest[1] ** 2)

    def evaluate(self, state: tactiki.TacState, seat: int) -> float:
        return self.values(state)[seat]


class TacTikiTreeModel(TacTikiModel):
    """TacTiki's information-set tree (the strongest level): the whole tree, not the flat
    look. Each iteration draws the opponent's hidden ranks from the seat's view
    (:func:`~pi_app.bots.views.determinize`) and walks one tree keyed by steps: the seat's
    first and second step, the opponent's, the seat's again, each node letting in its steps
    best first by the evaluation under progressive widening; a leaf is valued after the same
    short greedy playout as the flat look. The root keeps the greedy level's shortlist, so the
    budget goes to the replies to plausible turns. Statistics are shared across guesses (a
    step is the same decision whatever the guess), so the tree never depends on a guess, and
    never on the real ranks: the seat's view is all it reads."""

    flat = False
    widening = (1.0, 0.5)
    playout_depth = 1


#: The information-set tree models the strongest level uses where it differs from the rest.
TREE_MODELS: dict[str, Model] = {"tactiki": TacTikiTreeModel()}


MODELS: dict[str, Model] = {m.game.name: m for m in (ToppleModel(), ManamiModel(),
                                                      TacTikiModel())}


def model_for(view: SeatView) -> Model:
    """The model of the game a view belongs to."""
    return MODELS[view.game.name]
