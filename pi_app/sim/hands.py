"""Simulated hands: the physical board and the way people change it.

A :class:`PhysicalBoard` holds real tags: per cell the UIDs lying there, bottom first, and the
pieces off the board (reserves, graveyards, the box). :class:`Hands` turn a wanted change of the
board (one engine view to another, through optional waypoints) into a timed list of
:class:`Action` s, the way people do it: pieces lifted and put down one at a time, with pauses,
hesitations, pieces slid across neighbouring cells, a neighbour knocked and put back. The sensor
model (:mod:`pi_app.sim.sensors`) turns the resulting timeline into what the firmware reports.

Everything is driven by one ``random.Random``: a seed replays the same hands exactly.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pi_app.board.geometry import Geometry
from pi_app.board.registry import TagRegistry

View = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Action:
    """At time ``t``, ``uid`` is lifted from (``put`` False) or put on (``put`` True) ``cell``.

    ``cell`` None is the table beside the board (reserve, graveyard, the box). A presence-only
    piece (the shaman) has ``uid`` equal to its piece name. ``hover``: the piece is held above
    the cell, not resting on it: within the reader's range (NFC reads a few centimetres up)
    but out of the presence sensor's, which closes only with the piece on the board
    (``hardware/README.md``, presence sensors).
    """

    t: float
    uid: str
    cell: str | None
    put: bool
    hover: bool = False


@dataclass(frozen=True)
class Noise:
    """How messy the hands are; each figure is a probability per piece moved (or per move)."""

    slide: float = 0.0      # the piece passes over a neighbouring cell on its way
    hesitate: float = 0.0   # a long pause in the middle of the move
    knock: float = 0.0      # per move: a neighbouring piece is knocked off and put back
    swap_style: float = 0.0  # per move: go through the engine's waypoints (bubbling swaps)
    slide_dwell: tuple[float, float] = (0.05, 0.3)  # seconds on the neighbour when sliding
    hover: bool = False  # a slide carries the piece above the neighbour instead of along it
    fumble: float = 0.0  # per move: another piece is picked up first and put back

    @classmethod
    def clean(cls) -> Noise:
        return cls()

    @classmethod
    def table(cls, carried: bool = False) -> Noise:
        """Realistic play at a table. ``carried``: pieces are lifted and carried (stacks),
        so a "slide" is the hand passing over a neighbouring cell for a moment; otherwise
        pieces slide in a groove past the next slot (Tiki Topple)."""
        dwell = (0.02, 0.1) if carried else (0.05, 0.3)
        return cls(slide=0.15, hesitate=0.1, knock=0.05, swap_style=0.3, slide_dwell=dwell,
                   hover=carried)

    @classmethod
    def varied(cls, rng: random.Random, carried: bool = False, scale: float = 1.0) -> Noise:
        """One player's hands, drawn at random: some slide or hover a lot, some knock or
        fumble, some hesitate; none of them is the project's one steady player. ``scale``
        makes every mishap that much rarer (the draws are the same, so a table keeps its
        players' ways at any scale)."""
        dwell = (0.02, 0.15) if carried else (0.05, 0.3)
        return cls(slide=scale * rng.uniform(0.0, 0.35), hesitate=scale * rng.uniform(0.0, 0.2),
                   knock=scale * rng.uniform(0.0, 0.1), swap_style=rng.uniform(0.0, 0.6),
                   slide_dwell=dwell, hover=carried or rng.random() < 0.3,
                   fumble=scale * rng.uniform(0.0, 0.1))


@dataclass
class PhysicalBoard:
    """Where every tag physically is."""

    geometry: Geometry
    registry: TagRegistry
    cells: dict[str, list[str]] = field(default_factory=dict)
    hovering: set[str] = field(default_factory=set)
    """UIDs held above a cell (read by its reader, not resting on its presence sensor)."""

    def __post_init__(self) -> None:
        for cell in self.geometry.cells:
            self.cells.setdefault(cell.name, [])

    def resting(self, cell: str) -> bool:
        """True when a piece lies on ``cell`` (what its presence sensor says)."""
        return resting(self.cells[cell], self.hovering)

    def pieces(self, cell: str) -> tuple[str, ...]:
        return tuple(sorted(self.name(uid) for uid in self.cells[cell]))

    def name(self, uid: str) -> str:
        return self.registry.lookup(uid) or uid

    def view(self) -> dict[str, tuple[str, ...]]:
        return {cell: self.pieces(cell) for cell in self.cells}

    def off_board(self, name: str) -> list[str]:
        """UIDs of ``name`` not on the board (a presence-only piece is its own UID)."""
        on = {uid for uids in self.cells.values() for uid in uids}
        uids = self.registry.uids_of(name) or [name]
        return [uid for uid in uids if uid not in on]

    def apply(self, action: Action) -> None:
        apply_action(self.cells, self.hovering, action)

    def set_view(self, view: View) -> None:
        """Lay the pieces of ``view`` out directly (the set-up before a scenario)."""
        for cell in self.cells:
            self.cells[cell] = []
        for cell, names in view.items():
            if cell in self.cells:
                for name in names:
                    self.cells[cell].append(self.off_board(name)[0])


def apply_action(cells: dict[str, list[str]], hovering: set[str], action: Action) -> None:
    """Carry out ``action`` on ``cells`` (UIDs per cell, bottom first) and ``hovering`` (UIDs
    held above a cell): the one rule the physical board and every sensor model follow."""
    if action.cell is None:
        return
    stack = cells[action.cell]
    if action.put:
        stack.append(action.uid)
        if action.hover:
            hovering.add(action.uid)
    elif action.uid in stack:
        stack.remove(action.uid)
        hovering.discard(action.uid)


def resting(uids: list[str], hovering: set[str]) -> bool:
    """What a presence sensor says of a cell holding ``uids``: a piece lies there (one held
    above it does not count)."""
    return any(uid not in hovering for uid in uids)


class Hands:
    """Turn wanted board changes into timed actions."""

    def __init__(self, rng: random.Random, noise: Noise | None = None, *,
                 pace: tuple[float, float] = (0.15, 0.5)) -> None:
        self.rng = rng
        self.noise = noise or Noise.clean()
        self.pace = pace

    def _gap(self) -> float:
        return self.rng.uniform(*self.pace)

    def change(self, board: PhysicalBoard, target: View, t: float,
               waypoints: Sequence[View] = ()) -> tuple[list[Action], float]:
        """Actions that bring ``board`` to ``target`` (cells missing from it are left alone),
        through ``waypoints``; returns them and the time the last piece came to rest.

        The board object is updated as the actions are generated.
        """
        actions: list[Action] = []
        for view in [*waypoints, target]:
            t = self._to_view(board, view, t, actions)
        rest = max((a.t for a in actions), default=t)
        return actions, rest

    def _to_view(self, board: PhysicalBoard, view: View, t: float,
                 actions: list[Action]) -> float:
        geometry = board.geometry
        extra: list[tuple[str, str]] = []    # (cell, piece) to take away
        missing: list[tuple[str, str]] = []  # (cell, piece) to bring
        for cell in board.cells:
            if cell not in view:
                continue
            want = Counter(view[cell])
            have = Counter(board.pieces(cell))
            extra += [(cell, p) for p, n in (have - want).items() for _ in range(n)]
            missing += [(cell, p) for p, n in (want - have).items() for _ in range(n)]
        # Pair each piece that arrives with the nearest cell the same piece leaves.
        moves: list[tuple[str | None, str | None, str]] = []
        for dest, piece in missing:
            sources = [(c, p) for c, p in extra if p == piece]
            if sources:
                nearest = min(sources, key=lambda s: _dist(geometry, s[0], dest))
                extra.remove(nearest)
                moves.append((nearest[0], dest, piece))
            else:
                moves.append((None, dest, piece))
        moves += [(cell, None, piece) for cell, piece in extra]
        # One piece at a time, as people do: move a piece whose destination has nothing left
        # to leave; when every destination is still occupied (a cycle: a tiki goes to the
        # bottom and the others close up), pick the piece that travels furthest (the one the
        # card is about) into the hand first, and now and then another one.
        hand: dict[str, str] = {}  # piece name in hand -> uid
        pending = moves
        self.rng.shuffle(pending)
        if pending and self.noise.fumble and self.rng.random() < self.noise.fumble:
            t = self._fumble(board, t, actions)
        while pending:
            leaving = {origin for origin, _, _ in pending if origin is not None}
            free = [m for m in pending if m[1] is None or m[1] not in leaving]
            if free:
                origin, goal, piece = free[0]
                pending.remove(free[0])
                uid = hand.pop(piece, None) if origin is None or piece in hand else None
                if uid is None:
                    if origin is None:
                        uid = board.off_board(piece)[0]
                    else:
                        uid = self._lift(board, origin, piece, t, actions)
                        t = actions[-1].t
                t = self._put(board, uid, goal, t, actions)
                continue
            cycle = [m for m in pending if m[0] is not None]
            if self.rng.random() < 0.9:
                first = max(cycle, key=lambda m: _dist(geometry, m[0], m[1]) if m[1] else 0.0)
            else:
                first = self.rng.choice(cycle)
            pending.remove(first)
            origin, goal, piece = first
            assert origin is not None
            uid = self._lift(board, origin, piece, t, actions)
            t = actions[-1].t
            pending.append((None, goal, piece))
            hand[piece] = uid
        if self.rng.random() < self.noise.knock:
            t = self._knock(board, t, actions)
        return t

    def _lift(self, board: PhysicalBoard, cell: str, piece: str, t: float,
              actions: list[Action]) -> str:
        uid = next(u for u in reversed(board.cells[cell]) if board.name(u) == piece)
        self._emit(board, Action(t + self._gap(), uid, cell, put=False), actions)
        return uid

    def _put(self, board: PhysicalBoard, uid: str, goal: str | None, t: float,
             actions: list[Action]) -> float:
        t += self._gap()
        if self.rng.random() < self.noise.hesitate:
            t += self.rng.uniform(0.8, 2.5)
        if goal is not None and self.rng.random() < self.noise.slide:
            t = self._slide(board, uid, goal, t, actions)
        return self._emit(board, Action(t, uid, goal, put=True), actions)

    def _emit(self, board: PhysicalBoard, action: Action, actions: list[Action]) -> float:
        board.apply(action)
        actions.append(action)
        return action.t

    def _slide(self, board: PhysicalBoard, uid: str, dest: str, t: float,
               actions: list[Action]) -> float:
        """The piece passes a neighbour of ``dest`` before arriving: it rests there a moment
        (slid along the board), or is carried above it (``Noise.hover``)."""
        neighbours = _neighbours(board.geometry, dest)
        if not neighbours:
            return t
        over = self.rng.choice(neighbours)
        hover = self.noise.hover
        t = self._emit(board, Action(t, uid, over, put=True, hover=hover), actions)
        t += self.rng.uniform(*self.noise.slide_dwell)
        t = self._emit(board, Action(t, uid, over, put=False, hover=hover), actions)
        return t + self.rng.uniform(0.02, 0.1)

    def _fumble(self, board: PhysicalBoard, t: float, actions: list[Action]) -> float:
        """The hand picks up the wrong piece first, holds it a moment and puts it back."""
        occupied = [c for c, uids in board.cells.items()
                    if uids and board.geometry.cell(c).kind == "cell"]
        if not occupied:
            return t
        cell = self.rng.choice(occupied)
        uid = board.cells[cell][-1]
        t = self._emit(board, Action(t + self._gap(), uid, cell, put=False), actions)
        t += self.rng.uniform(0.15, 0.6)
        return self._emit(board, Action(t, uid, cell, put=True), actions)

    def _knock(self, board: PhysicalBoard, t: float, actions: list[Action]) -> float:
        """A piece is knocked off its cell, lies beside it a moment, and is put back."""
        occupied = [c for c, uids in board.cells.items()
                    if uids and board.geometry.cell(c).kind == "cell"]
        if not occupied:
            return t
        cell = self.rng.choice(occupied)
        uid = board.cells[cell][-1]
        t += self.rng.uniform(0.05, 0.3)
        t = self._emit(board, Action(t, uid, cell, put=False), actions)
        t += self.rng.uniform(0.3, 1.0)
        return self._emit(board, Action(t, uid, cell, put=True), actions)


def _dist(geometry: Geometry, a: str | None, b: str) -> float:
    if a is None:
        return math.inf
    (ax, ay), (bx, by) = geometry.cell(a).center_mm, geometry.cell(b).center_mm
    return math.hypot(ax - bx, ay - by)


def _neighbours(geometry: Geometry, name: str) -> list[str]:
    """Cells of the same kind whose centres are within 1.5 cell widths."""
    cell = geometry.cell(name)
    reach = 1.5 * max(cell.size_mm)
    return [c.name for c in geometry.cells
            if c.kind == cell.kind and c.name != name and c.reader is not None
            and _dist(geometry, c.name, name) <= reach]
