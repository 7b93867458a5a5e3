"""The one interface every rules engine implements.

An engine is pure: no I/O, no clocks, no randomness except through a ``random.Random`` the caller
passes in, no hardware imports. States and moves are immutable and hashable, so the tracker can
compare positions, keep history and use them as dictionary keys, and a search can share them.

The vocabulary is deliberately small (after python-chess):

* ``legal_moves(state)`` / ``apply(state, move)``: the rules. ``apply`` checks legality itself and
  raises :class:`IllegalMove` with a sentence a player understands.
* ``to_move(state)``: whose decision is next (``None`` when nobody's: the game or a Topple round is
  over). Every decision is a move, so an engine never has to ask anybody anything.
* ``is_over`` / ``scores`` / ``result``: the outcome, in the units of ``docs/records.md``
  (a finished game's :class:`FinalResult`).
* ``parse_move`` / ``move_text``: the record notation.
* ``state_to_json`` / ``state_from_json``: a documented JSON state.
* ``expected_view(state)``: what ideal sensors would read, cell by cell.
* ``record_segments(record)``: how a record (``docs/records.md``) maps onto set-ups and moves, so
  ``tikiboard replay`` is one generic loop for all games.
* ``public_record`` / ``public_view`` / ``public_piece`` / ``public_text``: what anyone at the
  venue may see while the game is on (Topple's Secret Tiki cards and TacTiki's ranks are not),
  so the pages and the tournament feed redact by the rules, never by pattern-matching text.
"""

from __future__ import annotations

import abc
import copy
import enum
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pi_app.errors import TikiError, UnreadableInput
from pi_app.i18n import Said

# An engine's state and move types. Whatever is generic over them (Game, the follower, the
# session) is written plain where the game is chosen at run time (the station plays whichever
# game its board is for): the default then says so, as ``Game[Any, Any]`` would. (PEP 696
# defaults; typing only has them from Python 3.13, so only the type checker sees them.)
if TYPE_CHECKING:
    from typing_extensions import TypeVar as _TypeVar

    S = _TypeVar("S", default=Any)
    M = _TypeVar("M", default=Any)
else:
    S = TypeVar("S")
    M = TypeVar("M")

#: What ideal sensors read: cell name -> the pieces in it, bottom first. Piece names are the
#: engine's own (a tiki's name, ``"p0"`` for a token of player 0, ...), documented per game.
View = Mapping[str, tuple[str, ...]]

JSON = dict[str, Any]


class GameError(TikiError):
    """Base of the errors an engine raises; the message is meant for a player."""


class IllegalMove(GameError):
    """A move that the rules do not allow in this position (or a move text that means nothing)."""


class RecordError(GameError, UnreadableInput):
    """A record or JSON state that is not well formed: the file, not the play, is wrong."""


@dataclass(frozen=True)
class FinalResult:
    """How a finished game ended, as the engine rules it (``docs/records.md``).

    ``scores``: every player's, in the game's units. ``winners``: the winning players, several
    on a shared win; how a draw reads is the game's own (Manami's tie lists both players,
    TacTiki's referee draw nobody), so ``draw`` says it outright instead of callers guessing
    from the list. (Not "Outcome": that is what the follower reports after each event; nor
    "GameResult": a bot match's record with its timings.)
    """

    scores: tuple[int, ...]
    winners: tuple[int, ...]
    draw: bool = False

    def to_json(self) -> JSON:
        """The stored form (a station's ``games.result``, the feed): the scores and winners."""
        return {"scores": list(self.scores), "winners": list(self.winners)}


@dataclass(frozen=True)
class Segment(Generic[S]):
    """A stretch of a record: a set-up step, then moves in order.

    ``start`` receives the state so far (``None`` before the first segment) and returns the state
    the moves start from; it may raise :class:`IllegalMove` (a Topple round that starts before the
    previous one ended) or :class:`RecordError`. ``where`` holds the extra keys of an error location
    (``{"round": 2}`` for Topple, ``{}`` for the others).
    """

    start: Callable[[S | None], S]
    moves: Sequence[str]
    where: Mapping[str, int]


