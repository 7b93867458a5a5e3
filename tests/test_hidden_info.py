"""No hidden fact leaves a game before it ends, on any channel (issue 15, the critical item).

A game of each kind is played at a station whose every event kind is stored through the real
session and event store and told to the real feed, exactly as the station does: the Secret Tiki
cards the players tap (``cards``), the stacks a TacTiki set-up was read as (``setup_read``), new
Topple rounds (``deal``), moves, revisions, takebacks, prompts whose options include a
reincarnation, guidance that names pieces (and a secret card left on the pad), faults, the
result. Everything each public channel emits while the game is on is collected:

* the station's page: ``/``, ``/api/state``, ``/board.svg`` and the live ``/api/stream``;
* MQTT, through the real mosquitto: every message the referee's session receives (a
  station's credentials are on every table, and the ACL is one mistake away from letting
  anyone read), and what the broker retains for anyone who subscribes mid-game;
* the referee dashboard without a login: overview, board page, the spectators' ``/watch``,
  both JSON APIs, both live streams, and the export (refused). A logged-in referee's board
  view and export are checked too: during a game they hold only what MQTT carried, the
  public form.

The hidden facts are taken from the game's own set-up (the cards in the engine's state, the
stacks and piece names of the TacTiki set-up), not from the redaction code, and searched for in
every form they could take: a card as a list or as text (``card:Hookipa/Lokahi/Nani``), a piece
name (``T4``, ``C2b``, also inside the engine's text picture ``T3C5``), a start field's stack of
ranks, a ``rank`` field, a reincarnation's rank. None may appear while the game is on. The game
then ends under a dashboard started afresh; the same search finds the facts on the station's
page, on MQTT and in the referee's views, so the search is known to see them, and the referee's
export holds the whole record exactly as the station has it.
"""

from __future__ import annotations

import html
import json
import random
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import (
    EVENT,
    REFEREE,
    Broker,
    ServerThread,
    broker,
    request,
    running_dashboard,
    wait_for,
)

from pi_app.board.fixes import Fix
from pi_app.board.follower import Acceptance
from pi_app.games import get_game
from pi_app.json_types import JSON
from pi_app.net.auth import hash_password
from pi_app.net.desk import Desk, Incoming
from pi_app.net.mqtt import PublisherConfig, new_client, start_publisher
from pi_app.net.redact import EVENT_FIELDS
from pi_app.net.web import create_station_app
from pi_app.referee.feed import FeedSnapshot, StationFeed
from pi_app.referee.session import Session
from pi_app.referee.store import Event, EventStore

pytestmark = pytest.mark.realtime

__all__ = ["broker"]

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ["Ana", "Ben"]
PASSWORD = "correct horse"


