"""The referee dashboard's web app (Starlette): every board at a glance, one board, rulings, export.

Routes:

===============================  ================================================================
``GET /``                        every board: game, players, scores, status, lag, result
``GET /board/B``                 one board: live picture, moves, events, confirm a result
``GET /api/boards``              the overview as JSON
``GET /api/board/B``             one board as JSON
``GET /api/stream[?board=B]``    server-sent events ``board`` (summary, or detail with ``board``)
``GET /api/stats[?since=T]``     counters and the move-to-dashboard lag (p50/p99) since T
``GET|POST /login``, ``POST /logout``
``POST /api/board/B/confirm``    referee: ``{"game_id", "winners"?, "scores"?, "note"?}``
``GET /api/board/B/record``      referee: the board's current record
``GET /export.json``             referee: every record of the event, one JSON list
===============================  ================================================================

Without a login every view is the public one (hidden information removed, see
:mod:`pi_app.net.redact`), so the overview can go on a screen in the hall. A referee logs in with
a name and password from the config file and gets a signed session cookie; every POST must also
carry the page's CSRF token (header ``X-CSRF-Token`` or form field ``csrf``). Log-out ends the
session for good: its id is kept in the ledger (so a restart does not bring it back) until the
cookie would have expired anyway.

Limits (the overview is open to the hall's LAN): a request body over
:data:`~pi_app.net.limits.DEFAULT_MAX_BODY` gets 413 before it is read; live streams are capped
per client address and in total (:class:`~pi_app.net.limits.StreamCap`, 503 past it); a login
try is counted before its body is read, and the password hash runs in a worker thread so a
login never stalls the pages. A page or stream asks only about boards a station spoke for: a
read never adds a board to the overview.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping, MutableMapping
from html import escape
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from pi_app.i18n import LANGUAGES, N_, SOURCE, choose, translator
from pi_app.net import pages
from pi_app.net.auth import Brake, CookieSigner, verify_password
from pi_app.net.desk import Desk
from pi_app.net.eventlog import feed_text
from pi_app.net.limits import DEFAULT_MAX_BODY, BodyLimit, StreamCap
from pi_app.net.spectate import watch_html
from pi_app.net.tournament_app import Access, ExtraRoutes
from pi_app.net.web import HEARTBEAT, SecurityHeaders, client_of, sse, static_routes

COOKIE = "tiki_referee"
Lifespan = Callable[[Starlette], contextlib.AbstractAsyncContextManager[None]]


class _Stream(StreamingResponse):
    """A stream that runs ``done`` when it ends, however it ends (even if never started)."""

    def __init__(self, content: AsyncIterator[str], done: Callable[[], None]) -> None:
        super().__init__(content, media_type="text/event-stream",
                         headers={"cache-control": "no-store"})
        self.done = done

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.done()


def _malformed(row: Mapping[str, Any], words: dict[str, str]) -> str:
    if not row["malformed"]:
        return ""
    said = pages.say(words, "malformed", count=row["malformed"])
    return (f' <span class="warn malformed" title="{escape(str(row["problem"] or ""))}">'
            f'{escape(said)}</span>')


def _row(r: Mapping[str, Any], words: dict[str, str] | None = None) -> str:
    """One board's overview row, as the page's script builds it too (``DASHBOARD_JS`` row),
    in ``words``' language (default English)."""
    said = words or pages.dashboard_words(translator("en").gettext)
    board = escape(r["board"])
    gap = f' <span class="warn">{escape(said["gap"])}</span>' if r["gaps"] else ""
    result = (r["last_result"] or {}).get("text", "")
    players = " \u2013 ".join(str(p) for p in r["players"])
    moves = r["moves"] if r["game"] else ""
    heard = r["heard_s"]
    feed = "" if r["status"] == "never" else feed_text(  # the badge says it already
        heard=None if heard is None else -float(heard), online=r["online"],
        behind=r["behind_s"], now=0.0, known=True, words=said)
    status = said.get(f"s_{r['status']}", r["status_text"])
    title = str(r["title"] or "")
    title = said.get(f"title:{title}", title)
    number, table = r.get("round"), r.get("table")
    return (f'<tr id="row-{board}" data-status="{escape(r["status"])}">'
            f'<td class="c-board"><a href="/board/{board}">{board}</a></td>'
            f'<td class="c-round">{"" if number is None else int(number)}</td>'
            f'<td class="c-table">{"" if table is None else int(table)}</td>'
            f'<td class="c-status"><span class="badge s-{escape(r["status"])}">'
            f'{escape(status)}</span>{gap}{_malformed(r, said)}</td>'
            f'<td class="c-game">{escape(title)}</td>'
            f'<td class="c-players">{escape(players)}</td>'
            f'<td class="c-scores">{escape(" : ".join(str(s) for s in r["scores"]))}</td>'
            f'<td class="c-moves">{moves}</td>'
            f'<td class="c-last">{escape(str(r["last_move"] or ""))}</td>'
            f'<td class="feed">{escape(feed)}</td>'
            f'<td class="c-result">{escape(result)}</td></tr>')


