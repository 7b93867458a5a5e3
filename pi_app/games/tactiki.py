"""TacTiki: two players, a 5x5 island, hidden ranks, stacking and column combat.

The rules as implemented, with every ruling numbered and sourced, are in ``seeds/tactiki.md``;
this docstring only explains how the module is built.

Board and pieces
    A field is an index ``0..24``: ``row * 5 + column``, so ``a1`` is 0, ``e1`` 4, ``a5`` 20.
    Row 1 is TIKI's (player 0) start row, row 5 TAC's (player 1). A piece is an int ``0..19``:
    ``player * 10 + k`` where ``k`` indexes the player's ranks sorted ascending. Its stable id
    (the name the tag registry and :meth:`TacTikiGame.expected_view` use) is a prefix (``T`` for
    TIKI, ``C`` for TAC), the rank and a copy letter: with the default ranks TIKI has
    ``T1a T1b T2a T2b … T5b`` and TAC ``C1a … C5b``. The id tells the rank, so ids never appear
    in what a player may see of the enemy (:func:`player_view`). A record's set-up gives ranks
    only; copy letters are handed out in a fixed order (fields a→e, bottom first), so a record
    always maps to the same ids (:func:`setup_state`).

State
    :class:`TacState` is a ``NamedTuple``: immutable, hashable and cheap to build, which matters
    because random play builds one per turn. It holds the columns (bottom first), both
    graveyards, whose turn it is, which pieces the opponent has seen (a bitmask), the quiet-turn
    counter of the referee draw (ruling R8), the outcome and the options. Whether a piece is
    frozen or blocked is not stored: it follows from where it stands.

Turns
    One record entry is one whole turn, so :meth:`TacTikiGame.legal_moves` lists whole turns,
    one per distinct resulting position, each under its canonical text (ruling R12). Inside, a
    turn is built step by step on a mutable copy of the columns (:func:`_step`); random play
    (:meth:`TacTikiGame.random_move`) draws step by step too, so it never lists every turn.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple, TypeAlias

from pi_app.games.base import (
    STANDARD,
    FinalResult,
    Game,
    IllegalMove,
    OptionPreset,
    PieceStyle,
    RecordError,
    Segment,
    SetupInput,
    View,
    Words,
    as_written,
    options_of,
)
from pi_app.i18n import N_, Said
from pi_app.json_types import JSON

# -- geometry -------------------------------------------------------------------------------------

COLUMN_LETTERS = "abcde"
FIELD_NAMES: tuple[str, ...] = tuple(f"{COLUMN_LETTERS[f % 5]}{f // 5 + 1}" for f in range(25))
_FIELD_INDEX: dict[str, int] = {name: f for f, name in enumerate(FIELD_NAMES)}
PLAYER_NAMES = ("TIKI", "TAC")
#: First letter of a piece id, per player ("C" for TAC so that it differs from TIKI's "T").
ID_PREFIX = ("T", "C")
#: Each player's start fields, a→e.
START_FIELDS: tuple[tuple[int, ...], tuple[int, ...]] = (tuple(range(5)), tuple(range(20, 25)))
PIECES_PER_PLAYER = 10
DEFAULT_RANKS: tuple[int, ...] = (1, 1, 2, 2, 3, 3, 4, 4, 5, 5)
#: The row (a field name's digit) each player's pieces start on: TIKI's row 1, TAC's row 5.
_START_ROWS = {"T": "1", "C": "5"}
#: Referee draw (ruling R8 (a)): this many turns in a row with no capture, no reincarnation and
#: no newly frozen piece end the game drawn. Not in the printed rules, so off (0) by default
#: (issue 31); games between machines play with :data:`MACHINE_QUIET_TURNS`.
DEFAULT_QUIET_TURNS = 0
#: R8 (a)'s count for bots, soaks and benches (``machine_defaults``), measured on random play.
MACHINE_QUIET_TURNS = 30

_OWNER: tuple[int, ...] = tuple(p // PIECES_PER_PLAYER for p in range(2 * PIECES_PER_PLAYER))
_BIT: tuple[int, ...] = tuple(1 << p for p in range(2 * PIECES_PER_PLAYER))
#: _HOME[q][f]: f is one of q's own start fields.
_HOME: tuple[tuple[bool, ...], ...] = tuple(
    tuple(f in START_FIELDS[q] for f in range(25)) for q in (0, 1))
#: _ENEMY_ROW[q][f]: f is a start field of q's opponent (a q piece there is frozen).
_ENEMY_ROW: tuple[tuple[bool, ...], ...] = (_HOME[1], _HOME[0])
_FORWARD = (1, -1)


def _destinations(player: int, f: int) -> tuple[int, ...]:
    """Where a piece of ``player`` on ``f`` may step: forward, left, right (never from the
    enemy start row, where it is frozen)."""
    if _ENEMY_ROW[player][f]:
        return ()
    row, col = divmod(f, 5)
    out = [(row + _FORWARD[player]) * 5 + col]
    if col > 0:
        out.append(f - 1)
    if col < 4:
        out.append(f + 1)
    return tuple(out)


_MOVES: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(_destinations(q, f) for f in range(25)) for q in (0, 1))
_STEP_TEXT: dict[tuple[int, int], str] = {
    (a, b): f"{FIELD_NAMES[a]}-{FIELD_NAMES[b]}" for a in range(25) for b in range(25)}
_NUMBER_WORDS = (N_("no"), N_("one"), N_("two"), N_("three"), N_("four"), N_("five"),
                 N_("six"), N_("seven"), N_("eight"))


def beats(attacker: int, defender: int) -> bool:
    """The official strength table: a higher rank wins, except that 1 beats 5 (and only 5)."""
    if attacker == 1:
        return defender == 5
    if attacker == 5:
        return defender in (2, 3, 4)
    return defender < attacker


def duel(attacker: int, defender: int) -> int:
    """1 when the attacking rank wins, -1 when the defending rank wins, 0 on a tie."""
    if attacker == defender:
        return 0
    return 1 if beats(attacker, defender) else -1


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- options and piece tables --------------------------------------------------------------------


class _Tables:
    """Everything that follows from the rank option, computed once per rank list."""

    def __init__(self, ranks: tuple[int, ...]) -> None:
        self.piece_rank: tuple[int, ...] = ranks + ranks
        ids: list[str] = []
        for q in (0, 1):
            for k, rank in enumerate(ranks):
                copy = k - ranks.index(rank)
                ids.append(f"{ID_PREFIX[q]}{rank}{'abcdefghij'[copy]}")
        self.ids: tuple[str, ...] = tuple(ids)
        #: What sensors read: owner and rank, no copy letter (same-rank pieces are alike).
        self.sensed: tuple[str, ...] = tuple(name[:-1] for name in ids)
        self._sensed_columns: dict[tuple[int, ...], tuple[str, ...]] = {}
        self.index: dict[str, int] = {name: p for p, name in enumerate(ids)}
        n = len(self.piece_rank)
        #: duel outcome of piece a attacking piece d, flattened as a * 20 + d.
        self.duel: tuple[int, ...] = tuple(
            duel(self.piece_rank[a], self.piece_rank[d]) for a in range(n) for d in range(n))
        self._ranks_in: dict[tuple[int, ...], tuple[int, ...]] = {}

    def sense(self, columns: Iterable[tuple[int, ...]]) -> dict[str, tuple[str, ...]]:
        """Field name -> sensed names bottom first (memoised per column: move inference looks
        at hundreds of boards that differ in two or three fields)."""
        cache = self._sensed_columns
        if len(cache) > 20_000:
            cache.clear()
        out: dict[str, tuple[str, ...]] = {}
        for name, col in zip(FIELD_NAMES, columns, strict=True):
            sensed = cache.get(col)
            if sensed is None:
                sensed = cache[col] = tuple(self.sensed[p] for p in col)
            out[name] = sensed
        return out

    def ranks_in(self, grave: tuple[int, ...]) -> tuple[int, ...]:
        """The distinct ranks in a graveyard, ascending (memoised: random play asks every turn,
        and there are at most 2**10 graveyards per player)."""
        ranks = self._ranks_in.get(grave)
        if ranks is None:
            ranks = self._ranks_in[grave] = tuple(sorted({self.piece_rank[p] for p in grave}))
        return ranks


@lru_cache(maxsize=32)
def _tables(ranks: tuple[int, ...]) -> _Tables:
    return _Tables(ranks)


@dataclass(frozen=True)
class Options:
    """The variants a record may choose (``seeds/tactiki.md``, section Options).

    ``ranks`` is kept sorted: the option is a multiset, and sorting makes equal options equal
    (and piece ids depend on the sorted order).
    """

    ranks: tuple[int, ...] = DEFAULT_RANKS
    strict_statue: bool = False
    attack_frozen: bool = False
    quiet_turns: int = DEFAULT_QUIET_TURNS

    def __post_init__(self) -> None:
        ranks = tuple(self.ranks)
        if (len(ranks) != PIECES_PER_PLAYER
                or not all(_is_int(r) and 1 <= r <= 5 for r in ranks)):
            raise RecordError("options.ranks must list the ten ranks (1 to 5) of a player's pieces")
        object.__setattr__(self, "ranks", tuple(sorted(ranks)))

    @cached_property
    def tables(self) -> _Tables:
        return _tables(self.ranks)

    def to_json(self) -> JSON:
        return {"ranks": list(self.ranks), "strict_statue": self.strict_statue,
                "attack_frozen": self.attack_frozen, "quiet_turns": self.quiet_turns}

    @classmethod
    def from_json(cls, data: Any) -> Options:
        """Read an ``options`` object; unknown keys are ignored like unknown record fields."""
        if data is None:
            return DEFAULT_OPTIONS
        if not isinstance(data, dict):
            raise RecordError("'options' must be an object")
        ranks = data.get("ranks", list(DEFAULT_RANKS))
        if not isinstance(ranks, list):
            raise RecordError("options.ranks must list the ten ranks (1 to 5) of a player's pieces")
        flags = {}
        for key in ("strict_statue", "attack_frozen"):
            value = data.get(key, False)
            if not isinstance(value, bool):
                raise RecordError(f"options.{key} must be true or false")
            flags[key] = value
        quiet = data.get("quiet_turns", DEFAULT_QUIET_TURNS)
        if not _is_int(quiet) or not 0 <= quiet <= 100_000:
            raise RecordError("options.quiet_turns must be a whole number from 0 (never) to 100000")
        return cls(tuple(ranks), flags["strict_statue"], flags["attack_frozen"], quiet)


DEFAULT_OPTIONS = Options()


# -- state and moves -----------------------------------------------------------------------------


class TacState(NamedTuple):
    """A position at the start of a turn (or the end of the game).

    ``revealed`` has bit ``p`` set when piece ``p``'s rank is known to its owner's opponent
    (ruling R9). ``quiet`` counts turns since the last capture, reincarnation or newly frozen
    piece (ruling R8). ``winner`` is the winner's index; ``draw`` marks the referee draw.
    """

    columns: tuple[tuple[int, ...], ...]
    graves: tuple[tuple[int, ...], tuple[int, ...]]
    player: int
    revealed: int
    quiet: int
    winner: int | None
    draw: bool
    options: Options


_new_state = tuple.__new__


@dataclass(frozen=True, slots=True)
class Steps:
    """One or two steps, each ``(from_field, to_field)``, in the order they are made."""

    steps: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Reincarnate:
    """Bring back a defeated piece of ``rank`` onto the empty own start field ``field``."""

    rank: int
    field: int


@dataclass(frozen=True, slots=True)
class Pass:
    """The turn of a player who can neither step nor reincarnate (ruling R7)."""


Move: TypeAlias = Steps | Reincarnate | Pass
PASS = Pass()


# -- the step engine (hot path) ------------------------------------------------------------------


def _step(cols: list[tuple[int, ...]], graves: tuple[list[int], list[int]], revealed: int,
          src: int, dst: int, duels: tuple[int, ...], strict: bool) -> tuple[int, bool, bool]:
    """Move the top piece of ``src`` onto ``dst`` and resolve any attack, in place.

    Returns ``(revealed, event, won)``: the new revealed mask, whether the step captured a
    piece or froze one (what resets the quiet counter) and whether it completed a statue.
    No legality checks: callers have checked the step.
    """
    col = cols[src]
    piece = col[-1]
    cols[src] = col[:-1]
    me = _OWNER[piece]
    target = cols[dst]
    event = False
    if target and _OWNER[target[-1]] != me:
        # Column combat, top down (R3: it stops at the attacker's own piece).
        revealed |= _BIT[piece]
        base = piece * 20
        i = len(target)
        while i:
            defender = target[i - 1]
            if _OWNER[defender] == me:
                break
            revealed |= _BIT[defender]
            outcome = duels[base + defender]
            if outcome > 0:
                graves[1 - me].append(defender)
                i -= 1
                event = True
                continue
            if outcome < 0:
                graves[me].append(piece)
                cols[dst] = target[:i]
                return revealed, True, False
            break  # a tie: both stay, the defender is blocked under the attacker
        target = target[:i]
    target = (*target, piece)
    cols[dst] = target
    if _ENEMY_ROW[me][dst]:
        return revealed, True, _statue(target, me, strict)
    return revealed, event, False


def _statue(col: tuple[int, ...], player: int, strict: bool) -> bool:
    """R5: five or more of ``player``'s pieces with no enemy piece above them (strict: exactly
    five pieces, all the player's)."""
    if strict:
        return len(col) == 5 and all(_OWNER[p] == player for p in col)
    n = 0
    for p in reversed(col):
        if _OWNER[p] != player:
            break
        n += 1
    return n >= 5


