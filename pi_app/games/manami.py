"""Tiki on Manami island (Ôz Éditions, 2 players): the rules engine.

The rules in the project's own words, every ruling (numbered ``R1``…) and the options are in
``seeds/tiki-manami.md``; this module implements exactly that text and cites the ruling numbers.

Board: nine villages ``a1``…``c3`` (columns a to c left to right, rows 1 to 3 from player 0's side),
held in tuples indexed ``row * 3 + column`` (a1=0, b1=1, c1=2, a2=3 … c3=8). A totem is a tuple of
owners (0 or 1), bottom first. The shaman sits on one of the twelve edges between orthogonal
neighbours; edges are numbered in :data:`EDGES` order.

Decisions (:class:`Move`, record text in brackets): ``place`` [``place b2``], ``move`` [``b2-c2``,
``a1-b1-b2``: the full path], ``resolve`` [``resolve b1 c2``], ``shaman`` [``shaman b1/b2``,
``shaman stay``], ``pass`` [``pass``].

JSON state (:meth:`ManamiGame.state_to_json`; every key is required on reading)::

    {"villages": {"a1": 1, …, "c3": 0},      value of each village tile
     "totems": {"a1": [0, 1], …, "c3": []},   owners of the tokens, bottom first
     "reserve": [6, 7],                        tokens each player still holds
     "fruit": [1, 0], "supply": 5,             fruit held per player; fruit left in the supply
     "spoiled": 1, "added": 0,                 fruit out of the game; fresh fruit added (R10)
     "turn": 0,                                the player whose turn it is; while a resolve or
                                               shaman decision is due, the player who just moved
     "resolve": ["b1", "c2"],                  villages waiting for ``resolve`` (ascending) or []
     "shaman_decisions": [1],                  players owing a shaman decision, in order, or []
     "shaman": "b1/b2",                        the shaman's edge, or null when not on the board
     "tie_break": false,                       the supply ran out on a tie: next change decides
     "quiet": 3,                               turns in a row in which no fruit moved (R12)
     "over": false,
     "options": {"tokens": 8, "fruit": 7, "shaman": true, "quiet_limit": 200}}

Invariants :meth:`ManamiGame.state_from_json` checks: reserve plus tokens on the board is ``tokens``
per player; held plus supply plus spoiled fruit is ``fruit + added``; three-token totems only
on the ``resolve`` villages or once the game is over; the supply is empty only once it is over.

``expected_view``: village name -> owners bottom first as ``"p0"``/``"p1"``, all nine villages.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

from pi_app.games.base import (
    STANDARD,
    FinalResult,
    Game,
    IllegalMove,
    OptionPreset,
    PieceStyle,
    RecordError,
    Segment,
    View,
    Words,
    as_written,
    options_of,
)
from pi_app.i18n import Said
from pi_app.json_types import JSON

# -- geometry ------------------------------------------------------------------------------------

#: Village names by index ``row * 3 + column``.
NAMES: tuple[str, ...] = tuple(f"{col}{row}" for row in "123" for col in "abc")
INDEX: dict[str, int] = {name: i for i, name in enumerate(NAMES)}


def _neighbours(v: int) -> tuple[int, ...]:
    row, col = divmod(v, 3)
    out = []
    for dr, dc in ((-1, 0), (0, -1), (0, 1), (1, 0)):
        r, c = row + dr, col + dc
        if 0 <= r < 3 and 0 <= c < 3:
            out.append(r * 3 + c)
    return tuple(out)


NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(_neighbours(v) for v in range(9))
#: The twelve shaman edges as (lower index, higher index).
EDGES: tuple[tuple[int, int], ...] = tuple(
    (u, v) for u in range(9) for v in NEIGHBOURS[u] if u < v)
#: Edge names as the sensor view and the board geometry use them, lower village first.
EDGE_NAMES: tuple[str, ...] = tuple(f"{'abc'[u % 3]}{u // 3 + 1}/{'abc'[v % 3]}{v // 3 + 1}"
                                    for u, v in EDGES)
#: What an edge's presence sensor reads where the shaman stands.
SHAMAN_PIECE: tuple[str, ...] = ("shaman",)
#: Edge number of a neighbouring pair, either order.
EDGE_OF: dict[tuple[int, int], int] = {
    **{e: i for i, e in enumerate(EDGES)}, **{(v, u): i for i, (u, v) in enumerate(EDGES)}}

#: A totem never exceeds three tokens (R5), so movable totems have one or two.
MAX_HEIGHT = 3
#: Fruit that wins at once.
WIN = 4
#: Tile set when the ``tiles`` option is absent (R1): +2 x1, +1 x4, 0 x3, -1 x1.
DEFAULT_TILES: tuple[int, ...] = (2, 1, 1, 1, 1, 0, 0, 0, -1)
TILE_VALUES = frozenset((-1, 0, 1, 2))
#: R12: turns in a row without any fruit moving that end the game. Not in the printed rules,
#: so off by default (issue 31); games between machines play with :data:`MACHINE_QUIET_LIMIT`.
DEFAULT_QUIET_LIMIT: int | None = None
#: R12's limit for bots, soaks and benches (``machine_defaults``): random play can shuffle
#: tokens without moving fruit for a long time, and a bench must end its games.
MACHINE_QUIET_LIMIT = 200


# -- moves ---------------------------------------------------------------------------------------

PLACE = "place"
STEP = "move"
RESOLVE = "resolve"
SHAMAN = "shaman"
PASS = "pass"


class Move(NamedTuple):
    """One decision. ``cells`` are village indices: place (v,), move the full path, resolve the
    two villages in the chosen order, shaman the edge (lower index first) or () for ``stay``."""

    kind: str
    cells: tuple[int, ...] = ()


PASS_MOVE = Move(PASS)
STAY_MOVE = Move(SHAMAN)
PLACE_MOVES: tuple[Move, ...] = tuple(Move(PLACE, (v,)) for v in range(9))
SHAMAN_MOVES: tuple[Move, ...] = tuple(Move(SHAMAN, e) for e in EDGES)


def _paths(origin: int, steps: int) -> list[tuple[int, ...]]:
    """Paths of ``steps`` orthogonal steps from ``origin`` that never go straight back (R4)."""
    paths: list[tuple[int, ...]] = [(origin,)]
    for _ in range(steps):
        paths = [(*p, n) for p in paths for n in NEIGHBOURS[p[-1]]
                 if len(p) < 2 or n != p[-2]]
    return paths


#: Every well-formed path (one or two steps) -> the edges it crosses.
PATH_EDGES: dict[tuple[int, ...], tuple[int, ...]] = {
    p: tuple(EDGE_OF[p[i], p[i + 1]] for i in range(len(p) - 1))
    for h in (1, 2) for v in range(9) for p in _paths(v, h)}
#: ``MOVES_FROM[height][origin][shaman]``: the moves of a totem of that height on that village
#: with the shaman on that edge; index 12, which is also index -1, is "no shaman". A table,
#: because move generation is the engine's hot path.
MOVES_FROM: tuple[tuple[tuple[tuple[Move, ...], ...], ...], ...] = (
    (), *(tuple(tuple(tuple(Move(STEP, p) for p in _paths(v, h) if e not in PATH_EDGES[p])
                      for e in range(len(EDGES) + 1))
                for v in range(9))
          for h in (1, 2)))
VILLAGE_SET = frozenset(range(9))


# -- state ---------------------------------------------------------------------------------------


class Options(NamedTuple):
    """The options that shape play (``seeds/tiki-manami.md``, Options)."""

    tokens: int = 8
    fruit: int = 7
    shaman: bool = False
    quiet_limit: int | None = DEFAULT_QUIET_LIMIT
    shaman_off_board: bool = False
    """R19: the shaman starts off the board and first enters when a 0-village is influenced."""

    def to_json(self) -> JSON:
        """The options as records and states write them; ``shaman_off_board`` only when on,
        so the records and states of games without it read exactly as before it existed."""
        out: JSON = {"tokens": self.tokens, "fruit": self.fruit, "shaman": self.shaman,
                     "quiet_limit": self.quiet_limit}
        if self.shaman_off_board:
            out["shaman_off_board"] = True
        return out


class ManamiState(NamedTuple):
    """A position. A NamedTuple because it is immutable, hashable and cheap to build; the fields
    mirror the JSON state of the module docstring."""

    values: tuple[int, ...]  # village values, index order
    stacks: tuple[tuple[int, ...], ...]  # owners bottom first, index order
    reserve: tuple[int, int]  # kept, not counted from the stacks: move generation reads it
    fruit: tuple[int, int]  # held per player
    supply: int
    spoiled: int
    added: int  # fresh fruit added by R10
    turn: int  # whose turn; the mover while a resolve or shaman decision is due
    pending: tuple[int, ...]  # the two villages waiting for ``resolve``, ascending, or ()
    deciders: tuple[int, ...]  # players owing a shaman decision, in order
    shaman: int  # edge number, -1 when not on the board
    tie_break: bool  # R10
    quiet: int  # R12
    over: bool
    options: Options


def _both(a: list[int]) -> tuple[int, int]:
    return (a[0], a[1])


def _sown(stacks: tuple[tuple[int, ...], ...], path: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The stacks after the totem on ``path[0]`` sows along ``path``: its bottom token drops in
    each village entered, on top of what is there, so the last village gets the top token."""
    out = list(stacks)
    totem = out[path[0]]
    out[path[0]] = ()
    for i, token in enumerate(totem, 1):
        out[path[i]] += (token,)
    return out


