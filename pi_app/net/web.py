"""The station's own web page: the live board, scores, moves and what the station waits for.

The daemon serves it on the local network, on its own event loop (the feed's SSE queues are
asyncio queues of that loop)::

    from pi_app.net.web import start_station_server
    task = start_station_server(feed, geometry, config)   # [web] host, port, token; in the loop
    ...
    task.cancel()

or, by hand: ``asyncio.create_task(serve(create_station_app(feed, token=pin), host, port))``.

Routes:

=====================  ===========================================================================
``GET /``              the page (rendered on the server, then live)
``GET /api/state``     the public snapshot and the board SVG, as JSON
``GET /api/stream``    server-sent events: ``status`` with the same JSON on every change
``GET /board.svg``     the board picture
``POST /api/action/N`` ``undo``, ``new_game`` (``{"game", "players"}``), ``override``
                       (``{"text"}``): needs ``Authorization: Bearer PIN`` (or ``X-Station-Token``)
=====================  ===========================================================================

Reading is open to anyone; the page is seen by both players, so it shows the public snapshot
(:mod:`pi_app.net.redact`: no Secret Tiki cards, no TacTiki ranks). An action without the PIN is
refused with 401, a wrong PIN with 403 (compared in constant time), and after five wrong PINs
from one address further tries wait out a doubling delay (429). With no PIN configured no
action is possible at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pi_app.board.geometry import Geometry
from pi_app.games import GAME_NAMES
from pi_app.games.base import JSON
from pi_app.net import pages
from pi_app.net.auth import Brake, same
from pi_app.net.redact import public_snapshot
from pi_app.net.svg import board_svg
from pi_app.referee.config import Config as StationConfig
from pi_app.referee.feed import ActionError, StationFeed

ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]],
                    Callable[[MutableMapping[str, Any]], Awaitable[None]]], Awaitable[None]]
Scope = MutableMapping[str, Any]
HEARTBEAT = 15.0


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
    return {"snapshot": public,
            "svg": board_svg(str(public.get("game") or ""), public.get("view") or {},
                             geometry=geometry)}


def waiting_text(snapshot: JSON) -> str:
    status = snapshot.get("status")
    prompt = snapshot.get("prompt")
    if status == "prompt" and isinstance(prompt, dict):
        return "Choose: " + " / ".join(str(o) for o in prompt.get("options", []))
    if status == "mismatch":
        return "The board does not match the game: fix it."
    if status == "follow_up":
        return "Finish the move on the board."
    players = list(snapshot.get("players") or [])
    if status == "over":
        winners = snapshot.get("winners")
        if not isinstance(winners, list):
            return "Game over."
        if not winners:
            return "Game over: a draw."
        return "Game over: " + " and ".join(pages.person(players, w) for w in winners) + " won."
    to_move = snapshot.get("to_move")
    if isinstance(to_move, int):
        return f"{pages.person(players, to_move)} to move."
    return "No game yet."


def create_station_app(feed: StationFeed, *, token: str | None, brake: Brake | None = None,
                       geometry: Geometry | None = None) -> Starlette:
    """The station's page over ``feed``; actions need ``token`` (the station's PIN).

    ``geometry``: the station's own board file, for the picture (default: the shipped one).
    """
    brake = brake or Brake()

    def station_view(snapshot: JSON) -> JSON:
        return station_view_of(snapshot, geometry)

    async def index(_request: Request) -> Response:
        view = station_view(feed.snapshot)
        snap = view["snapshot"]
        options = pages.game_options(feed.games or GAME_NAMES, str(snap.get("game") or ""))
        html = pages.render(
            pages.STATION_HTML, board=feed.board, status=snap.get("status", "idle"),
            title=snap.get("title", ""), svg=view["svg"],
            players=pages.player_rows(list(snap.get("players") or []),
                                      list(snap.get("scores") or []), snap.get("to_move")),
            waiting=waiting_text(snap), guidance=pages.items(list(snap.get("guidance") or [])),
            moves=pages.items(list(snap.get("moves") or [])), game_options=options,
            initial=pages.json_for_script(view))
        return HTMLResponse(html)

    async def state(_request: Request) -> Response:
        return JSONResponse(station_view(feed.snapshot))

    async def svg(_request: Request) -> Response:
        return Response(station_view(feed.snapshot)["svg"], media_type="image/svg+xml")

    async def stream(request: Request) -> Response:
        queue = feed.subscribe()

        async def events() -> AsyncIterator[str]:
            try:
                while True:
                    try:
                        kind, payload = await asyncio.wait_for(queue.get(), HEARTBEAT)
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if kind == "status":
                        while not queue.empty():  # only the newest picture matters
                            later_kind, later = queue.get_nowait()
                            if later_kind == "status":
                                payload = later
                        yield sse("status", station_view(payload))
            finally:
                feed.unsubscribe(queue)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"cache-control": "no-store",
                                          "x-accel-buffering": "no"})

    async def action(request: Request) -> Response:
        who = client_of(request)
        wait = brake.wait(who)
        if wait > 0:
            return JSONResponse({"error": f"too many wrong PINs: wait {wait:.0f} s"},
                                status_code=429, headers={"retry-after": str(int(wait) + 1)})
        given = request.headers.get("x-station-token")
        auth = request.headers.get("authorization", "")
        if given is None and auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        if not given:
            return JSONResponse({"error": "this action needs the station's PIN"},
                                status_code=401, headers={"www-authenticate": "Bearer"})
        if not same(given, token):
            brake.failed(who)
            return JSONResponse({"error": "wrong PIN"}, status_code=403)
        brake.succeeded(who)
        name = request.path_params["name"]
        try:
            body = await request.json() if await request.body() else {}
        except ValueError:
            return JSONResponse({"error": "the body must be JSON"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        args = {k: v for k, v in body.items() if k in ("game", "players", "text")}
        if name not in feed.actions:
            return JSONResponse({"error": f"unknown action {name!r}"}, status_code=404)
        try:
            result = await feed.act(name, **args)
        except ActionError as exc:
            return JSONResponse({"error": str(exc)}, status_code=409)
        except TypeError:
            return JSONResponse({"error": f"wrong arguments for {name}"}, status_code=400)
        return JSONResponse({"ok": True, "result": result})

    routes = [Route("/", index), Route("/api/state", state), Route("/board.svg", svg),
              Route("/api/stream", stream),
              Route("/api/action/{name}", action, methods=["POST"]), *static_routes()]
    app = Starlette(routes=routes)
    app.add_middleware(SecurityHeaders)
    return app


async def serve(app: Any, host: str = "0.0.0.0", port: int = 8080, *,
                sockets: list[Any] | None = None) -> None:
    """Serve ``app`` on the running loop until cancelled; leaves signal handling to the caller.

    uvicorn's own ``serve`` installs SIGINT/SIGTERM handlers; the daemon owns its signals, so
    this runs uvicorn's server without them.
    """
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="auto",
                            timeout_graceful_shutdown=1)
    server = Server(config)
    try:
        await server.serve(sockets=sockets)
    finally:
        server.should_exit = True


def start_station_server(feed: StationFeed, geometry: Geometry | None,
                         config: StationConfig) -> asyncio.Task[None]:
    """The daemon's one call: serve the page on ``[web] host``/``port`` with ``[web] token``.

    Runs as a task on the daemon's loop (call it from inside the loop); cancel it to stop.
    """
    app = create_station_app(feed, token=config.web.token or None, geometry=geometry)
    return asyncio.get_running_loop().create_task(
        serve(app, host=config.web.host, port=config.web.port), name="station-web")
