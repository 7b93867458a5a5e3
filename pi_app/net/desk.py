"""The referee desk: every board of the event at a glance, fed by MQTT, kept in the ledger.

All of it runs on the dashboard's event loop: the MQTT thread only hands messages over
(:meth:`Desk.receive` via ``loop.call_soon_threadsafe``), so the model and the ledger have one
owner and need no locks. Messages that arrive together are written in one transaction; after
the commit the desk acknowledges them to the broker (the subscriber's manual PUBACK) and wakes
the pages that watch the boards that changed.

Dedup and order: per board the desk keeps the highest event ``seq`` it stored. An event at or
below it is a repeat (QoS 1 is at-least-once) and is dropped; an event above ``last + 1`` is
stored and the missing numbers are reported as a gap (only a broker that lost its queue, or a
station whose database was replaced, can cause one).

A board's status (:class:`BoardStatus`), as the overview shows it, from the station's own
(:class:`~pi_app.referee.feed.StationStatus`, the one contract both sides import):

``offline``   the station's last will (or clean stop) said so
``fault``     the station is up but cannot follow the board (sensors unplugged, store failing)
``mismatch``  the board does not match the game (the station is guiding the players)
``waiting``   the station waits for people: a prompt, a required follow-up, set-up, idle
``playing``   moves are coming in
``over``      the game ended; its result waits for a referee (``confirmed`` once ruled)
``unknown``   heard of, but neither its status nor its state yet
``never``     configured for the event (``referee.toml``, ``stations.json``), never heard from

Rows keep saying what a referee needs when a station goes away: an offline board still shows
the last result its station reported and the referee's ruling on it (kept in the ledger, so a
dashboard restart keeps them too), and how long ago it was last heard
(:mod:`pi_app.net.eventlog` for the wording and the clock-skew handling).

Every payload is checked against its schema (:mod:`pi_app.net.schema`) before it touches the
model or the ledger; one that does not fit is dropped (and acknowledged, so the broker does not
send it again) and counted on its board (``malformed``, with the last reason), so one station's
bug shows on its own row instead of breaking the pages of every board.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from pi_app.i18n import translator
from pi_app.json_types import JSON
from pi_app.net import topics
from pi_app.net.eventlog import Skew, event_lines, feed_text, result_text
from pi_app.net.ledger import Ledger
from pi_app.net.redact import public_event, public_snapshot
from pi_app.net.schema import PayloadError, check, check_event_data
from pi_app.net.sizes import TooBig, check_bytes, check_sizes
from pi_app.net.spectate import Broadcast, public_row
from pi_app.net.svg import board_svg
from pi_app.referee.feed import StationStatus


class BoardStatus(StrEnum):
    """What the overview says about a board (the badge and its colour)."""

    PLAYING = "playing"
    WAITING = "waiting"
    MISMATCH = "mismatch"
    FAULT = "fault"
    OFFLINE = "offline"
    OVER = "over"
    CONFIRMED = "confirmed"
    UNKNOWN = "unknown"
    NEVER = "never"


STATUS_TEXT: dict[BoardStatus, str] = {BoardStatus.NEVER: "never connected"}
"""The badge's words where they differ from the status value."""


SHOWN_AS: dict[StationStatus, BoardStatus] = {
    StationStatus.PLAYING: BoardStatus.PLAYING, StationStatus.MISMATCH: BoardStatus.MISMATCH,
    StationStatus.IDLE: BoardStatus.WAITING, StationStatus.SETUP: BoardStatus.WAITING,
    StationStatus.PROMPT: BoardStatus.WAITING, StationStatus.FOLLOW_UP: BoardStatus.WAITING,
    StationStatus.OFFLINE: BoardStatus.FAULT, StationStatus.ERROR: BoardStatus.FAULT,
    StationStatus.OVER: BoardStatus.OVER,
}
"""Every station status has its board status (a test checks none is left out)."""