_StepRow: TypeAlias = tuple[int, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]


def _step_table(player: int, attack_frozen: bool) -> tuple[_StepRow, ...]:
    """Per field a piece of ``player`` can leave: ``(field, free, guarded)`` steps, where a
    guarded step ends on the player's own start row and is barred when a frozen enemy piece
    tops the target (R4); with ``attack_frozen`` every step is free."""
    rows = []
    for f in range(25):
        dests = _MOVES[player][f]
        if not dests:
            continue
        free = tuple((f, d) for d in dests if attack_frozen or not _HOME[player][d])
        guarded = tuple((f, d) for d in dests if not attack_frozen and _HOME[player][d])
        rows.append((f, free, guarded))
    return tuple(rows)


#: _STEPS[attack_frozen][player]: see :func:`_step_table`.
_STEPS = tuple(tuple(_step_table(q, bool(a)) for q in (0, 1)) for a in (0, 1))
#: _OWN[player][piece]: the piece belongs to the player.
_OWN: tuple[tuple[bool, ...], ...] = tuple(
    tuple(o == q for o in _OWNER) for q in (0, 1))
#: _GEOMETRY[player]: every (from, to) that is one step forward, left or right for the player.
_GEOMETRY: tuple[frozenset[tuple[int, int]], ...] = tuple(
    frozenset((f, d) for f in range(25) for d in _MOVES[q][f]) for q in (0, 1))


def _step_list(cols: Sequence[tuple[int, ...]], player: int,
               attack_frozen: bool) -> list[tuple[int, int]]:
    """Every single step ``player`` may make now (the hot loop of random play)."""
    out: list[tuple[int, int]] = []
    own = _OWN[player]
    for f, free, guarded in _STEPS[attack_frozen][player]:
        col = cols[f]
        if col and own[col[-1]]:
            out += free
            for step in guarded:
                target = cols[step[1]]
                if not target or own[target[-1]]:
                    out.append(step)
    return out