# -- a table that tells the world everything the station would ----------------------------------
class Table:
    """One game at one station: every kind of event the station stores, through the real
    :class:`Session` and :class:`EventStore`, each told to the real :class:`StationFeed`, with a
    status snapshot after it (the daemon's order). ``facts`` collects what the game hides."""

    def __init__(self, directory: Path, board: str, game_name: str, seed: int) -> None:
        self.board = board
        self.store = EventStore(directory / f"{board}.sqlite")
        self.feed = StationFeed(board)
        self.engine = get_game(game_name)
        self.rng = random.Random(seed)
        self.session: Session | None = None
        self.turns = 0
        self.kinds: set[str] = set()
        self.cards: set[tuple[str, str, str]] = set()
        self.setups: list[dict[str, list[int]]] = []
        self.pieces: set[str] = set()
        self.last: Any = None
        self.untidy = False

    # -- what the station says ------------------------------------------------------------------
    def _told(self, event: Event) -> None:
        self.kinds.add(event.kind)
        self.feed.event(event)

    def _show(self, status: str = "playing", prompt: JSON | None = None,
              guidance: list[str] | None = None) -> None:
        assert self.session is not None
        snapshot = FeedSnapshot.of(self.session, PLAYERS).to_json()
        over = self.engine.is_over(self.session.state)
        snapshot.update(status="over" if over else status, prompt=prompt,
                        guidance=guidance or [])
        self.feed.update(snapshot)

    def _learn(self, state: Any) -> None:
        """The hidden facts of a set-up, from the engine's own state."""
        if self.engine.name == "topple":
            self.cards |= {c for c in state.table.cards if c is not None}
        if self.engine.name == "tactiki":
            self.setups.append(self.engine.setup_record(state)["setup"])
            self.pieces |= set(self.engine.pieces(state))
            ids = state.options.tables.ids  # the engine's piece ids (T3a), R11
            self.pieces |= set(ids)

    # -- the game -------------------------------------------------------------------------------
    def start(self) -> None:
        engine, store = self.engine, self.store
        state = engine.new_game(self.rng, {"players": 2} if engine.name == "topple" else None)
        self._learn(state)
        self.session = Session.new(store, engine.name, state=state, board=self.board,
                                   players=PLAYERS)
        self._show("setup")
        if engine.name == "topple":
            self._tap_cards(state)
        elif engine.name == "tactiki":  # the players stack their own pieces: read, then play
            chosen = engine.new_game(self.rng)
            self._learn(chosen)
            record = engine.setup_record(chosen)  # the same game, its set-up replaced
            store.replace_setup(self.session.game_id, record)
            self.session = Session(store, engine, self.session.game_id, record, chosen)
            setup = record["setup"]
            self._told(self.session.note("setup_read", {"setup": setup}))
        self._show()

    def _tap_cards(self, state: Any) -> None:
        """The players draw their own Secret Tiki cards and tap them (not the station's)."""
        from pi_app.games.topple import with_cards
        from pi_app.games.topple_deck import draw_cards

        assert self.session is not None
        cards = draw_cards(self.rng, len(state.table.seats), state.table.dealt)
        tapped = with_cards(state, cards)
        self._learn(tapped)
        self._told(self.session.cards_tapped(cards, tapped))

    def _secret_on_pad(self) -> list[str]:
        """Guidance about a card left on the pad names it by its tag (Topple)."""
        return [str(Fix("remove", "card:" + "/".join(c), "card"))
                for c in sorted(self.cards)[:1]] if self.engine.name == "topple" else []

    def turn(self) -> bool:
        """One thing happens at the table; False when the next move would end the game."""
        from pi_app.games.topple import round_record

        assert self.session is not None
        session, engine = self.session, self.engine
        state = session.state
        self.turns += 1
        if engine.to_move(state) is None:  # a Topple round is over: deal, tap the cards
            dealt = engine.deal(state, self.rng)
            self._learn(dealt)
            self._told(session.dealt(dealt, round_record(dealt)))
            self._show("setup")
            self._tap_cards(dealt)
            self._show()
            return True
        if self.untidy:  # the board was put right since the last guidance
            self.untidy = False
            self._told(session.note("in_sync", {}))
        moves = engine.legal_moves(state)
        texts = [engine.move_text(state, m) for m in moves]
        player = engine.to_move(state)
        if self.turns % 9 == 4:
            self._told(session.note("fault", {"source": "reader", "index": 3, "ok": False,
                                              "detail": "no answer"}))
        ends = [engine.is_over(engine.apply(state, m)) for m in (moves[0], moves[-1])]
        if self.turns % 7 == 1 and len(moves) > 1 and not any(ends):
            # a move, taken back, made again, and revised as another
            first = engine.apply(state, moves[-1])
            self._told(session.moved(texts[-1], player, first, Acceptance.AT_ONCE))
            self._show()
            left = [(c, p) for c, p in engine.expected_view(first).items()]
            self._told(session.taken_back(1, state, left))
            self._show()
            self._told(session.moved(texts[-1], player, first, Acceptance.SETTLED))
            self._show()
            self._told(session.revised(texts[-1], texts[0], engine.apply(state, moves[0])))
        else:
            move = engine.random_move(state, self.rng)
            if engine.is_over(engine.apply(state, move)):
                self.last = move  # the game's last move: made by :meth:`finish`
                self._show()
                return False
            self._told(session.moved(engine.move_text(state, move), player,
                                     engine.apply(state, move), Acceptance.AT_ONCE))
        self._show()
        self._question_or_guidance()  # left on show until the next turn
        return True

    def _question_or_guidance(self) -> None:
        """Now and then a question with look-alike moves (reincarnations first), or guidance
        that names pieces, stays on the screen until the next turn."""
        assert self.session is not None
        session, engine, state = self.session, self.engine, self.session.state
        if engine.to_move(state) is None:
            return
        if self.turns % 5 == 2:
            texts = [engine.move_text(state, m) for m in engine.legal_moves(state)]
            options = sorted(texts, key=lambda t: not t.startswith("reincarnate"))[:3]
            self._told(session.note("prompt", {"kind": "ambiguous", "options": options}))
            self._show("prompt", prompt={"kind": "ambiguous", "options": options,
                                         "selected": 0})
        filled = [(c, p) for c, p in sorted(engine.expected_view(state).items()) if p]
        if self.turns % 5 == 3 and filled:
            cell, pieces = filled[self.turns % len(filled)]
            fixes = [str(Fix("move", pieces[-1], cell, filled[0][0])),
                     str(Fix("place", pieces[0], cell)), *self._secret_on_pad()]
            kind = "follow_up" if self.turns % 2 else "mismatch"
            self._told(session.note(kind, {"fixes": fixes}))
            self._show(kind, guidance=fixes)
            self.untidy = True

    def finish(self) -> None:
        """The game's last move, and the result."""
        assert self.session is not None and self.last is not None
        state, engine = self.session.state, self.engine
        self._told(self.session.moved(engine.move_text(state, self.last), engine.to_move(state),
                                      engine.apply(state, self.last), Acceptance.AT_ONCE))
        self._show()
        result = self.session.finish_if_over()
        assert result is not None
        self._told(result)
        self._show()

    def last_id(self) -> int:
        return max(e.id for row in self.store.games() for e in self.store.events(row.id))


