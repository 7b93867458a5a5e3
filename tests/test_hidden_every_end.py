"""No hidden fact of a game whose pieces may still be on the board leaks at any end (issue 29).

One TacTiki table, through the real daemon (:func:`pi_app.station_main.serve`: the simulated
board behind a pty, mock buttons pressed as a hand would, the page on a free port, MQTT to the
real mosquitto) and the real dashboard, lives through every way a game ends or is replaced:

1. game A: the players' stacks are read (the station once stored a game, abandoned it and
   stored another here: the abandoned one's record served every rank); the page's hint is
   refused (the page cannot tell who asks);
2. a few moves, then a new game asked on the page and refused with BACK at the table;
3. a power cut: the daemon stops, starts again on the same database and resumes game A;
4. a new game asked on the page and confirmed with OK at the table: game A is abandoned with
   its pieces on the board, game B's stacks are read again;
5. a draw offered on the page, agreed with OK at the table: game B is over.

At each step every public channel is read: the station page (``/``, ``/api/state``,
``/board.svg``, the live stream, ``/games`` and every record download), MQTT as the dashboard's
session receives it, the anonymous dashboard (overview, board page, both APIs, its stream) and
every text drawn on the OLED. The hidden facts come from the engine's own states of A and B,
not from the redaction code. Until B is over none may appear; once it is, B's stacks must
appear (so the search is known to see them) and A's still must not: A was abandoned, never
revealed at the table, and its pieces may still stand where they stood.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import EVENT, Broker, broker, password_of, request, running_dashboard, wait_for
from test_game_change_and_names import PIN, http, play_then_stop, until
from test_hidden_info import Facts, Recorder, Stream, page_parts, sse_data

from pi_app.demo import DemoPlayers
from pi_app.net.broker import free_port
from pi_app.referee import feedback as fb
from pi_app.referee.config import Config, Mqtt, Web
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.station import Station
from pi_app.station_main import serve

pytestmark = pytest.mark.realtime

__all__ = ["broker"]

BOARD = "t13"
Scenario = Callable[[Station, Hardware, DemoPlayers], Awaitable[None]]


class Seen:
    """Everything each public channel gave, by the step it was in."""

    def __init__(self) -> None:
        self.step = "start"
        self.items: list[tuple[str, str, Any]] = []

    def add(self, where: str, value: Any) -> None:
        self.items.append((self.step, where, value))

    def search(self, facts: Facts, steps: set[str]) -> list[str]:
        return [hit for step, where, value in self.items if step in steps
                for hit in facts.search(value, f"[{step}] {where}")]


def learn(station: Station) -> Facts:
    """The hidden facts of the station's game, from the engine's own state."""
    game, state = station.session.game, station.session.state
    facts = Facts()
    facts.setups.append(game.setup_record(state)["setup"])
    facts.pieces |= set(game.pieces(state)) | set(state.options.tables.ids)
    return facts


def run(data_dir: Path, port: int, broker_port: int, scenario: Scenario) -> None:
    """The daemon (TacTiki board, players build their stacks) until ``scenario`` returns."""
    config = Config(
        station=replace(StationConfig(), game="tactiki", seed=21, board=BOARD,
                        data_dir=str(data_dir)),
        web=Web(enabled=True, host="127.0.0.1", port=port, token=PIN),
        mqtt=Mqtt(enabled=True, host="127.0.0.1", port=broker_port, event=EVENT,
                  username=BOARD, password=password_of(BOARD)))
    failures: list[BaseException] = []

    async def main() -> None:
        stop = asyncio.Event()

        def ready(station: Station, hardware: Hardware) -> None:
            hands = DemoPlayers(station, hardware, random.Random(5), pace=(0.05, 0.1))
            tasks.append(play_then_stop(port, lambda: scenario(station, hardware, hands),
                                        stop, failures))

        tasks: list[asyncio.Future[None]] = []
        await asyncio.wait_for(serve(config, stop=stop, on_ready=ready), timeout=150)

    asyncio.run(main())
    if failures:
        raise failures[0]


async def stack_up(station: Station, hands: DemoPlayers, fresh: bool) -> None:
    """The players build the game's start stacks (laid out at once on an empty board, or
    moved by hand from the last game's) until the station has read them and play is on."""
    view = station.session.game.expected_view(station.session.state)
    if fresh:
        hands.players.lay_out(view)
    else:  # the last game's pieces off the board, then the new stacks, piece by piece
        await hands.players.change({cell: () for cell in view})
        await asyncio.sleep(1.0)
        await hands.players.change(view)
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    while station.status.reading is not None and loop.time() < end:
        await hands.restack(view)  # answers the station's questions about the order
        await asyncio.sleep(0.2)
    try:
        await until(lambda: station.status.phase == "play" and not station.blocked(), 20,
                    "the stacks read and play on")
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {station.status}") from None


async def moves(station: Station, hands: DemoPlayers, count: int) -> None:
    before = len(station.session.moves())
    while len(station.session.moves()) < before + count:
        await hands.turn()
        await asyncio.sleep(0.1)


async def look(seen: Seen, port: int, dash_port: int) -> None:
    """Read every public channel once (the live streams are read all along)."""
    for path in ("/", "/api/state", "/board.svg", "/games"):
        reply = await asyncio.to_thread(request, port, "GET", path)
        assert reply.status == 200, (path, reply.status)
        text = reply.body.decode()
        for part in page_parts(text) if path == "/" else [text]:
            seen.add(f"page {path}", part)
        if path in ("/api/state", "/games"):
            seen.add(f"page {path} (JSON)", json.loads(text))
    for game in json.loads((await asyncio.to_thread(request, port, "GET", "/games")).body):
        reply = await asyncio.to_thread(request, port, "GET",
                                        f"/games/{game['id']}/record.json")
        seen.add(f"record {game['id']} ({game['state']})", json.loads(reply.body))
    for path in ("/", f"/board/{BOARD}", "/api/boards", f"/api/board/{BOARD}"):
        reply = await asyncio.to_thread(request, dash_port, "GET", path)
        assert reply.status == 200, (path, reply.status)
        text = reply.body.decode()
        seen.add(f"dashboard {path}", json.loads(text) if path.startswith("/api") else text)