def _can_step(cols: Sequence[tuple[int, ...]], player: int, attack_frozen: bool) -> bool:
    """True when ``player`` has at least one step (cheaper than listing them)."""
    own = _OWN[player]
    for f, free, guarded in _STEPS[attack_frozen][player]:
        col = cols[f]
        if col and own[col[-1]]:
            if free:
                return True
            for step in guarded:
                target = cols[step[1]]
                if not target or own[target[-1]]:
                    return True
    return False


# -- random play (hot path) -----------------------------------------------------------------------
# Random play (benchmarks, soaks, playouts) draws a turn and then applies it. Both used to list
# every step from scratch and apply replayed the steps the draw had just made. Here a position's
# tops are two 25-bit masks (fields topped by TIKI, by TAC), a step only changes its two fields'
# bits, and the step list is read from tables keyed by each row's bits of the masks; the draw
# also keeps the position it reached, so ``apply`` of that very move returns it. Same draws,
# same positions: a test replays random games against the plain listing
# (``tests/test_tactiki_speed.py``).

_FIELD_BIT: tuple[int, ...] = tuple(1 << f for f in range(25))
_RowTables: TypeAlias = tuple[tuple[tuple[tuple[int, int], ...], ...], ...]


@lru_cache(maxsize=4)
def _row_tables(player: int, attack_frozen: bool) -> _RowTables:
    """Per row of the board, the steps from it in the order :func:`_step_list` lists them, for
    each key ``own | enemy << 5`` (the row's fields topped by the player's pieces and by the
    enemy's, as 5-bit masks). A step depends only on whose piece tops its source field and,
    for a step along the player's own start row, whose tops its target (ruling R4), so the
    rows other than that one ignore ``enemy``. Computed by :func:`_step_list` itself on a board
    with one piece on each topped field, so the two can never disagree."""
    mine, theirs = (player * PIECES_PER_PLAYER,), ((1 - player) * PIECES_PER_PLAYER,)
    rows = []
    for row in range(5):
        table = []
        for key in range(1024):
            cols: list[tuple[int, ...]] = [()] * 25
            for c in range(5):
                if key >> c & 1:
                    cols[row * 5 + c] = mine
                elif key >> (c + 5) & 1:
                    cols[row * 5 + c] = theirs
            table.append(tuple(_step_list(cols, player, attack_frozen)))
        rows.append(tuple(table))
    return tuple(rows)


def _masks(cols: Sequence[tuple[int, ...]]) -> tuple[int, int]:
    """The fields whose top piece is TIKI's and those whose top is TAC's, as bitmasks."""
    m0 = m1 = 0
    for f, col in enumerate(cols):
        if col:
            if col[-1] < PIECES_PER_PLAYER:
                m0 |= _FIELD_BIT[f]
            else:
                m1 |= _FIELD_BIT[f]
    return m0, m1


def _mask_steps(player: int, attack_frozen: bool, own: int, enemy: int
                ) -> tuple[tuple[int, int], ...]:
    """:func:`_step_list` for a board whose own and enemy tops are the masks ``own`` and
    ``enemy`` (see :func:`_row_tables`)."""
    r0, r1, r2, r3, r4 = _row_tables(player, attack_frozen)
    if player:
        return (r0[own & 31] + r1[own >> 5 & 31] + r2[own >> 10 & 31] + r3[own >> 15 & 31]
                + r4[own >> 20 | (enemy >> 20) << 5])
    return (r0[own & 31 | (enemy & 31) << 5] + r1[own >> 5 & 31] + r2[own >> 10 & 31]
            + r3[own >> 15 & 31] + r4[own >> 20])


def _tops(cols: Sequence[tuple[int, ...]], player: int, own: int, enemy: int,
          fields: tuple[int, int]) -> tuple[int, int]:
    """``player``'s masks ``own`` and ``enemy`` (:func:`_masks`) after a step changed the two
    ``fields`` of ``cols``."""
    for f in fields:
        bit = _FIELD_BIT[f]
        col = cols[f]
        if not col:
            own &= ~bit
            enemy &= ~bit
        elif (col[-1] < PIECES_PER_PLAYER) == (player == 0):
            own |= bit
            enemy &= ~bit
        else:
            enemy |= bit
            own &= ~bit
    return own, enemy


#: The empty start fields of a player, by the start row's 5-bit mask of empty fields.
_EMPTY_HOME: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(f for c, f in enumerate(START_FIELDS[q]) if key >> c & 1) for key in range(32))
    for q in (0, 1))
_HOME_SHIFT = (0, 20)
def _below(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)``: for a plain ``random.Random`` the same number by the same draws
    (CPython's ``_randbelow_with_getrandbits``, written out on the public ``getrandbits``; a
    third of random play's time went into ``randrange``'s general path), for any other kind of
    generator its own ``randrange``."""
    if type(rng) is not random.Random:
        return rng.randrange(n)
    k = n.bit_length()
    r = rng.getrandbits(k)
    while r >= n:
        r = rng.getrandbits(k)
    return r


#: One :class:`Steps` per one- or two-step turn random play draws, made once: a move is
#: immutable, so sharing it is safe, and building a frozen dataclass costs more than a look-up.
_STEPS_MADE: dict[tuple[tuple[int, int], ...], Steps] = {}


#: The last turn random play drew: (state, move, the state after it, that state's top masks),
#: in a one-item list. The entry is replaced whole (a tuple) and compared by identity: states
#: and moves are immutable, so the entry is right for whoever reads it, on any thread.
_LAST_DRAW: list[tuple[Any, Any, Any, tuple[int, int]]] = [(None, None, None, (0, 0))]


def _first_steps(state: TacState) -> Iterator[tuple[tuple[int, int], list[tuple[int, ...]],
                                                    tuple[list[int], list[int]], int,
                                                    list[tuple[int, int]]]]:
    """Each first step open to the player to move: the step, the columns, graveyards and
    revealed mask after it, and the second steps then open (none once it completes a statue).
    The turn table and :meth:`TacTikiGame.ways` both walk turns this way."""
    player, opts = state.player, state.options
    duels, strict, attack_frozen = opts.tables.duel, opts.strict_statue, opts.attack_frozen
    g0, g1 = state.graves
    for first in _step_list(state.columns, player, attack_frozen):
        cols = list(state.columns)
        graves = (list(g0), list(g1))
        revealed, _, won = _step(cols, graves, state.revealed, *first, duels, strict)
        yield first, cols, graves, revealed, ([] if won else
                                              _step_list(cols, player, attack_frozen))


def _reincarnations(state: TacState) -> list[Reincarnate]:
    """Every reincarnation open to the player to move: one per defeated rank and empty field."""
    grave = state.graves[state.player]
    if not grave:
        return []
    fields = [f for f in START_FIELDS[state.player] if not state.columns[f]]
    if not fields:
        return []
    return [Reincarnate(r, f) for r in state.options.tables.ranks_in(grave) for f in fields]


def _can_reincarnate(state: TacState, player: int) -> bool:
    return bool(state.graves[player]) and any(
        not state.columns[f] for f in START_FIELDS[player])


def _end_turn(state: TacState, cols: list[tuple[int, ...]],
              graves: tuple[list[int], list[int]], revealed: int, event: bool,
              won: bool) -> TacState:
    """The state after the player to move finished a turn that changed the board."""
    quiet = 0 if event else state.quiet + 1
    limit = state.options.quiet_turns
    old0, old1 = state.graves
    # A graveyard whose size did not change did not change (steps only add to graveyards).
    g0 = old0 if len(graves[0]) == len(old0) else tuple(sorted(graves[0]))
    g1 = old1 if len(graves[1]) == len(old1) else tuple(sorted(graves[1]))
    # tuple.__new__ skips NamedTuple's Python-level constructor: this runs once per turn.
    return _new_state(TacState, (tuple(cols), (g0, g1), 1 - state.player, revealed, quiet,
                                 state.player if won else None,
                                 not won and limit > 0 and quiet >= limit, state.options))


def _play_steps(state: TacState, steps: Sequence[tuple[int, int]]) -> TacState:
    """Apply already-checked steps (used to compare turns by their result)."""
    cols = list(state.columns)
    graves = (list(state.graves[0]), list(state.graves[1]))
    revealed, event, won = state.revealed, False, False
    duels, strict = state.options.tables.duel, state.options.strict_statue
    for src, dst in steps:
        revealed, ev, won = _step(cols, graves, revealed, src, dst, duels, strict)
        event = event or ev
    return _end_turn(state, cols, graves, revealed, event, won)


# -- notation ------------------------------------------------------------------------------------

_TURN_HELP = Said.gettext("write a turn as 'c1-c2 c2-c3', 'c1-c2', 'reincarnate 3 c1' or "
                         "'pass'")


def field_index(name: str) -> int:
    """The index of a field name such as ``"c3"`` (any case); :class:`IllegalMove` otherwise."""
    f = _FIELD_INDEX.get(name.strip().lower())
    if f is None:
        raise IllegalMove(Said.gettext("{field} is not a field: fields go from a1 to e5",
                                       field=repr(name)))
    return f


def _name(f: int) -> str:
    """A field's name, or the raw value for a move built by code with a bad field."""
    return FIELD_NAMES[f] if _is_int(f) and 0 <= f < 25 else repr(f)


