"""The station: one board, one game at a time, from sensor events to confirmed moves.

Data flows one way: events (sensor link, buttons) -> follower (tracker, inference) -> session
(the event store) -> feedback (LEDs, display) and feed (web page, MQTT). The order inside one
step is the product's promise: **a move is committed to the database before any LED confirms
it**; if it cannot be stored the station says so and does not confirm it (the follower is put
back, and the move is accepted again once storage works).

The station is driven by :meth:`Station.step` (one event, or None for "time passed") and
:meth:`Station.render`; the asyncio loop in :mod:`pi_app.referee.daemon` calls them. Everything
is synchronous and takes the time as an argument, so tests and the demo drive it exactly.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from PIL import Image

from pi_app.board.follower import (
    Acceptance,
    Follower,
    Guidance,
    InSync,
    MoveAccepted,
    MoveRevised,
    Outcome,
    Prompt,
    PromptCleared,
    PromptKind,
    TakenBack,
)
from pi_app.board.geometry import Geometry, load_geometry
from pi_app.board.inference import Verdict
from pi_app.board.registry import TagRegistry
from pi_app.bots.hints import HINT_LEVEL, hint_budget, hint_rng
from pi_app.games import GAME_NAMES, get_game
from pi_app.games.base import FinalResult
from pi_app.hw.display import Display
from pi_app.hw.leds import LedStrip
from pi_app.i18n import N_, Said, said_of
from pi_app.json_types import JSON
from pi_app.readings import ButtonPressed, HardwareFault, HwEvent, LinkStatus
from pi_app.records import PlayKind, fold
from pi_app.referee import feedback as fb
from pi_app.referee import setup_flow
from pi_app.referee.config import Config
from pi_app.referee.feed import ActionError, FeedSnapshot, Phase, StationFeed, StationStatus
from pi_app.referee.opponent import POLL_S, REMOTE, Opponent, Shown, parse_bots, think
from pi_app.referee.players import check_count, clean_names, default_names, names_or_numbers
from pi_app.referee.postgame import PostGame
from pi_app.referee.rule_options import (
    check_options,
    preset_count,
    preset_options,
    table_options,
    words,
)
from pi_app.referee.session import Session, station_seats
from pi_app.referee.status import Status
from pi_app.referee.store import PLAY_KINDS, Event, EventStore, StoreError

log = logging.getLogger(__name__)


class Station:
    """Referee of one board."""

    def __init__(self, config: Config, store: EventStore, registry: TagRegistry, *,
                 leds: LedStrip | None = None, display: Display | None = None,
                 feed: StationFeed | None = None, clock: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None, geometry: Geometry | None = None) -> None:
        self.config = config
        self.store = store
        self.registry = registry
        self.leds = leds
        self.display = display
        self.feed = feed or StationFeed(config.station.board)
        self.clock = clock
        seed = config.station.seed
        self.rng = rng or (random.Random(seed) if seed >= 0 else random.Random())
        self.postgame = PostGame()  # the review of the game that just ended
        self.opponent = Opponent(parse_bots(config.station.bots), seed=seed,
                                 hints=config.station.hints)
        self.referee_lock: str | None = None
        """Who locked hints from the tournament dashboard (``tiki/EVENT/locks``), None while
        they are not locked there; ``[station] hints = false`` locks them at the table."""
        self._expecting: object = None  # the follower's position restricted to its move
        self.status = Status()
        # The board is built for one geometry (its cells, sensors and LED strip): it is what
        # the configuration names, whatever game was last played, and it never changes while
        # the station runs. The station plays only the games that board serves.
        self.geometry = geometry or load_geometry(
            config.sensors.geometry or config.station.game)
        self.games = board_games(self.geometry, config.station.game)
        self.feed.games = self.games
        self._output_errors: dict[str, str] = {}
        self.session: Session = self._open_session()
        self.follower = self._new_follower()
        self.accepted_log: list[str] = []  # for tests and the demo: moves confirmed, in order
        self.last_frame: list[tuple[int, int, int]] = []
        self.last_screen: Image.Image | None = None
        self._last_scene: fb.Scene | None = None
        self._player_names: tuple[int, tuple[str, ...]] | None = None
        self._declined: tuple[JSON, int, bool] | None = None
        """The referee's pairing offer the players put off with BACK (:meth:`_offer_again`)."""
        self.wake: Callable[[], None] = _no_wake
        """Wakes the daemon's loop from another thread (the daemon sets it): a remote game's
        link calls it when the other board's move arrives, so the LEDs show that move at once,
        not at the loop's next planned wake-up (up to five seconds on a quiet board)."""
        self.page_url = ""  # the page's address, the game-over screen's QR code (daemon)
        # The first-boot set-up (pi_app.referee.firstboot): its one-time code, address and QR
        # text, on a screen of their own until OK starts the table on the defaults.
        self.setup_code = self.setup_url = self.setup_qr = ""
        self._register_actions()
        setup_flow.start_if_due(self)
        # A restart between a move and what follows it (the next Topple deal, the result):
        # finish that step now, from the stored position.
        self._deal_at: float | None = None
        self._after_move(self.clock(), self._board_decided_last())

    # -- sessions --------------------------------------------------------------------------------
    def _open_session(self) -> Session:
        """Resume the unfinished game, or start the configured one."""
        row = self.store.unfinished()
        if row is not None and row.game not in self.games:
            # Its board is not this one (the configuration names another board now): it
            # cannot be played here. Closed unfinished, its moves stay in the database.
            log.error("game %s is %s, which this board (%s) cannot play: closed unfinished "
                      "(tikiboard export still has its moves)", row.id, row.game,
                      self.geometry.title)
            self.store.abandon(row.id)
            row = None
        if row is not None:
            try:
                session = Session.resume(self.store, row)
                self._seats_of(session)
                self.status.phase = Phase.SETUP  # the board is checked against the stored game
                self.status.message = Said.gettext("resumed game {number}", number=row.id)
                log.info("resumed game %s (%s), %d moves", row.id, row.game,
                         len(session.history))
                return session
            except StoreError as exc:
                log.error("cannot resume game %s: %s; starting a new game", row.id, exc)
                self.store.abandon(row.id)
        home = self.config.station.game
        return self._start(home if home in self.games else self.games[0])

    def _seats_of(self, session: Session) -> None:
        """A resumed game is played by the seats it was stored with (its record's
        ``station_seats``), not by whatever the configuration or the page says now."""
        try:
            self.opponent.levels = parse_bots(station_seats(session.record))
        except ValueError as exc:  # a level this version lacks: a person takes the seat over
            log.error("game %s: its station seats cannot be played (%s): people play them",
                      session.game_id, exc)
            self.opponent.levels = {}

    def default_players(self, game_name: str, count: int | None = None) -> tuple[str, ...]:
        """The players of a new game chosen without names (the buttons, the page without
        names): the configured names, then "Player N"; ``count`` as given, else the
        configured count when the game allows it, else the game's smallest."""
        counts = get_game(game_name).player_counts
        if count is None:
            count = self.config.station.player_count
            if count not in counts:
                count = min(counts)
        return names_or_numbers(self.config.station.player_names, count)

    def _start(self, game_name: str, players: Sequence[str] = (),
               chosen: JSON | None = None) -> Session:
        """A new game stored with its options written out: ``chosen`` (checked), else the
        configured ones, over the table's defaults (no automatic limits the rulebooks lack)."""
        names = tuple(players) or self.default_players(game_name)
        if chosen is None:
            chosen = self.config.station.options if game_name == self.config.station.game \
                else {}
        try:
            options = table_options(game_name, chosen, len(names))
        except ValueError as exc:  # configured for another game: its rules as printed
            log.error("options %s do not suit %s (%s): none used", chosen, game_name, exc)
            options = table_options(game_name, {}, len(names))
        session = Session.new(self.store, game_name, rng=self.rng, options=options,
                              board=self.config.station.board, players=names,
                              station_seats=self.opponent.levels)
        self.status = replace(Status(), link_up=self.status.link_up,
                              link_detail=self.status.link_detail, phase=Phase.SETUP,
                              notice=self.status.notice, round_end=self.status.round_end)
        return session

    def _new_follower(self) -> Follower:
        game = self.session.game
        timing = self.config.timing
        follower = Follower(game, self.session.state, self.geometry, self.registry,
                            settle=timing.settle, settle_long=timing.settle_long,
                            settle_removal=timing.settle_removal, grace=timing.grace,
                            settle_min=None if timing.settle_min < 0 else timing.settle_min,
                            history=list(self.session.history))
        tidied, last = self._since_last_move()
        if tidied:
            follower.follow_up_done()
        if last is not None and last.kind == PlayKind.MOVE:
            follower.resume_last_move(Acceptance.stored(last.data.get("how")),
                                      bool(last.data.get("lifts_only")), self.clock())
        left = (last.data.get("left") if last is not None and last.kind == PlayKind.TAKEBACK
                else None)
        if not tidied and isinstance(left, dict) and all(
                isinstance(p, list) and all(isinstance(x, str) for x in p) for p in left.values()):
            follower.resume_takeback(left)
        return follower

    def _since_last_move(self) -> tuple[bool, Event | None]:
        """After a restart, from the store: did the board show the position since the last
        move (an ``in_sync`` note after it; then any follow-up it demanded is done), and the
        last play event (how its move was accepted)."""
        tidied = False
        for event in reversed(self.store.events(self.session.game_id)):
            if event.kind == "in_sync":
                tidied = True
            elif event.kind in PLAY_KINDS:
                return tidied, event
        return tidied, None

    def _board_decided_last(self) -> bool:
        """Did the board alone decide the last move (so it may still be revised or undone)?"""
        _, last = self._since_last_move()
        return last is not None and (last.kind == PlayKind.REVISE or (
            last.kind == PlayKind.MOVE
            and (how := Acceptance.stored(last.data.get("how"))) is not None
            and how.board_decided))

    # -- the one step ----------------------------------------------------------------------------
    def step(self, event: HwEvent | None, now: float | None = None) -> list[Outcome]:
        """Take one event (None: time passed) and act on what the follower says.

        Returns the outcomes, after they were stored and shown. Never raises for bad input:
        a broken event is logged and dropped, the game goes on.
        """
        now = self.clock() if now is None else now
        try:
            outcomes = self._react(event, now)
        except StoreError as exc:  # a note or result could not be stored: say so, go on
            self.store_failed(str(exc), now)
            outcomes = []
        try:
            self._deal_if_due(now)
        except StoreError as exc:
            self.store_failed(str(exc), now)
        self._station_turn(now)
        if self.postgame.poll():
            self._last_scene = None  # the review is in: the page hears of it on this redraw
        self.render(now)
        try:
            more = self.follower.prepare(now)  # after the confirmation is on the LEDs
            if more:
                more = self._handle(more, now)
                self.render(now)
                outcomes += more
        except StoreError as exc:
            self.store_failed(str(exc), now)
        self._send_own_move()
        return outcomes

    def _react(self, event: HwEvent | None, now: float) -> list[Outcome]:
        if isinstance(event, HardwareFault):
            key = (event.source, event.index)
            if event.ok:
                self.status.faults.pop(key, None)
            else:
                self.status.faults[key] = event.detail
            self.session.note("fault", {"source": event.source, "index": event.index,
                                        "ok": event.ok, "detail": event.detail})
            return []
        if isinstance(event, LinkStatus):
            self.status.link_up = event.up
            self.status.link_detail = event.detail
            self.follower.tracker.feed(event)
            return []
        if isinstance(event, ButtonPressed) and self._button_for_station(event.button, now):
            return []
        outcomes = self.follower.tick(now) if event is None else self.follower.feed(event, now)
        if isinstance(event, ButtonPressed) and event.button == "ok" and not outcomes:
            self._hint_button(now)  # OK with nothing to confirm: a hint
        outcomes = self._handle(outcomes, now)
        setup_flow.read(self, now)
        return outcomes

    def _handle(self, outcomes: list[Outcome], now: float) -> list[Outcome]:
        """Act on the follower's outcomes; those acted on. A move not stored (refused as not
        the station's, or not storable) puts the follower back, so what it said after that
        move was judged from a position the station does not hold and is dropped: a TacTiki
        pass forced by a refused wrong execution crashed the step (IllegalMove)."""
        for at, outcome in enumerate(outcomes):
            if isinstance(outcome, MoveAccepted):
                if not self._moved(outcome, now):
                    self._settle_phase(now)
                    return outcomes[:at + 1]
            elif isinstance(outcome, MoveRevised):
                self.persist(partial(self.session.revised, outcome.replaced, outcome.text,
                                     outcome.state), now)
                self.status.last_move = outcome.text
                self._after_move(now, board_decided=True)
            elif isinstance(outcome, TakenBack):
                undone = self.session.state
                self.persist(partial(self.session.taken_back, outcome.plies, outcome.state,
                                     outcome.left), now)
                game = self.session.game
                self.status.takeback = fb.changed_cells(game.expected_view(undone),
                                                        game.expected_view(outcome.state))
                self.status.message = Said.ngettext(
                    "took back {count} move", "took back {count} moves", outcome.plies)
            elif isinstance(outcome, Prompt):
                self.status.prompt = outcome
                self.note("prompt", {"kind": outcome.kind, "options": list(outcome.options)})
            elif isinstance(outcome, PromptCleared):
                self.status.prompt = None
            elif isinstance(outcome, Guidance):
                if self.status.reading is not None:
                    continue  # the players' own set-up: nothing to guide them towards
                self.status.guidance = outcome
                self.note(outcome.kind, {"fixes": [str(f) for f in outcome.fixes],
                                         "marks": [f.to_json() for f in outcome.fixes]})
            elif isinstance(outcome, InSync):
                self.note("in_sync", {})
                self.status.guidance = None
                self.status.takeback = ()
                if self.status.phase == Phase.SETUP and not self.blocked():
                    self.status.phase = Phase.PLAY
        self._settle_phase(now)
        return outcomes

    def _settle_phase(self, now: float) -> None:
        """Out of ``setup`` once the board shows the position (a restart's check is done)."""
        if self.status.phase == Phase.SETUP and not self.blocked() and \
                self.follower.decide(now).verdict is Verdict.UNCHANGED:
            self.status.phase = Phase.PLAY
            self.status.guidance = None

    def _moved(self, outcome: MoveAccepted, now: float) -> bool:
        """Store and confirm an accepted move; False if it was not stored (the follower is
        then put back)."""
        before = self.session.state
        if self.status.prompt is not None and self.status.prompt.kind is PromptKind.DRAW:
            self.status.prompt = None  # a move withdraws a draw offer
        if self.blocked() or self.draw_agreed():  # no move before every card is tapped and the
            # set-up is read, nor after the players agreed a draw
            self.follower.reset(before, list(self.session.history))
            return False
        if not self._as_shown(outcome, before):
            return False
        try:
            self.session.moved(outcome.text, outcome.player, outcome.state,
                               outcome.how, outcome.lifts_only)
        except StoreError as exc:
            # Not stored, so not confirmed: put the follower back; the move is accepted again
            # (and stored) as soon as the database takes it.
            self.follower.reset(before, list(self.session.history))
            self.store_failed(str(exc), now)
            return False
        self.status.store_error = ""
        self.status.phase = Phase.PLAY
        self.status.message = ""
        self.status.last_move = outcome.text
        self.status.confirmed = fb.changed_cells(
            self.session.game.expected_view(before),
            self.session.game.placement_view(before, self.session.game.parse_move(
                before, outcome.text)))
        self.status.confirmed_at = now
        self.accepted_log.append(outcome.text)
        log.info("confirmed move %d: %s", len(self.session.moves()), outcome.text)
        self._after_move(now, outcome.how.board_decided)
        return True

    def _after_move(self, now: float, board_decided: bool = False) -> None:
        """Finish the game, or deal the next Topple round. A round ended by a move the board
        alone decided is dealt only ``revise_window`` later: until then the move may still
        turn out to be the middle of another (a bottom tiki held in the air reads as a
        Toast), and a deal cannot be taken back."""
        game, state = self.session.game, self.session.state
        if game.is_over(state):
            if not self.store.game(self.session.game_id).finished:
                event = self.session.finish_if_over()
                if event is not None:
                    self.feed.event(event)
            self.status.phase = Phase.OVER
            self._review()
            return
        if game.to_move(state) is None:  # a Topple round is over: deal the next one
            if self._deal_at is None:
                self._deal_at = now + (self.follower.revise_window if board_decided else 0.0)
            self._deal_if_due(now)

    def _deal_if_due(self, now: float) -> None:
        if self._deal_at is None:
            return
        game, state = self.session.game, self.session.state
        if game.is_over(state) or game.to_move(state) is not None or self.draw_agreed():
            # the round's last move was undone or revised, or the players agreed a draw
            self._deal_at = None
            if self.status.message == "round over":
                self.status.message = ""
            return
        if now < self._deal_at:
            self.status.message = N_("round over")
            return
        new_state = game.deal(state, self.rng)
        self.feed.event(self.session.dealt(new_state, game.round_record(new_state)))
        self._deal_at = None
        self.follower.reset(new_state)
        self.status.phase = Phase.SETUP
        self.status.message = N_("new round: set up the line")
        setup_flow.start_if_due(self)

    def next_deadline(self, now: float) -> float | None:
        """The next time after ``now`` when :meth:`step` has something to do by itself.

        While a bot thinks, and until :meth:`_station_turn` has collected its answer for the
        position: an answer that came in after a step and before the next wake-up is no longer
        "thinking", and was shown only at the next event (the long soak's figures changed
        with the bot thread's speed)."""
        opp, state = self.opponent, self.session.state
        answer_due = opp.pending("station", state) if self._station_moves(state) else \
            opp.pending("hint", state) and self.referee_lock is None
        thinking = now + POLL_S if opp.thinking() or answer_due or self.postgame.busy() \
            else None
        times = [t for t in (self.follower.next_deadline(now), self._deal_at, thinking)
                 if t is not None]
        return max(min(times), now) if times else None

    def persist(self, write: Callable[[], Event], now: float) -> None:
        try:
            self.feed.event(write())
            self.status.store_error = ""
        except StoreError as exc:
            self.store_failed(str(exc), now)

    def note(self, kind: str, data: JSON) -> None:
        try:
            self.feed.event(self.session.note(kind, data))
        except StoreError as exc:
            self.status.store_error = str(exc)

    def store_failed(self, why: str, now: float) -> None:
        log.error("storage: %s (at %.3f)", why, now)
        self.status.store_error = why

    # -- buttons that belong to the station, not the game ----------------------------------------
    def _button_for_station(self, button: str, now: float) -> bool:
        """Handle a button in the menu or after the game; False: the follower's to take."""
        if self.setup_code:  # the set-up screen: OK plays now on the defaults, others wait
            if button == "ok":
                self.setup_code = ""
            return True
        status = self.status
        if status.change is not None:
            self._change_button(button, now)
            return True
        if self._draw_button(button, now):
            return True
        if status.phase not in (Phase.OVER, Phase.MENU):
            return False
        choices = self.menu_triples()
        current = (status.menu_game or self.session.game.name,
                   status.menu_players or len(self._players()),
                   status.menu_preset if status.phase == Phase.MENU else 0)
        if button == "menu":  # the next game, player count and rule options this board offers
            at = choices.index(current) if current in choices else -1
            status.menu_game, status.menu_players, status.menu_preset = \
                choices[(at + 1) % len(choices)]
            status.phase = Phase.MENU
        elif button == "back" and status.phase == Phase.MENU:
            status.phase = Phase.OVER
        elif button == "ok":
            game, count, preset = current if current in choices else choices[0]
            chosen = preset_options(game, preset, count) if preset else None
            self.new_game(game, now, players=count, options=chosen)
        return True

    def menu_triples(self) -> list[tuple[str, int, int]]:
        """MENU's cycle at game over: every game and player count (:meth:`menu_choices`) with
        the configured options first, then again with each rule-option preset."""
        pairs = self.menu_choices()
        most = max(preset_count(g) for g, _ in pairs)
        return [(g, n, p) for p in range(most) for g, n in pairs if p < preset_count(g)]

    # -- an agreed draw --------------------------------------------------------------------------
    def draw_agreed(self) -> bool:
        """True once the players agreed a draw: the game is over, whatever the engine says."""
        return self.session.record.get("draw_agreed") is True

    def offer_draw(self, now: float, agreed: int = 0) -> None:
        """Open the draw question (``agreed``: confirmations already given; the page's
        ``draw`` action gives one, so the station's OK, the other player's, completes it)."""
        game, state = self.session.game, self.session.state
        if self.status.phase not in (Phase.PLAY, Phase.SETUP) or game.is_over(state) \
                or self.draw_agreed() or self.blocked():
            raise ActionError(Said.gettext("there is no game in play to agree a draw in"))
        if self.status.prompt is not None and self.status.prompt.kind is not PromptKind.DRAW:
            raise ActionError(Said.gettext("answer the open question first"))
        self.status.prompt = Prompt(now, PromptKind.DRAW, (_DRAW_WAITING[min(agreed, 1)],), agreed)
        self.note("prompt", {"kind": "draw", "options": [], "agreed": agreed})

    def _draw_button(self, button: str, now: float) -> bool:
        """MENU during play offers a draw; with the offer open, OK agrees (two agreements end
        the game, one per player) and BACK withdraws it. False: not a draw button."""
        prompt, status = self.status.prompt, self.status
        if prompt is None or prompt.kind != PromptKind.DRAW:
            if button != "menu" or prompt is not None or status.phase != Phase.PLAY \
                    or self.session.game.is_over(self.session.state) or self.draw_agreed():
                return False
            try:
                self.offer_draw(now)
            except ActionError:
                return False
            return True
        if button == "back":
            status.prompt = None
        elif button == "ok" and prompt.selected + 1 >= 2:
            self._agree_draw(now)
        elif button == "ok":
            status.prompt = replace(prompt, options=(_DRAW_WAITING[1],), selected=1)
        return True

    def _agree_draw(self, now: float) -> None:
        """Both players agreed: the game ends with no winner, stored as its result."""
        game, state = self.session.game, self.session.state
        result: JSON = {**FinalResult(tuple(game.scores(state)), (), draw=True).to_json(),
                        "draw_agreed": True}
        try:
            event = self.store.finish(self.session.game_id, result)
        except StoreError as exc:
            self.store_failed(str(exc), now)
            return
        self.session.record = fold(self.session.record, [(PlayKind.RESULT, result)])
        self.feed.event(event)
        self.status.prompt = None
        self.status.phase = Phase.OVER
        self.status.message = N_("draw agreed")
        self._review()

    def _review_key(self) -> tuple[int, int]:
        return self.session.game_id, len(self.session.moves())

    def _review(self) -> None:
        """The game is over: have its review thought out off the loop (:mod:`.postgame`)."""
        self.postgame.start(self._review_key(), self.session.record)

    def _not_on_this_board(self, game_name: str) -> str:
        titles = " and ".join(get_game(g).title for g in self.games)
        return (f"this board ({self.geometry.title}) plays {titles} only: "
                f"{get_game(game_name).title} needs its own board and station")

    def menu_choices(self) -> tuple[tuple[str, int], ...]:
        """What MENU cycles through at game over: each game this board plays, with each
        player count its rules allow."""
        return tuple((g, n) for g in self.games for n in get_game(g).player_counts)

    def _menu_words(self) -> str:
        """The rule-option preset MENU has chosen, in short words (empty: as configured)."""
        game, preset = self.status.menu_game or self.session.game.name, self.status.menu_preset
        if not preset:
            return ""
        players = self.status.menu_players or 2
        options = table_options(game, preset_options(game, preset, players), players)
        return words(game, options, self.config.station.language, standard=True)

    def options_words(self) -> str:
        """The options the game uses, in short words (empty: the rules as printed)."""
        return words(self.session.game.name, self.session.record.get("options"),
                     self.config.station.language)

    # -- a game change asked for on the page -----------------------------------------------------
    def needs_table_ok(self) -> bool:
        """True while ending this game would take something from a player: it is not over and
        a move was played. The page alone may then only ask; the table's OK decides."""
        game, state = self.session.game, self.session.state
        return not (game.is_over(state) or self.draw_agreed()) and bool(self.session.moves())

    def ask_new_game(self, game_name: str, now: float, players: Sequence[str] | int | None,
                     options: JSON | None) -> bool:
        """The page's new game: started at once when nothing is lost by it, else checked and
        left waiting for the station's OK (True: it waits). :class:`ValueError` as
        :meth:`new_game` for a game, players or options it refuses."""
        names, checked = self._checked_game(game_name, players, options)
        if not self.needs_table_ok():
            self.new_game(game_name, now, players=names, options=checked)
            return False
        self.status.change = {"game": game_name, "players": list(names), "options": checked}
        self.status.message = N_("new game asked on the page: OK starts it, BACK plays on")
        self.note("prompt", {"kind": "new_game", "options": []})
        self.render(now)
        return True

    def offer_pairing(self, pairing: tuple[int, int, str, Sequence[str]] | None,
                      now: float, ends_in: float | None = None) -> bool:
        """The tournament's pairing for this board, from the referee's dashboard: ``(round,
        table, game, names in seat order)``, or None when the board serves no table now.

        The game waits for the table's OK (BACK keeps what is on), so the players never type
        their names and the station's players are exactly the table's, seat for seat: that is
        how the dashboard knows the result is this table's. False (logged, shown) when this
        board cannot play it; an offer withdrawn is forgotten unless already started.

        ``ends_in``: the seconds the round clock had left when the referee sent it (None: no
        clock); the screen and page show what is left. The referee sends the pairing again
        when the clock changes: a game of that very pairing already on is then not offered
        again, only its clock changes."""
        change = self.status.change
        self._declined = None  # a new word from the referee replaces an offer refused
        self.status.round_end = None if pairing is None or ends_in is None else now + ends_in
        if pairing is None:
            if change is not None and change.get("pairing") is not None:
                self.status.change = None
                self.status.message = ""
            self.render(now)
            return True
        number, table, game_name, players = pairing
        try:
            names, checked = self._checked_game(game_name, list(players), None)
        except ValueError as exc:
            log.warning("the referee's pairing (round %s, table %s) cannot be played here: %s",
                        number, table, exc)
            self.status.message = Said.gettext(
                "the referee's pairing cannot be played here: {reason}", reason=said_of(exc))
            self.render(now)
            return False
        if self._playing_pairing(game_name, names) and (
                change is None or change.get("pairing") is None):
            self.render(now)
            return True
        self.status.change = {"game": game_name, "players": list(names), "options": checked,
                              "pairing": [number, table],
                              "offer": [number, table, game_name, list(names)]}
        self.status.message = Said.gettext("round {round}, table {table}: {names}. OK starts it",
                                           round=number, table=table,
                                           names=" \u2013 ".join(names))
        self.note("prompt", {"kind": "new_game", "options": []})
        self.render(now)
        return True

    def _playing_pairing(self, game_name: str, players: Sequence[str]) -> bool:
        """True when the game on is the pairing's, unfinished: the same game, the same names
        in the same seats (a pairing sent again for its clock must not offer it again)."""
        game, state = self.session.game, self.session.state
        return game.name == game_name and not game.is_over(state) and \
            tuple(self._players()) == tuple(players)

    def round_left(self, now: float) -> float | None:
        """Seconds left on the round clock (0 once time is up; None: no clock)."""
        end = self.status.round_end
        return None if end is None else max(0.0, end - now)

    def _change_button(self, button: str, now: float) -> None:
        """OK starts the game the page asked for; BACK keeps this one (the refusal is noted
        in the game's events); other buttons wait."""
        change, self.status.change = self.status.change, None
        assert change is not None
        if button == "ok":
            levels = change.get("levels")
            if isinstance(levels, dict):
                self.opponent.levels = levels
            self.new_game(str(change["game"]), now, players=change["players"],
                          options=change["options"])
            return
        if button == "back":
            if change.get("offer") is not None:  # offered again once the game on is over
                self._declined = (change, self.session.game_id, self._over())
            self.status.message = N_("new game refused: the game goes on")
            self.note("prompt", {"kind": "new_game_refused", "options": []})
            return
        self.status.change = change

    def blocked(self) -> bool:
        """True while no move may be played: cards to tap, or a set-up being read
        (:mod:`pi_app.referee.setup_flow`)."""
        return self.status.cards is not None or self.status.reading is not None

    def new_game(self, game_name: str, now: float | None = None,
                 players: Sequence[str] | int | None = None,
                 options: JSON | None = None) -> None:
        """Close the current game (abandoned if unfinished) and start ``game_name`` with
        ``players``: their names, or a count (names then by :meth:`default_players`), or
        None for the defaults; ``options``: its rule options (None: the configured ones).
        :class:`ValueError` (nothing changed) for a game this board cannot play, players its
        rules do not allow or options its engine does not know."""
        now = self.clock() if now is None else now
        names, options = self._checked_game(game_name, players, options)
        self.status.change = None
        if not self.store.game(self.session.game_id).finished:
            self.store.abandon(self.session.game_id)
        self.session = self._start(game_name, names, options)
        self.follower = self._new_follower()
        setup_flow.start_if_due(self)
        self.render(now)

    def _checked_game(self, game_name: str, players: Sequence[str] | int | None,
                      options: JSON | None) -> tuple[tuple[str, ...], JSON | None]:
        """The players' names and the options of a new game, checked (:class:`ValueError`)."""
        if game_name not in self.games:
            raise ValueError(self._not_on_this_board(game_name))
        if isinstance(players, int):
            check_count(game_name, players)
            names = tuple(self.default_players(game_name, players))
        elif players:
            names = tuple(clean_names(list(players), game_name))
        else:
            names = tuple(self.default_players(game_name))
        if options is not None:
            options = check_options(game_name, options, len(names))
        return names, options

    # -- output ----------------------------------------------------------------------------------
    def _public(self, text: str, *, piece: bool = False) -> str:
        """``text`` (a move, or a piece's name) as the screen may show it: the screen faces every
        player, so while the game is on it says only what the engine calls public (a TacTiki
        piece's name is its hidden rank: ``T4`` is shown ``T?``)."""
        game, state = self.session.game, self.session.state
        if game.winners(state) is not None or not text:
            return text
        return game.public_piece(text) if piece else game.public_text(text)

    def scene(self, now: float) -> fb.Scene:
        game, state, status = self.session.game, self.session.state, self.status
        phase = Phase.SETUP if self.blocked() else status.phase
        if not status.link_up:
            phase = Phase.OFFLINE
        elif status.store_error:
            phase = Phase.ERROR
        elif status.prompt is not None and phase == Phase.PLAY:
            phase = Phase.PROMPT
        guidance = None if status.reading is not None else status.guidance
        left = self.round_left(now)
        prompt_cells: tuple[str, ...] = ()
        if status.prompt is not None:
            if status.prompt.kind == PromptKind.ORDER:  # the set-up's fields of unknown order
                prompt_cells = status.prompt.options
            elif status.prompt.kind == PromptKind.TAKEBACK and status.prompt.plies:
                history = self.follower.history
                earlier = history[-status.prompt.plies][0] if len(history) >= \
                    status.prompt.plies else state
                prompt_cells = fb.changed_cells(game.expected_view(earlier),
                                                game.expected_view(state))
            elif status.prompt.kind != PromptKind.DRAW:
                prompt_cells = fb.option_cells(game, state, status.prompt.options)
        return fb.Scene(
            game=game.name, title=game.title, phase=phase,
            players=self._players(),
            to_move=game.to_move(state), scores=tuple(game.scores(state)),
            winners=() if self.draw_agreed() else game.winners(state),
            confirmed=status.confirmed,
            confirmed_at=status.confirmed_at, last_move=self._public(status.last_move),
            guidance_kind=None if guidance is None else guidance.kind,
            fixes=() if guidance is None else tuple(
                replace(f, piece=self._public(f.piece, piece=True)) for f in guidance.fixes),
            prompt=status.prompt, prompt_cells=prompt_cells, takeback=status.takeback,
            message=status.message or self._remote_pause() or self._shown_words(state)
            or status.notice,
            board=self.config.station.board, link_detail=status.link_detail,
            store_error=status.store_error, menu_game=status.menu_game,
            menu_players=status.menu_players or len(self._players()),
            menu_choices=self.menu_choices(), page_url=self.page_url,
            options=self._menu_words() if phase == Phase.MENU else self.options_words(),
            setup_code=self.setup_code, setup_url=self.setup_url, setup_qr=self.setup_qr,
            round_minutes=None if left is None else math.ceil(left / 60),
            **self._shown_cells(state),
            language=self.config.station.language)

    def _over(self) -> bool:
        return self.session.game.is_over(self.session.state) or self.draw_agreed()

    def _offer_again(self, now: float) -> None:
        """The referee's pairing the players put off with BACK (to finish the game on) is
        offered again once that game is over: the referee sends it only when it changes."""
        declined = self._declined
        if declined is None or self.status.change is not None or not self._over():
            return
        change, game_id, over_then = declined
        if over_then and game_id == self.session.game_id:
            return  # put off at a game over: not again until another game ends
        self._declined = None
        number, table, game_name, names = change["offer"]
        end = self.status.round_end  # the clock counts on from when the pairing came
        self.offer_pairing((number, table, game_name, names), now,
                           None if end is None else max(0.0, end - now))

    def render(self, now: float) -> None:
        """Write the LEDs and the display for ``now`` (drivers skip unchanged frames)."""
        self._offer_again(now)
        scene = self.scene(now)
        try:
            self.last_frame = fb.led_frame(scene, self.geometry, now)
            if self.leds is not None:
                self.leds.show(self.last_frame)
            self._output_ok("LEDs")
        except Exception as exc:  # the game goes on; the screen, page and store still work
            self._output_failed("LEDs", exc)
        if scene != self._last_scene:  # the screen and the feed follow the scene, not blinking
            self._last_scene = scene
            try:
                self.last_screen = fb.screen(scene)
                if self.display is not None:
                    self.display.show(self.last_screen)
                self._output_ok("display")
            except Exception as exc:
                self._output_failed("display", exc)
            self.feed.update(self.snapshot(scene))

    def _output_failed(self, part: str, exc: Exception) -> None:
        """Log a broken output once (with its traceback), not on every redraw: the loop
        redraws many times a second, and a log that repeats one error buries everything."""
        why = f"{type(exc).__name__}: {exc}"
        if self._output_errors.get(part) != why:
            self._output_errors[part] = why
            log.error("the %s cannot show the game (%s); refereeing goes on", part, why,
                      exc_info=exc)

    def _output_ok(self, part: str) -> None:
        if self._output_errors.pop(part, None) is not None:
            log.info("the %s work again", part)

    def player_names(self) -> tuple[str, ...]:
        """The current game's players as people call them (for summaries and tests)."""
        return self._players()

    def _players(self) -> tuple[str, ...]:
        """The players' names, read from the store once per game (not on every redraw); a
        game stored without names has "Player 1", "Player 2"..."""
        cached = self._player_names
        if cached is None or cached[0] != self.session.game_id:
            stored = self.store.game(self.session.game_id).players
            count = len(self.session.game.scores(self.session.state))
            cached = (self.session.game_id, tuple(stored) or default_names(count))
            self._player_names = cached
        return cached[1]

    def next_frame_change(self, now: float) -> float | None:
        """When the LEDs next change by themselves (a blink edge), or None."""
        scene = self._last_scene or self.scene(now)
        return fb.next_change(scene, self.geometry, now)

    def snapshot(self, scene: fb.Scene) -> FeedSnapshot:
        """What the feed shows for ``scene``: the one builder the simulated station uses too."""
        return FeedSnapshot.of(
            self.session, self._players(),
            StationStatus.of_phase(scene.phase, scene.guidance_kind),
            draw_agreed=self.draw_agreed(), prompt=scene.prompt, fixes=scene.fixes,
            notice=self.status.notice,
            review=self.postgame.of(self._review_key()) if scene.phase == Phase.OVER else None,
            station_seats=self.opponent.levels, round_left=self.round_left(self.clock()))

    def screen_image(self, now: float) -> Image.Image:
        image: Image.Image = fb.screen(self.scene(now))
        return image

    # -- outside actions (web page, referee) -----------------------------------------------------
    def _register_actions(self) -> None:
        async def undo() -> JSON:
            out = self.step(ButtonPressed(self.clock(), "back"))
            if not any(isinstance(o, TakenBack) for o in out):
                raise ActionError(Said.gettext("nothing to take back"))
            return {"ok": True, "moves": len(self.session.history)}

        async def new_game(game: str = "", players: list[str] | int | None = None,
                           options: JSON | None = None, bots: JSON | None = None) -> JSON:
            name = game or self.session.game.name
            if name not in GAME_NAMES:
                raise ActionError(f"unknown game {name!r} (known: {', '.join(GAME_NAMES)})")
            if isinstance(players, bool) or not isinstance(players, list | int | None):
                raise ActionError("players: a list of names, or a count")
            kept = self.opponent.levels
            try:  # bots: the station's seats from this game on (a restart: the configured)
                if bots is not None:
                    count = len(players) if isinstance(players, list) else players
                    self.opponent.levels = parse_bots(bots, count or len(
                        self.default_players(name)))
                waits = self.ask_new_game(name, self.clock(), players, options)
            except ValueError as exc:
                self.opponent.levels = kept
                raise ActionError(str(exc)) from exc
            if waits:  # the game on keeps its seats; OK gives the new game the chosen ones
                chosen, self.opponent.levels = self.opponent.levels, kept
                if self.status.change is not None:
                    self.status.change["levels"] = chosen
                return {"ok": True, "asked": "the game goes on until OK on the station "
                                               "starts the new one (BACK refuses it)"}
            return {"ok": True, "game_id": self.session.game_id,
                    "players": list(self._players())}

        async def override(text: str = "") -> JSON:
            return self.override(text)

        self.feed.handle("undo", undo)
        self.feed.handle("new_game", new_game)
        async def draw() -> JSON:
            self.offer_draw(self.clock(), agreed=1)
            self.render(self.clock())
            return {"ok": True, "waiting": "the other player agrees: OK on the station, or "
                                           "Accept draw on the page"}

        async def draw_accept() -> JSON:
            """The page agrees the draw offered at the table (MENU): one agreement. The page
            is never both players: the last agreement is always OK on the station, pressed
            at the table, so one person with the PIN cannot end a game as a draw alone."""
            prompt = self.status.prompt
            if prompt is None or prompt.kind != PromptKind.DRAW:
                raise ActionError(Said.gettext("no draw is offered: offer one first"))
            if prompt.selected >= 1:
                raise ActionError(Said.gettext(
                    "the draw waits for the other player: OK on the station"))
            now = self.clock()
            self._draw_button("ok", now)
            self.render(now)
            return {"ok": True, "agreed": self.draw_agreed()}

        self.feed.handle("override", override)
        self.feed.handle("hint", self._hint_action)
        self.feed.handle("draw", draw)
        self.feed.handle("draw_accept", draw_accept)

    def override(self, text: str) -> JSON:
        """A referee replaces the last move by another legal one (a ruling at the table)."""
        history = self.session.history
        if not history:
            raise ActionError(Said.gettext("there is no move to override"))
        before, old = history[-1]
        game = self.session.game
        try:
            after = game.apply_text(before, text)
        except Exception as exc:
            raise ActionError(Said.gettext("{move} is not legal there: {reason}",
                                           move=repr(text), reason=said_of(exc))) from exc
        canonical = game.move_text(before, game.parse_move(before, text))
        now = self.clock()
        self.persist(lambda: self.session.revised(old, canonical, after), now)
        self.follower.reset(after, list(self.session.history))
        self.status.last_move = canonical
        self.render(now)
        return {"ok": True, "replaced": old, "by": canonical}

    # -- the station's own seats and hints (pi_app.referee.opponent) -----------------------------
    def _station_turn(self, now: float) -> None:
        """On a station's seat's turn in play, have its move thought out (off the loop) and
        shown; drop a shown move or hint once the position changed."""
        game, state, opp = self.session.game, self.session.state, self.opponent
        if opp.shown is not None and opp.shown.state != state:
            opp.forget()
        # Also while the board is checked after a restart: a person may be carrying out the
        # station's move, which is refused until the station shows it again.
        if self._station_moves(state):
            shown = opp.want("station", game, state, len(self.session.history))
            if shown is not None and self._expecting is not self.follower.position:
                self.follower.expect_only(shown.text)  # any other move: a wrong execution
                self._expecting = self.follower.position
        elif opp.pending("hint", state) and self.referee_lock is None:
            opp.want("hint", game, state, len(self.session.history))

    def _send_own_move(self) -> None:
        """Hand a remote game's link the first stored move the authority has not confirmed,
        if a local player made it: at the end of the step that stored it, and again on each
        step until the record has it, since after a restart the store is the only place it is
        kept."""
        remote = self.opponent.remote
        if remote is None:
            return
        ply, history = remote.confirmed(), self.session.history
        if ply >= len(history):
            return
        before, text = history[ply]
        seat = self.session.game.to_move(before)
        if seat is None or self.opponent.levels.get(seat) != REMOTE:
            remote.made(ply, text)

    def _remote_pause(self) -> str:
        """The pause of a remote game, on the screen: which board is away (issue 36)."""
        remote = self.opponent.remote
        away = () if remote is None else remote.away()
        if not away:
            return ""
        return Said.gettext("paused: {boards} away", boards=", ".join(away))

    def _station_moves(self, state: Any) -> bool:
        """Is it a station's seat's turn to have its move thought out and shown?"""
        game = self.session.game
        return self.status.phase in (Phase.PLAY, Phase.SETUP) and not self.blocked() \
            and not game.is_over(state) and self.opponent.plays(game.to_move(state))

    def _shown(self, state: Any) -> Shown | None:
        shown = self.opponent.shown
        return shown if shown is not None and shown.state == state else None

    def _shown_words(self, state: Any) -> str:
        shown = self._shown(state)
        if shown is None:
            return ""
        words = self.session.game.public_text(shown.text)  # the screen is public: no ranks
        if shown.kind == "station":
            return Said.gettext("Station: {move}", move=words)
        return Said.gettext("Hint: {move}", move=words)

    def _shown_cells(self, state: Any) -> dict[str, Any]:
        shown = self._shown(state)
        if shown is None:
            return {}
        return {"shown_kind": shown.kind, "shown_lift": shown.lift, "shown_put": shown.put}

    def _as_shown(self, outcome: MoveAccepted, before: Any) -> bool:
        """A move for a station's seat must be the move the station showed. Any other, even a
        legal one, is a wrong execution: the follower is put back, so the usual guidance leads
        the board back to the position, and the station's move is shown again. (Taking the
        person's move instead would store, as the station's, a move it never chose.)

        A move the follower takes as the only one there is (``Acceptance.FORCED``: a pass, a
        decision that changes nothing) is the station's whatever its bot would say, and is
        taken at once, before the bot has answered: refusing it as not shown only made the
        follower take it again and again until the bot had thought it out."""
        if not self.opponent.plays(outcome.player) or outcome.how is Acceptance.FORCED:
            return True
        shown = self._shown(before)
        if shown is not None and shown.kind == "station" and shown.text == outcome.text:
            return True
        self.follower.reset(before, list(self.session.history))  # its guidance is noted
        log.info("not the station's move: %s (shown: %s)", outcome.text,
                 "none yet" if shown is None else shown.text)
        return False

    def lock_hints(self, by: str | None, now: float) -> None:
        """The referee locked hints (``by``: who) or lifted the lock (None), from the tournament
        dashboard through the broker. A hint on the board goes out at once, and one being
        thought out is not shown."""
        if by == self.referee_lock:
            return
        self.referee_lock = by
        log.info("hints %s by the referee%s", "locked" if by is not None else "allowed again",
                 f" ({by})" if by else "")
        if by is not None and self.opponent.shown is not None \
                and self.opponent.shown.kind == "hint":
            self.opponent.forget("hint")
            self.render(now)

    def _hint_refusal(self) -> str:
        """Why no hint can be given now (empty: one can)."""
        game, state = self.session.game, self.session.state
        if self.referee_lock is not None:
            return N_("hints are locked by the referee")
        if not self.opponent.hints:
            return N_("hints are off (tournament mode)")
        if self.status.phase != Phase.PLAY or self.blocked() or game.is_over(state) \
                or game.to_move(state) is None:
            return N_("there is no move to hint at now")
        if self.opponent.plays(game.to_move(state)):
            return N_("the station is to move")
        return ""

    def _hint_button(self, now: float) -> None:
        """OK during play with no question open and no decision to confirm asks for a hint,
        thought out off the loop and shown when ready."""
        why = self._hint_refusal()
        if why:
            self.status.message = why if self.status.phase == Phase.PLAY else self.status.message
            return
        self.status.message = ""
        game, state = self.session.game, self.session.state
        self.opponent.want("hint", game, state, len(self.session.history))

    async def _hint_action(self, seat: int | None = None) -> JSON:
        """The page's ``hint``: the best move for the player to move, shown on the board as
        after the button; refused when hints are off, in a game with hidden information (the
        page cannot tell who asks: only the player to move may have a hint), and when the page
        says whose it is (``seat``) and that player is not to move. The same position gets the
        same hint (:mod:`pi_app.bots.hints`)."""
        import asyncio

        why = self._hint_refusal()
        if why:
            raise ActionError(Said.gettext(why))
        game, state = self.session.game, self.session.state
        if game.hidden_information:
            # The page has no seat: the opponent could ask, on your turn, for a search over
            # your hidden ranks or card. The station's OK, pressed at the table, is the hint.
            raise ActionError(Said.gettext(
                "hints in this game come from the station's OK button, on your own turn"))
        to_move = game.to_move(state)
        assert to_move is not None
        if seat is not None and seat != to_move:
            raise ActionError(Said.gettext("a hint is only for your own turn"))
        shown = await asyncio.to_thread(
            think, "hint", game, state, to_move, HINT_LEVEL, hint_rng(game, state),
            hint_budget(game.name))
        if self.session.state == state and self.referee_lock is None:
            self.opponent.shown = shown
            self.render(self.clock())
        return {"ok": True, "seat": to_move, "move": game.public_text(shown.text),
                "lift": list(shown.lift),
                "put": list(shown.put)}

#: The draw question's one line: nobody agreed yet, or one player (or the page) did.
_DRAW_WAITING = ("both players press OK", "the other player: OK")


def _no_wake() -> None:
    """No loop to wake: a station stepped by its caller (tests, the command line)."""


def board_games(geometry: Geometry, configured: str) -> tuple[str, ...]:
    """The games a board plays: the one its geometry file is for (``"game"``). A geometry
    for a game the station does not know falls back to the configured game."""
    return (geometry.game,) if geometry.game in GAME_NAMES else (configured,)
