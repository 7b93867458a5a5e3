"""The first-boot set-up's routes on the station's page (:mod:`pi_app.referee.firstboot`).

=====================  ===========================================================================
``GET /setup``         the form (or, on a station that is set up, how to set it up again)
``GET /SETUP``         the same, by redirect: the screen's QR code carries the address in
                       capitals, which packs small enough to draw large on the OLED
``POST /setup``        the answers, as a plain form post (``application/x-www-form-urlencoded``)
=====================  ===========================================================================

The answers need this boot's set-up code, shown only on the station's screen. A try is counted
by the :class:`~pi_app.net.auth.Brake` before its body is read (as the PIN is): after five wrong
codes from one address further tries wait out a doubling delay (429). A wrong code gets 403,
a wrong field 400 with the field named (``data-field``), a file that cannot be written 503 (the
code stays valid); once written the code is spent (403 from then on) and the station restarts
on the new file. Bodies are capped by the station app's own limit.
"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from pi_app.games import get_game
from pi_app.i18n import N_, SOURCE, choose, translator
from pi_app.net import setup_pages
from pi_app.net.auth import Brake
from pi_app.referee.firstboot import FirstBoot, SetupError

#: Form fields read at most (the form has eleven).
MAX_FIELDS = 20

SET_UP_ALREADY = N_("This station is set up. To set it up again, set [station] configured = "
                    "false in its configuration file and restart it; the new set-up code is "
                    "then on its screen.")


def setup_routes(setup: FirstBoot | None, *, brake: Brake | None = None) -> list[Route]:
    """The set-up's routes for the station app (``setup`` None: a station set up by hand)."""
    brake = brake or Brake()
    writing = asyncio.Lock()  # one set-up is written, never two racing each other

    def reader(request: Request, asked: str | None = None) -> str:
        """The reader's language: ``asked`` (the form's own ``lang``, the language it was
        read in), ``?lang=``, the browser's, else the station's."""
        station = setup.defaults()["language"] if setup is not None else SOURCE
        return choose(request.headers.get("accept-language"),
                      asked or request.query_params.get("lang"), station)

    def said(request: Request, title: str, message: str, link: str = "",
             status: int = 200, lang: str | None = None, **headers: str) -> Response:
        lang = lang or reader(request)
        _ = translator(lang).gettext
        return HTMLResponse(setup_pages.message_page(_(title), message, link=link, lang=lang),
                            status_code=status,
                            headers={"vary": "Accept-Language", **headers})

    def already(request: Request, status: int = 200, lang: str | None = None) -> Response:
        lang = lang or reader(request)
        return said(request, N_("Set up"), translator(lang).gettext(SET_UP_ALREADY),
                    status=status, lang=lang)

    async def form(request: Request) -> Response:
        if setup is None or setup.done:
            return already(request)
        return HTMLResponse(setup_pages.form_page(setup.defaults(), setup.games,
                                                  lang=reader(request)),
                            headers={"cache-control": "no-store", "vary": "Accept-Language"})

    async def capitals(_request: Request) -> Response:
        return RedirectResponse("/setup", status_code=302)

    async def submit(request: Request) -> Response:
        if setup is None or setup.done:
            return already(request, 403)
        lang = reader(request)
        _ = translator(lang).gettext
        who = request.client.host if request.client is not None else "?"
        wait = brake.take(who)
        if wait > 0:
            return said(request, N_("Wait"), _(
                "Too many wrong set-up codes: wait {seconds} s, then try again.").format(
                seconds=f"{wait:.0f}"), link="/setup", status=429,
                **{"retry-after": str(int(wait) + 1)})
        try:
            answers = dict(parse_qsl((await request.body()).decode("utf-8"),
                                     keep_blank_values=True, max_num_fields=MAX_FIELDS,
                                     strict_parsing=False))
        except (UnicodeDecodeError, ValueError):
            return said(request, N_("Set up"),
                        _("The form could not be read: send it from the set-up page."),
                        link="/setup", status=400)
        lang = reader(request, answers.get("lang"))  # the language the form was read in
        _ = translator(lang).gettext
        refill = {**setup.defaults(), **{k: v for k, v in answers.items()
                                         if k in ("board", "game", "language", "players",
                                                  "count", "mqtt_host", "mqtt_port")}}
        if not setup.check_code(answers.get("code", "")):
            return HTMLResponse(setup_pages.form_page(
                refill, setup.games, field="code", lang=lang,
                error=_("Wrong set-up code: type the six digits on the station's screen.")),
                status_code=403)
        brake.succeeded(who)
        try:
            text, config = setup.answers_to_toml(answers)
        except SetupError as exc:
            return HTMLResponse(setup_pages.form_page(refill, setup.games,
                                                      error=exc.words(lang), field=exc.field,
                                                      lang=lang),
                                status_code=400)
        try:
            async with writing:
                if setup.done:  # another answer with the code was written meanwhile
                    return already(request, 403, lang)
                await asyncio.to_thread(setup.write, text)
        except OSError as exc:
            return said(request, N_("Not saved"), _(
                "The station cannot write {path}: {reason}. Nothing was changed; the set-up "
                "code still works.").format(path=setup.path, reason=exc.strerror or exc),
                link="/setup", status=503, lang=lang)
        setup.restart_soon()
        network = (" " + _("It joins the Wi-Fi {network} first: this phone may need to join "
                           "it too.").format(network=setup.join[0]) if setup.join else "")
        return said(request, N_("Set up"), _(
            "Saved. The station starts again as {board}, for {game}.").format(
            board=config.station.board, game=get_game(config.station.game).title) + network
            + " " + _("Its page's address is then on its screen at game over, with a QR "
                      "code."), lang=lang)

    return [Route("/setup", form), Route("/SETUP", capitals),
            Route("/setup", submit, methods=["POST"])]