def _raw_text(move: Move) -> str:
    """A move's own text, steps in the order given."""
    if isinstance(move, Steps):
        return " ".join(f"{_name(a)}-{_name(b)}" for a, b in move.steps)
    if isinstance(move, Reincarnate):
        return f"reincarnate {move.rank} {_name(move.field)}"
    return "pass"


# -- setting up ----------------------------------------------------------------------------------


def setup_state(setup: Mapping[int, Sequence[int]], options: Options = DEFAULT_OPTIONS
                ) -> TacState:
    """The opening position for ``setup`` (start field -> its two ranks, bottom first).

    Copy letters go to each rank's copies in the order fields a→e, bottom first, so one set-up
    always gives the same ids. The caller has checked the set-up against the rank option.
    """
    ranks = options.ranks
    cols: list[tuple[int, ...]] = [()] * 25
    for q in (0, 1):
        used: dict[int, int] = {}
        for f in START_FIELDS[q]:
            column = []
            for rank in setup[f]:
                k = ranks.index(rank) + used.get(rank, 0)
                used[rank] = used.get(rank, 0) + 1
                column.append(q * PIECES_PER_PLAYER + k)
            cols[f] = tuple(column)
    return TacState(tuple(cols), ((), ()), 0, 0, 0, None, False, options)


def _setup_from_record(value: Any, options: Options) -> dict[int, list[int]]:
    """Check a record's ``setup`` against the rules and the rank option (one clear sentence)."""
    if not isinstance(value, dict):
        raise RecordError("a TacTiki record needs a 'setup' object: start field -> two ranks")
    setup: dict[int, list[int]] = {}
    for key, ranks in value.items():
        f = _FIELD_INDEX.get(key.lower()) if isinstance(key, str) else None
        if f is None or not (_HOME[0][f] or _HOME[1][f]):
            raise RecordError(f"setup: {key!r} is not a start field (a1 to e1, a5 to e5)")
        if f in setup:
            raise RecordError(f"setup: {FIELD_NAMES[f]} is given twice")
        if (not isinstance(ranks, list) or len(ranks) != 2
                or not all(_is_int(r) and 1 <= r <= 5 for r in ranks)):
            raise RecordError(f"setup: {FIELD_NAMES[f]} must hold exactly two ranks from 1 to 5,"
                              f" bottom first, not {ranks!r}")
        setup[f] = ranks
    for q in (0, 1):
        missing = [FIELD_NAMES[f] for f in START_FIELDS[q] if f not in setup]
        if missing:
            raise RecordError(f"setup: {PLAYER_NAMES[q]}'s start field {missing[0]} is missing")
        used = sorted(r for f in START_FIELDS[q] for r in setup[f])
        if tuple(used) != options.ranks:
            want = ", ".join(map(str, options.ranks))
            raise RecordError(f"setup: {PLAYER_NAMES[q]}'s pieces must have the ranks {want},"
                              f" but the set-up has {', '.join(map(str, used))}")
    return setup


# -- what a player may know ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeenPiece:
    """One piece as a player sees it: the owner always; rank and id only when allowed.

    Own pieces carry ``rank`` and ``piece`` (the id). Enemy pieces never carry the id (it names
    the rank); ``rank`` is set only while their rank is revealed (ruling R9).
    """

    owner: int
    rank: int | None
    piece: str | None

    def to_json(self) -> JSON:
        return {"owner": self.owner, "rank": self.rank, "piece": self.piece}


@dataclass(frozen=True, slots=True)
class PlayerView:
    """What one player may know of a position: the board (25 columns, bottom first) and both
    graveyards, own pieces in full, enemy pieces only as far as they were revealed."""

    player: int
    to_move: int | None
    board: tuple[tuple[SeenPiece, ...], ...]
    graveyards: tuple[tuple[SeenPiece, ...], tuple[SeenPiece, ...]]

    def to_json(self) -> JSON:
        return {"player": self.player, "to_move": self.to_move,
                "board": {FIELD_NAMES[f]: [s.to_json() for s in col]
                          for f, col in enumerate(self.board)},
                "graveyards": [[s.to_json() for s in g] for g in self.graveyards]}


def player_view(state: TacState, player: int) -> PlayerView:
    """What ``player`` may know: own ranks and ids; enemy ranks only while revealed (R9)."""
    tables = state.options.tables

    def seen(p: int) -> SeenPiece:
        owner = _OWNER[p]
        if owner == player:
            return SeenPiece(owner, tables.piece_rank[p], tables.ids[p])
        rank = tables.piece_rank[p] if state.revealed & _BIT[p] else None
        return SeenPiece(owner, rank, None)

    # Enemy graveyard pieces are listed in a fixed order that does not depend on ids.
    def grave(q: int) -> tuple[SeenPiece, ...]:
        pieces = [seen(p) for p in state.graves[q]]
        if q != player:
            pieces.sort(key=lambda s: (s.rank is None, s.rank or 0))
        return tuple(pieces)

    over = state.winner is not None or state.draw
    return PlayerView(player, None if over else state.player,
                      tuple(tuple(seen(p) for p in col) for col in state.columns),
                      (grave(0), grave(1)))


# -- the engine ----------------------------------------------------------------------------------