@dataclass(frozen=True)
class Incoming:
    """One MQTT message as the subscriber hands it over (``gen``: its connection)."""

    topic: str
    payload: bytes
    mid: int
    qos: int
    gen: int
    received: float
    retained: bool = False
    """Kept by the broker and handed over on (re)subscribing: news of an earlier time, not a
    sign that the station is talking now."""


Acker = Callable[[list[Incoming]], None]


@dataclass
class BoardView:
    board: str
    online: bool | None = None
    state: JSON | None = None
    record: JSON | None = None
    last_seq: int = 0
    events: int = 0
    duplicates: int = 0
    gaps: int = 0
    malformed: int = 0
    problem: str | None = None
    """Why the last malformed payload was dropped."""
    last_lag: float | None = None
    """The newest event's delay beyond the station's best (:class:`Skew`), seconds."""
    updated: float = 0.0
    results: dict[int, JSON] = field(default_factory=dict)
    """Each game's reported result (its last ``result`` event that fits the schema)."""
    heard: float | None = None
    """When any message of the board last arrived, on the dashboard's clock."""
    skew: Skew = field(default_factory=Skew)
    players: dict[int, list[str]] = field(default_factory=dict)
    """Each game's players, from its header."""
    drawn: dict[bool, tuple[JSON, str]] = field(default_factory=dict)
    """The board's picture per kind of viewer (referee or public), with the state it was
    drawn from: drawn once per change, not once per page (issue 29)."""

    def picture(self, full: bool, shown: JSON) -> str:
        """The SVG of ``shown`` (this view's state as ``full`` or public), drawn once per
        state the station sends, however many pages ask."""
        state = self.state or {}
        kept = self.drawn.get(full)
        if kept is not None and kept[0] is state:
            return kept[1]
        svg = board_svg(str(state.get("game") or ""), shown.get("view") or {})
        self.drawn[full] = (state, svg)
        return svg

    def status(self, confirmed: bool) -> BoardStatus:
        if self.heard is None and self.state is None and self.online is None:
            return BoardStatus.NEVER
        if self.online is False:
            return BoardStatus.OFFLINE
        if self.state is None:
            return BoardStatus.UNKNOWN if self.online is None else BoardStatus.WAITING
        shown = SHOWN_AS[StationStatus(self.state["status"])]  # checked on the way in
        if shown is BoardStatus.OVER or (self.state.get("winners") is not None
                                         and shown is not BoardStatus.MISMATCH):
            return BoardStatus.CONFIRMED if confirmed else BoardStatus.OVER
        return shown