class SetupInput(enum.Enum):
    """What the table must read from the players before play, beyond the position it dealt.

    The station runs one set-up flow per kind (``pi_app.referee.setup_flow``); the engine says
    which its rules need, so the station never asks which game it plays.
    """

    #: Nothing: the dealt position is the whole set-up.
    NONE = "none"
    #: Stacks of hidden pieces the players build on their start fields, read bottom first in
    #: the order the pieces were put down (TacTiki's ranks): see :meth:`Game.start_stack_problem`.
    START_STACKS = "start stacks"
    #: A secret card each seat draws at a round's start and shows the station on the card pad
    #: (Topple's Secret Tiki cards): see :meth:`Game.secret_card_seats`.
    SECRET_CARDS = "secret cards"


#: A secret card, as the engine names it (a Topple Secret Tiki card: its three tikis).
Card = tuple[str, ...]


def card_tag(card: Card) -> str:
    """The tag registry name of a secret card: ``card:Hookipa/Lokahi/Nani``."""
    return "card:" + "/".join(card)


def card_of_tag(tag: str) -> Card | None:
    """The card a tag registry name stands for (:func:`card_tag`), or None for another tag."""
    if not tag.startswith("card:"):
        return None
    return tuple(tag.removeprefix("card:").split("/"))


#: How an engine is handed a language: a translator's ``gettext`` (the engines import nothing
#: of the station's translations; their texts are marked ``_(...)`` so ``pybabel`` finds them).
Words = Callable[[str], str]


def as_written(text: str) -> str:
    """The English text as the code writes it: :data:`Words` when no language is asked for."""
    return text


@dataclass(frozen=True)
class PieceStyle:
    """How a picture draws a piece: in its owner's colour (``owner``: a seat; None for a piece
    nobody owns, drawn in a colour of its own) with ``label`` on it."""

    owner: int | None
    label: str


@dataclass(frozen=True)
class OptionPreset:
    """A rule variant MENU offers at game over: a short name and its options for a player
    count (the printed rules are the preset whose options are empty)."""

    name: str
    options: Callable[[int], JSON]


#: The printed rules, MENU's first preset for every game.
STANDARD = OptionPreset("standard", lambda _n: {})