def _quiet_count(state: ManamiState, fruit_moved: bool) -> tuple[int, bool]:
    """R12: turns in a row in which no fruit was gained, lost or spoiled, counting the turn that
    ``state`` ends, and whether that count ends the game."""
    if fruit_moved:
        return 0, False
    quiet = state.quiet + 1
    limit = state.options.quiet_limit
    return quiet, limit is not None and quiet >= limit


def _edge_text(edge: int, sep: str = "/") -> str:
    """``b1/b2`` for records, ``b1 and b2`` (``sep=" and "``) for sentences."""
    u, v = EDGES[edge]
    return f"{NAMES[u]}{sep}{NAMES[v]}"


# -- reading records and JSON --------------------------------------------------------------------

_OPTION_KEYS = ("tokens", "fruit", "shaman", "quiet_limit", "tiles", "shaman_off_board")


def _int_in(value: Any, low: int, high: int, what: str) -> int:
    if type(value) is not int or not low <= value <= high:
        raise RecordError(f"{what} must be a whole number from {low} to {high}, not {value!r}")
    return value


def _read_options(raw: Mapping[str, Any]) -> tuple[Options, tuple[int, ...] | None]:
    """Options and the explicit tile set (``None`` if absent); unknown keys are errors (R18)."""
    for key in raw:
        if key not in _OPTION_KEYS:
            known = ", ".join(_OPTION_KEYS)
            raise RecordError(f"unknown manami option {key!r} (known options: {known})")
    shaman = raw.get("shaman", False)
    if type(shaman) is not bool:
        raise RecordError(f"option 'shaman' must be true or false, not {shaman!r}")
    off_board = raw.get("shaman_off_board", False)
    if type(off_board) is not bool:
        raise RecordError(f"option 'shaman_off_board' must be true or false, not {off_board!r}")
    if off_board and not shaman:
        raise RecordError("option 'shaman_off_board' is a form of the shaman variant: it needs "
                          "'shaman': true")
    limit = raw.get("quiet_limit", DEFAULT_QUIET_LIMIT)
    if limit is not None:
        limit = _int_in(limit, 1, 100_000, "option 'quiet_limit'")
    default = Options()
    options = Options(tokens=_int_in(raw.get("tokens", default.tokens), 1, 99, "option 'tokens'"),
                      fruit=_int_in(raw.get("fruit", default.fruit), 1, 99, "option 'fruit'"),
                      shaman=shaman, quiet_limit=limit, shaman_off_board=off_board)
    tiles = raw.get("tiles")
    if tiles is None:
        return options, None
    if not isinstance(tiles, list) or len(tiles) != 9:
        raise RecordError("option 'tiles' must be a list of the nine tile values")
    for value in tiles:
        _tile_value(value, "a value in option 'tiles'")
    return options, tuple(tiles)