# -- what the channels emit ----------------------------------------------------------------------
class Stream:
    """A live stream (SSE) read raw from its socket in a thread, in the phase it arrived."""

    def __init__(self, port: int, path: str, phase: Callable[[], str]) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        self.sock.settimeout(0.2)
        self.phase = phase
        self.chunks: list[tuple[str, bytes]] = []
        self.stopping = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while not self.stopping:
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            self.chunks.append((self.phase(), data))

    def text(self, phase: str) -> str:
        return b"".join(d for p, d in self.chunks if p == phase).decode("utf-8", "replace")

    def stop(self) -> None:
        self.stopping = True
        self.thread.join(5)
        self.sock.close()


class Recorder:
    """Every MQTT message the referee's own session receives (live and retained), tapped where
    the dashboard hands it to its desk; or, without a dashboard, a client of its own.

    The broker ties a session to the user name (one referee connection at a time), so the
    recorder never runs beside a dashboard with the same credentials: it listens through it."""

    def __init__(self, phase: Callable[[], str]) -> None:
        self.messages: list[tuple[str, str, bytes]] = []
        self.phase = phase

    def tap(self, desk: Desk) -> None:
        receive = desk.receive

        def recording(message: Incoming) -> None:
            self.messages.append((self.phase(), message.topic, message.payload))
            receive(message)

        desk.receive = recording  # type: ignore[method-assign]

    def retained(self, broker: Broker, board: str, seconds: float = 0.5) -> None:
        """What the broker keeps for anyone who subscribes now (no dashboard connected)."""
        ready = threading.Event()
        client = new_client(REFEREE, broker.options(REFEREE))
        client.on_message = lambda _c, _u, m: self.messages.append(
            (self.phase(), "retained " + m.topic, bytes(m.payload)))
        client.on_subscribe = lambda *_: ready.set()
        client.on_connect = lambda c, *_: c.subscribe(f"tiki/{EVENT}/board/{board}/+", qos=1)
        client.connect("127.0.0.1", broker.port, clean_start=True)
        client.loop_start()
        try:
            assert ready.wait(10), "the retained messages' subscription"
            time.sleep(seconds)
        finally:
            client.disconnect()
            client.loop_stop()

    def payloads(self, phase: str, board: str) -> list[tuple[str, Any]]:
        return [(t, json.loads(p)) for ph, t, p in self.messages
                if ph == phase and p and f"/board/{board}/" in t]


def sse_data(text: str) -> list[Any]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def page_parts(text: str) -> list[Any]:
    """An HTML page as its text (unescaped) and the JSON it embeds."""
    parts: list[Any] = [html.unescape(text)]
    for embedded in re.findall(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>',
                               text, re.S):
        parts.append(json.loads(html.unescape(embedded)))
    return parts