class TacTikiGame(Game[TacState, Move]):
    """The TacTiki referee: see ``seeds/tactiki.md`` for the rules and rulings."""

    name = "tactiki"
    title = "TacTiki"
    setup_input = SetupInput.START_STACKS
    hidden_information = True
    option_names = ("ranks", "strict_statue", "attack_frozen", "quiet_turns")
    #: The referee's draw after 30 quiet turns is no printed rule: off by default (R8), on
    #: between machines, where random play would otherwise shuffle sideways for ever. The
    #: table writes it off into every record all the same, so that a tikiboard from before
    #: issue 31 (whose default was 30) replays the record as the station played it.
    table_defaults: ClassVar[Mapping[str, Any]] = {"quiet_turns": 0}
    machine_defaults: ClassVar[Mapping[str, Any]] = {"quiet_turns": MACHINE_QUIET_TURNS}
    presets = (STANDARD,
               OptionPreset("strict statue", lambda _n: {"strict_statue": True}),
               OptionPreset("attack frozen", lambda _n: {"attack_frozen": True}))

    # -- rules -----------------------------------------------------------------------------------
    def legal_moves(self, state: TacState) -> list[Move]:
        return list(_turn_table(state).values())

    def ways(self, state: TacState) -> list[Move]:
        """Every legal turn step by step: two turns that reach the same position by different
        steps leave different pictures on the board before the fight's losers go off."""
        if state.winner is not None or state.draw:
            return []
        out: list[Move] = []
        for first, _, _, _, seconds in _first_steps(state):
            out += [Steps((first, second)) for second in seconds] or [Steps((first,))]
        out += _reincarnations(state)
        return out or [PASS]

    def apply(self, state: TacState, move: Move) -> TacState:
        last = _LAST_DRAW[0]
        if last[1] is move and last[0] is state:  # the turn random play just drew
            after: TacState = last[2]
            return after
        if state.winner is not None or state.draw:
            raise IllegalMove(Said.gettext("The game is over: no more turns can be played"))
        if isinstance(move, Steps):
            return self._apply_steps(state, move.steps)
        if isinstance(move, Reincarnate):
            return self._apply_reincarnation(state, move)
        if isinstance(move, Pass):
            return self._apply_pass(state)
        raise IllegalMove(Said.gettext("{move} is not a TacTiki turn", move=repr(move)))

    def _apply_steps(self, state: TacState, steps: tuple[tuple[int, int], ...]) -> TacState:
        if not 1 <= len(steps) <= 2:
            raise IllegalMove(Said.gettext("A turn has one or two steps"))
        player, opts = state.player, state.options
        attack_frozen = opts.attack_frozen
        cols = list(state.columns)
        graves = (list(state.graves[0]), list(state.graves[1]))
        revealed, event, won = state.revealed, False, False
        own, geometry, home = _OWN[player], _GEOMETRY[player], _HOME[player]
        duels, strict = opts.tables.duel, opts.strict_statue
        for src, dst in steps:
            if won:
                raise IllegalMove(Said.gettext(
                    "{step} already completes a statue and wins the game: the turn ends "
                    "there, without a second step", step=_STEP_TEXT[steps[0]]))
            # The common case is checked here cheaply; _check_step has the last word and the
            # sentence for the player.
            col = cols[src] if (src, dst) in geometry else None
            if not (col and own[col[-1]] and (
                    attack_frozen or not home[dst] or not cols[dst] or own[cols[dst][-1]])):
                _check_step(cols, player, src, dst, attack_frozen)
            revealed, ev, won = _step(cols, graves, revealed, src, dst, duels, strict)
            event = event or ev
        if len(steps) == 1 and not won and _can_step(cols, player, attack_frozen):
            raise IllegalMove(Said.gettext("You can still make a second step, so the turn needs "
                                           "two steps"))
        return _end_turn(state, cols, graves, revealed, event, won)

    def _apply_reincarnation(self, state: TacState, move: Reincarnate) -> TacState:
        player, f = state.player, move.field
        if not (_is_int(f) and 0 <= f < 25):
            raise IllegalMove(Said.gettext("{field} is not a field: fields go from a1 to e5",
                                           field=repr(f)))
        grave = state.graves[player]
        rank_of = state.options.tables.piece_rank
        chosen = [p for p in grave if rank_of[p] == move.rank]
        if not chosen:
            raise IllegalMove(Said.gettext("You have no defeated {rank} to reincarnate",
                                           rank=move.rank))
        if not _HOME[player][f]:
            raise IllegalMove(Said.gettext("{field} is not one of your start fields: reincarnate "
                                           "onto an empty start field of yours",
                                           field=FIELD_NAMES[f]))
        if state.columns[f]:
            raise IllegalMove(Said.gettext("{field} is not empty: reincarnate onto an empty start "
                                           "field of yours", field=FIELD_NAMES[f]))
        piece = chosen[0]  # R11: the lowest id of that rank comes back
        cols = list(state.columns)
        cols[f] = (piece,)
        graves = (list(state.graves[0]), list(state.graves[1]))
        graves[player].remove(piece)
        # R9: which piece came back is secret, so every defeated piece of this player is hidden.
        hidden = 0
        for p in grave:
            hidden |= _BIT[p]
        return _end_turn(state, cols, graves, state.revealed & ~hidden, True, False)

    def _apply_pass(self, state: TacState) -> TacState:
        player, opts = state.player, state.options
        if _can_step(state.columns, player, opts.attack_frozen):
            raise IllegalMove(Said.gettext("You can still move a piece, so you cannot pass"))
        if _can_reincarnate(state, player):
            raise IllegalMove(Said.gettext("You can still reincarnate a defeated piece, so you "
                                           "cannot pass"))
        quiet = state.quiet + 1
        other = 1 - player
        # R8: when the other player cannot act either, nothing can ever change: a draw.
        stuck = (not _can_step(state.columns, other, opts.attack_frozen)
                 and not _can_reincarnate(state, other))
        limit = opts.quiet_turns
        return state._replace(player=other, quiet=quiet,
                              draw=stuck or (limit > 0 and quiet >= limit))

    def to_move(self, state: TacState) -> int | None:
        return None if state.winner is not None or state.draw else state.player

    def is_over(self, state: TacState) -> bool:
        return state.winner is not None or state.draw

    def scores(self, state: TacState) -> tuple[int, ...]:
        return (int(state.winner == 0), int(state.winner == 1))

    def result(self, state: TacState) -> FinalResult | None:
        """Winner ``(w,)`` for a statue; nobody for the referee draw."""
        if state.winner is not None:
            return FinalResult(self.scores(state), (state.winner,))
        return FinalResult(self.scores(state), (), draw=True) if state.draw else None

    def random_move(self, state: TacState, rng: random.Random) -> Move:
        """Draw step by step: a first step or a reincarnation uniformly, then a second step
        uniformly. Not uniform over turns, but every legal turn can come out, and it costs two
        step listings instead of every turn. The position the turn reaches is kept for
        :meth:`apply` (see ``_LAST_DRAW``)."""
        if state.winner is not None or state.draw:
            raise IllegalMove("nobody is to move")
        player, opts = state.player, state.options
        attack_frozen = opts.attack_frozen
        last = _LAST_DRAW[0]
        m0, m1 = last[3] if last[2] is state else _masks(state.columns)
        own, enemy = (m1, m0) if player else (m0, m1)
        firsts = _mask_steps(player, attack_frozen, own, enemy)
        grave = state.graves[player]
        empty: tuple[int, ...] = ()
        ranks: tuple[int, ...] = ()
        if grave:
            empty = _EMPTY_HOME[player][~(own | enemy) >> _HOME_SHIFT[player] & 31]
            if empty:
                ranks = opts.tables.ranks_in(grave)
        n = len(firsts) + len(ranks) * len(empty)
        if n == 0:
            return PASS
        k = _below(rng, n)
        if k >= len(firsts):
            r, i = divmod(k - len(firsts), len(empty))
            reincarnation = Reincarnate(ranks[r], empty[i])
            move: Move = reincarnation
            after = self._apply_reincarnation(state, reincarnation)
            own |= _FIELD_BIT[empty[i]]
        else:
            first = firsts[k]
            cols = list(state.columns)
            graves = (list(state.graves[0]), list(state.graves[1]))
            duels, strict = opts.tables.duel, opts.strict_statue
            revealed, event, won = _step(cols, graves, state.revealed, *first, duels, strict)
            own, enemy = _tops(cols, player, own, enemy, first)
            steps: tuple[tuple[int, int], ...] = (first,)
            if not won:
                seconds = _mask_steps(player, attack_frozen, own, enemy)
                if seconds:
                    second = seconds[_below(rng, len(seconds))]
                    steps = (first, second)
                    revealed, ev, won = _step(cols, graves, revealed, *second, duels, strict)
                    event = event or ev
                    own, enemy = _tops(cols, player, own, enemy, second)
            made = _STEPS_MADE.get(steps)
            if made is None:
                made = _STEPS_MADE[steps] = Steps(steps)
            move = made
            after = _end_turn(state, cols, graves, revealed, event, won)
        _LAST_DRAW[0] = (state, move, after, (enemy, own) if player else (own, enemy))
        return move

    def trace(self, state: TacState, move: Move) -> list[TacState]:
        """The positions after each step of ``move`` (one for a reincarnation or a pass); the
        last is ``apply(state, move)``. Earlier ones are mid-turn boards for sensors and
        displays: the same player is still to move and they are not turn starts."""
        last = self.apply(state, move)
        if not isinstance(move, Steps) or len(move.steps) == 1:
            return [last]
        return [_mid_turn(state, move.steps[0]), last]

    # -- notation --------------------------------------------------------------------------------
    def parse_move(self, state: TacState, text: str) -> Move:
        words = text.lower().split()
        if not words:
            raise IllegalMove(Said.gettext("An empty entry is not a turn: {help}", help=_TURN_HELP))
        if words[0] == "pass":
            if len(words) != 1:
                raise IllegalMove(Said.gettext("{text} is not a turn: 'pass' stands alone",
                                               text=repr(text)))
            return PASS
        if words[0] == "reincarnate":
            if len(words) != 3 or not (words[1].isascii() and words[1].isdigit()):
                raise IllegalMove(Said.gettext(
                    "{text} is not a turn: write a reincarnation as 'reincarnate RANK FIELD', "
                    "for example 'reincarnate 3 c1'", text=repr(text)))
            return Reincarnate(int(words[1]), field_index(words[2]))
        if len(words) > 2:
            raise IllegalMove(Said.gettext("{text} is not a turn: a turn has at most two steps",
                                           text=repr(text)))
        steps = []
        for word in words:
            ends = word.split("-")
            if len(ends) != 2:
                raise IllegalMove(Said.gettext("{word} is not a step: {help}", word=repr(word),
                                               help=_TURN_HELP))
            steps.append((field_index(ends[0]), field_index(ends[1])))
        return Steps(tuple(steps))

    def move_text(self, state: TacState, move: Move) -> str:
        """The canonical text (R12): of all texts that give the same position, the one with
        the fewest steps, then the alphabetically first. An illegal move keeps its own text."""
        if not isinstance(move, Steps) or len(move.steps) != 2 or not self.is_legal(state, move):
            return _raw_text(move)
        result = _play_steps(state, move.steps)
        key = (result.columns, result.graves[0], result.graves[1], result.revealed)
        canonical = _turn_table(state).get(key, move)
        return _raw_text(canonical)

    # -- serialisation ---------------------------------------------------------------------------
    def state_to_json(self, state: TacState) -> JSON:
        ids = state.options.tables.ids
        winner = self.winners(state)
        return {
            "game": self.name,
            "options": state.options.to_json(),
            "board": {FIELD_NAMES[f]: [ids[p] for p in col]
                      for f, col in enumerate(state.columns)},
            "graveyards": [[ids[p] for p in grave] for grave in state.graves],
            "player": state.player,
            "to_move": self.to_move(state),
            "revealed": [ids[p] for p in range(len(ids)) if state.revealed & _BIT[p]],
            "quiet_turns": state.quiet,
            "winner": None if winner is None else list(winner),
        }

    def state_from_json(self, data: JSON) -> TacState:
        if not isinstance(data, dict):
            raise RecordError("a TacTiki state must be a JSON object")
        if data.get("game", self.name) != self.name:
            raise RecordError(f"not a TacTiki state: game is {data.get('game')!r}")
        options = Options.from_json(data.get("options"))
        tables = options.tables
        seen: set[int] = set()

        def piece(name: Any, where: str) -> int:
            p = tables.index.get(name) if isinstance(name, str) else None
            if p is None:
                raise RecordError(f"state: {where} names an unknown piece {name!r}")
            if p in seen:
                raise RecordError(f"state: piece {name} appears twice")
            seen.add(p)
            return p

        board = data.get("board")
        if not isinstance(board, dict) or len(board) != 25:
            raise RecordError("state: 'board' must give all 25 fields a1 to e5")
        cols: list[tuple[int, ...] | None] = [None] * 25
        for key, col in board.items():
            f = _FIELD_INDEX.get(key.lower()) if isinstance(key, str) else None
            if f is None or cols[f] is not None:
                raise RecordError(f"state: board field {key!r} is unknown or repeated")
            if not isinstance(col, list):
                raise RecordError(f"state: board field {key} must be a list of piece ids")
            cols[f] = tuple(piece(name, f"board field {key}") for name in col)
        graveyards = data.get("graveyards")
        if not isinstance(graveyards, list) or len(graveyards) != 2 or not all(
                isinstance(g, list) for g in graveyards):
            raise RecordError("state: 'graveyards' must be two lists of piece ids")
        graves: list[tuple[int, ...]] = []
        for q, grave in enumerate(graveyards):
            pieces = tuple(sorted(piece(name, "a graveyard") for name in grave))
            if any(_OWNER[p] != q for p in pieces):
                raise RecordError(f"state: graveyard {q} holds a piece of the other player")
            graves.append(pieces)
        if len(seen) != len(tables.ids):
            missing = sorted(set(range(len(tables.ids))) - seen)
            raise RecordError(f"state: piece {tables.ids[missing[0]]} is neither on the board"
                              " nor in a graveyard")
        player = data.get("player")
        if player not in (0, 1) or not _is_int(player):
            raise RecordError("state: 'player' must be 0 or 1")
        revealed_names = data.get("revealed", [])
        if not isinstance(revealed_names, list):
            raise RecordError("state: 'revealed' must be a list of piece ids")
        revealed = 0
        for name in revealed_names:
            p = tables.index.get(name) if isinstance(name, str) else None
            if p is None:
                raise RecordError(f"state: 'revealed' names an unknown piece {name!r}")
            revealed |= _BIT[p]
        quiet = data.get("quiet_turns", 0)
        if not _is_int(quiet) or quiet < 0:
            raise RecordError("state: 'quiet_turns' must be a whole number from 0")
        winner_value = data.get("winner")
        winner: int | None = None
        draw = False
        if winner_value == []:
            draw = True
        elif winner_value is not None:
            if (not isinstance(winner_value, list) or len(winner_value) != 1
                    or winner_value[0] not in (0, 1) or not _is_int(winner_value[0])):
                raise RecordError("state: 'winner' must be null, [], [0] or [1]")
            winner = winner_value[0]
        state = TacState(tuple(c or () for c in cols), (graves[0], graves[1]), player,
                         revealed, quiet, winner, draw, options)
        if "to_move" in data and data["to_move"] != self.to_move(state):
            raise RecordError("state: 'to_move' contradicts 'player' and 'winner'")
        return state

    # -- sensors ---------------------------------------------------------------------------------
    def expected_view(self, state: TacState) -> View:
        """Field name -> what ideal sensors read there, bottom first, for all 25 fields.

        Sensors see owner and rank (``T3``, ``C5``), never the copy letter: two TIKI 3s are
        the same piece for the rules, and players may swap them without anybody noticing, so
        the tag registry names tags by owner and rank. :meth:`piece_ids` has the engine's ids.
        """
        return state.options.tables.sense(state.columns)

    def position_key(self, state: TacState) -> Hashable:
        """The state with copies of a rank unnamed: each piece as owner, rank and whether its
        rank is revealed, where it stands (R9 follows the piece, not the copy)."""
        sensed = state.options.tables.sensed
        revealed = state.revealed

        def named(p: int) -> tuple[str, bool]:
            return sensed[p], bool(revealed & _BIT[p])

        return (tuple(tuple(named(p) for p in col) for col in state.columns),
                tuple(tuple(sorted(named(p) for p in grave)) for grave in state.graves),
                state.player, state.quiet, state.winner, state.draw, state.options)

    def piece_ids(self, state: TacState) -> dict[str, tuple[str, ...]]:
        """Field name -> the engine's piece ids (``T3a``), bottom first, for all 25 fields."""
        ids = state.options.tables.ids
        return {FIELD_NAMES[f]: tuple(ids[p] for p in col) for f, col in enumerate(state.columns)}

    def placement_view(self, state: TacState, move: Move) -> View:
        """The board once the player has made every step by hand, before anyone removes the
        pieces a fight defeated: they are still where they were (the station settles fights
        from the registered ranks and then shows what to take off)."""
        return _physical_views(state, move)[-1]

    def transit_views(self, state: TacState, move: Move) -> list[View]:
        """After the first step of two: with the fight's losers still there, and taken off."""
        if not isinstance(move, Steps) or len(move.steps) < 2:
            return []
        return list(_first_step_views(state, move.steps[0]))

    def loose_views(self, state: TacState, move: Move) -> list[View]:
        """Both steps off one stack, the lower piece moved first: no sensor sees a stack's
        order, so the pieces a hand takes as the top may not be the engine's (a stack built
        by a hand in its own order). Only where the second step fights no one: the first
        picture is then the two steps' pieces swapped. (Low-noise accuracy table 1000045:
        'e1-d1 e1-d1' begun with the engine's lower tiki was unexplained, and the question
        still open on the turn before was dropped; both turns missed.)"""
        if not isinstance(move, Steps) or len(move.steps) != 2:
            return []
        (src, _), (again, second) = move.steps
        board = [list(col) for col in state.columns]
        if again != src or len(board[src]) < 2:
            return []
        mine = _OWNER[board[src][-1]]
        if _OWNER[board[src][-2]] != mine or (board[second] and
                                             _OWNER[board[second][-1]] != mine):
            return []
        board[second].append(board[src].pop(-2))
        return [state.options.tables.sense(tuple(col) for col in board)]

    def pieces(self, state: TacState) -> list[str]:
        return list(state.options.tables.sensed)

    def setup_record(self, state: TacState) -> JSON:
        return {"game": "tactiki", "options": state.options.to_json(),
                "setup": self.setup_of(state), "moves": []}

    # -- records ---------------------------------------------------------------------------------
    def record_segments(self, record: JSON) -> list[Segment[TacState]]:
        options = Options.from_json(options_of(record))
        start = setup_state(_setup_from_record(record.get("setup"), options), options)
        moves = record.get("moves")
        if not isinstance(moves, list):
            raise RecordError("a TacTiki record needs a 'moves' list (one entry per turn)")

        def begin(_previous: TacState | None) -> TacState:
            return start

        return [Segment(begin, moves, {})]

    def new_game(self, rng: random.Random, options: JSON | None = None) -> TacState:
        """A random set-up: each player's ranks shuffled, two per start field, bottom first."""
        opts = Options.from_json(options)
        setup: dict[int, list[int]] = {}
        for q in (0, 1):
            ranks = list(opts.ranks)
            rng.shuffle(ranks)
            for i, f in enumerate(START_FIELDS[q]):
                setup[f] = ranks[2 * i:2 * i + 2]
        return setup_state(setup, opts)

    def setup_of(self, state: TacState) -> dict[str, list[int]]:
        """The record ``setup`` of an opening position (start field -> ranks, bottom first)."""
        rank_of = state.options.tables.piece_rank
        return {FIELD_NAMES[f]: [rank_of[p] for p in state.columns[f]]
                for q in (0, 1) for f in START_FIELDS[q]}

    # -- people ----------------------------------------------------------------------------------
    def describe(self, state: TacState, words: Words | None = None) -> str:
        """The board row 5 at the top, each field's stack bottom→top as owner letter + rank
        (T = TIKI, C = TAC), then graveyards and whose turn it is."""
        _ = words or as_written
        rank_of = state.options.tables.piece_rank

        def label(p: int) -> str:
            return f"{ID_PREFIX[_OWNER[p]]}{rank_of[p]}"

        cells = ["".join(label(p) for p in col) or "." for col in state.columns]
        width = max(4, *(len(c) for c in cells))
        lines = ["   " + " ".join(c.ljust(width) for c in COLUMN_LETTERS).rstrip()]
        for row in range(4, -1, -1):
            line = " ".join(cells[row * 5 + c].ljust(width) for c in range(5))
            lines.append(f"{row + 1}  {line}".rstrip())
        lines.append(_("stacks read bottom to top; T = TIKI (row 1), C = TAC (row 5)"))
        for q in (0, 1):
            dead = ", ".join(str(rank_of[p]) for p in state.graves[q]) or _("none")
            lines.append(_("{player} defeated: {ranks}").format(player=PLAYER_NAMES[q],
                                                               ranks=dead))
        if state.winner is not None:
            lines.append(_("{player} built a statue and won").format(
                player=PLAYER_NAMES[state.winner]))
        elif state.draw:
            lines.append(_("drawn by the referee rule (R8): the game could not progress"))
        else:
            limit = state.options.quiet_turns
            quiet = _("{count} of {limit}").format(count=state.quiet, limit=limit) if limit \
                else str(state.quiet)
            lines.append(_("{player} to move (quiet turns: {quiet})").format(
                player=PLAYER_NAMES[state.player], quiet=quiet))
        return "\n".join(lines)

    # -- the players' own set-up (R1): two hidden-rank pieces on each own start field --------
    def start_stack_problem(self, cell: str, stack: Sequence[str]) -> str:
        row = cell[-1:]
        if row not in _START_ROWS.values():
            return f"{cell}: pieces go on the start rows 1 and 5 only"
        owner = next(o for o, r in _START_ROWS.items() if r == row)
        if any(not name.startswith(owner) for name in stack):
            return f"{cell}: only {PLAYER_NAMES[ID_PREFIX.index(owner)]} pieces here"
        if len(stack) != 2:
            return f"{cell}: two pieces on each start field ({len(stack)} now)"
        return ""

    def start_stacks_record(self, stacks: Mapping[str, Sequence[str]], options: JSON) -> JSON:
        setup = {cell: [int(name[1:]) for name in stack] for cell, stack in stacks.items()}
        if len(setup) != 2 * len(START_FIELDS[0]):
            raise RecordError("two pieces on each of the ten start fields")
        return {"game": self.name, "options": options, "setup": setup, "moves": []}

    # -- options chosen at the table, pictures ---------------------------------------------------
    def option_labels(self, options: JSON) -> tuple[Said, ...]:
        out: list[Said] = []
        if options.get("strict_statue") is True:
            out.append(Said.gettext("strict statue"))
        if options.get("attack_frozen") is True:
            out.append(Said.gettext("attack frozen"))
        ranks = options.get("ranks")
        if isinstance(ranks, list) and sorted(ranks) != list(DEFAULT_RANKS):
            out.append(Said.gettext("own ranks"))
        quiet = options.get("quiet_turns", DEFAULT_QUIET_TURNS)
        if isinstance(quiet, int) and quiet > 0:
            out.append(Said.gettext("draw after {count}", count=quiet))
        return tuple(out)

    def piece_style(self, piece: str) -> PieceStyle:
        """A piece in its player's colour: TIKI's (``T...``) first, TAC's (``C...``) second."""
        owner = ID_PREFIX.index(piece[0]) if piece[:1] in ID_PREFIX else None
        return PieceStyle(owner, piece)

    # -- what everybody may see (R15) -----------------------------------------------------------
    def public_piece(self, name: str) -> str:
        """A piece's name tells its rank (``T4``, ``C2b``, R11): shown as ``T?``/``C?``."""
        return _PIECE_NAME.sub(r"\1?", name)

    def public_text(self, text: str) -> str:
        """Piece names masked, and the rank of a reincarnation (``reincarnate 3 c1`` ->
        ``reincarnate ? c1``): which piece came back is secret (R9)."""
        words = [self.public_piece(word) for word in text.split(" ")]
        for i in range(len(words) - 1):
            if words[i].lower() == "reincarnate":
                words[i + 1] = "?"
        return " ".join(words)

    def public_record(self, record: JSON) -> JSON:
        """The set-up with every rank masked (each start field keeps its number of pieces, as
        ``null`` s) and every move through :meth:`public_text` (R15)."""
        out = copy.deepcopy(record)
        if "setup" in out:
            setup = out["setup"]
            out["setup"] = ({f: [None] * len(s) if isinstance(s, list) else None
                             for f, s in setup.items()} if isinstance(setup, dict) else None)
        moves = out.get("moves")
        if isinstance(moves, list):
            out["moves"] = [self.public_text(m) if isinstance(m, str) else None for m in moves]
        return out


