"""The station's own web page: the live board, scores, moves and what the station waits for.

The daemon serves it on the local network, on its own event loop (the feed's SSE queues are
asyncio queues of that loop)::

    from pi_app.net.web import start_station_server
    task = start_station_server(feed, geometry, config, notice=say)  # [web]; in the loop
    ...
    task.cancel(); await task      # a clean stop: streams end, the server closes, no traceback

or, by hand: ``asyncio.create_task(serve(create_station_app(feed, token=pin), host, port))``.

The page must never cost the station its refereeing: while its port cannot be bound (another
program holds it, the configured address is not up yet) the station runs on without it, says
why through ``notice`` ("page off: port 8080 in use") and the log, and tries again every
:data:`BIND_RETRY_S` seconds; ``notice("")`` once the page is up.

Routes:

=====================  ===========================================================================
``GET /``              the page (rendered on the server, then live)
``GET /api/state``     the public snapshot and the board SVG, as JSON
``GET /api/stream``    server-sent events: ``status`` with the same JSON on every change
``GET /board.svg``     the board picture
``GET /games``         the station's games, newest first (:mod:`pi_app.net.archive`)
``GET /games/N/record.json``  game N's record as ``tikiboard export`` writes it; the game
                       still in play only as its public record
``POST /api/action/N`` ``undo``, ``new_game`` (``{"game", "players", "options", "bots"}``:
                       the page's form sends the rule options it offers and the station's
                       seat), ``hint`` (the best move for the player to move; refused when
                       ``[station] hints`` is false),
                       ``override`` (``{"text"}``), ``draw`` (offers a draw: one player
                       agrees), ``draw_accept`` (one more player agrees the offer, as OK on
                       the station does; two end the game): needs
                       ``Authorization: Bearer PIN`` (or ``X-Station-Token``)
``GET/POST /setup``    the first-boot set-up, with the code on the station's screen
                       (:mod:`pi_app.net.setup_app`)
=====================  ===========================================================================

Reading is open to anyone; the page is seen by both players, so it shows the public snapshot
(:mod:`pi_app.net.redact`: no Secret Tiki cards, no TacTiki ranks). An action without the PIN is
refused with 401, a wrong PIN with 403 (compared in constant time), and after five wrong PINs
from one address further tries wait out a doubling delay (429). With no PIN configured no
action is possible at all. The brake keys on the connection's own peer address: :func:`serve`
turns off uvicorn's trust in ``X-Forwarded-For`` (by default it believes that header from
127.0.0.1, which let a local client name a fresh address for every guess).

Limits (:mod:`pi_app.net.limits`): a request body over :data:`~pi_app.net.limits.DEFAULT_MAX_BODY`
gets 413 before it is read whole; live streams are capped per client address and in total
(503 with ``Retry-After`` past the cap; the page's script then fetches the state now and then
and tries again, waiting longer each time). An action body that is not UTF-8 JSON of the right
shape gets 400.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import socket
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from pi_app.board.geometry import Geometry
from pi_app.errors import UnreadableInput
from pi_app.games import GAME_NAMES
from pi_app.i18n import Said, choose, translator
from pi_app.json_types import JSON
from pi_app.net import pages
from pi_app.net.archive import GameArchive
from pi_app.net.auth import Brake, same
from pi_app.net.guard import Guard, guarded_h11, quiet_accept_errors
from pi_app.net.limits import DEFAULT_MAX_BODY, BodyLimit, StreamCap
from pi_app.net.redact import public_snapshot
from pi_app.net.svg import board_svg
from pi_app.referee.address import page_address
from pi_app.referee.config import Config as StationConfig
from pi_app.referee.feed import ActionError, StationFeed, StationStatus
from pi_app.referee.qr import qr_code
from pi_app.referee.store import EventStore, StoreError

ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]],
                    Callable[[MutableMapping[str, Any]], Awaitable[None]]], Awaitable[None]]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Scope], Awaitable[None]]
log = logging.getLogger(__name__)
HEARTBEAT = 15.0
#: Seconds between tries to bind the page's port while it cannot be bound. A try is one bind
#: call, so this costs nothing; it is how long the page stays off after the port frees.
BIND_RETRY_S = 5.0
#: What a refused stream is told to wait, in seconds (the page's first retry waits about this).
STREAM_RETRY_AFTER = 5
#: The longest a stop waits for the server to close before cancelling it outright.
STOP_TIMEOUT_S = 3.0
#: Put in every open stream's queue when the server stops (not a kind the feed sends).
_END = "_end"


class SecurityHeaders:
    """Adds :data:`pages.SECURITY_HEADERS` to every response (pure ASGI: streams stay streams)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Scope], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Scope) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k.encode(), v.encode()) for k, v in pages.SECURITY_HEADERS.items()
                            if k.encode() not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def static_routes() -> list[Route]:
    def asset(body: str, media: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(_request: Request) -> Response:
            return Response(body, media_type=media, headers={"cache-control": "max-age=300"})
        return endpoint

    return [Route("/static/site.css", asset(pages.CSS, "text/css")),
            Route("/static/station.js", asset(pages.STATION_JS, "text/javascript")),
            Route("/static/dashboard.js", asset(pages.DASHBOARD_JS, "text/javascript"))]


def sse(name: str, data: JSON) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def client_of(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


def station_view_of(snapshot: JSON, geometry: Geometry | None = None) -> JSON:
    """What the page shows: the public snapshot and its picture."""
    public = public_snapshot(snapshot)
    island = public.get("island") or {}
    return {"snapshot": public,
            "svg": board_svg(str(public.get("game") or ""), public.get("view") or {},
                             geometry=geometry, marks=public.get("marks"),
                             values=island.get("villages"))}


def island_text(snapshot: JSON, words: dict[str, str] | None = None) -> str:
    """Manami's fruit supply, in words (the village values are on the picture's tiles)."""
    island = snapshot.get("island")
    if not isinstance(island, dict):
        return ""
    said = words or pages.page_words(translator("en").gettext)
    return pages.say(said, "island", supply=island.get("supply"), spoiled=island.get("spoiled"))


def qr_svg(url: str) -> str:
    """The page address as an inline ``<svg>`` QR code (segno; no script, no external file)."""
    return str(qr_code(url).svg_inline(scale=4, border=2, dark="#222", light="#fff",
                               title=f"QR code: {url}"))


def waiting_text(snapshot: JSON, words: dict[str, str] | None = None) -> str:
    """What the page says the table waits for, in ``words``' language (default English); the
    page's script says the same from the same words (pages.STATION_JS ``waiting``)."""
    said = words or pages.page_words(translator("en").gettext)
    status = snapshot.get("status")
    prompt = snapshot.get("prompt")
    if status == StationStatus.PROMPT and isinstance(prompt, dict):
        options = " / ".join(str(o) for o in prompt.get("options", []))
        return pages.say(said, "choose", options=options)
    if status == StationStatus.MISMATCH:
        return said["mismatch"]
    if status == StationStatus.FOLLOW_UP:
        return said["follow_up"]
    players = list(snapshot.get("players") or [])
    if status == StationStatus.OVER:
        winners = snapshot.get("winners")
        if not isinstance(winners, list):
            return said["over"]
        if not winners:
            return said["over_draw"]
        names = [pages.person(players, w, said) for w in winners]
        joined = names[0]
        for name in names[1:]:
            joined = pages.say(said, "and", first=joined, second=name)
        return pages.say(said, "over_won", names=joined)
    to_move = snapshot.get("to_move")
    if isinstance(to_move, int):
        return pages.say(said, "to_move", name=pages.person(players, to_move, said))
    return said["no_game"]


class BadAction(UnreadableInput, ValueError):
    """An action body the page cannot use; the message says why (sent back with 400)."""


#: The arguments an action body may carry, and what each must be.
ACTION_FIELDS = {"game": "a text", "players": "a list of texts", "text": "a text",
                 "options": "an object of rule options",
                 "bots": "an object of seat: level (the station's seats)"}


def action_args(raw: bytes) -> dict[str, Any]:
    """The arguments in an action's body: :class:`BadAction` for anything but UTF-8 JSON of an
    object whose known fields have the right types. Checked here so that no body, however odd
    (invalid UTF-8, lone surrogates, a thousand nested brackets), reaches the station's code
    or turns into a 500."""
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadAction("the body must be JSON (UTF-8)") from exc
    if not isinstance(body, dict):
        raise BadAction("the body must be a JSON object")
    args: dict[str, Any] = {}
    for key, kind in ACTION_FIELDS.items():
        if key not in body:
            continue
        value = body[key]
        if key == "players":
            ok = isinstance(value, list) and all(isinstance(t, str) and _encodable(t)
                                                 for t in value)
        elif key in ("options", "bots"):  # the station checks names and values itself
            ok = isinstance(value, dict) and _encodable(json.dumps(value, ensure_ascii=False))
        else:
            ok = isinstance(value, str) and _encodable(value)
        if not ok:
            raise BadAction(f"{key} must be {kind}")
        args[key] = value
    return args


def _encodable(text: str) -> bool:
    """False for a text JSON can carry but UTF-8 cannot (a lone surrogate such as "\\ud800")."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class LiveStreams:
    """The page's open event streams: capped per client and in total, ended together on stop.

    Each stream is a feed queue and a task on the loop that referees the game, so past the
    :class:`StreamCap` a new one is refused. A stopping server ends every stream itself (an
    end mark in each queue) instead of leaving uvicorn to cancel them after its grace period,
    which it logs as a traceback per stream.
    """

    def __init__(self, cap: StreamCap | None = None) -> None:
        self.cap = cap or StreamCap()
        self.closing = False
        self.queues: set[asyncio.Queue[tuple[str, JSON]]] = set()

    def end_all(self) -> None:
        self.closing = True
        for queue in self.queues:
            queue.put_nowait((_END, {}))


class HeldStream(StreamingResponse):
    """A streaming response that gives its place back however it ends: finished, cut off by
    the client, or cancelled before its first byte (when its generator never starts and so
    never reaches its own ``finally``)."""

    def __init__(self, content: AsyncIterator[str], release: Callable[[], None],
                 **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.release()


def create_station_app(feed: StationFeed, *, token: str | None, brake: Brake | None = None,
                       geometry: Geometry | None = None, streams: StreamCap | None = None,
                       max_body: int = DEFAULT_MAX_BODY, archive: GameArchive | None = None,
                       address: str = "", routes: Sequence[BaseRoute] = (),
                       language: str = "en") -> Starlette:
    """The station's page over ``feed``; actions need ``token`` (the station's PIN).

    ``language``: the station's (``[station] language``), the page's language unless the
    viewer asks for another (``?lang=``, then the browser's ``Accept-Language``).

    ``geometry``: the station's own board file, for the picture (default: the shipped one).
    ``streams``: how many live streams a client and all clients may hold (default
    :class:`StreamCap`'s). ``max_body``: the largest request body accepted, in bytes.
    ``archive``: the station's game database, for past games (None: the page lists none).
    ``address``: the page's own address, shown as a QR code (empty: none shown).
    ``routes``: more routes, the first-boot set-up's (:mod:`pi_app.net.setup_app`).
    ``app.state.streams`` (:class:`LiveStreams`) ends them all when the server stops.
    """
    brake = brake or Brake()
    live = LiveStreams(streams)

    def station_view(snapshot: JSON) -> JSON:
        return station_view_of(snapshot, geometry)

    last: list[Any] = [None, ""]  # the newest snapshot and its event, shared by every stream

    def status_event(snapshot: JSON) -> str:
        """One rendering (picture included) per snapshot, however many pages follow it."""
        if last[0] is not snapshot:
            last[:] = [snapshot, sse("status", station_view(snapshot))]
        return str(last[1])

    qr = qr_svg(address) if address else ""

    async def past_games() -> list[JSON]:
        if archive is None:
            return []
        try:
            return await archive.games_async()
        except (StoreError, sqlite3.Error) as exc:
            log.warning("the page cannot list past games: %s", exc)
            return []

    async def index(request: Request) -> Response:
        lang = choose(request.headers.get("accept-language"),
                      request.query_params.get("lang"), language)
        gettext = translator(lang).gettext
        words = pages.page_words(gettext)
        view = station_view(feed.snapshot)
        snap = view["snapshot"]
        games = await past_games()
        options = pages.game_options(feed.games or GAME_NAMES, str(snap.get("game") or ""),
                                     gettext)
        status = str(snap.get("status", "idle"))
        seats, levels = pages.seat_options(words)
        review = pages.review_lines(snap, words)
        html = pages.render(
            pages.STATION_HTML, lang=lang, board=feed.board, status=status,
            status_words=words.get(f"s_{status}", status), languages=pages.language_links(lang),
            title=pages.title_words(snap, words, lang), svg=view["svg"],
            players=pages.player_rows(list(snap.get("players") or []),
                                      list(snap.get("scores") or []), snap.get("to_move"),
                                      words, snap.get("station_seats")),
            seat_options=seats, level_options=levels,
            option_fields=pages.option_fields(feed.games or GAME_NAMES,
                                              str(snap.get("game") or ""), gettext),
            review=pages.items(review), review_hidden="" if review else " hidden",
            waiting=waiting_text(snap, words),
            guidance=pages.items(list(snap.get("guidance") or [])),
            moves=pages.items(list(snap.get("moves") or [])), game_options=options,
            island=island_text(snap, words), games=pages.game_rows(games, words), qr=qr,
            address=address, initial=pages.json_for_script({**view, "words": words}),
            **{f"w_{key}": value for key, value in words.items()})
        # The same address answers in the viewer's language: caches must keep them apart.
        return HTMLResponse(html, headers={"vary": "Accept-Language"})

    async def state(_request: Request) -> Response:
        return JSONResponse(station_view(feed.snapshot))

    async def svg(_request: Request) -> Response:
        return Response(station_view(feed.snapshot)["svg"], media_type="image/svg+xml")

    async def games_list(_request: Request) -> Response:
        return JSONResponse(await past_games(), headers={"cache-control": "no-store"})

    async def game_record(request: Request) -> Response:
        game_id = int(request.path_params["game_id"])
        if archive is None:
            return JSONResponse({"error": "this station keeps no games"}, status_code=404)
        try:
            record = await archive.record_async(game_id)
        except KeyError:
            return JSONResponse({"error": f"no game {game_id}"}, status_code=404)
        except (StoreError, sqlite3.Error) as exc:
            return JSONResponse({"error": f"game {game_id} cannot be read: {exc}"},
                                status_code=503)
        name = f"{feed.board}-game-{game_id}.json".replace('"', "")
        return Response(json.dumps(record, indent=1) + "\n", media_type="application/json",
                        headers={"content-disposition": f'attachment; filename="{name}"',
                                 "cache-control": "no-store"})

    async def stream(request: Request) -> Response:
        who = client_of(request)
        if live.closing or not live.cap.admit(who):
            return JSONResponse({"error": "too many live pages on this station: "
                                          "the page tries again by itself"},
                                status_code=503,
                                headers={"retry-after": str(STREAM_RETRY_AFTER)})

        async def events() -> AsyncIterator[str]:
            queue = feed.subscribe()
            live.queues.add(queue)
            try:
                while not live.closing:
                    try:
                        kind, payload = await asyncio.wait_for(queue.get(), HEARTBEAT)
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if kind == "status":
                        while not queue.empty():  # only the newest picture matters
                            later_kind, later = queue.get_nowait()
                            if later_kind == _END:
                                return
                            if later_kind == "status":
                                payload = later
                        yield status_event(payload)
                    elif kind == _END:
                        return
            finally:
                live.queues.discard(queue)
                feed.unsubscribe(queue)

        return HeldStream(events(), lambda: live.cap.release(who),
                          media_type="text/event-stream",
                          headers={"cache-control": "no-store", "x-accel-buffering": "no"})

    async def action(request: Request) -> Response:
        who = client_of(request)
        # The refusal in the page's language (its script asks with ?lang=).
        words = translator(choose(request.headers.get("accept-language"),
                                  request.query_params.get("lang"), language))
        _ = words.gettext
        wait = brake.wait(who)
        if wait > 0:
            return JSONResponse({"error": _("too many wrong PINs: wait {seconds} s").format(
                                 seconds=f"{wait:.0f}")},
                                status_code=429, headers={"retry-after": str(int(wait) + 1)})
        given = request.headers.get("x-station-token")
        auth = request.headers.get("authorization", "")
        if given is None and auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        if not given:
            return JSONResponse({"error": _("this action needs the station's PIN")},
                                status_code=401, headers={"www-authenticate": "Bearer"})
        if not same(given, token):
            brake.failed(who)
            return JSONResponse({"error": _("wrong PIN")}, status_code=403)
        brake.succeeded(who)
        name = request.path_params["name"]
        try:
            args = action_args(await request.body())
        except BadAction as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        if name not in feed.actions:
            return JSONResponse({"error": f"unknown action {name!r}"}, status_code=404)
        try:
            result = await feed.act(name, **args)
        except ActionError as exc:
            why = exc.args[0] if exc.args else ""
            said = why.say(words.gettext, words.ngettext) if isinstance(why, Said) else str(exc)
            return JSONResponse({"error": said}, status_code=409)
        except TypeError:
            return JSONResponse({"error": f"wrong arguments for {name}"}, status_code=400)
        return JSONResponse({"ok": True, "result": result})

    routes = [Route("/", index), Route("/api/state", state), Route("/board.svg", svg),
              Route("/api/stream", stream), Route("/games", games_list),
              Route("/games/{game_id:int}/record.json", game_record),
              Route("/api/action/{name}", action, methods=["POST"]), *static_routes(),
              *routes]
    app = Starlette(routes=routes)
    app.add_middleware(BodyLimit, max_bytes=max_body)
    app.add_middleware(SecurityHeaders)  # added last: outermost, so a 413 carries them too
    app.state.streams = live
    return app


PEER_ONLY: dict[str, Any] = {"proxy_headers": False, "forwarded_allow_ips": ""}
"""uvicorn options for every server of the project: no proxy stands in front of a station or
the dashboard, so a request's client is always the connection's own peer and no
``X-Forwarded-For`` header can rename it (uvicorn trusts that header from 127.0.0.1 by
default, which let any local client escape the PIN and login brakes)."""


def _server(app: Any, host: str = "127.0.0.1", port: int = 0) -> Any:
    """uvicorn's server for ``app``, without its signal handlers (the daemon owns its signals),
    without a lifespan (the page has none, and a cancelled lifespan task logs a traceback),
    and with ``proxy_headers`` off: nothing stands in front of a station, so every request's
    client is the connection's own peer and no ``X-Forwarded-For`` can rename it. Its
    connections are guarded (:mod:`pi_app.net.guard`: header deadline, caps per peer and in
    all)."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off",
                            timeout_graceful_shutdown=1, http=guarded_h11(Guard()), **PEER_ONLY)
    return Server(config)


async def serve(app: Any, host: str = "0.0.0.0", port: int = 8080, *,
                sockets: list[Any] | None = None) -> None:
    """Serve ``app`` on the running loop until cancelled; leaves signal handling to the caller.

    A port that cannot be bound raises :class:`OSError` (uvicorn itself would ``sys.exit``,
    which takes the whole event loop, and so the station, down with it).
    """
    server = _server(app, host, port)
    try:
        await server.serve(sockets=sockets)
    except SystemExit as exc:
        raise OSError(f"the web server on {host}:{port} could not start (see the log)") from exc
    finally:
        server.should_exit = True


async def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets on every address ``host`` names, bound as asyncio would (address
    reuse for TIME_WAIT, IPv6 sockets IPv6 only); :class:`OSError` when one cannot be had."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(128)  # a listener elsewhere is found here, even one also reusing
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def page_off_reason(exc: OSError, host: str, port: int) -> str:
    """What the station's screen and log say while the page cannot listen (short: the OLED)."""
    if exc.errno == errno.EADDRINUSE:
        return f"page off: port {port} in use"
    if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        return f"page off: no address {host}"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"page off: port {port} not allowed"
    return f"page off: {exc.strerror or exc}"


async def run_page(app: Any, host: str, port: int, *,
                   notice: Callable[[str], None] | None = None,
                   retry: float = BIND_RETRY_S) -> None:
    """Serve the station page until cancelled, whatever happens to its port.

    While ``host``:``port`` cannot be bound, says why (``notice`` and the log, once per reason)
    and tries again every ``retry`` seconds; ``notice("")`` once it listens. Cancelling stops it
    cleanly: every live stream ends, uvicorn closes its connections, then the cancel goes on.
    """
    said = ""
    while True:
        try:
            sockets = await bind(host, port)
            break
        except OSError as exc:
            why = page_off_reason(exc, host, port)
            if why != said:
                log.warning("the station runs on without its page (%s: %s); trying again "
                            "every %.0f s", why, exc, retry)
                said = why
                _say(notice, why)
        await asyncio.sleep(retry)
    quiet_accept_errors(asyncio.get_running_loop())
    log.info("station page on http://%s:%d/", host, port)
    _say(notice, "")  # up: also the daemon's cue for its start-up lines
    server = _server(app)
    running = asyncio.ensure_future(serve_quietly(server, sockets))
    try:
        await asyncio.shield(running)
    except asyncio.CancelledError:
        streams = getattr(getattr(app, "state", None), "streams", None)
        if isinstance(streams, LiveStreams):
            streams.end_all()
        server.should_exit = True
        try:
            await asyncio.wait_for(running, STOP_TIMEOUT_S)
        except TimeoutError:
            log.warning("the station page did not stop within %.0f s", STOP_TIMEOUT_S)
        raise


async def serve_quietly(server: Any, sockets: list[socket.socket]) -> None:
    """``server`` on ``sockets``; a failure is logged, never a ``SystemExit`` out of the loop."""
    try:
        await server.serve(sockets=sockets)
    except SystemExit:
        log.error("the station page stopped: its server could not start")
        for sock in sockets:
            sock.close()


def _say(notice: Callable[[str], None] | None, text: str) -> None:
    if notice is None:
        return
    try:
        notice(text)
    except Exception:  # the page's news must never stop the page
        log.exception("could not show %r", text)


def start_station_server(feed: StationFeed, geometry: Geometry | None,
                         config: StationConfig, *,
                         notice: Callable[[str], None] | None = None,
                         retry: float = BIND_RETRY_S,
                         store: EventStore | None = None,
                         routes: Sequence[BaseRoute] = ()) -> asyncio.Task[None]:
    """The daemon's one call: serve the page on ``[web] host``/``port`` with ``[web] token``.

    Runs as a task on the daemon's loop (call it from inside the loop); cancel it, and await
    it, to stop cleanly. ``notice``: told why the page is off ("" when it is up), see
    :func:`run_page`. ``store``: the station's game database, for its past games (read on
    a connection of the page's own, see :mod:`pi_app.net.archive`).
    """
    archive = None if store is None or str(store.path) == ":memory:" \
        else GameArchive(store.path)
    app = create_station_app(feed, token=config.web.token or None, geometry=geometry,
                             archive=archive, address=page_address(config), routes=routes,
                             language=config.station.language)
    return asyncio.get_running_loop().create_task(
        run_page(app, config.web.host, config.web.port, notice=notice, retry=retry),
        name="station-web")
