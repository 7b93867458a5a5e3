"""Tiki Topple (Gamewright, 2-4 players): the rules engine.

The rules as implemented, and every ruling with its reason, are in ``seeds/tiki-topple.md``; the
ruling numbers (R1, R2, ...) are cited below where the code carries them out.

State model. A game is a sequence of rounds. The part of the state that changes with every card
(:class:`ToppleState`: the line, the hands, who has opened, whose turn) is kept apart from the part
that changes once a round (:class:`Table`: seats, Secret Tiki cards, scores so far, options), so
that a move allocates one small object and shares the rest.

JSON state (``state_to_json``)::

    {"players": 2, "rounds": 4, "round": 0, "seats": [0, 1], "first": 0,
     "line": ["Hookipa", ...],                 # top (1st place) first
     "cards": [["Hookipa", "Lokahi", "Nani"], null, ...],   # per player; null: not in this round
     "hands": [{"up1": 2, "up2": 1, "up3": 1, "topple": 1, "toast": 2}, ...],
     "opened": [false, true, ...],             # has played a card this round
     "turn": 0,                                # null between rounds and at the end
     "totals": [12, 7], "round_scores": [[5, 2], [7, 5]],
     "over": false, "winners": null,
     "options": {"topple_bottom": false}}

Sensor view (``expected_view``): the nine line slots ``s1`` (top) .. ``s9``, each holding the
tiki standing there (its name) or nothing.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pi_app.games.base import (
    STANDARD,
    Card,
    FinalResult,
    Game,
    IllegalMove,
    OptionPreset,
    RecordError,
    Segment,
    SetupInput,
    View,
    Words,
    as_written,
    card_of_tag,
    card_tag,
    options_of,
)
from pi_app.i18n import Said
from pi_app.json_types import JSON

TIKIS: tuple[str, ...] = (
    "Hookipa", "Lokahi", "Nani", "Wikiwiki", "Akamai", "Huhu", "Nui", "Kapu", "Eepo",
)
#: The three symbol groups of three (docs/rules-sources.md §1.4); the station sets up by group.
GROUPS: tuple[tuple[str, str, str], ...] = (
    ("Nani", "Wikiwiki", "Huhu"),
    ("Nui", "Lokahi", "Akamai"),
    ("Hookipa", "Kapu", "Eepo"),
)
_BY_LOWER = {name.lower(): name for name in TIKIS}

#: Action cards in hand order, and their printed names.
CARDS: tuple[str, ...] = ("up1", "up2", "up3", "topple", "toast")
CARD_NAMES = {
    "up1": "Tiki Up 1", "up2": "Tiki Up 2", "up3": "Tiki Up 3",
    "topple": "Tiki Topple", "toast": "Tiki Toast",
}
_UP = {"up1": 1, "up2": 2, "up3": 3}
_CARD_INDEX = {card: i for i, card in enumerate(CARDS)}
#: A hand as counts in ``CARDS`` order: 2 players keep all seven cards, 3-4 drop one Up 1.
HAND_2P: tuple[int, ...] = (2, 1, 1, 1, 2)
HAND_34P: tuple[int, ...] = (1, 1, 1, 1, 2)
_EMPTY_HAND: tuple[int, ...] = (0, 0, 0, 0, 0)
#: Points of the top, middle and bottom tiki of a Secret Tiki card, and the places they need.
CARD_POINTS: tuple[tuple[int, int], ...] = ((9, 1), (5, 2), (2, 3))
#: The round ends when the sixth tiki is removed, i.e. when three are left.
TIKIS_LEFT_AT_END = 3

SLOTS: tuple[str, ...] = tuple(f"s{i}" for i in range(1, 10))


def hand_for(players_in_round: int) -> tuple[int, ...]:
    """The starting hand of a round played by ``players_in_round`` players (R3 for tie-breaks)."""
    return HAND_2P if players_in_round == 2 else HAND_34P


def default_rounds(players: int) -> int:
    """Four rounds with two players, else one per player."""
    return 4 if players == 2 else players


@dataclass(frozen=True, slots=True)
class Move:
    """One action card played: ``card`` is one of :data:`CARDS`; ``tiki`` is None for Toast."""

    card: str
    tiki: str | None = None

    def __str__(self) -> str:
        return self.card if self.tiki is None else f"{self.card} {self.tiki}"


#: Every move there can be, built once: move generation hands out these shared objects.
_MOVES: dict[tuple[str, str | None], Move] = {
    (card, tiki): Move(card, tiki) for card in CARDS[:4] for tiki in TIKIS
}
_MOVES["toast", None] = Move("toast")
TOAST = _MOVES["toast", None]


@dataclass(frozen=True, slots=True)
class Table:
    """What holds for a whole round: who plays, their Secret Tiki cards, the scores so far."""

    players: int
    rounds: int
    round: int
    seats: tuple[int, ...]
    first: int
    cards: tuple[tuple[str, str, str] | None, ...]
    totals: tuple[int, ...]
    round_scores: tuple[tuple[int, ...], ...]
    topple_bottom: bool = True
    #: Secret Tiki cards dealt so far this game (the discards), so a deal draws new ones (R5).
    dealt: frozenset[tuple[str, str, str]] = frozenset()


@dataclass(frozen=True, slots=True)
class ToppleState:
    """A position. ``turn`` is None when the round (or the game) is over."""

    table: Table
    line: tuple[str, ...]
    hands: tuple[tuple[int, ...], ...]
    opened: tuple[bool, ...]
    turn: int | None
    over: bool = False
    winners: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class RoundSetup:
    """A round's deal: the line from the top, each seat's card (9, 5, 2 points), the starter."""

    line: tuple[str, ...]
    cards: tuple[tuple[str, str, str], ...]
    first: int
    seats: tuple[int, ...]


def score_card(line: Sequence[str], card: tuple[str, str, str]) -> int:
    """Points for one Secret Tiki card against the final line (positions on what is left)."""
    top3 = line[:3]
    points = 0
    for tiki, (value, places) in zip(card, CARD_POINTS, strict=True):
        if tiki in top3[:places]:
            points += value
    return points


def tiki_name(text: str) -> str:
    """The tiki called ``text`` (any case); :class:`IllegalMove` when there is none."""
    name = _BY_LOWER.get(text.strip().lower())
    if name is None:
        raise IllegalMove(Said.gettext("There is no tiki called {text}; the tikis are {tikis}.",
                                       text=repr(text.strip()), tikis=", ".join(TIKIS)))
    return name


class ToppleGame(Game[ToppleState, Move]):
    """Tiki Topple under the rulings of ``seeds/tiki-topple.md``."""

    name = "topple"
    title = "Tiki Topple"
    player_counts = (2, 3, 4)
    setup_input = SetupInput.SECRET_CARDS
    hidden_information = True
    option_names = ("rounds", "topple_bottom")
    #: R1: the Gamewright rulebook lets Tiki Topple take "any active tiki", the bottom one too,
    #: which moves nothing. The sensors cannot see a card played that moves nothing, so the
    #: station keeps the Schmidt edition's ban at the table (a house rule it needs, until a
    #: card can be played without a move), and so do the simulated tables and the bots, whose
    #: hands must show every move and whose figures were measured with it.
    table_defaults: ClassVar[Mapping[str, Any]] = {"topple_bottom": False}
    machine_defaults: ClassVar[Mapping[str, Any]] = {"topple_bottom": False}
    presets = (STANDARD,
               OptionPreset("longer game", lambda n: {"rounds": 2 * default_rounds(n)}),
               OptionPreset("topple bottom", lambda _n: {"topple_bottom": True}))

    # -- rules -----------------------------------------------------------------------------------
    def legal_moves(self, state: ToppleState) -> list[Move]:
        player = state.turn
        if player is None:
            return []
        hand = state.hands[player]
        line = state.line
        moves: list[Move] = []
        if hand[0]:
            moves += [_MOVES["up1", t] for t in line[1:]]
        if hand[1]:
            moves += [_MOVES["up2", t] for t in line[2:]]
        if hand[2]:
            moves += [_MOVES["up3", t] for t in line[3:]]
        if hand[3]:
            moves += [_MOVES["topple", t]
                      for t in (line if state.table.topple_bottom else line[:-1])]
        if hand[4] and state.opened[player]:
            moves.append(TOAST)
        return moves

    def random_move(self, state: ToppleState, rng: random.Random) -> Move:
        """A uniform draw from :meth:`legal_moves` without building the list (random play)."""
        player = state.turn
        if player is None:
            raise IllegalMove(Said.gettext("Nobody is to move: the round is over."))
        hand = state.hands[player]
        line = state.line
        n = len(line)
        counts = (
            n - 1 if hand[0] else 0,
            n - 2 if hand[1] else 0,
            n - 3 if hand[2] else 0,
            (n if state.table.topple_bottom else n - 1) if hand[3] else 0,
            1 if hand[4] and state.opened[player] else 0,
        )
        pick = rng.randrange(sum(counts))
        for card, count in zip(CARDS, counts, strict=True):
            if pick < count:
                if card == "toast":
                    return TOAST
                return _MOVES[card, line[pick + _UP.get(card, 0)] if card != "topple"
                              else line[pick]]
            pick -= count
        raise AssertionError("unreachable: pick is below the sum of the counts")

    def apply(self, state: ToppleState, move: Move) -> ToppleState:
        player = state.turn
        if player is None:
            if state.over:
                raise IllegalMove(Said.gettext("The game is over: no more cards are played."))
            raise IllegalMove(Said.gettext("The round is over: no more cards are played this "
                                           "round."))
        card = move.card
        index = _CARD_INDEX.get(card)
        if index is None:
            raise IllegalMove(Said.gettext("There is no action card called {card}.",
                                           card=repr(card)))
        hand = state.hands[player]
        if not hand[index]:
            raise IllegalMove(Said.gettext("Player {number} has no {card} card left this round.",
                                           number=player + 1, card=CARD_NAMES[card]))
        line = state.line
        if card == "toast":
            if not state.opened[player]:
                raise IllegalMove(Said.gettext("Tiki Toast may not be played on your first turn "
                                               "of a round."))
            if move.tiki is not None and move.tiki != line[-1]:
                raise IllegalMove(Said.gettext("Tiki Toast removes the bottom tiki, {bottom}, not "
                                               "{tiki}.", bottom=line[-1], tiki=move.tiki))
            new_line = line[:-1]
        else:
            tiki = move.tiki
            if tiki is None or tiki not in TIKIS:
                raise IllegalMove(Said.gettext("{card} needs the name of a tiki.",
                                               card=CARD_NAMES[card]))
            try:
                pos = line.index(tiki)
            except ValueError:
                raise IllegalMove(Said.gettext("{tiki} has been toasted and is out of this round.",
                                               tiki=tiki)) from None
            if card == "topple":
                if pos == len(line) - 1 and not state.table.topple_bottom:
                    raise IllegalMove(Said.gettext("{tiki} is already at the bottom: Tiki Topple "
                                                   "must move a tiki down (ruling R1).",
                                                   tiki=tiki))
                new_line = line[:pos] + line[pos + 1:] + (tiki,)
            else:
                steps = _UP[card]
                if pos < steps:
                    raise IllegalMove(Said.ngettext(
                        "{tiki} is number {place} in line: {card} needs a tiki with at least "
                        "{count} tiki above it.",
                        "{tiki} is number {place} in line: {card} needs a tiki with at least "
                        "{count} tikis above it.", steps, tiki=tiki, place=pos + 1,
                        card=CARD_NAMES[card]))
                new_line = (*line[:pos - steps], tiki, *line[pos - steps:pos], *line[pos + 1:])
        hands = list(state.hands)
        new_hand = list(hand)
        new_hand[index] -= 1
        hands[player] = tuple(new_hand)
        opened = state.opened
        if not opened[player]:
            opened = (*opened[:player], True, *opened[player + 1:])
        seats = state.table.seats
        next_player: int | None = seats[(seats.index(player) + 1) % len(seats)]
        if len(new_line) <= TIKIS_LEFT_AT_END or not any(any(hands[s]) for s in seats):
            return _end_round(state.table, new_line, tuple(hands), opened)
        return ToppleState(state.table, new_line, tuple(hands), opened, next_player)

    def to_move(self, state: ToppleState) -> int | None:
        return state.turn

    def is_over(self, state: ToppleState) -> bool:
        return state.over

    def scores(self, state: ToppleState) -> tuple[int, ...]:
        return state.table.totals

    def result(self, state: ToppleState) -> FinalResult | None:
        """Most points wins; a tie for most shares the win (no draw in Topple)."""
        if state.winners is None:
            return None
        return FinalResult(state.table.totals, state.winners)

    # -- notation --------------------------------------------------------------------------------
    def parse_move(self, state: ToppleState, text: str) -> Move:
        words = text.split()
        if not words:
            raise IllegalMove(Said.gettext("An empty move: play a card such as 'up1 Nani' or "
                                           "'toast'."))
        card = words[0].lower()
        if card not in CARDS:
            raise IllegalMove(Said.gettext("{word} is not an action card: use up1, up2, up3, "
                                           "topple or toast.", word=repr(words[0])))
        if card == "toast":
            if len(words) == 1:
                return TOAST
            if len(words) == 2:
                return Move("toast", tiki_name(words[1]))
        elif len(words) == 2:
            return _MOVES[card, tiki_name(words[1])]
        raise IllegalMove(Said.gettext("{text} is not a move: write '{card} NAME'",
                                       text=repr(text.strip()), card=card)
                          if card != "toast" else
                          Said.gettext("Tiki Toast takes no tiki name: write 'toast'."))

    def move_text(self, state: ToppleState, move: Move) -> str:
        return "toast" if move.card == "toast" else f"{move.card} {move.tiki}"

    # -- serialisation ---------------------------------------------------------------------------
    def state_to_json(self, state: ToppleState) -> JSON:
        table = state.table
        return {
            "players": table.players,
            "rounds": table.rounds,
            "round": table.round,
            "seats": list(table.seats),
            "first": table.first,
            "line": list(state.line),
            "cards": [None if c is None else list(c) for c in table.cards],
            "hands": [dict(zip(CARDS, hand, strict=True)) for hand in state.hands],
            "opened": list(state.opened),
            "turn": state.turn,
            "totals": list(table.totals),
            "round_scores": [list(r) for r in table.round_scores],
            "over": state.over,
            "winners": None if state.winners is None else list(state.winners),
            "options": {"topple_bottom": table.topple_bottom},
            "dealt": sorted(list(c) for c in table.dealt),
        }

    def state_from_json(self, data: JSON) -> ToppleState:
        try:
            players = _int(data["players"], "players", 2, 4)
            seats = tuple(_int(s, "seats", 0, players - 1) for s in data["seats"])
            table = Table(
                players=players,
                rounds=_int(data["rounds"], "rounds", 1, 1000),
                round=_int(data["round"], "round", 0, 1000),
                seats=seats,
                first=_int(data["first"], "first", 0, players - 1),
                cards=tuple(None if c is None else _card(c) for c in data["cards"]),
                totals=tuple(_int(t, "totals", 0, 10**6) for t in data["totals"]),
                round_scores=tuple(tuple(_int(p, "round_scores", 0, 16) for p in r)
                                   for r in data["round_scores"]),
                topple_bottom=bool(data.get("options", {}).get("topple_bottom", True)),
                dealt=frozenset(_card(c) for c in data.get("dealt", [])),
            )
            hands = tuple(tuple(_int(h[c], "hands", 0, 2) for c in CARDS) for h in data["hands"])
            turn = None if data["turn"] is None else _int(data["turn"], "turn", 0, players - 1)
            winners = (None if data["winners"] is None
                       else tuple(_int(w, "winners", 0, players - 1) for w in data["winners"]))
            state = ToppleState(table, _line(data["line"], exact=False), hands,
                                tuple(bool(o) for o in data["opened"]), turn,
                                bool(data["over"]), winners)
        except (KeyError, TypeError, AttributeError) as exc:
            raise RecordError(f"not a Tiki Topple state: missing or wrong field {exc}") from exc
        except IllegalMove as exc:
            raise RecordError(str(exc)) from exc
        n = players
        if not (len(table.cards) == len(hands) == len(state.opened) == len(table.totals) == n):
            raise RecordError("not a Tiki Topple state: per-player lists have the wrong length")
        return state

    # -- sensors ---------------------------------------------------------------------------------
    def expected_view(self, state: ToppleState) -> View:
        return _slots_view(state.line)

    def transit_views(self, state: ToppleState, move: Move) -> list[View]:
        """A tiki on its way: bubbled one slot at a time, or lifted while the others shift.

        Players make an Up or a Topple either by lifting the tiki and shifting the others one
        by one, or by swapping it with its neighbour repeatedly; both leave views that must not
        be mistaken for a finished move (an Up 1 is the first swap of an Up 2, and of a Topple
        of the tiki above).
        """
        line = state.line
        if move.card == "toast" or move.tiki is None or move.tiki not in line:
            return []
        pos = line.index(move.tiki)
        target = len(line) - 1 if move.card == "topple" else pos - _UP[move.card]
        rest = [t for t in line if t != move.tiki]
        views: list[View] = []
        if move.card == "topple":  # the bottom tiki lifted first to make room: a Toast's view
            views.append(_slots_view(line[:-1]))
        step = 1 if target > pos else -1
        for k in range(pos, target + step, step):
            gap: list[str | None] = list(rest)
            gap.insert(k, None)
            views.append(_slots_view(gap))           # lifted, the gap has moved to slot k
            if k not in (pos, target):
                bubbled = list(rest)
                bubbled.insert(k, move.tiki)
                views.append(_slots_view(bubbled))   # swapped as far as slot k
        return views

    # -- set-up ----------------------------------------------------------------------------------
    def new_game(self, rng: random.Random, options: JSON | None = None) -> ToppleState:
        opts = _options({"options": options or {}}, None)
        players, rounds, topple_bottom = opts
        first = rng.randrange(players)
        table = Table(players, rounds, -1, tuple(range(players)), (first - 1) % players,
                      (None,) * players, (0,) * players, (), topple_bottom)
        empty = ToppleState(table, (), (_EMPTY_HAND,) * players, (False,) * players, None)
        return self.deal(empty, rng)

    def deal(self, state: ToppleState, rng: random.Random) -> ToppleState:
        """Deal the next round: a line set up by symbol group and a Secret Tiki card each."""
        from pi_app.games.topple_deck import draw_cards

        if state.over or state.turn is not None:
            raise IllegalMove(Said.gettext("A new round is dealt only when the last one is over."))
        seats = next_round_seats(state)
        groups = list(GROUPS)
        rng.shuffle(groups)
        line: list[str] = []
        for group in groups:
            members = list(group)
            rng.shuffle(members)
            line += members
        setup = RoundSetup(tuple(line), draw_cards(rng, len(seats), state.table.dealt),
                           expected_first(state, seats), seats)
        return start_round(state, setup)

    # -- records ---------------------------------------------------------------------------------
    def record_segments(self, record: JSON) -> list[Segment[ToppleState]]:
        rounds = record.get("rounds")
        if not isinstance(rounds, list) or not rounds:
            raise RecordError("a Tiki Topple record needs a non-empty 'rounds' list")
        for r, rnd in enumerate(rounds):
            if not isinstance(rnd, dict):
                raise RecordError(f"round {r} is not an object")
            if not isinstance(rnd.get("moves", []), list):
                raise RecordError(f"round {r}: 'moves' must be a list")
        options = _options(record, rounds[0])
        return [Segment(_round_starter(options, r, rnd), rnd.get("moves", []), {"round": r})
                for r, rnd in enumerate(rounds)]

    def pieces(self, state: ToppleState) -> list[str]:
        return list(TIKIS)

    def setup_record(self, state: ToppleState) -> JSON:
        table = state.table
        if table.round != 0 or any(state.opened) or state.turn is None:
            raise IllegalMove("a set-up record starts from the first position of round 1")
        return {"game": "topple",
                "options": {"players": table.players, "rounds": table.rounds,
                            "topple_bottom": table.topple_bottom},
                "rounds": [round_record(state)]}

    # -- people ----------------------------------------------------------------------------------
    def describe(self, state: ToppleState, words: Words | None = None) -> str:
        _ = words or as_written
        table = state.table

        def player(seat: int) -> str:
            return _("Player {number}").format(number=seat + 1)

        rows = [_("Tiki Topple, {players} players, round {round} of {rounds}").format(
            players=table.players, round=table.round + 1, rounds=table.rounds)
                + (_(" (tie-break)") if table.round >= table.rounds else "")]
        rows += [f"  {i + 1}. {tiki}" for i, tiki in enumerate(state.line)]
        for p in range(table.players):
            hand = " ".join(f"{c}x{n}" for c, n in zip(CARDS, state.hands[p], strict=True) if n)
            rows.append("  " + _("{player}: {points} points; hand: {hand}").format(
                player=player(p), points=table.totals[p], hand=hand or "-"))
        if state.over:
            rows.append("  " + _("game over; winner(s): {names}").format(
                names=", ".join(player(w) for w in state.winners or ())))
        elif state.turn is None:
            rows.append("  " + _("round over"))
        else:
            rows.append("  " + _("{player} to play").format(player=player(state.turn)))
        return "\n".join(rows)


    # -- the station ------------------------------------------------------------------------------
    def round_record(self, state: ToppleState) -> JSON:
        return round_record(state)

    def secret_card_seats(self, state: ToppleState) -> tuple[int, ...]:
        """Every seat of the round, at its start (before its first card): each drew a Secret
        Tiki card from the real deck."""
        if state.turn is None or any(state.opened):
            return ()
        return state.table.seats

    def with_secret_cards(self, state: ToppleState, cards: Sequence[Card]) -> ToppleState:
        if any(len(c) != 3 for c in cards):
            raise IllegalMove("a Secret Tiki card shows three tikis")
        return with_cards(state, [(c[0], c[1], c[2]) for c in cards])

    def secret_card_of(self, tag: str) -> Card | None:
        card = card_of_tag(tag)
        return card if card is not None and len(card) == 3 else None

    def secret_card_pool(self, state: ToppleState, tapped: Sequence[Card],
                         wanted: int) -> list[Card]:
        """The cards a seat may have drawn for the round starting in ``state``, besides the
        ``tapped`` ones: not out from an earlier round (the deck still holds them); when fewer
        than ``wanted`` are left, the discards were shuffled back (ruling R5)."""
        from pi_app.games.topple_deck import deck

        table = state.table
        placeholder = {c for c in table.cards if c is not None}
        out_before = set(table.dealt) - placeholder
        pool: list[Card] = [c for c in deck() if c not in out_before and c not in tapped]
        if len(pool) < wanted:
            pool = [c for c in deck() if c not in tapped]
        return pool

    def table_tags(self) -> list[str]:
        """The action cards (an Up 1 answers "which card?") and every Secret Tiki card."""
        from pi_app.games.topple_deck import deck

        return [f"action:{c}" for c in CARDS] + [card_tag(c) for c in deck()]

    def option_labels(self, options: JSON) -> tuple[Said, ...]:
        out: list[Said] = []
        players = options.get("players", 2)
        rounds = options.get("rounds")
        if isinstance(players, int) and isinstance(rounds, int) \
                and rounds != default_rounds(players):
            out.append(Said.gettext("{rounds} rounds", rounds=rounds))
        if options.get("topple_bottom") is True:
            out.append(Said.gettext("topple bottom"))
        return tuple(out)

    # -- what everybody may see (R15) -----------------------------------------------------------
    def public_piece(self, name: str) -> str:
        """Tikis are public; a Secret Tiki card is not. A card's tag is named after its three
        tikis (``card:Hookipa/Lokahi/Nani``), so any name that names two or more tikis is a
        card and shows as ``card:?``."""
        lower = name.lower()
        return "card:?" if sum(tiki in lower for tiki in _BY_LOWER) >= 2 else name

    def public_record(self, record: JSON) -> JSON:
        """The record without any Secret Tiki card (R15): each round keeps only its line, who
        starts, who plays and the moves."""
        out = copy.deepcopy(record)
        rounds = out.get("rounds")
        if isinstance(rounds, list):
            out["rounds"] = [
                {k: ([self.public_text(m) if isinstance(m, str) else m for m in v]
                     if k == "moves" and isinstance(v, list) else v)
                 for k, v in rnd.items() if k in _PUBLIC_ROUND_KEYS}
                if isinstance(rnd, dict) else None for rnd in rounds]
        return out


#: What a round object (``docs/records.md``) shows to everybody while the game is on.
_PUBLIC_ROUND_KEYS = ("line", "first", "players", "moves")


def _slots_view(line: Sequence[str | None]) -> View:
    """The nine slots from the top; ``None`` in ``line`` is a gap a lifted tiki left."""
    return {slot: (tiki,) if (tiki := line[i] if i < len(line) else None) else ()
            for i, slot in enumerate(SLOTS)}


# -- rounds ---------------------------------------------------------------------------------------
def round_record(state: ToppleState) -> JSON:
    """The record object of the round ``state`` starts (no moves yet)."""
    table = state.table
    rnd: JSON = {"line": list(state.line), "first": table.first, "moves": [],
                 "cards": [list(table.cards[s] or ()) for s in table.seats]}
    if len(table.seats) < table.players:
        rnd["players"] = list(table.seats)
    return rnd


def next_round_seats(state: ToppleState) -> tuple[int, ...]:
    """Who plays the next round: everyone, or only the tied leaders in a tie-break (R3)."""
    table = state.table
    if len(table.round_scores) < table.rounds:
        return tuple(range(table.players))
    return _leaders(table.totals, range(table.players))


def expected_first(state: ToppleState, seats: tuple[int, ...]) -> int:
    """The starter moves one seat each round (R4); in a tie-break, the next tied player on."""
    table = state.table
    candidate = (table.first + 1) % table.players
    while candidate not in seats:
        candidate = (candidate + 1) % table.players
    return candidate


def with_cards(state: ToppleState, cards: Sequence[tuple[str, str, str]]) -> ToppleState:
    """The same round start with the Secret Tiki cards the players really drew, in seat order.

    At a real table the players draw their cards from the deck and tap them on the card pad;
    the station learns them then, before the round's first card is played.
    """
    table = state.table
    if state.turn is None or any(state.opened):
        raise IllegalMove(Said.gettext("The Secret Tiki cards are set before the round's first "
                                       "card."))
    if len(cards) != len(table.seats):
        raise IllegalMove(f"{len(table.seats)} players need {len(table.seats)} Secret Tiki cards")
    by_seat: list[tuple[str, str, str] | None] = [None] * table.players
    for seat, card in zip(table.seats, cards, strict=True):
        by_seat[seat] = _card(list(card))
    # The discards as :func:`start_round` keeps them for the record's round with these cards
    # (replay builds the round from the record): added to the earlier rounds' when all are new,
    # else the deck was gathered again and the discards start anew with this round's.
    earlier = table.dealt - frozenset(c for c in table.cards if c is not None)
    tapped = frozenset(_card(list(c)) for c in cards)
    dealt = earlier | tapped if tapped.isdisjoint(earlier) else tapped
    new_table = Table(table.players, table.rounds, table.round, table.seats, table.first,
                      tuple(by_seat), table.totals, table.round_scores, table.topple_bottom,
                      dealt)
    return ToppleState(new_table, state.line, state.hands, state.opened, state.turn)


def start_round(state: ToppleState, setup: RoundSetup) -> ToppleState:
    """The position at the start of the next round, after checking that it may start."""
    table = state.table
    if state.over:
        raise IllegalMove(Said.gettext("The game is over: no further round is played."))
    if state.turn is not None:
        raise IllegalMove(Said.gettext("Round {number} is not over yet: cards are still to be "
                                       "played.", number=table.round + 1))
    expected_seats = next_round_seats(state)
    if setup.seats != expected_seats:
        if len(expected_seats) == table.players:
            raise IllegalMove(Said.gettext("Only a tie-break round is played by some of the "
                                           "players, and there is no tie to break."))
        raise IllegalMove(Said.gettext("The tie-break round is played by the tied players "
                                       "{seats} only (ruling R3).",
                                       seats=", ".join(map(str, expected_seats))))
    first = expected_first(state, setup.seats)
    if setup.first != first:
        raise IllegalMove(Said.gettext("Player {number} starts this round: the start moves one "
                                       "seat each round (ruling R4).", number=first + 1))
    cards: list[tuple[str, str, str] | None] = [None] * table.players
    for seat, card in zip(setup.seats, setup.cards, strict=True):
        cards[seat] = card
    hand = hand_for(len(setup.seats))
    new_cards = frozenset(setup.cards)
    dealt = table.dealt | new_cards if new_cards.isdisjoint(table.dealt) else new_cards
    new_table = Table(table.players, table.rounds, table.round + 1, setup.seats, setup.first,
                      tuple(cards), table.totals, table.round_scores, table.topple_bottom, dealt)
    hands = tuple(hand if p in setup.seats else _EMPTY_HAND for p in range(table.players))
    return ToppleState(new_table, setup.line, hands, (False,) * table.players, setup.first)


def _end_round(table: Table, line: tuple[str, ...], hands: tuple[tuple[int, ...], ...],
               opened: tuple[bool, ...]) -> ToppleState:
    """Score the round and decide whether the game is over (R3: one tie-break, then shared)."""
    points = tuple(0 if card is None else score_card(line, card) for card in table.cards)
    totals = tuple(t + p for t, p in zip(table.totals, points, strict=True))
    round_scores = (*table.round_scores, points)
    scored = Table(table.players, table.rounds, table.round, table.seats, table.first,
                   table.cards, totals, round_scores, table.topple_bottom, table.dealt)
    winners: tuple[int, ...] | None = None
    if len(round_scores) == table.rounds:
        leaders = _leaders(totals, range(table.players))
        if len(leaders) == 1:
            winners = leaders
    elif len(round_scores) > table.rounds:  # the tie-break round decides, or the win is shared
        winners = _leaders(totals, table.seats)
    return ToppleState(scored, line, hands, opened, None, winners is not None, winners)


def _leaders(totals: Sequence[int], among: Sequence[int] | range) -> tuple[int, ...]:
    best = max(totals[p] for p in among)
    return tuple(p for p in among if totals[p] == best)


# -- records --------------------------------------------------------------------------------------
def _round_starter(options: tuple[int, int, bool], r: int, rnd: JSON) -> Any:
    players, rounds, topple_bottom = options
    line = _line(rnd.get("line"), exact=True, where=f"round {r}")
    seats_given = rnd.get("players")
    cards_raw = rnd.get("cards")
    if not isinstance(cards_raw, list):
        raise RecordError(f"round {r}: 'cards' must be a list of Secret Tiki cards")
    cards = tuple(_card(c, where=f"round {r}") for c in cards_raw)
    if seats_given is not None:
        if (not isinstance(seats_given, list) or len(seats_given) < 2
                or len(set(map(str, seats_given))) != len(seats_given)):
            raise RecordError(f"round {r}: 'players' must list two or more different players")
        order = tuple(_int(p, f"round {r} players", 0, players - 1, RecordError)
                      for p in seats_given)
    else:
        order = tuple(range(players))
    if len(cards) != len(order):
        raise RecordError(f"round {r}: {len(order)} players need {len(order)} Secret Tiki "
                          f"cards, the record has {len(cards)}")
    by_seat = dict(zip(order, cards, strict=True))
    seats = tuple(sorted(order))
    first_raw = rnd.get("first")
    if first_raw is not None:
        first_raw = _int(first_raw, f"round {r} first", 0, players - 1, RecordError)

    def start(state: ToppleState | None) -> ToppleState:
        if state is None:
            if r != 0:
                raise RecordError("internal: rounds out of order")
            first = 0 if first_raw is None else first_raw
            if seats_given is not None and seats != tuple(range(players)):
                raise RecordError("round 0 is played by all players")
            if first not in seats:
                raise RecordError(f"round 0: player {first} does not play")
            table = Table(players, rounds, -1, seats, (first - 1) % players,
                          (None,) * players, (0,) * players, (), topple_bottom)
            state = ToppleState(table, (), (_EMPTY_HAND,) * players, (False,) * players, None)
        else:
            first = expected_first(state, seats) if first_raw is None else first_raw
        setup = RoundSetup(line, tuple(by_seat[s] for s in seats), first, seats)
        return start_round(state, setup)

    return start


def _options(record: JSON, round0: JSON | None) -> tuple[int, int, bool]:
    options = options_of(record)
    players = options.get("players")
    if players is None:
        cards = round0.get("cards") if round0 is not None else None
        players = len(cards) if isinstance(cards, list) else 2
    players = _int(players, "options.players", 2, 4, RecordError,
                   "Tiki Topple is played by 2, 3 or 4 players")
    rounds = options.get("rounds")
    rounds = default_rounds(players) if rounds is None else _int(
        rounds, "options.rounds", 1, 100, RecordError)
    topple_bottom = options.get("topple_bottom", True)
    if not isinstance(topple_bottom, bool):
        raise RecordError("options.topple_bottom must be true or false")
    return players, rounds, topple_bottom


def _int(value: Any, what: str, low: int, high: int,
         error: type[Exception] = RecordError, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise error(why or f"{what} must be a whole number from {low} to {high}, not {value!r}")
    return value


def _line(value: Any, *, exact: bool, where: str = "state") -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise RecordError(f"{where}: 'line' must be a list of tiki names")
    try:
        names = tuple(tiki_name(t) for t in value)
    except IllegalMove as exc:
        raise RecordError(f"{where}: {exc}") from exc
    if len(set(names)) != len(names) or (exact and len(names) != len(TIKIS)):
        raise RecordError(f"{where}: 'line' must name each of the nine tikis exactly once")
    return names


def _card(value: Any, where: str = "state") -> tuple[str, str, str]:
    if (not isinstance(value, list) or len(value) != 3
            or not all(isinstance(t, str) for t in value)):
        raise RecordError(f"{where}: a Secret Tiki card is a list of three tiki names")
    try:
        a, b, c = (tiki_name(t) for t in value)
    except IllegalMove as exc:
        raise RecordError(f"{where}: {exc}") from exc
    if len({a, b, c}) != 3:
        raise RecordError(f"{where}: a Secret Tiki card shows three different tikis")
    return a, b, c


GAME = ToppleGame()