class Game(abc.ABC, Generic[S, M]):
    """A rules engine. Subclasses are stateless singletons: all state lives in ``S`` values."""

    #: The record's ``"game"`` value.
    name: ClassVar[str]
    #: A human name for menus and pages.
    title: ClassVar[str]
    #: How many may play a game (a count other than 2 is ``options["players"]`` of a new game).
    player_counts: ClassVar[tuple[int, ...]] = (2,)
    #: What the table reads from the players before play (:class:`SetupInput`).
    setup_input: ClassVar[SetupInput] = SetupInput.NONE
    #: The rules keep something from some player while the game is on (a Secret Tiki card, a
    #: TacTiki rank): a search for one player's move then reads what the others may not see.
    hidden_information: ClassVar[bool] = False
    #: Every option key a game chosen at the table may set (``seeds/*.md``, Options), except
    #: ``players``: the players are chosen on their own.
    option_names: ClassVar[tuple[str, ...]] = ()
    #: The options a game at the table starts from, where the station cannot follow the
    #: rulebook's default with its sensors (a record without the key still gets the engine's
    #: default, which is the rulebook's: issue 31).
    table_defaults: ClassVar[Mapping[str, Any]] = {}
    #: The options games between machines start from (bots, soaks, benchmarks, simulated
    #: tables): referee limits no rulebook prints, which end a game random play could shuffle
    #: on for ever, and bans on what simulated sensors cannot show. They are not the rules: the
    #: engine's own defaults are the rulebook's, for records and for people (issue 31).
    machine_defaults: ClassVar[Mapping[str, Any]] = {}
    #: What MENU offers after the game and player count: the printed rules, then a few variants.
    presets: ClassVar[tuple[OptionPreset, ...]] = (STANDARD,)

    # -- rules -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def legal_moves(self, state: S) -> list[M]:
        """Every legal move in ``state``; empty exactly when ``to_move(state)`` is ``None``."""

    @abc.abstractmethod
    def apply(self, state: S, move: M) -> S:
        """The state after ``move``; raises :class:`IllegalMove` when the move is not legal."""

    @abc.abstractmethod
    def to_move(self, state: S) -> int | None:
        """The player whose decision is next, or ``None``."""

    @abc.abstractmethod
    def is_over(self, state: S) -> bool:
        """True when the game has ended."""

    @abc.abstractmethod
    def scores(self, state: S) -> tuple[int, ...]:
        """Per player, in the units of ``docs/records.md``."""

    @abc.abstractmethod
    def result(self, state: S) -> FinalResult | None:
        """The final result once the game has ended, ``None`` while it goes on."""

    def winners(self, state: S) -> tuple[int, ...] | None:
        """The winning players (several on a shared win), or ``None`` while the game goes on:
        :meth:`result`'s, for the callers that only need them."""
        result = self.result(state)
        return None if result is None else result.winners

    def is_legal(self, state: S, move: M) -> bool:
        """True when ``move`` may be played in ``state``."""
        try:
            self.apply(state, move)
        except IllegalMove:
            return False
        return True

    # -- moves nobody chooses --------------------------------------------------------------------
    # The station takes these by itself (the follower), BACK steps over them, and the simulated
    # players expect them: one definition here, so those never disagree about what is forced.

    def forced_move(self, state: S) -> M | None:
        """The move from ``state`` that is nobody's choice, or None when somebody has one to
        make (or nobody is to move): every way of making a legal move by hand leaves the board
        as it is and all reach one position (a forced pass; Manami's ``resolve`` when the
        order of the two villages makes no difference). Of several moves that reach it, the
        one with the lowest record text, as move inference names an option."""
        ways = self.ways(state)
        if not ways:
            return None
        here = self.expected_view(state)
        if any(self.placement_view(state, way) != here for way in ways) or \
                len({self.position_key(self.apply(state, way)) for way in ways}) != 1:
            return None
        return min(ways, key=lambda way: self.move_text(state, way))

    def advance_forced(self, state: S, limit: int = 4) -> tuple[S, int]:
        """``state`` after the forced moves (:meth:`forced_move`) that follow it, at most
        ``limit`` of them (a guard: the rules never chain more than a couple), and how many
        there were."""
        count = 0
        while count < limit:
            move = self.forced_move(state)
            if move is None:
                break
            state = self.apply(state, move)
            count += 1
        return state, count

    # -- notation --------------------------------------------------------------------------------
    @abc.abstractmethod
    def parse_move(self, state: S, text: str) -> M:
        """Read a move in record notation (case-insensitive); raises :class:`IllegalMove`."""

    @abc.abstractmethod
    def move_text(self, state: S, move: M) -> str:
        """The canonical record text of ``move`` in ``state``."""

    def ways(self, state: S) -> list[M]:
        """Every legal move, including each different way of making the same one by hand
        (an engine's :meth:`legal_moves` may keep one move per result). Move inference needs
        every picture a legal move can leave on the board. The default is :meth:`legal_moves`.
        """
        return self.legal_moves(state)

    def position_key(self, state: S) -> Hashable:
        """What the rules can tell apart: two states with the same key are the same position
        for every rule and every sensor (TacTiki's two 3s of a player are interchangeable, so
        which copy stands where is no difference). Move inference groups moves by it: one move
        must not look like another merely because it moved the other copy. The default is the
        state itself."""
        return state

    # -- serialisation ---------------------------------------------------------------------------
    @abc.abstractmethod
    def state_to_json(self, state: S) -> JSON:
        """A JSON-ready dict that :meth:`state_from_json` reads back to an equal state."""

    @abc.abstractmethod
    def state_from_json(self, data: JSON) -> S:
        """Read a state; raises :class:`RecordError` when ``data`` is not a valid state."""

    # -- sensors ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def expected_view(self, state: S) -> View:
        """What ideal sensors would read for ``state``."""

    def placement_view(self, state: S, move: M) -> View:
        """What ideal sensors read once a player has made ``move`` by hand, before any follow-up
        the rules then demand (removing pieces a TacTiki fight defeated, clearing an influenced
        Tiki village). The default is the view after the move: no follow-up.
        """
        return self.expected_view(self.apply(state, move))

    def transit_views(self, state: S, move: M) -> list[View]:
        """Views the board may pass through while a player makes ``move`` by hand (the start
        and the placement view excluded): a tiki bubbling up one slot at a time, a totem
        dropping its tokens one by one, the first step of a two-step turn.

        Move inference waits instead of accepting a move whose view is on the way to another
        legal move. The default, no views, says the move is made in one motion.
        """
        return []

    def loose_views(self, state: S, move: M) -> list[View]:
        """Views a hand may also pass through while making ``move``, in an order of its own
        (pieces carried one at a time): not steps on the move's way, so no other move waits
        for them and a simulated hand does not follow them, but a picture the move explains
        while it is under way. The default: none."""
        return []

    # -- records ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def record_segments(self, record: JSON) -> list[Segment[S]]:
        """Split a record into set-ups and moves; raises :class:`RecordError` when malformed."""

    @abc.abstractmethod
    def setup_record(self, state: S) -> JSON:
        """A record with no moves whose set-up is ``state``, a game's starting position.

        ``replay`` of it gives back ``state``: the station writes its games this way, then
        appends the moves.
        """

    # -- set-up ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def new_game(self, rng: random.Random, options: JSON | None = None) -> S:
        """A fresh game with a random set-up drawn from ``rng`` (seed it to repeat a deal)."""

    def new_machine_game(self, rng: random.Random, options: JSON | None = None) -> S:
        """:meth:`new_game` for play between machines: :attr:`machine_defaults`, then
        ``options``. Bots, soaks and benches start here so that the rulebook's defaults can
        stay the engine's without a random game running on for ever."""
        return self.new_game(rng, {**self.machine_defaults, **(options or {})})

    def deal(self, state: S, rng: random.Random) -> S:
        """The set-up step that no player decides, such as Topple's next round.

        Only meaningful when nobody is to move and the game is not over; engines without such a
        step keep this default.
        """
        raise IllegalMove("nothing to deal: the game does not pause between rounds")

    def random_move(self, state: S, rng: random.Random) -> M:
        """A legal move drawn by ``rng`` (random play for tests, soak and benchmarks).

        The default draws uniformly from :meth:`legal_moves`; an engine whose move lists are
        large may override it with a cheaper draw, as long as every legal move can come out.
        """
        moves = self.legal_moves(state)
        if not moves:
            raise IllegalMove("nobody is to move")
        return moves[rng.randrange(len(moves))]

    # -- people ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def describe(self, state: S, words: Words | None = None) -> str:
        """A few lines of plain text that show the position to a person (CLI, logs), in
        ``words``' language (a translator's ``gettext``; English as written when None), so a
        replay with ``--lang`` speaks one language (issue 31)."""

    @abc.abstractmethod
    def pieces(self, state: S) -> list[str]:
        """Every physical piece of this game as ``expected_view`` names it, one entry per piece
        (interchangeable tokens repeat): what the tag registry must cover."""

    def apply_text(self, state: S, text: str) -> S:
        """Parse and apply one move text."""
        return self.apply(state, self.parse_move(state, text))

    def round_record(self, state: S) -> JSON:
        """The record object of the round a :meth:`deal` just started in ``state`` (no moves
        yet), which the station stores with the deal. Only for engines that deal rounds."""
        raise IllegalMove("nothing was dealt: the game has no rounds")

    # -- what the players set up themselves ------------------------------------------------------
    # Only asked of an engine whose ``setup_input`` names the kind; the defaults refuse.

    def start_stack_problem(self, cell: str, stack: Sequence[str]) -> str:
        """What is wrong with the players' own start stack ``stack`` (piece names bottom first)
        on ``cell``, in a sentence for the players; empty when it may stay (START_STACKS)."""
        return f"{cell}: {self.title} has no start stacks to build"

    def start_stacks_record(self, stacks: Mapping[str, Sequence[str]], options: JSON) -> JSON:
        """The record (no moves) of the set-up the players built: each cell's stack bottom
        first, every stack passed by :meth:`start_stack_problem`. :class:`RecordError` with a
        sentence for the players while it is not a whole set-up (START_STACKS)."""
        raise RecordError(f"{self.title} has no start stacks to build")

    def secret_card_seats(self, state: S) -> tuple[int, ...]:
        """The seats that each show the station the secret card they drew before the first
        move from ``state``, in seat order; empty when none is due (SECRET_CARDS)."""
        return ()

    def with_secret_cards(self, state: S, cards: Sequence[Card]) -> S:
        """``state`` with the secret cards the players really drew, one per seat of
        :meth:`secret_card_seats` in that order; :class:`IllegalMove` when they do not fit."""
        raise IllegalMove(f"{self.title} has no secret cards")

    def secret_card_pool(self, state: S, tapped: Sequence[Card], wanted: int) -> list[Card]:
        """The cards a seat of :meth:`secret_card_seats` may have drawn besides the ``tapped``
        ones, in a fixed order, at least ``wanted`` of them (the station draws its own seats'
        cards from it)."""
        return []

    def secret_card_of(self, tag: str) -> Card | None:
        """The secret card a tag registry name stands for (``card:A/B/C``), or None when the
        tag is no secret card of this game."""
        return None

    def table_tags(self) -> list[str]:
        """Registry names of the tagged things other than :meth:`pieces` that the table reads
        (Topple's action cards and Secret Tiki cards on the card pad)."""
        return []

    # -- options chosen at the table -------------------------------------------------------------
    def option_labels(self, options: JSON) -> tuple[Said, ...]:
        """Short words for the options of a record that differ from the printed rules, for the
        screen and the page (``()``: the rules as printed)."""
        return ()

    # -- pictures --------------------------------------------------------------------------------
    def piece_style(self, piece: str) -> PieceStyle:
        """How a picture of the board draws ``piece`` (as :meth:`expected_view` names it): by
        default in a colour of its own, labelled with its name."""
        return PieceStyle(None, piece)

    # -- what everybody may see ------------------------------------------------------------------
    # While a game is on, the station's page is seen by both players and the dashboard by the
    # whole hall; these say what of the game anyone may see. The defaults show everything: a
    # game of open information (Manami) keeps them. An engine with hidden information
    # overrides them from its rules (``seeds/*.md``); once the game is over everything is shown
    # and the callers stop asking.

    def public_piece(self, name: str) -> str:
        """A piece name (as :meth:`expected_view` or the tag registry names it) as anyone may
        see it while the game is on."""
        return name

    def public_view(self, view: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
        """A sensor view (cell -> piece names, bottom first) as anyone may see it."""
        return {cell: [self.public_piece(p) for p in pieces] for cell, pieces in view.items()}

    def public_text(self, text: str) -> str:
        """A text the station shows about the game (a move in record notation, a prompt's
        option, a guidance line such as "move Nani from s2 to s1") as anyone may see it. The
        default passes every word through :meth:`public_piece`."""
        return " ".join(self.public_piece(word) for word in text.split(" "))

    def table_facts(self, state: S) -> JSON | None:
        """Open facts the players read off the table that the board picture does not show
        (Manami's village values and fruit supply), for the page; None when a game has none."""
        return None

    def public_record(self, record: JSON) -> JSON:
        """A game record (``docs/records.md``), or a part of one (a set-up, a Topple round), as
        anyone may see it: a copy with the hidden set-up facts removed or masked and every move
        through :meth:`public_text`. The default is a copy."""
        return copy.deepcopy(record)


def options_of(record: JSON) -> JSON:
    """The record's ``options`` object (absent means all defaults)."""
    options = record.get("options", {})
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise RecordError("'options' must be an object")
    return options