def test_no_hidden_fact_leaks_at_any_end_of_a_game(broker: Broker, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    seen = Seen()
    oled: list[tuple[str, str]] = []
    drawn = fb._Canvas.text

    def text(self: Any, x: int, y: int, words: str, scale: int = 1, fill: int = 1) -> int:
        oled.append((seen.step, words))
        return drawn(self, x, y, words, scale, fill)

    monkeypatch.setattr(fb._Canvas, "text", text)
    port = free_port()
    facts: dict[str, Facts] = {}
    ids: dict[str, int] = {}
    recorder = Recorder(lambda: seen.step)

    with running_dashboard(broker, tmp_path / "dash") as dash:
        recorder.tap(dash.desk)
        wait_for(dash.desk.ready.is_set, 10, "the dashboard's subscription")
        dash_port = dash.server.port
        streams: list[Stream] = []

        async def first(station: Station, _hw: Hardware, hands: DemoPlayers) -> None:
            streams.append(Stream(port, "/api/stream", lambda: seen.step))
            streams.append(Stream(dash_port, f"/api/stream?board={BOARD}",
                                  lambda: seen.step))
            seen.step = "A in play"
            await stack_up(station, hands, fresh=True)
            facts["A"], ids["A"] = learn(station), station.session.game_id
            await moves(station, hands, 3)
            # The page cannot tell who asks: no hint from it where ranks are hidden (the
            # opponent would have the station search over your ranks on your turn).
            hint = await http(port, "POST", "/api/action/hint")
            assert hint.status == 409 and "OK button" in json.loads(hint.body)["error"]
            assert station.opponent.shown is None
            await look(seen, port, dash_port)

            seen.step = "A, new game refused"
            asked = await http(port, "POST", "/api/action/new_game", {"game": "tactiki"})
            assert asked.status == 200 and "asked" in json.loads(asked.body)["result"]
            await hands.press("back")
            await asyncio.sleep(0.3)
            assert station.session.game_id == ids["A"] and station.status.change is None
            await moves(station, hands, 1)
            await look(seen, port, dash_port)

        async def second(station: Station, _hw: Hardware, hands: DemoPlayers) -> None:
            seen.step = "A resumed after a power cut"
            assert station.session.game_id == ids["A"]
            hands.players.lay_out(station.session.game.expected_view(station.session.state))
            await until(lambda: station.status.phase == "play", 20, "the resumed game")
            await look(seen, port, dash_port)

            seen.step = "B, A abandoned"
            asked = await http(port, "POST", "/api/action/new_game", {"game": "tactiki"})
            assert "asked" in json.loads(asked.body)["result"]
            await hands.press("ok")
            await until(lambda: station.session.game_id != ids["A"], 5, "game B")
            await stack_up(station, hands, fresh=False)
            facts["B"], ids["B"] = learn(station), station.session.game_id
            await moves(station, hands, 2)
            await look(seen, port, dash_port)

            seen.step = "B drawn"
            assert (await http(port, "POST", "/api/action/draw")).status == 200
            refused = await http(port, "POST", "/api/action/draw_accept")
            assert refused.status == 409  # the page is one player, never both
            assert not station.store.game(ids["B"]).finished
            await hands.press("ok")
            await until(lambda: station.store.game(ids["B"]).finished, 5, "the agreed draw")
            await asyncio.sleep(0.5)
            await look(seen, port, dash_port)

        try:
            run(tmp_path / "data", port, broker.port, first)
            run(tmp_path / "data", port, broker.port, second)
            wait_for(lambda: bool(recorder.payloads(seen.step, BOARD)), 5, "MQTT at the end")
        finally:
            for stream in streams:
                stream.stop()

    for stream in streams:
        for step in {s for s, _ in stream.chunks}:
            for data in sse_data(stream.text(step)):
                seen.items.append((step, "live stream", data))
    for step, topic, payload in recorder.messages:
        if f"/board/{BOARD}/" in topic and payload:
            seen.items.append((step, f"MQTT {topic}", json.loads(payload)))
    seen.items += [(step, "OLED", words) for step, words in oled]

    both = Facts(setups=facts["A"].setups + facts["B"].setups,
                 pieces=facts["A"].pieces | facts["B"].pieces)
    before = {"start", "A in play", "A, new game refused", "A resumed after a power cut",
              "B, A abandoned"}
    channels = {where.split(" ")[0] for _, where, _ in seen.items}
    assert channels >= {"page", "record", "dashboard", "live", "MQTT", "OLED"}, channels
    leaks = seen.search(both, before)
    assert leaks == [], f"{len(leaks)} hidden facts while the games were on:\n" + \
        "\n".join(leaks[:20])

    # B is over: its stacks are public now (the search sees them) ...
    b_setup = facts["B"].setups[0]
    assert seen.search(Facts(setups=[b_setup]), {"B drawn"}), "the search sees nothing"
    # ... and A's stacks, where they differ from B's, are still hidden everywhere.
    a_only = {f: s for f, s in facts["A"].setups[0].items() if b_setup.get(f) != s}
    assert a_only, "A and B were stacked alike: nothing of A's to look for"
    leaks = seen.search(Facts(setups=[a_only]), {"B drawn"})
    assert leaks == [], "A's ranks after B ended:\n" + "\n".join(leaks[:20])