# -- the search ----------------------------------------------------------------------------------
@dataclass
class Facts:
    """What a game hides, from its own set-up: Topple's cards, TacTiki's ranks."""

    cards: set[tuple[str, str, str]] = field(default_factory=set)
    setups: list[dict[str, list[int]]] = field(default_factory=list)
    pieces: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.cards or self.setups)

    def _patterns(self) -> list[tuple[str, re.Pattern[str]]]:
        out = [(f"the card {'/'.join(c)}",
                re.compile(r"\W{0,6}".join(c), re.IGNORECASE)) for c in sorted(self.cards)]
        if self.pieces:
            names = "|".join(sorted(self.pieces, key=len, reverse=True))
            out.append(("a piece name that tells its rank",
                        re.compile(rf"(?<![A-Za-z])(?:{names})(?![0-9])")))
            ranks = "".join(sorted({str(r) for s in self.setups for st in s.values()
                                    for r in st}))
            out.append(("the rank of a reincarnation",
                        re.compile(rf"reincarnate\W+[{ranks}]", re.IGNORECASE)))
        return out

    def search(self, value: Any, where: str) -> list[str]:
        """Every hidden fact in ``value`` (JSON values and texts, nested)."""
        found: list[str] = []
        patterns = self._patterns()
        stacks = {tuple(st) for s in self.setups for st in s.values()}
        fields = {f for s in self.setups for f in s}
        cards = {tuple(t.lower() for t in c) for c in self.cards}

        def walk(v: Any, path: str) -> None:
            if isinstance(v, str):
                for what, pattern in patterns:
                    hit = pattern.search(v)
                    if hit:
                        around = v[max(0, hit.start() - 40):hit.end() + 40]
                        found.append(f"{where}{path}: {what} in {around!r}")
            elif isinstance(v, list):
                if len(v) == 3 and all(isinstance(x, str) for x in v) and \
                        tuple(x.lower() for x in v) in cards:
                    found.append(f"{where}{path}: the card {v}")
                for i, x in enumerate(v):
                    walk(x, f"{path}[{i}]")
            elif isinstance(v, dict):
                for k, x in v.items():
                    if k in fields and isinstance(x, list) and tuple(x) in stacks:
                        found.append(f"{where}{path}.{k}: the stack of ranks {x}")
                    if k == "rank" and isinstance(x, int):
                        found.append(f"{where}{path}.{k}: a rank")
                    walk(x, f"{path}.{k}")

        walk(value, "")
        return found


def facts_of(table: Table) -> Facts:
    return Facts(set(table.cards), list(table.setups), set(table.pieces))


# -- the test ------------------------------------------------------------------------------------
@dataclass
class Channels:
    """Everything the public (and the logged-in referee) got, per phase ("play", "over")."""

    seen: dict[str, list[tuple[str, Any]]] = field(
        default_factory=lambda: {"play": [], "over": []})

    def add(self, phase: str, where: str, value: Any) -> None:
        self.seen[phase].append((where, value))

    def search(self, phase: str, facts: Facts, prefix: str = "") -> list[str]:
        return [hit for where, value in self.seen[phase] if where.startswith(prefix)
                for hit in facts.search(value, where)]