def _form(body: bytes) -> dict[str, str]:
    """A URL-encoded form; ``UnicodeDecodeError`` for a body that is not UTF-8."""
    return {k: v[0] for k, v in parse_qs(body.decode()).items()}


def create_dashboard_app(desk: Desk, *, users: Mapping[str, str], secret: bytes,
                         secure_cookie: bool = False, lifespan: Lifespan | None = None,
                         brake: Brake | None = None, streams: StreamCap | None = None,
                         max_body: int = DEFAULT_MAX_BODY,
                         extra: ExtraRoutes | None = None) -> Starlette:
    """The dashboard over ``desk``; ``users`` maps referee names to password hashes.

    ``secret`` signs the session cookies (ValueError when shorter than ``auth.MIN_SECRET``);
    ``extra`` makes more pages (the tournament's) with the same login and CSRF checks."""
    signer = CookieSigner(secret, ended=desk.ledger.logouts())
    brake = brake or Brake()
    streams = streams or StreamCap(per_client=8, total=128)

    def referee(request: Request) -> str | None:
        user = signer.verify(request.cookies.get(COOKIE))
        return user if user is not None and user in users else None

    def csrf_of(request: Request) -> str:
        cookie = request.cookies.get(COOKIE)
        return signer.csrf(cookie) if cookie and referee(request) else ""

    async def csrf_ok(request: Request, form: Mapping[str, str] | None = None) -> bool:
        expected = csrf_of(request)
        given = request.headers.get("x-csrf-token") or (form or {}).get("csrf", "")
        return bool(expected) and given == expected

    def refuse(status: int, message: str) -> Response:
        return JSONResponse({"error": message}, status_code=status)

    def reader(request: Request) -> str:
        """A page's language: ``?lang=``, else the browser's (English by default)."""
        return choose(request.headers.get("accept-language"), request.query_params.get("lang"))

    def asked(request: Request) -> str:
        """The language live data is said in: the page asks with ``?lang=`` (English
        otherwise, so the JSON API does not change with a browser's settings)."""
        lang = request.query_params.get("lang", "")
        return lang if lang in LANGUAGES else SOURCE

    async def overview(request: Request) -> Response:
        user = referee(request)
        lang = reader(request)
        words = pages.dashboard_words(translator(lang).gettext)
        rows = desk.overview(full=user is not None, lang=lang)
        body = "".join(_row(r, words) for r in rows)
        html = pages.render(pages.DASHBOARD_HTML, event=desk.event, rows=body,
                            count=pages.say(words, "boards", count=len(rows)),
                            lang=lang, languages=pages.language_links(lang),
                            initial=pages.json_for_script({"words": words}),
                            csrf=csrf_of(request),
                            account=pages.account_html(user, csrf_of(request),
                                                       translator(lang).gettext),
                            **{f"w_{key}": value for key, value in words.items()})
        # The same address answers in the viewer's language: caches must keep them apart.
        return HTMLResponse(html, headers={"vary": "Accept-Language"})

    async def board_page(request: Request) -> Response:
        name = request.path_params["board"]
        if name not in desk.boards:  # heard from, or configured for the event
            return HTMLResponse("<h1>No such board</h1>", status_code=404)
        user = referee(request)
        lang = reader(request)
        words = pages.board_words(translator(lang).gettext)
        d = desk.detail(name, full=user is not None, lang=lang)
        heard = d["heard_s"]
        feed = feed_text(heard=None if heard is None else -float(heard), online=d["online"],
                         behind=d["behind_s"], now=0.0, known=d["status"] != "never",
                         words=words)
        html = pages.render(
            pages.BOARD_HTML, event=desk.event, board=name, status=d["status"],
            status_text=words.get(f"s_{d['status']}", d["status_text"]), feed=feed,
            last_result=(d["last_result"] or {}).get("text", ""),
            events=pages.items([str(e["line"]) for e in reversed(d["events_tail"])]),
            title=words.get(f"title:{d['title']}", d["title"] or ""), svg=d["svg"],
            referee="yes" if user else "no",
            players=pages.player_rows(d["players"], d["scores"], d["to_move"], words),
            guidance=pages.items([str(g) for g in d["guidance"]]),
            moves=pages.items([str(m) for m in d["moves_list"]]), csrf=csrf_of(request),
            account=pages.account_html(user, csrf_of(request), translator(lang).gettext),
            lang=lang,
            languages=pages.language_links(lang),
            initial=pages.json_for_script({"words": words}),
            **{f"w_{key}": value for key, value in words.items()})
        return HTMLResponse(html, headers={"vary": "Accept-Language"})

    async def api_boards(request: Request) -> Response:
        return JSONResponse(desk.overview(full=referee(request) is not None,
                                          lang=asked(request)))

    async def api_board(request: Request) -> Response:
        name = request.path_params["board"]
        if name not in desk.boards:
            return refuse(404, "no such board")
        return JSONResponse(desk.detail(name, full=referee(request) is not None,
                                        lang=asked(request)))

    async def watch(request: Request) -> Response:
        """The spectators' page: public, read-only, late by the event's delay."""
        lang = reader(request)
        delay = desk.broadcast.delay if desk.broadcast is not None else 0.0
        return HTMLResponse(watch_html(desk.event, desk.spectator_rows(), delay, lang),
                            headers={"vary": "Accept-Language", "cache-control": "no-store"})

    async def api_stats(request: Request) -> Response:
        try:
            since = float(request.query_params.get("since", "0"))
        except ValueError:
            return refuse(400, "since: seconds since the epoch")
        return JSONResponse(desk.stats(since))

    async def stream(request: Request) -> Response:
        board = request.query_params.get("board")
        if board is not None and board not in desk.boards:
            return refuse(404, "no such board")  # a read never adds a board
        who = client_of(request)
        if not streams.admit(who):
            return JSONResponse({"error": "too many live streams; reload later"},
                                status_code=503, headers={"retry-after": "30"})
        full = referee(request) is not None
        lang = asked(request)
        watcher = desk.watch(board, full)

        def done() -> None:
            desk.unwatch(watcher)
            streams.release(who)

        async def events() -> AsyncIterator[str]:
            while True:
                try:
                    await asyncio.wait_for(watcher.wake.wait(), HEARTBEAT)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                watcher.wake.clear()
                dirty, watcher.dirty = watcher.dirty, set()
                for name in sorted(dirty):
                    data = (desk.detail(name, full, lang) if board is not None
                            else desk.summary(name, full, lang))
                    yield sse("board", data)

        return _Stream(events(), done)

    def login_page(request: Request, message: str, status: int, **values: str) -> Response:
        """The login form in its reader's language, ``message`` (with ``values``) above it."""
        lang = reader(request)
        _ = translator(lang).gettext
        words = {"title": _("Referee login"), "heading": _("{event}: referee login").format(
                     event=desk.event), "name": _("Name"), "password": _("Password"),
                 "log_in": _("Log in")}
        return HTMLResponse(pages.render(pages.LOGIN_HTML, lang=lang,
                                         message=_(message).format(**values) if message else "",
                                         **{f"w_{k}": v for k, v in words.items()}),
                            status_code=status, headers={"vary": "Accept-Language"})

    async def login(request: Request) -> Response:
        if request.method == "GET":
            return login_page(request, "", 200)
        who = client_of(request)
        wait = brake.take(who)  # counted now: a slow body is still one try
        if wait > 0:
            return login_page(request, N_("Too many tries: wait {seconds} s."), 429,
                              seconds=f"{wait:.0f}")
        try:
            form = _form(await request.body())
        except UnicodeDecodeError:
            return login_page(request, N_("The form must be sent as UTF-8."), 400)
        user, password = form.get("username", ""), form.get("password", "")
        encoded = users.get(user)
        # Verify against a dummy hash for unknown names, so timing does not reveal them; in a
        # worker thread, so a login does not stall every other page for the hash's duration.
        ok = await asyncio.to_thread(verify_password, password, encoded or _DUMMY)
        if not ok or encoded is None:
            return login_page(request, N_("Wrong name or password."), 401)
        brake.succeeded(who)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, signer.sign(user), max_age=int(signer.ttl), httponly=True,
                            samesite="strict", secure=secure_cookie)
        return response

    async def logout(request: Request) -> Response:
        try:
            form = _form(await request.body())
        except UnicodeDecodeError:
            return refuse(400, "the form must be sent as UTF-8")
        session = signer.session(request.cookies.get(COOKIE))
        if session is not None and session.user in users:
            if not await csrf_ok(request, form):
                return refuse(403, "missing or wrong CSRF token")
            signer.end(session)
            desk.ledger.log_out(session.id, session.expires)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    async def confirm(request: Request) -> Response:
        user = referee(request)
        if user is None:
            return refuse(401, "log in as a referee first")
        if not await csrf_ok(request):
            return refuse(403, "missing or wrong CSRF token")
        name = request.path_params["board"]
        if name not in desk.boards:
            return refuse(404, "no such board")
        try:
            body = json.loads(await request.body() or b"{}")
            game_id = int(body["game_id"])
            winners = body.get("winners")
            scores = body.get("scores")
            if winners is not None:
                winners = [int(w) for w in winners]
            if scores is not None:
                scores = [int(s) for s in scores]
            note = str(body.get("note", ""))[:500]
        except (ValueError, KeyError, TypeError):
            return refuse(400, "send {game_id, winners?, scores?, note?} as JSON")
        try:
            ruling = desk.confirm(name, game_id, user, winners=winners, scores=scores,
                                  note=note)
        except ValueError as exc:
            return refuse(409, str(exc))
        return JSONResponse({"ok": True, "ruling": ruling})

    async def record(request: Request) -> Response:
        if referee(request) is None:
            return refuse(401, "log in as a referee first")
        name = request.path_params["board"]
        view = desk.boards.get(name)
        if view is None:
            return refuse(404, "no such board")
        return JSONResponse(view.record)

    async def export(request: Request) -> Response:
        if referee(request) is None:
            return refuse(401, "log in as a referee first")
        stamp = time.strftime("%Y%m%d-%H%M")
        return JSONResponse(desk.export(), headers={
            "content-disposition": f'attachment; filename="{desk.event}-{stamp}.json"'})

    routes = [
        Route("/", overview), Route("/board/{board}", board_page),
        Route("/api/boards", api_boards), Route("/api/board/{board}", api_board),
        Route("/api/stats", api_stats), Route("/api/stream", stream), Route("/watch", watch),
        Route("/login", login, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/api/board/{board}/confirm", confirm, methods=["POST"]),
        Route("/api/board/{board}/record", record), Route("/export.json", export),
        *(extra(Access(referee, csrf_of, csrf_ok)) if extra is not None else []),
        *static_routes(),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(BodyLimit, max_bytes=max_body)
    return app


_DUMMY = "pbkdf2_sha256$200000$00000000000000000000000000000000$" + "00" * 32