def _tile_value(value: Any, what: str) -> int:
    if type(value) is not int or value not in TILE_VALUES:
        raise RecordError(f"{what} is {value!r}: a village is worth -1, 0, 1 or 2")
    return value


def _by_village(raw: Any, key: str) -> list[Any]:
    """The nine entries of an object keyed by village name, in index order."""
    if not isinstance(raw, dict):
        raise RecordError(f"'{key}' must be an object naming the nine villages a1 to c3")
    for name in raw:
        if name not in INDEX:
            raise RecordError(f"'{key}' names {name!r}, which is not a village (a1 to c3)")
    for name in NAMES:
        if name not in raw:
            raise RecordError(f"'{key}' lacks village {name}")
    return [raw[name] for name in NAMES]


def _village(raw: Any, what: str) -> int:
    if not isinstance(raw, str) or raw.lower() not in INDEX:
        raise RecordError(f"{what} must be a village a1 to c3, not {raw!r}")
    return INDEX[raw.lower()]


def _player(raw: Any, what: str) -> int:
    return _int_in(raw, 0, 1, what)


def _pair(raw: Any, what: str, high: int) -> tuple[int, int]:
    if not isinstance(raw, list) or len(raw) != 2:
        raise RecordError(f"'{what}' must be a list of two numbers")
    return (_int_in(raw[0], 0, high, f"'{what}'"), _int_in(raw[1], 0, high, f"'{what}'"))


def _flag(raw: Any, what: str) -> bool:
    if type(raw) is not bool:
        raise RecordError(f"'{what}' must be true or false, not {raw!r}")
    return raw


# -- the engine ----------------------------------------------------------------------------------