#: A piece name as the registry or the engine writes it: owner, rank, copy letter (R11).
_PIECE_NAME = re.compile(r"\b(" + "|".join(ID_PREFIX) + r")[0-9]+[a-j]?\b")


# -- caches ----------------------------------------------------------------------------------------
# The engine singleton keeps no state: what is worth keeping is kept here, by pure functions of
# immutable values, each with a bound (lru_cache is thread-safe: the station's bots think on
# another thread with the same engine).

#: Positions whose legal turns are kept. Move inference asks for the canonical text of every
#: legal turn of the position at hand (hundreds of calls); a few entries leave room for a bot
#: thinking on another thread. Kept small on purpose: every table kept alive is walked by the
#: garbage collector, and random play (which never comes back to a position) ran 50 % slower
#: with 64 entries than with the one the engine used to keep.
TURN_TABLE_CACHE = 4
#: (position, first step) pairs whose in-between pictures are kept: every two-step way of every
#: turn of a position asks, and they depend on the first step only (a few dozen per position).
TRANSIT_CACHE = 64


@lru_cache(maxsize=TURN_TABLE_CACHE)
def _turn_table(state: TacState) -> Mapping[Any, Move]:
    """Every legal turn keyed by its resulting position, each under its canonical text (R12):
    fewest steps, then the alphabetically first text (read-only: the cache shares it)."""
    if state.winner is not None or state.draw:
        return MappingProxyType({})
    opts = state.options
    duels, strict = opts.tables.duel, opts.strict_statue
    table: dict[Any, Move] = {}
    texts: dict[Any, str] = {}

    def offer(key: Any, steps: tuple[tuple[int, int], ...]) -> None:
        text = " ".join(_STEP_TEXT[s] for s in steps)
        old = texts.get(key)
        if old is None or (len(text), text) < (len(old), old):
            texts[key] = text
            table[key] = Steps(steps)

    for first, cols1, graves1, rev1, seconds in _first_steps(state):
        if not seconds:
            offer((tuple(cols1), tuple(sorted(graves1[0])), tuple(sorted(graves1[1])), rev1),
                  (first,))
            continue
        for second in seconds:
            cols2 = cols1.copy()
            graves2 = (graves1[0].copy(), graves1[1].copy())
            rev2, _, _ = _step(cols2, graves2, rev1, *second, duels, strict)
            offer((tuple(cols2), tuple(sorted(graves2[0])), tuple(sorted(graves2[1])), rev2),
                  (first, second))
    for move in _reincarnations(state):
        table[move] = move
    if not table:
        table[PASS] = PASS
    return MappingProxyType(table)