def _login(port: int) -> str:
    reply = request(port, "POST", "/login",
                    f"username=alice&password={PASSWORD.replace(' ', '+')}",
                    {"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status == 303, reply.text
    return reply.headers["set-cookie"].split(";")[0]


def _station_page(port: int, phase: str, seen: Channels) -> None:
    page = request(port, "GET", "/")
    assert page.status == 200
    for part in page_parts(page.text):
        seen.add(phase, "station /", part)
    seen.add(phase, "station /api/state", request(port, "GET", "/api/state").json())
    seen.add(phase, "station /board.svg", html.unescape(request(port, "GET", "/board.svg").text))


def _dashboard(port: int, board: str, phase: str, seen: Channels, cookie: str) -> None:
    for path in ("/", f"/board/{board}", "/watch"):   # /watch: the spectators' page
        page = request(port, "GET", path)
        assert page.status == 200, page.text
        for part in page_parts(page.text):
            seen.add(phase, f"dashboard {path}", part)
    for path in ("/api/boards", f"/api/board/{board}"):
        reply = request(port, "GET", path)
        assert reply.status == 200, reply.text
        seen.add(phase, f"dashboard {path}", reply.json())
    assert request(port, "GET", "/export.json").status == 401  # the export needs a login
    assert request(port, "GET", f"/api/board/{board}/record").status == 401
    full = request(port, "GET", f"/api/board/{board}", headers={"Cookie": cookie})
    seen.add(phase, f"referee /api/board/{board}", full.json())
    seen.add(phase, "referee /export.json",
             request(port, "GET", "/export.json", headers={"Cookie": cookie}).json())



#: The kinds of event each game's station stores (the station's own list is checked below).
KINDS = {"move", "revise", "takeback", "prompt", "mismatch", "follow_up", "in_sync", "fault",
         "result"}
GAME_KINDS = {"topple": KINDS | {"cards", "deal"}, "tactiki": KINDS | {"setup_read"},
              "manami": KINDS}


def _caught_up(table: Table, dash: Any, publisher: Any) -> None:
    assert publisher.wait_idle(20), publisher.stats()
    last = table.last_id()
    wait_for(lambda: dash.desk.boards[table.board].last_seq == last, 20,
             "every event at the dashboard")
    time.sleep(0.3)  # the last snapshot through the broker, the pages' streams


@pytest.mark.parametrize(("game_name", "board", "seed"),
                         [("topple", "t37", 3), ("tactiki", "t38", 4), ("manami", "t39", 5)])
def test_no_hidden_fact_leaves_a_game_before_it_ends(broker: Broker, tmp_path: Path,
                                                     game_name: str, board: str,
                                                     seed: int) -> None:
    phase = ["play"]

    def now() -> str:
        return phase[0]

    seen = Channels()
    table = Table(tmp_path, board, game_name, seed)
    mqtt_seen = Recorder(now)
    streams: list[tuple[str, Stream]] = []
    referees = {"alice": hash_password(PASSWORD)}
    station = ServerThread(create_station_app(table.feed, token=None)).start()
    publisher = None
    try:
        streams.append(("station /api/stream", Stream(station.port, "/api/stream", now)))
        with running_dashboard(broker, tmp_path, referees=referees) as dash:
            mqtt_seen.tap(dash.desk)
            wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
            publisher = start_publisher(table.feed, table.store, PublisherConfig(
                EVENT, board, broker.options(board), retry_min=0.1, retry_max=0.5))
            station.call(table.start)
            wait_for(lambda: board in dash.desk.boards, 10, "the board at the dashboard")
            port = dash.server.port
            live = [("dashboard /api/stream", Stream(port, "/api/stream", now)),
                    (f"dashboard /api/stream?board={board}",
                     Stream(port, f"/api/stream?board={board}", now))]
            streams += live
            cookie = _login(port)
            while station.call(table.turn):
                if table.turns % 20 in (2, 3):  # a question, guidance on show
                    _station_page(station.port, "play", seen)
                    _dashboard(port, board, "play", seen, cookie)
            _caught_up(table, dash, publisher)
            _station_page(station.port, "play", seen)
            _dashboard(port, board, "play", seen, cookie)
            for _, stream in live:
                stream.stop()
        mqtt_seen.retained(broker, board)  # what anyone who subscribes now is given

        phase[0] = "over"  # a dashboard that starts now: the game ends while it looks on
        with running_dashboard(broker, tmp_path, referees=referees,
                               client_db="late.sqlite") as dash:
            mqtt_seen.tap(dash.desk)
            wait_for(lambda: board in dash.desk.boards, 10, "the board at the late dashboard")
            station.call(table.finish)
            _caught_up(table, dash, publisher)
            _station_page(station.port, "over", seen)
            _dashboard(dash.server.port, board, "over", seen, _login(dash.server.port))
    finally:
        for _, stream in streams:
            stream.stop()
        if publisher is not None:
            publisher.stop()
        station.stop()
    for name, stream in streams:
        for ph in ("play", "over"):
            for data in sse_data(stream.text(ph)):
                seen.add(ph, name, data)
    for ph in ("play", "over"):
        for topic, payload in mqtt_seen.payloads(ph, board):
            seen.add(ph, f"mqtt {topic}", payload)

    assert table.kinds == GAME_KINDS[game_name], "the table must store every kind of event"
    for channel in ("station /api/stream", "station /api/state", "station /board.svg",
                    "station /", "dashboard /api/stream", "dashboard /board/",
                    "dashboard /watch",
                    "dashboard /api/board", "referee /api/board", "mqtt tiki/",
                    "mqtt retained tiki/"):
        assert any(w.startswith(channel) for w, _ in seen.seen["play"]), f"nothing from {channel}"
    for leaf in ("events", "state", "record", "game"):
        assert any(w.endswith(f"/{leaf}") for w, _ in seen.seen["play"]), f"no MQTT {leaf}"
    facts = facts_of(table)
    leaks = seen.search("play", facts)
    assert not leaks, f"{len(leaks)} hidden facts shown while the game was on:\n" + \
        "\n".join(leaks[:20])

    # Afterwards the referee's export has the whole record, as the station has it.
    assert table.session is not None
    own = Session.resume(table.store, table.store.game(table.session.game_id)).export()
    exported = next(v for w, v in reversed(seen.seen["over"]) if w == "referee /export.json")
    record = next(r for r in exported
                  if r["board"] == board and r["station_game_id"] == table.session.game_id)
    assert {k: v for k, v in record.items() if k not in ("event", "reported", "confirmed")} \
        == own, "the referee's export has the whole record once the game is over"
    if not facts:  # Manami hides nothing: what is published is what is stored
        stored = {e.id: e.data for row in table.store.games()
                  for e in table.store.events(row.id)}
        events = [p for ph in ("play", "over") for t, p in mqtt_seen.payloads(ph, board)
                  if t.endswith("/events")]
        assert events and all(p["data"] == stored[p["seq"]] for p in events)
        return
    # Once the game is over the facts are there to see (so the search above can find them).
    for prefix in ("station /api/state", "mqtt tiki/", "referee /api/board",
                   "referee /export.json"):
        assert seen.search("over", facts, prefix), f"no hidden fact in {prefix} after the end"


def test_every_event_kind_the_station_stores_is_listed() -> None:
    """The station's kinds (its notes, the session's and store's writes, the follower's guidance
    kinds) are each listed for redaction and played by the tables above: a new kind would
    otherwise be dropped from every public channel without a test noticing."""
    sources = "\n".join((ROOT / "pi_app" / p).read_text(encoding="utf-8") for p in (
        "referee/station.py", "referee/setup_flow.py", "referee/session.py", "referee/store.py",
        "board/follower.py"))
    written = set(re.findall(r'(?:note|_note|append|_append)\((?:[\w.]+, )*"(\w+)"', sources))
    from pi_app.board.follower import GuidanceKind
    from pi_app.records import PlayKind

    written |= {kind.value for kind in GuidanceKind}  # the station notes each guidance's kind
    written |= {kind.value for kind in PlayKind}  # the session writes each play event's kind
    assert written >= {"move", "cards", "setup_read", "prompt", "mismatch", "follow_up"}
    assert written <= set(EVENT_FIELDS), written - set(EVENT_FIELDS)
    assert written <= set().union(*GAME_KINDS.values())


@pytest.mark.parametrize("game_name", ["topple", "manami", "tactiki"])
def test_the_public_record_is_the_engines_and_stays_public(game_name: str) -> None:
    """The bundled example of each game: Manami's record is public as it is; Topple's loses
    every card and TacTiki's every rank; made public twice it is the same (the dashboard makes
    public what a station already sent in public form)."""
    from pi_app.records import load_record

    record = load_record(ROOT / "pi_app" / "data" / f"{game_name}-example.tiki.json")
    engine = get_game(game_name)
    shown = engine.public_record(record)
    assert engine.public_record(shown) == shown
    text = json.dumps(shown)
    if game_name == "manami":
        assert shown == record
    elif game_name == "topple":
        assert "cards" not in text and [r["line"] for r in shown["rounds"]] == \
            [r["line"] for r in record["rounds"]]
    else:
        assert all(stack == [None, None] for stack in shown["setup"].values())
        assert [m.split()[0] for m in shown["moves"]] == [m.split()[0] for m in record["moves"]]
        assert not re.search(r"reincarnate [0-9]", text)
        assert engine.public_text("move T4 from c1 to c2") == "move T? from c1 to c2"


@pytest.mark.parametrize("game_name", ["topple", "tactiki"])
def test_the_real_station_set_up_reading_shows_nothing_hidden(tmp_path: Path,
                                                              game_name: str) -> None:
    """The real station, driven by its sensors, while the players tap their Secret Tiki cards
    (Topple) and stack their TacTiki pieces: everything it tells its feed, made public as every
    channel makes it public, holds no card and no rank; the stored events do."""
    from dataclasses import replace

    from pi_app.board.equipment import card_name, registry_for
    from pi_app.net.redact import public_event, public_snapshot
    from pi_app.readings import PresenceChanged, TagsSeen
    from pi_app.referee.config import Config
    from pi_app.referee.config import Station as StationConfig
    from pi_app.referee.station import Station

    config = Config(station=replace(StationConfig(), game=game_name, seed=7,
                                    data_dir=str(tmp_path)))
    store = EventStore(tmp_path / "tikiboard.db")
    station = Station(config, store, registry_for(game_name), clock=lambda: 0.0)
    told: list[tuple[str, JSON]] = []
    station.feed.listen(lambda kind, payload: told.append((kind, payload)))
    geometry, registry = station.geometry, station.registry
    rng = random.Random(7)
    t = 1.0
    if game_name == "topple":
        from pi_app.games.topple_deck import deck

        view = station.session.game.expected_view(station.session.state)
        for cell in geometry.cells:  # the line stands as dealt
            names = view.get(cell.name, ())
            uids = [u for n in names for u in registry.uids_of(n)][:len(names)]
            if cell.reader is not None:
                station.step(TagsSeen(t, cell.reader, frozenset(uids)), t)
            if cell.presence is not None:
                station.step(PresenceChanged(t, cell.presence, bool(names)), t)
        pad = geometry.cell("card").reader
        assert pad is not None
        cards = rng.sample(deck(), 2)
        for card in cards:
            t += 1.0
            uid = registry.uids_of(card_name(card))[0]
            station.step(TagsSeen(t, pad, frozenset({uid})), t)
            station.step(None, t + 3.0)  # left on the pad a while
            station.step(TagsSeen(t + 3.5, pad, frozenset()), t + 3.5)
            t += 4.0
        assert station.session.state.table.cards == tuple(cards)
        facts = Facts(cards=set(cards))
    else:
        ranks = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
        chosen: dict[str, list[int]] = {}
        for row in ("1", "5"):
            rng.shuffle(ranks)
            for i, column in enumerate("abcde"):
                chosen[f"{column}{row}"] = ranks[2 * i:2 * i + 2]
        used: set[str] = set()
        for field_name, stack in chosen.items():
            owner = "T" if field_name.endswith("1") else "C"
            cell = geometry.cell(field_name)
            assert cell.reader is not None and cell.presence is not None
            on_field: set[str] = set()
            for rank in stack:  # bottom first
                uid = next(u for u in registry.uids_of(f"{owner}{rank}") if u not in used)
                used.add(uid)
                on_field.add(uid)
                station.step(TagsSeen(t, cell.reader, frozenset(on_field)), t)
                station.step(PresenceChanged(t, cell.presence, True), t)
                station.step(None, t + 0.1)  # its contact has held closed: the piece is there
                t += 0.3
        station.step(None, t + 1.5)
        assert station.session.export()["setup"] == chosen
        state = station.session.state
        facts = Facts(setups=[chosen], pieces=set(state.options.tables.ids)
                      | set(station.session.game.pieces(state)))
    kinds = {e.kind for row in store.games() for e in store.events(row.id)}
    assert kinds >= ({"cards"} if game_name == "topple" else {"setup_read"})
    stored = [e.to_json() for row in store.games() for e in store.events(row.id)]
    assert facts.search(stored, "stored"), "the store holds the facts"
    shown = [public_snapshot(p) if kind == "status" else public_event(game_name, p)
             for kind, p in told]
    leaks = facts.search(shown, f"{game_name} feed")
    assert not leaks, "\n".join(leaks[:10])
    store.close()
