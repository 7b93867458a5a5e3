"""Information-set Monte Carlo tree search (single observer, Cowling, Powley and Whitehouse
2012), which for a game with nothing hidden is plain UCT.

Each iteration draws one full state that agrees with the seat's view (a *determinization*: the
hidden cards or ranks guessed from what the seat knows) and walks the one tree with it. The
tree is keyed by decisions, not states, so every guess adds to the same statistics; a child is
scored against how often it was *available* (legal in the guesses that reached its parent), not
against its parent's visits, so a move that is legal only in some guesses is not undervalued.
Moves come from the engine itself (``legal_moves``/``ways`` and ``apply``); a playout plays the
engine's ``random_move`` to the end or a cut-off, then the model values the state for every
player, and each node keeps the value for the player who made its decision (so 3 and 4 players
work the same way as 2).

A move may be several decisions in a row (a TacTiki turn: first step, then second); the tree
branches on them one at a time. Expanding a node completes the move at random.

Where a seat has a few hundred moves and the budget only a hundred or so iterations (TacTiki),
a model may shortlist the root moves (``candidates``: the greedy level's best few, its
evaluation averaged over some guesses) and keep the tree flat (``flat``: only the seat's own
move is in the tree; each iteration plays it in a fresh guess, lets a short greedy playout
answer it (TacTiki: the opponent's turn, then the seat's own) and values the result). That is a
look a few plies deep averaged over the hidden facts, which the plain tree never reached within
such a budget.

A model may instead keep the whole tree (TacTiki's strongest level,
:class:`pi_app.bots.models.TacTikiTreeModel`) and bound its breadth by progressive widening
(``widening``): each node lets in its children best first by the evaluation, more of them the
more often it is visited, so the opponent's replies and the seat's answer to them are in the
tree, searched over the guesses of the hidden ranks like the seat's own move.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable
from typing import Any

from pi_app.bots.base import Budget
from pi_app.bots.models import Model
from pi_app.bots.views import SeatView, determinize


class Node:
    """One decision: who made it, how often it was tried and available, its total value."""

    __slots__ = ("avail", "children", "mover", "order", "total", "visits")

    def __init__(self, mover: int) -> None:
        self.mover = mover
        self.children: dict[Hashable, Node] = {}
        self.visits = 0
        self.avail = 1
        self.total = 0.0
        #: The decisions below, best first by the model's evaluation (ordered models only).
        self.order: list[Hashable] | None = None


def _ranking(model: Model, state: Any, groups: dict[Hashable, list[Any]],
             mover: int) -> list[Hashable]:
    """``groups``' keys, best first for ``mover`` by the evaluation after each move (a group's
    best move counts)."""
    game = model.game
    score = {key: max(model.evaluate(game.apply(state, m), mover) for m in moves)
             for key, moves in groups.items()}
    return sorted(groups, key=lambda k: -score[k])


def _pick(model: Model, node: Node, state: Any, groups: dict[Hashable, list[Any]],
          rng: random.Random, mover: int) -> tuple[Hashable, bool]:
    """The next decision at ``node`` among ``groups``' keys: an untried one (the best by the
    evaluation for an ordered model, else at random), else the best by UCB1 over availability.
    Returns it and whether it was new."""
    children = node.children
    untried = [key for key in groups if key not in children]
    tried = 0
    for key in groups:
        child = children.get(key)
        if child is not None:
            child.avail += 1
            tried += 1
    if untried and (not tried or model.widening is None
                    or len(children) < _width(model.widening, node.visits)):
        if model.ordered:
            if node.order is None:
                node.order = _ranking(model, state, groups, mover)
            rank = {key: i for i, key in enumerate(node.order)}
            key = min(untried, key=lambda k: rank.get(k, len(rank)))
        else:
            key = untried[rng.randrange(len(untried))]
        children[key] = Node(mover)
        return key, True
    best_key: Hashable = None
    best = -1.0
    for key in groups:
        child = children.get(key)
        if child is None:  # not yet let in by the widening
            continue
        score = child.total / child.visits + model.exploration * math.sqrt(
            math.log(child.avail) / child.visits)
        if score > best:
            best, best_key = score, key
    return best_key, False


def _width(widening: tuple[float, float], visits: int) -> int:
    """Progressive widening (Coulom 2007; Chaslot et al. 2008): a node visited ``visits``
    times may have ``ceil(c * (visits + 1) ** alpha)`` children. With a few hundred turns a
    ply and a budget of some hundred iterations, letting every child in first would leave
    the tree one ply deep; widening lets the best few (best first by the evaluation) be
    answered before the rest are tried."""
    c, alpha = widening
    width: float = c * float(visits + 1) ** alpha
    return max(1, math.ceil(width))


def _pick_move(model: Model, node: Node, moves: list[Any], rng: random.Random,
               mover: int) -> tuple[Any, bool]:
    """:func:`_pick` where every move is one decision (``model.single_decisions``, not
    ``ordered``): the same choice and the same draws, with one look-up per move instead of
    four (a profile of Topple's search had a tenth of its time in hashing moves)."""
    children = node.children
    untried = []
    tried = []
    for move in moves:
        child = children.get(move)
        if child is None:
            untried.append(move)
        else:
            child.avail += 1
            tried.append((move, child))
    if untried:
        move = untried[rng.randrange(len(untried))]
        children[move] = Node(mover)
        return move, True
    best_move: Any = None
    best = -1.0
    exploration = model.exploration
    for move, child in tried:
        score = child.total / child.visits + exploration * math.sqrt(
            math.log(child.avail) / child.visits)
        if score > best:
            best, best_move = score, move
    return best_move, False


def search(model: Model, view: SeatView, rng: random.Random, budget: Budget) -> Any:
    """The most visited move for the seat of ``view`` after the budget's iterations."""
    root, offered = grow(model, view, rng, budget)
    return _answer(model, root, offered)


def depth(node: Node) -> int:
    """How many decisions deep the tree below ``node`` goes (tests and benches look)."""
    return 1 + max((depth(child) for child in node.children.values()), default=-1)


def grow(model: Model, view: SeatView, rng: random.Random, budget: Budget
         ) -> tuple[Node, dict[tuple[Hashable, ...], Any]]:
    """The tree after the budget's iterations, and every move the root offered by its
    decisions."""
    game = model.game
    root = Node(view.seat)
    # Every move the root offered, by its decisions: the answer must be one of them.
    offered: dict[tuple[Hashable, ...], Any] = {}
    cap, deadline = budget.limits()
    clock = budget.clock
    shortlist = _shortlist(model, view, rng) if model.candidates else None
    iterations = 0
    while iterations < cap and (deadline is None or iterations == 0 or clock() < deadline):
        iterations += 1
        state = determinize(view, rng)
        node = root
        path = [root]
        grown = False
        at_root = True
        while not grown and not model.done(state):
            mover = game.to_move(state)
            assert mover is not None, "done() is true where nobody is to move"
            if at_root:
                moves = model.root_moves(view, state)
                if shortlist is not None:
                    moves = [m for m in moves if model.chunks(m) in shortlist] or moves
                for move in moves:
                    offered.setdefault(model.chunks(move), move)
                at_root = False
            elif model.flat:
                break
            else:
                moves = model.moves(state)
            if model.single_decisions and not model.ordered:
                move, grown = _pick_move(model, node, moves, rng, mover)
                node = node.children[move]
                path.append(node)
                rng.randrange(1)  # the draw the general path makes among a key's one move
                state = game.apply(state, move)
                continue
            depth = 0
            while True:
                groups: dict[Hashable, list[Any]] = {}
                for move in moves:
                    groups.setdefault(model.chunks(move)[depth], []).append(move)
                key, grown = _pick(model, node, state, groups, rng, mover)
                node = node.children[key]
                path.append(node)
                moves = groups[key]
                depth += 1
                if grown or len(model.chunks(moves[0])) == depth:
                    break
            state = game.apply(state, moves[rng.randrange(len(moves))])
        values = model.rollout(state, rng)
        for visited in path:
            visited.visits += 1
            visited.total += values[visited.mover]
    return root, offered


def _shortlist(model: Model, view: SeatView, rng: random.Random) -> set[tuple[Hashable, ...]]:
    """The ``model.candidates`` root moves the greedy level likes best (its evaluation one move
    ahead, averaged over ``model.greedy_samples`` guesses; a move counts where it is legal), by
    their decisions: the only root moves the tree then tries, so that a small budget is spent
    on the replies to plausible moves instead of on trying every one of a few hundred."""
    game = model.game
    totals: dict[tuple[Hashable, ...], list[float]] = {}
    for _ in range(model.greedy_samples):
        state = determinize(view, rng)
        for move in model.root_moves(view, state):
            score = model.evaluate(game.apply(state, move), view.seat)
            entry = totals.setdefault(model.chunks(move), [0.0, 0.0])
            entry[0] += score
            entry[1] += 1
    ranked = sorted(totals, key=lambda key: -totals[key][0] / totals[key][1])
    return set(ranked[:model.candidates])


def _answer(model: Model, root: Node, offered: dict[tuple[Hashable, ...], Any]) -> Any:
    """Follow the most visited decisions from the root to a whole move the root offered; where
    the tree stops short (a second step never expanded), the first offered move that goes on
    from there."""
    prefix: tuple[Hashable, ...] = ()
    node = root
    while prefix not in offered:
        known = [(child.visits, i, key) for i, (key, child) in enumerate(node.children.items())
                 if any(chunks[:len(prefix) + 1] == (*prefix, key) for chunks in offered)]
        if not known:
            break
        _, _, key = max(known, key=lambda t: (t[0], -t[1]))
        prefix = (*prefix, key)
        node = node.children[key]
    if prefix in offered:
        return offered[prefix]
    for chunks, move in offered.items():
        if chunks[:len(prefix)] == prefix:
            return move
    raise ValueError("the root offered no move: nobody is to move")