def _mid_turn(state: TacState, first: tuple[int, int]) -> TacState:
    """The position after the first step of a two-step turn: the same player still to move."""
    cols = list(state.columns)
    graves = (list(state.graves[0]), list(state.graves[1]))
    opts = state.options
    revealed, _, _ = _step(cols, graves, state.revealed, *first, opts.tables.duel,
                           opts.strict_statue)
    return state._replace(columns=tuple(cols), revealed=revealed,
                          graves=(tuple(sorted(graves[0])), tuple(sorted(graves[1]))))


@lru_cache(maxsize=TRANSIT_CACHE)
def _first_step_views(state: TacState, first: tuple[int, int]) -> tuple[View, View]:
    """The board after the first step ``first`` of a turn made by hand: with the fight's
    losers still there, and once they are taken off."""
    return (_physical_views(state, Steps((first,)))[0],
            GAME.expected_view(_mid_turn(state, first)))


def _physical_views(state: TacState, move: Move) -> list[View]:
    """The board after each step of ``move`` made by hand, no defeated piece taken off yet."""
    tables = state.options.tables
    if not isinstance(move, Steps):
        return [GAME.expected_view(GAME.apply(state, move))]
    board = [list(col) for col in state.columns]
    engine = state
    views: list[View] = []
    for src, dst in move.steps:
        piece = engine.columns[src][-1]  # the engine's top: a dead piece on top is off already
        board[src].remove(piece)
        board[dst].append(piece)
        views.append(tables.sense(tuple(col) for col in board))
        if len(views) < len(move.steps):
            engine = GAME.trace(state, move)[0]
    return views