@dataclass(eq=False)
class Watcher:
    """One page's interest: which boards changed since it last looked."""

    board: str | None
    full: bool
    dirty: set[str] = field(default_factory=set)
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class Desk:
    def __init__(self, ledger: Ledger, event: str, *, max_lags: int = 200_000,
                 boards: Iterable[str] = ()) -> None:
        """``boards``: the event's configured boards, listed (as never connected) before
        their stations are heard from."""
        self.ledger = ledger
        self.event = event
        self.boards: dict[str, BoardView] = {b: BoardView(b) for b in boards}
        self.acker: Acker | None = None
        self.watchers: set[Watcher] = set()
        self.lags: collections.deque[tuple[float, float]] = collections.deque(maxlen=max_lags)
        """(when committed, lag) per event, wall-clock seconds: the benchmark's figure."""
        self.counts = collections.Counter[str]()
        self._batch: list[Incoming] = []
        self._batch_events: list[float] = []
        self._dirty: set[str] = set()
        self._flush_scheduled = False
        self._confirmed = ledger.confirmations()
        self.ready = threading.Event()
        """Set once the MQTT subscription is in place (nothing published before it is queued)."""
        self.result_listeners: list[Callable[[str, int, JSON], None]] = []
        """Called with (board, game id, result) for each station result stored (tournament)."""
        self.ruling_listeners: list[Callable[[str, int, JSON], None]] = []
        """Called with (board, game id, ruling) for each referee's ruling (tournament)."""
        self.broadcast: Broadcast | None = None
        """The spectators' page's rows, kept to be shown late (:meth:`spectate`; None: the
        page shows the boards as they are)."""
        self.placement: Callable[[str], tuple[int, int] | None] | None = None
        """The round and table a board serves now (the tournament's; None: no tournament),
        for the overview's round and table columns: the desk knows no tournament itself."""
        self._restore()

    def _restore(self) -> None:
        """Pick up where the last run stopped: last seq per board, last status and state.

        Stored payloads are checked again: a ledger written before the schema existed may hold
        a bad one, and it must not break the pages after every restart."""
        for board, seq in self.ledger.last_seqs().items():
            self.board(board).last_seq = seq
        for board, leaves in self.ledger.latest().items():
            view = self.board(board)
            for leaf, payload in leaves.items():
                try:
                    check_sizes(leaf, payload)
                    check(leaf, payload, board)
                except (PayloadError, TooBig) as exc:
                    self._malformed(view, f"stored {exc}")
                    continue
                if leaf == "state":
                    view.state = payload
                elif leaf == "status":
                    view.online = bool(payload["online"])
        for board, heard in self.ledger.last_heard().items():
            self.board(board).heard = heard
        for board, game_id, result in self.ledger.results():
            self.board(board).results[game_id] = result
        for board, game_id, players in self.ledger.players():
            self.board(board).players[game_id] = players
        for board, pairs in self.ledger.clock_pairs(self.boards, Skew().raw.maxlen or 1).items():
            for t, received in pairs:
                self.boards[board].skew.add(t, received)

    def board(self, board: str) -> BoardView:
        """The board's view, made when a station is first heard of (never by a page's read)."""
        view = self.boards.get(board)
        if view is None:
            view = self.boards[board] = BoardView(board)
        return view

    # -- ingest ----------------------------------------------------------------------------------
    def receive(self, message: Incoming) -> None:
        """Take one message (on the loop); the batch is written and acknowledged soon after."""
        self._take(message)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def receive_all(self, messages: Iterable[Incoming]) -> None:
        """Take messages and write them now (tests and tools without a loop)."""
        for message in messages:
            self._take(message)
        self.flush()

    def _take(self, message: Incoming) -> None:
        """Batch ``message`` for writing and apply it; one that does not apply is counted."""
        self._batch.append(message)
        try:
            self._apply(message)
        except (KeyError, TypeError, ValueError, RecursionError):
            self.counts["malformed"] += 1

    def _apply(self, message: Incoming) -> None:
        where = topics.parse_topic(message.topic)
        if where is None or where.event != self.event:
            self.counts["ignored"] += 1
            return
        if not message.payload:  # a retained topic cleared
            self.counts["empty"] += 1
            return
        view = self.board(where.board)
        try:
            check_bytes(where.leaf, message.payload)
        except TooBig as exc:
            self._malformed(view, str(exc))
            return
        payload = topics.decode(message.payload)
        if payload is None:
            self._malformed(view, f"{where.leaf}: not a JSON object")
            return
        if not message.retained:
            view.heard = message.received
        # a retained copy keeps the time its board was really heard (0: unknown)
        received = message.received if not message.retained else view.heard or 0.0
        self._dirty.add(where.board)
        try:
            check_sizes(where.leaf, payload)
            check(where.leaf, payload, where.board)
        except (PayloadError, TooBig) as exc:
            self._malformed(view, str(exc))
            return
        view.updated = message.received
        if where.leaf == "events":
            self._event(view, payload, message.received)
        elif where.leaf == "status":
            view.online = payload["online"]
            self.ledger.save_latest(where.board, "status", payload, received)
        elif where.leaf == "state":
            view.state = payload
            self.ledger.save_latest(where.board, "state", payload, received)
        elif where.leaf == "record":
            view.record = payload
            self.ledger.save_record(where.board, payload["station_game_id"], payload)
        elif where.leaf == "game":
            self.ledger.save_game(where.board, payload)
            view.players[int(payload["game_id"])] = [str(p) for p in payload["players"]]

    def _malformed(self, view: BoardView, why: str) -> None:
        view.malformed += 1
        view.problem = why[:300]
        self.counts["malformed"] += 1

    def _event(self, view: BoardView, event: JSON, received: float) -> None:
        seq = int(event["seq"])
        if seq <= view.last_seq:
            view.duplicates += 1
            self.counts["duplicates"] += 1
            return
        if seq > view.last_seq + 1 and view.last_seq > 0:
            view.gaps += 1
            self.counts["gaps"] += 1
            self.ledger.add_gap(view.board, view.last_seq + 1, seq - 1)
        if not self.ledger.add_event(view.board, event, received):
            view.duplicates += 1
            self.counts["duplicates"] += 1
            return
        view.last_seq = seq
        view.events += 1
        self.counts["events"] += 1
        self._batch_events.append(float(event.get("t", received)))
        view.skew.add(float(event.get("t", received)), received)
        view.last_lag = view.skew.behind()
        if event["kind"] == "result":
            try:
                check_event_data("result", event["data"])
            except PayloadError as exc:  # stored (its number counts), never shown as a result
                self._malformed(view, str(exc))
                return
            view.results[event["game_id"]] = dict(event["data"])
            for listener in self.result_listeners:
                listener(view.board, event["game_id"], view.results[event["game_id"]])

    def flush(self) -> None:
        """Commit the batch, acknowledge it, note lags, wake the pages."""
        self._flush_scheduled = False
        batch, self._batch = self._batch, []
        self.ledger.commit()
        now = time.time()
        for t in self._batch_events:  # the benchmark's figure: station and dashboard share a clock
            self.lags.append((now, now - t))
        self._batch_events = []
        if self.acker is not None and batch:
            self.acker(batch)
        self.counts["messages"] += len(batch)
        dirty, self._dirty = self._dirty, set()
        self._notify(dirty)

    def spectate(self, delay: float) -> None:
        """Keep the spectators' rows to show them ``delay`` seconds late (from now on; the
        boards known now are recorded as they are, so they too appear only after it)."""
        self.broadcast = Broadcast(delay) if delay > 0 else None
        if self.broadcast is not None:
            for board, view in self.boards.items():
                if view.state is not None:  # a board never heard from has nothing to show
                    self.broadcast.record(board, self.public_row(board))

    def public_row(self, board: str) -> JSON:
        """A board as a spectator sees it (:func:`pi_app.net.spectate.public_row`): built
        from the summary without a login and the public moves only."""
        state = self.boards[board].state or {}
        return public_row(self.summary(board, False), public_snapshot(state).get("moves") or [])

    def spectator_rows(self) -> list[JSON]:
        """The spectators' page's rows: each board as it was ``delay`` ago, or as it is."""
        if self.broadcast is not None:
            return self.broadcast.rows()
        return [self.public_row(b) for b in sorted(self.boards)
                if self.boards[b].state is not None]

    def touch(self, boards: Iterable[str]) -> None:
        """Send these boards' rows to the pages again (their round or table changed)."""
        self._notify({b for b in boards if b in self.boards})

    def _notify(self, boards: set[str]) -> None:
        if not boards:
            return
        if self.broadcast is not None:
            for board in boards:
                if self.boards[board].state is not None:
                    self.broadcast.record(board, self.public_row(board))
        for watcher in self.watchers:
            mine = boards if watcher.board is None else boards & {watcher.board}
            if mine:
                watcher.dirty |= mine
                watcher.wake.set()

    def watch(self, board: str | None, full: bool) -> Watcher:
        watcher = Watcher(board, full)
        watcher.dirty = set(self.boards) if board is None else {board}
        watcher.wake.set()
        self.watchers.add(watcher)
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        self.watchers.discard(watcher)

    # -- what pages show -------------------------------------------------------------------------
    def current_game(self, view: BoardView) -> int | None:
        game_id = (view.state or {}).get("game_id")
        return game_id if isinstance(game_id, int) else None

    def summary(self, board: str, full: bool, lang: str = "en") -> JSON:
        """One board's row (KeyError for a board no station ever spoke for); its result in
        ``lang``'s words (the badge and the feed are the page's words)."""
        view = self.boards[board]
        state = view.state or {}
        game_id = self.current_game(view)
        confirmed = None if game_id is None else self._confirmed.get((board, game_id))
        moves = (state if full else public_snapshot(state)).get("moves") or []
        last_move = moves[-1] if moves else None
        status = view.status(confirmed is not None)
        now = time.time()
        placed = None if self.placement is None else self.placement(board)
        return {
            "board": board, "status": status, "online": view.online,
            "round": None if placed is None else placed[0],
            "table": None if placed is None else placed[1],
            "status_text": STATUS_TEXT.get(status, status.value),
            "heard_s": None if view.heard is None else round(max(0.0, now - view.heard), 1),
            "behind_s": None if view.last_lag is None else round(view.last_lag, 1),
            "feed": feed_text(heard=view.heard, online=view.online, behind=view.last_lag,
                              now=now, known=status is not BoardStatus.NEVER),
            "last_result": self.last_result(view, game_id, lang),
            "game": state.get("game"), "title": state.get("title"), "game_id": game_id,
            "players": state.get("players") or [], "scores": state.get("scores") or [],
            "to_move": state.get("to_move"), "winners": state.get("winners"),
            "moves": len(moves), "last_move": last_move, "seq": view.last_seq,
            "events": view.events, "duplicates": view.duplicates, "gaps": view.gaps,
            # why the last one was dropped: for referees (it quotes the station's payload)
            "malformed": view.malformed, "problem": view.problem if full else None,
            "lag_ms": None if view.last_lag is None else round(view.last_lag * 1000, 1),
            "updated": view.updated, "station_status": state.get("status"),
            "confirmed": confirmed, "reported": None if game_id is None
            else view.results.get(game_id),
        }

    def last_result(self, view: BoardView, current: int | None,
                    lang: str = "en") -> JSON | None:
        """The board's newest game with a reported or ruled result, in words (``lang``'s):
        still there when the station goes offline or starts another game."""
        ruled = [g for b, g in self._confirmed if b == view.board]
        games = set(view.results) | set(ruled)
        if not games:
            return None
        game_id = max(games)
        confirmed = self._confirmed.get((view.board, game_id))
        state = view.state or {}
        players = view.players.get(game_id) or (
            state.get("players") or [] if state.get("game_id") == game_id else [])
        result = confirmed["result"] if confirmed else view.results[game_id]
        _ = translator(lang).gettext
        words = result_text(result, players, translator(lang))
        text = (_("confirmed: {result}") if confirmed else _("to confirm: {result}")).format(
            result=words)
        if game_id != current:
            text = _("game {number} {result}").format(number=game_id, result=text)
        return {"game_id": game_id, "current": game_id == current, "text": text,
                "confirmed": confirmed is not None}

    def event_log(self, board: str, events: list[JSON], lang: str = "en") -> list[str]:
        """The events (already in the form the viewer may see) as lines a referee reads, in
        ``lang``."""
        view = self.boards[board]
        state = view.state or {}
        games = {int(e["game_id"]) for e in events}
        players = {g: view.players.get(g) or (state.get("players") or []
                                              if state.get("game_id") == g else [])
                   for g in games}
        before = {g: self.ledger.moves_standing(board, g, min(
            int(e["seq"]) for e in events if e["game_id"] == g)) for g in games}
        return event_lines(events, players, before, view.skew.offset, translator(lang))

    def detail(self, board: str, full: bool, lang: str = "en") -> JSON:
        """One board's page: its row, picture, moves and event log (words in ``lang``)."""
        view = self.boards[board]
        state = view.state or {}
        shown = dict(state) if full else public_snapshot(state)
        out = self.summary(board, full, lang)
        out.update({
            "moves_list": shown.get("moves") or [], "view": shown.get("view") or {},
            "prompt": shown.get("prompt"), "guidance": shown.get("guidance") or [],
            "svg": view.picture(full, shown),
            "text": shown.get("text") if full else None,
        })
        if full:
            out["record"] = view.record
            out["events_tail"] = self.ledger.recent_events(board, 30)
        else:
            tail = (public_event(state.get("game"), e)
                    for e in self.ledger.recent_events(board, 30))
            out["events_tail"] = [e for e in tail if e is not None]
        for event, line in zip(out["events_tail"],
                               self.event_log(board, out["events_tail"], lang), strict=True):
            event["line"] = line
        return out

    def overview(self, full: bool, lang: str = "en") -> list[JSON]:
        return [self.summary(b, full, lang) for b in sorted(self.boards)]

    # -- rulings ---------------------------------------------------------------------------------
    def confirm(self, board: str, game_id: int, referee: str, *,
                winners: list[int] | None = None, scores: list[int] | None = None,
                note: str = "") -> JSON:
        """Confirm the reported result, or rule a corrected one (``winners``/``scores``)."""
        reported = self.ledger.reported(board, game_id)
        if reported is None and winners is None:
            raise ValueError(f"{board}: game {game_id} has no reported result to confirm; "
                             "give the winners to rule one")
        result = dict(reported or {})
        if winners is not None:
            result["winners"] = winners
        if scores is not None:
            result["scores"] = scores
        result["corrected"] = reported is None or result.get("winners") != reported.get(
            "winners") or result.get("scores") != reported.get("scores")
        ruling = self.ledger.confirm(board, game_id, result, referee, note)
        self._confirmed[(board, game_id)] = ruling
        for listener in self.ruling_listeners:
            listener(board, game_id, ruling)
        self._dirty.add(board)
        with contextlib.suppress(RuntimeError):
            self._notify({board})
        self._dirty.discard(board)
        return ruling

    def unconfirm(self, board: str, game_id: int, referee: str, note: str = "") -> None:
        """Take a game's ruling back (the tournament's "Take back"): the board shows its
        reported result waiting for a referee again. Not told to the ruling listeners: the
        tournament took it back first."""
        self.ledger.unconfirm(board, game_id, referee, note)
        self._confirmed.pop((board, game_id), None)
        self._dirty.add(board)
        with contextlib.suppress(RuntimeError):
            self._notify({board})
        self._dirty.discard(board)

    def export(self) -> list[JSON]:
        self.ledger.commit()
        return self.ledger.export(self.event)

    def stats(self, since: float = 0.0) -> JSON:
        """Counters, and the lags of the events committed at or after ``since`` (epoch seconds):
        a load run asks for its measured window only, after its stations have connected."""
        lags = sorted(lag for when, lag in self.lags if when >= since)

        def pct(p: float) -> float | None:
            if not lags:
                return None
            return round(lags[min(len(lags) - 1, int(p * len(lags)))] * 1000, 2)

        return {"ready": self.ready.is_set(), "boards": len(self.boards),
                "counts": dict(self.counts),
                "lag_ms": {"n": len(lags), "p50": pct(0.50), "p90": pct(0.90),
                           "p99": pct(0.99), "max": pct(1.0)},
                "offline": sorted(b for b, v in self.boards.items() if v.online is False),
                "malformed": {b: v.malformed for b, v in sorted(self.boards.items())
                              if v.malformed}}