class ManamiGame(Game[ManamiState, Move]):
    """Tiki on Manami island for two players; rulings R1… are in ``seeds/tiki-manami.md``."""

    name: ClassVar[str] = "manami"
    title: ClassVar[str] = "Tiki (Manami island)"
    option_names = ("tokens", "fruit", "shaman", "shaman_off_board", "quiet_limit", "tiles")
    #: The 200-turn limit is no printed rule: off by default (R12), on between machines. The
    #: table writes it off into every record all the same, so that a tikiboard from before
    #: issue 31 (whose default was 200) replays the record as the station played it.
    table_defaults: ClassVar[Mapping[str, Any]] = {"quiet_limit": None}
    machine_defaults: ClassVar[Mapping[str, Any]] = {"quiet_limit": MACHINE_QUIET_LIMIT}
    presets = (STANDARD,
               OptionPreset("shaman", lambda _n: {"shaman": True}),
               OptionPreset("shaman enters", lambda _n: {"shaman": True, "shaman_off_board": True}))

    # -- set-up ----------------------------------------------------------------------------------
    def setup(self, values: Sequence[int], first: int = 0,
              options: Options | None = None) -> ManamiState:
        """The opening position for a given layout (index order) and first player."""
        opts = options or Options()
        return ManamiState(values=tuple(values), stacks=((),) * 9,
                           reserve=(opts.tokens, opts.tokens), fruit=(0, 0), supply=opts.fruit,
                           spoiled=0, added=0, turn=first, pending=(), deciders=(), shaman=-1,
                           tie_break=False, quiet=0, over=False, options=opts)

    def new_game(self, rng: random.Random, options: JSON | None = None) -> ManamiState:
        """Shuffle the tiles into the square and draw the first player by lot (R2)."""
        opts, tiles = _read_options(options or {})
        values = list(DEFAULT_TILES if tiles is None else tiles)
        rng.shuffle(values)
        return self.setup(values, rng.randrange(2), opts)

    # -- rules -----------------------------------------------------------------------------------
    def to_move(self, state: ManamiState) -> int | None:
        if state.over:
            return None
        if state.pending:
            return 1 - state.turn
        if state.deciders:
            return state.deciders[0]
        return state.turn

    def is_over(self, state: ManamiState) -> bool:
        return state.over

    def scores(self, state: ManamiState) -> tuple[int, ...]:
        return state.fruit

    def result(self, state: ManamiState) -> FinalResult | None:
        """Most fruit wins; every way the game ends compares fruit, and a tie is a draw (R13),
        which the record writes as both players."""
        if not state.over:
            return None
        a, b = state.fruit
        return FinalResult(state.fruit, (0,) if a > b else (1,) if b > a else (0, 1), a == b)

    def legal_moves(self, state: ManamiState) -> list[Move]:
        if state.over:
            return []
        if state.pending:
            a, b = state.pending
            return [Move(RESOLVE, (a, b)), Move(RESOLVE, (b, a))]
        if state.deciders:
            edges = [m for i, m in enumerate(SHAMAN_MOVES) if i != state.shaman]
            # R15, R19: leaving it (on its edge, or off the board) is a choice, except at the
            # set-up placement of R14
            stay = state.shaman >= 0 or state.options.shaman_off_board
            return [*edges, STAY_MOVE] if stay else edges
        me, shaman = state.turn, state.shaman
        can_place = state.reserve[me] > 0
        moves: list[Move] = []
        for v, stack in enumerate(state.stacks):
            if not stack:
                if can_place:
                    moves.append(PLACE_MOVES[v])
            elif stack[-1] == me:
                moves.extend(MOVES_FROM[len(stack)][v][shaman])
        return moves or [PASS_MOVE]  # R11: pass only when nothing else is legal

    def apply(self, state: ManamiState, move: Move) -> ManamiState:
        kind, cells = move
        if state.over:
            raise IllegalMove(Said.gettext("The game is over: no more moves"))
        if not VILLAGE_SET.issuperset(cells):
            raise IllegalMove(Said.gettext("Villages are a1 to c3"))
        if state.pending:
            if kind != RESOLVE:
                a, b = (NAMES[v] for v in state.pending)
                raise IllegalMove(Said.gettext(
                    "First choose the order in which {a} and {b} are influenced: "
                    "resolve {a} {b} or resolve {b} {a}", a=a, b=b))
            return self._resolve(state, cells)
        if state.deciders:
            if kind != SHAMAN:
                if state.shaman < 0 and not state.options.shaman_off_board:
                    raise IllegalMove(Said.gettext("First place the shaman between two "
                                                   "neighbouring villages: shaman X/Y"))
                raise IllegalMove(Said.gettext("First decide about the shaman (a 0-village was "
                                               "influenced): shaman X/Y or shaman stay"))
            return self._move_shaman(state, cells)
        if kind == PLACE:
            return self._place(state, cells)
        if kind == STEP:
            return self._step(state, cells)
        if kind == PASS:
            if self.legal_moves(state) != [PASS_MOVE]:
                raise IllegalMove(Said.gettext(
                    "You can still place or move a totem, so you may not pass"))
            return self._end_turn(state, list(state.stacks), list(state.reserve), ())
        if kind == RESOLVE:
            raise IllegalMove(Said.gettext("There is nothing to resolve: resolve only follows a "
                                           "move that brings two villages to three tokens"))
        if kind == SHAMAN:
            if not state.options.shaman:
                raise IllegalMove(Said.gettext("The shaman is not in play in this game"))
            raise IllegalMove(Said.gettext("The shaman may be moved only right after a 0-village "
                                           "is influenced"))
        raise IllegalMove(Said.gettext("{kind} is not a Tiki move", kind=repr(kind)))

    def _place(self, state: ManamiState, cells: tuple[int, ...]) -> ManamiState:
        if len(cells) != 1:
            raise IllegalMove(Said.gettext("place names one village: place b2"))
        v = cells[0]
        me = state.turn
        if state.stacks[v]:
            raise IllegalMove(Said.gettext("{village} is not empty: a new totem goes on an empty "
                                           "village", village=NAMES[v]))
        if not state.reserve[me]:
            raise IllegalMove(Said.gettext("You have no token left in your reserve: move a totem "
                                           "instead"))
        stacks = list(state.stacks)
        stacks[v] = (me,)
        reserve = list(state.reserve)
        reserve[me] -= 1
        return self._end_turn(state, stacks, reserve, ())

    def _step(self, state: ManamiState, path: tuple[int, ...]) -> ManamiState:
        if len(path) < 2:
            raise IllegalMove(Said.gettext("A move names the whole path, such as b2-c2 or "
                                           "a1-b1-b2"))
        origin = path[0]
        stack = state.stacks[origin]
        name = NAMES[origin]
        if not stack:
            raise IllegalMove(Said.gettext("There is no totem on {name}", name=name))
        if stack[-1] != state.turn:
            raise IllegalMove(Said.gettext("The top token of the totem on {name} is your "
                                           "opponent's", name=name))
        height = len(stack)
        if len(path) - 1 != height:
            raise IllegalMove(Said.ngettext(
                "The totem on {name} has {count} token, so it must move exactly {count} village",
                "The totem on {name} has {count} tokens, so it must move exactly {count} villages",
                height, name=name))
        edges = PATH_EDGES.get(path)
        if edges is None:
            raise IllegalMove(self._path_fault(path))
        if state.shaman in edges:
            a, b = (NAMES[v] for v in EDGES[state.shaman])
            raise IllegalMove(Said.gettext("The shaman stands between {a} and {b}: no totem may "
                                           "cross there", a=a, b=b))
        return self._end_turn(state, _sown(state.stacks, path), list(state.reserve), path[1:])

    @staticmethod
    def _path_fault(path: tuple[int, ...]) -> str:
        """Why a path of the right length is not a path a totem can take."""
        for i in range(len(path) - 1):
            a, b = path[i], path[i + 1]
            if (a, b) not in EDGE_OF:
                return Said.gettext("{a} and {b} are not neighbours: each step goes to the next "
                                    "village across a side", a=NAMES[a], b=NAMES[b])
            if i and b == path[i - 1]:
                return Said.gettext("{path} goes straight back: a totem may turn but never return "
                                    "to the village it just left",
                                    path="-".join(NAMES[v] for v in path))
        return Said.gettext("That is not a path a totem can take")  # pragma: no cover

    def _resolve(self, state: ManamiState, cells: tuple[int, ...]) -> ManamiState:
        if len(cells) != 2 or tuple(sorted(cells)) != state.pending:
            a, b = (NAMES[v] for v in state.pending)
            raise IllegalMove(Said.gettext("resolve must name {a} and {b}, the two villages with "
                                           "three tokens, in the order you choose", a=a, b=b))
        return self._influence(state, list(state.stacks), list(state.reserve), cells)

    def _move_shaman(self, state: ManamiState, cells: tuple[int, ...]) -> ManamiState:
        if not cells:
            if state.shaman < 0 and not state.options.shaman_off_board:
                raise IllegalMove(Said.gettext("The shaman is not on the board yet: place it with "
                                               "shaman X/Y"))
            edge = state.shaman
        else:
            found = EDGE_OF.get((cells[0], cells[1])) if len(cells) == 2 else None
            if found is None:
                raise IllegalMove(Said.gettext("The shaman stands between two neighbouring "
                                               "villages, such as shaman b1/b2"))
            if found == state.shaman:
                raise IllegalMove(Said.gettext("The shaman already stands on {edge}: write shaman "
                                               "stay to keep it there", edge=_edge_text(found)))
            edge = found
        deciders = state.deciders[1:]
        turn = state.turn if deciders else 1 - state.turn
        return state._replace(shaman=edge, deciders=deciders, turn=turn)

    # -- after a decision ------------------------------------------------------------------------
    def _end_turn(self, state: ManamiState, stacks: list[tuple[int, ...]], reserve: list[int],
                  entered: tuple[int, ...]) -> ManamiState:
        """Influence the villages a move brought to three tokens (R6), or count a quiet turn."""
        full = [v for v in entered if len(stacks[v]) == MAX_HEIGHT]
        if len(full) == 2:  # the opponent chooses the order (R6)
            return state._replace(stacks=tuple(stacks), reserve=_both(reserve),
                                  pending=tuple(sorted(full)))
        if full:
            return self._influence(state, stacks, reserve, full)
        quiet, over = _quiet_count(state, False)
        opts = state.options
        deciders: tuple[int, ...] = ()
        if opts.shaman and state.shaman < 0 and not over and not opts.shaman_off_board:  # R14
            deciders = (1 - state.turn,)
        # Built positionally, in field order: this is the commonest path of play, and keywords
        # or _replace make building a state about three times slower (0.8 against 0.26 us).
        return ManamiState(
            state.values, tuple(stacks), _both(reserve), state.fruit, state.supply,
            state.spoiled, state.added, state.turn if deciders or over else 1 - state.turn, (),
            deciders, state.shaman, state.tie_break, quiet, over, opts)

    def _influence(self, state: ManamiState, stacks: list[tuple[int, ...]], reserve: list[int],
                   order: Sequence[int]) -> ManamiState:
        """Influence villages in ``order``, checking the end after each one (R7 to R10)."""
        fruit = list(state.fruit)
        supply, spoiled, added = state.supply, state.spoiled, state.added
        tie_break = state.tie_break
        deciders: list[int] = []
        over = False
        for v in order:
            stack = stacks[v]
            top, value = stack[-1], state.values[v]
            for owner in stack:
                reserve[owner] += 1
            stacks[v] = ()
            if value == 0:
                if state.options.shaman:
                    deciders.append(top)  # R15
                continue
            if value > 0:
                gain = min(value, supply)  # R7
                fruit[top] += gain
                supply -= gain
            elif fruit[top]:
                fruit[top] -= 1
                spoiled += 1
            else:  # R9: a fruit of the supply is spoiled instead
                supply -= 1
                spoiled += 1
            if fruit[top] >= WIN:
                over = True
            elif supply == 0:
                if fruit[0] != fruit[1]:
                    over = True
                else:  # R10: a tie when the supply runs out: one more fruit decides
                    tie_break = True
                    supply = 1
                    if spoiled:
                        spoiled -= 1
                    else:
                        added += 1
            elif tie_break and fruit[0] != fruit[1]:
                over = True
            if over:
                break  # R8: the game ends at once
        held = _both(fruit)
        quiet, limit_reached = _quiet_count(
            state, held != state.fruit or supply != state.supply or spoiled != state.spoiled)
        over = over or limit_reached
        if over:
            deciders = []
        return state._replace(
            stacks=tuple(stacks), reserve=_both(reserve), fruit=held, supply=supply,
            spoiled=spoiled, added=added, tie_break=tie_break, pending=(),
            deciders=tuple(deciders), quiet=quiet, over=over,
            turn=state.turn if deciders or over else 1 - state.turn)

    # -- notation --------------------------------------------------------------------------------
    def parse_move(self, state: ManamiState, text: str) -> Move:
        words = text.lower().split()
        if len(words) == 1 and "-" in words[0]:
            return Move(STEP, tuple(_cell(part) for part in words[0].split("-")))
        if words == ["pass"]:
            return PASS_MOVE
        if len(words) == 2 and words[0] == "place":
            return PLACE_MOVES[_cell(words[1])]
        if len(words) == 3 and words[0] == "resolve":
            return Move(RESOLVE, (_cell(words[1]), _cell(words[2])))
        if len(words) == 2 and words[0] == "shaman":
            if words[1] == "stay":
                return STAY_MOVE
            parts = words[1].split("/")
            if len(parts) == 2:
                a, b = _cell(parts[0]), _cell(parts[1])
                edge = EDGE_OF.get((a, b))
                if edge is None:
                    raise IllegalMove(Said.gettext(
                        "{a} and {b} are not neighbours: the shaman stands between two "
                        "neighbouring villages", a=parts[0], b=parts[1]))
                return SHAMAN_MOVES[edge]
        raise IllegalMove(Said.gettext("{text} is not a Tiki move: write place X, X-Y, X-Y-Z, "
                                       "resolve X Y, shaman X/Y, shaman stay or pass",
                                       text=repr(text.strip())))

    def move_text(self, state: ManamiState, move: Move) -> str:
        kind, cells = move
        names = [NAMES[v] for v in cells]
        if kind == STEP:
            return "-".join(names)
        if kind == SHAMAN:
            return f"shaman {'/'.join(names)}" if names else "shaman stay"
        return " ".join([kind, *names])

    # -- serialisation ---------------------------------------------------------------------------
    def option_labels(self, options: JSON) -> tuple[Said, ...]:
        out: list[Said] = []
        if options.get("shaman") is True:
            out.append(Said.gettext("shaman enters") if options.get("shaman_off_board") is True
                       else Said.gettext("shaman"))
        default = Options()
        tokens, fruit = options.get("tokens"), options.get("fruit")
        if isinstance(tokens, int) and tokens != default.tokens:
            out.append(Said.gettext("{count} tokens", count=tokens))
        if isinstance(fruit, int) and fruit != default.fruit:
            out.append(Said.gettext("{count} fruit", count=fruit))
        if "tiles" in options:
            out.append(Said.gettext("own tiles"))
        limit = options.get("quiet_limit", DEFAULT_QUIET_LIMIT)
        if isinstance(limit, int):
            out.append(Said.gettext("{count}-turn limit", count=limit))
        return tuple(out)

    def piece_style(self, piece: str) -> PieceStyle:
        """A token (``p0``) in its owner's colour, labelled as people count players (``p0`` is
        player 1's); tikis and the shaman in colours of their own."""
        if len(piece) == 2 and piece[0] == "p" and piece[1].isdigit():
            return PieceStyle(int(piece[1]), str(int(piece[1]) + 1))
        return PieceStyle(None, piece)

    def table_facts(self, state: ManamiState) -> JSON:
        """Each village's value and the fruit left in the supply and spoiled: open on the table,
        not on the board picture."""
        data = self.state_to_json(state)
        return {key: data[key] for key in ("villages", "supply", "spoiled")}

    def state_to_json(self, state: ManamiState) -> JSON:
        opts = state.options
        return {
            "villages": dict(zip(NAMES, state.values, strict=True)),
            "totems": {name: list(stack) for name, stack in zip(NAMES, state.stacks, strict=True)},
            "reserve": list(state.reserve),
            "fruit": list(state.fruit),
            "supply": state.supply,
            "spoiled": state.spoiled,
            "added": state.added,
            "turn": state.turn,
            "resolve": [NAMES[v] for v in state.pending],
            "shaman_decisions": list(state.deciders),
            "shaman": None if state.shaman < 0 else _edge_text(state.shaman),
            "tie_break": state.tie_break,
            "quiet": state.quiet,
            "over": state.over,
            "options": opts.to_json(),
        }

    def state_from_json(self, data: JSON) -> ManamiState:
        if not isinstance(data, dict):
            raise RecordError("a manami state must be a JSON object")
        keys = ("villages", "totems", "reserve", "fruit", "supply", "spoiled", "added", "turn",
                "resolve", "shaman_decisions", "shaman", "tie_break", "quiet", "over", "options")
        for key in keys:
            if key not in data:
                raw_keys = ", ".join(keys)
                raise RecordError(f"a manami state lacks {key!r} (it needs {raw_keys})")
        raw_options = data["options"]
        if not isinstance(raw_options, dict) or "tiles" in raw_options:
            raise RecordError("'options' must be an object of tokens, fruit, shaman, "
                              "quiet_limit (and shaman_off_board)")
        opts, _ = _read_options(raw_options)
        values = tuple(_tile_value(v, f"village {n}")
                       for n, v in zip(NAMES, _by_village(data["villages"], "villages"),
                                       strict=True))
        stacks = tuple(_stack(raw, name) for name, raw in
                       zip(NAMES, _by_village(data["totems"], "totems"), strict=True))
        reserve = _pair(data["reserve"], "reserve", opts.tokens)
        for p in (0, 1):
            on_board = sum(stack.count(p) for stack in stacks)
            if reserve[p] + on_board != opts.tokens:
                raise RecordError(f"'reserve' and 'totems' disagree: player {p} has "
                                  f"{reserve[p]} tokens in reserve and {on_board} on the "
                                  f"board, but the game uses {opts.tokens}")
        fruit = _pair(data["fruit"], "fruit", 10_000)
        supply = _int_in(data["supply"], 0, 10_000, "'supply'")
        spoiled = _int_in(data["spoiled"], 0, 10_000, "'spoiled'")
        added = _int_in(data["added"], 0, 10_000, "'added'")
        if sum(fruit) + supply + spoiled != opts.fruit + added:
            raise RecordError("held, supply and spoiled fruit must add up to 'fruit' plus "
                              "'added'")
        over = _flag(data["over"], "over")
        raw_pending = data["resolve"]
        if not isinstance(raw_pending, list) or len(raw_pending) not in (0, 2):
            raise RecordError("'resolve' must list no village or two villages")
        pending = tuple(sorted(_village(v, "'resolve'") for v in raw_pending))
        if pending and (pending[0] == pending[1] or over):
            raise RecordError("'resolve' must name two different villages of a game not over")
        for v, stack in enumerate(stacks):
            if len(stack) == MAX_HEIGHT and not over and v not in pending:
                raise RecordError(f"the totem on {NAMES[v]} has three tokens but is not "
                                  f"waiting to be influenced")
        for v in pending:
            if len(stacks[v]) != MAX_HEIGHT:
                raise RecordError(f"'resolve' names {NAMES[v]}, which does not hold three tokens")
        raw_deciders = data["shaman_decisions"]
        if not isinstance(raw_deciders, list) or len(raw_deciders) > 2:
            raise RecordError("'shaman_decisions' must list at most two players")
        deciders = tuple(_player(p, "a player in 'shaman_decisions'") for p in raw_deciders)
        if deciders and (not opts.shaman or pending or over):
            raise RecordError("'shaman_decisions' must be empty without the shaman variant, "
                              "while a resolve is due, or once the game is over")
        raw_shaman = data["shaman"]
        shaman = -1
        if raw_shaman is not None:
            parts = raw_shaman.split("/") if isinstance(raw_shaman, str) else []
            edge = (EDGE_OF.get((_village(parts[0], "'shaman'"), _village(parts[1], "'shaman'")))
                    if len(parts) == 2 else None)
            if edge is None or not opts.shaman:
                raise RecordError(f"'shaman' must be null or an edge such as 'b1/b2' (shaman "
                                  f"variant only), not {raw_shaman!r}")
            shaman = edge
        if supply == 0 and not over:
            raise RecordError("the supply is empty only once the game is over")
        return ManamiState(
            values=values, stacks=stacks, reserve=reserve, fruit=fruit, supply=supply,
            spoiled=spoiled, added=added, turn=_player(data["turn"], "'turn'"), pending=pending,
            deciders=deciders, shaman=shaman, tie_break=_flag(data["tie_break"], "tie_break"),
            quiet=_int_in(data["quiet"], 0, 100_000, "'quiet'"), over=over, options=opts)

    # -- sensors and people ----------------------------------------------------------------------
    def expected_view(self, state: ManamiState) -> View:
        """Village name -> token owners bottom first (``"p0"``/``"p1"``), all nine villages;
        then the twelve edges (``"a1/b1"``) -> ``("shaman",)`` where the shaman stands, else
        ``()``: a presence sensor on each edge sees it (``hardware/boards/manami.json``)."""
        view: dict[str, tuple[str, ...]] = {
            name: tuple(f"p{owner}" for owner in stack)
            for name, stack in zip(NAMES, state.stacks, strict=True)}
        for edge, name in enumerate(EDGE_NAMES):
            view[name] = SHAMAN_PIECE if edge == state.shaman else ()
        return view

    def placement_view(self, state: ManamiState, move: Move) -> View:
        """The board once the hand is off: a move's path sown, its full villages not yet cleared.

        Clearing an influenced village is the follow-up the rules demand. ``resolve``,
        ``shaman`` and ``pass`` are decisions, not handling: the board is as it was (the shaman
        stands on an edge, which no village sensor sees).
        """
        after = self.apply(state, move)  # raises as apply does for a move that is not legal
        if move.kind == PLACE:
            return self.expected_view(after)
        if move.kind == STEP:
            return self.expected_view(state._replace(stacks=tuple(_sown(state.stacks,
                                                                        move.cells))))
        if move.kind == SHAMAN and move.cells:  # the shaman is put on its edge by hand
            return self.expected_view(state._replace(shaman=EDGE_OF[move.cells[0],
                                                                   move.cells[1]]))
        return self.expected_view(state)

    def transit_views(self, state: ManamiState, move: Move) -> list[View]:
        """A totem on its way: lifted off its village, then (two tokens) either its bottom token
        dropped on the first village with the top one still in hand, or the whole totem set down
        on the first village before its top token goes on."""
        if move.kind != STEP or move not in self.legal_moves(state):
            return []
        path, stacks = move.cells, list(state.stacks)
        token_stack = stacks[path[0]]
        stacks[path[0]] = ()
        views = [self.expected_view(state._replace(stacks=tuple(stacks)))]
        if len(token_stack) == 2:
            first = stacks[path[1]]
            for dropped in (token_stack[:1], token_stack):
                stacks[path[1]] = first + dropped
                views.append(self.expected_view(state._replace(stacks=tuple(stacks))))
        return views

    def loose_views(self, state: ManamiState, move: Move) -> list[View]:
        """A totem of two carried a token at a time: one set on a village of its path while
        the other still lies on the totem's own (zero-noise accuracy table 1000049: that
        picture, unexplained from the position after the move before, revised that move into
        another path). ``move`` is legal (the inference asks for the position's own moves
        only), so it is not generated again to check."""
        if move.kind != STEP:
            return []
        path, stacks = move.cells, state.stacks
        token_stack = stacks[path[0]]
        if len(token_stack) != 2:
            return []
        views: list[View] = []
        for kept, carried in ((token_stack[:1], token_stack[1:]),
                              (token_stack[1:], token_stack[:1])):
            for village in path[1:]:
                lands = list(stacks)
                lands[path[0]], lands[village] = kept, stacks[village] + carried
                view = self.expected_view(state._replace(stacks=tuple(lands)))
                if view not in views:
                    views.append(view)
        return views

    def pieces(self, state: ManamiState) -> list[str]:
        """Every token as ``expected_view`` names it; the shaman is not sensed."""
        return ["p0"] * state.options.tokens + ["p1"] * state.options.tokens

    def describe(self, state: ManamiState, words: Words | None = None) -> str:
        """A 3x3 picture (row 3 at the top, each village as value and stack) and the counts."""
        _ = words or as_written
        one, two = (_("Player {number}").format(number=n) for n in (1, 2))
        # The edition's title as the catalogs name it in each language (pi_app.i18n).
        lines = [_(self.title) + (_(", shaman variant") if state.options.shaman else ""),
                 "     " + "".join(f"{c:<9}" for c in "abc").rstrip()]
        for row in (2, 1, 0):
            cells = []
            for v in range(row * 3, row * 3 + 3):
                stack = "".join(str(o) for o in state.stacks[v]) or "."
                cells.append(f"{state.values[v]:+d} {stack:<6}".replace("+0", " 0"))
            lines.append(f"{row + 1}    " + "".join(cells).rstrip())
        lines.append(_("(stacks bottom first: 0 = a token of {first}, 1 = of {second})").format(
            first=one, second=two))
        lines.append(_("Fruit: {first} {fruit_first}, {second} {fruit_second}; supply {supply}; "
                       "spoiled {spoiled}").format(
            first=one, fruit_first=state.fruit[0], second=two, fruit_second=state.fruit[1],
            supply=state.supply, spoiled=state.spoiled)
                     + (_(" (tie-break: the next fruit gained or lost decides)")
                        if state.tie_break else ""))
        lines.append(_("Reserve: {first} {reserve_first}, {second} {reserve_second}").format(
            first=one, reserve_first=state.reserve[0], second=two,
            reserve_second=state.reserve[1]))
        if state.options.shaman:
            off = _("off the board") if state.options.shaman_off_board else _("not placed yet")
            u, v = EDGES[state.shaman] if state.shaman >= 0 else (0, 0)
            lines.append(_("Shaman: {where}").format(
                where=off if state.shaman < 0 else _("between {first} and {second}").format(
                    first=NAMES[u], second=NAMES[v])))
        winners = self.winners(state)
        if winners is not None:
            lines.append(_("Game over: {result}").format(
                result=_("draw") if len(winners) == 2 else _("{player} wins").format(
                    player=_("Player {number}").format(number=winners[0] + 1))))
        else:
            hint = ""
            if state.pending:
                hint = _(" or ").join(self.move_text(state, m) for m in self.legal_moves(state))
            elif state.deciders:
                hint = (_("shaman X/Y or shaman stay")
                        if state.shaman >= 0 or state.options.shaman_off_board
                        else _("place the shaman: shaman X/Y"))
            mover = self.to_move(state)
            who = _("nobody") if mover is None else _("Player {number}").format(number=mover + 1)
            lines.append(_("To move: {who}").format(who=who) + (f" ({hint})" if hint else ""))
        return "\n".join(lines)

    # -- records ---------------------------------------------------------------------------------
    def setup_record(self, state: ManamiState) -> JSON:
        """The record of ``state``'s set-up with no moves yet; ``state`` must be an opening."""
        if state != self.setup(state.values, state.turn, state.options):
            raise IllegalMove("a set-up record starts from an opening position")
        opts = state.options
        return {"game": self.name,
                "options": opts.to_json(),
                "villages": dict(zip(NAMES, state.values, strict=True)),
                "first": state.turn, "moves": []}

    def record_segments(self, record: JSON) -> list[Segment[ManamiState]]:
        """One segment: the set-up from ``villages``, ``first`` and ``options``, then ``moves``."""
        opts, tiles = _read_options(options_of(record))
        if "villages" not in record:
            raise RecordError("a manami record needs 'villages': the value of each village")
        values = tuple(_tile_value(v, f"village {n}")
                       for n, v in zip(NAMES, _by_village(record["villages"], "villages"),
                                       strict=True))
        if tiles is not None and sorted(tiles) != sorted(values):
            raise RecordError("the villages are not a layout of the tiles in option 'tiles'")
        first = _player(record.get("first", 0), "'first'")
        moves = record.get("moves")
        if not isinstance(moves, list):
            raise RecordError("a manami record needs 'moves': a list of move texts")
        start = self.setup(values, first, opts)
        return [Segment(start=lambda _previous: start, moves=moves, where={})]


def _cell(text: str) -> int:
    """A village index from its name; a name outside a1 to c3 is off the board (R3)."""
    v = INDEX.get(text)
    if v is None:
        raise IllegalMove(Said.gettext("{text} is not a village: villages are a1 to c3, so a "
                                       "step there would leave the board", text=repr(text)))
    return v


def _stack(raw: Any, name: str) -> tuple[int, ...]:
    if not isinstance(raw, list) or len(raw) > MAX_HEIGHT:
        raise RecordError(f"the totem on {name} must be a list of at most three owners (0 or 1)")
    return tuple(_player(owner, f"an owner on {name}") for owner in raw)


GAME = ManamiGame()