def _check_step(cols: Sequence[tuple[int, ...]], player: int, src: int, dst: int,
                attack_frozen: bool) -> None:
    """Raise :class:`IllegalMove` with a player's sentence when the step is not allowed."""
    for f in (src, dst):
        if not (_is_int(f) and 0 <= f < 25):
            raise IllegalMove(Said.gettext("{field} is not a field: fields go from a1 to e5",
                                           field=repr(f)))
    s, d = FIELD_NAMES[src], FIELD_NAMES[dst]
    col = cols[src]
    if not col:
        raise IllegalMove(Said.gettext("There is no piece on {field}", field=s))
    if _OWNER[col[-1]] != player:
        raise IllegalMove(Said.gettext("The top piece on {field} is {player}'s: you move only "
                                       "your own pieces", field=s,
                                       player=PLAYER_NAMES[1 - player]))
    if _ENEMY_ROW[player][src]:
        raise IllegalMove(Said.gettext("The piece on {field} is frozen on the enemy start row",
                                       field=s))
    (sr, sc), (dr, dc) = divmod(src, 5), divmod(dst, 5)
    forward = (dr - sr) * _FORWARD[player]
    sideways = abs(dc - sc)
    if src == dst:
        raise IllegalMove(Said.gettext("{src} to {dst} goes nowhere: a step goes to a "
                                       "neighbouring field", src=s, dst=d))
    if forward < 0:
        raise IllegalMove(Said.gettext("Pieces never move backwards"))
    if forward and sideways:
        if forward == 1 and sideways == 1:
            raise IllegalMove(Said.gettext("{src} to {dst} is diagonal: a step goes forward, left "
                                           "or right", src=s, dst=d))
        raise IllegalMove(Said.gettext("{src} to {dst} is not a step: a step goes one field "
                                       "forward, left or right", src=s, dst=d))
    if forward + sideways > 1:
        raise IllegalMove(Said.gettext("{src} to {dst} is {count} fields: a step goes one field",
                                       src=s, dst=d,
                                       count=Said.gettext(_NUMBER_WORDS[forward + sideways])))
    target = cols[dst]
    if (not attack_frozen and _HOME[player][dst] and target
            and _OWNER[target[-1]] != player):
        raise IllegalMove(Said.gettext("The {player} piece on {field} is frozen on your start "
                                       "row and cannot be attacked",
                                       player=PLAYER_NAMES[1 - player], field=d))


GAME = TacTikiGame()
