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
from pi_app.net import setup_pages
from pi_app.net.auth import Brake
from pi_app.referee.firstboot import FirstBoot, SetupError

#: Form fields read at most (the form has eleven).
MAX_FIELDS = 20

SET_UP_ALREADY = ("This station is set up. To set it up again, set [station] configured = "
                  "false in its configuration file and restart it; the new set-up code is "
                  "then on its screen.")


def setup_routes(setup: FirstBoot | None, *, brake: Brake | None = None) -> list[Route]:
    """The set-up's routes for the station app (``setup`` None: a station set up by hand)."""
    brake = brake or Brake()
    writing = asyncio.Lock()  # one set-up is written, never two racing each other

    async def form(_request: Request) -> Response:
        if setup is None or setup.done:
            return HTMLResponse(setup_pages.message_page("Set up", SET_UP_ALREADY))
        return HTMLResponse(setup_pages.form_page(setup.defaults(), setup.games),
                            headers={"cache-control": "no-store"})

    async def capitals(_request: Request) -> Response:
        return RedirectResponse("/setup", status_code=302)

    async def submit(request: Request) -> Response:
        if setup is None or setup.done:
            return HTMLResponse(setup_pages.message_page("Set up", SET_UP_ALREADY),
                                status_code=403)
        who = request.client.host if request.client is not None else "?"
        wait = brake.take(who)
        if wait > 0:
            return HTMLResponse(
                setup_pages.message_page("Wait", f"Too many wrong set-up codes: wait "
                                         f"{wait:.0f} s, then try again.", link="/setup"),
                status_code=429, headers={"retry-after": str(int(wait) + 1)})
        try:
            answers = dict(parse_qsl((await request.body()).decode("utf-8"),
                                     keep_blank_values=True, max_num_fields=MAX_FIELDS,
                                     strict_parsing=False))
        except (UnicodeDecodeError, ValueError):
            return HTMLResponse(setup_pages.message_page(
                "Set up", "The form could not be read: send it from the set-up page.",
                link="/setup"), status_code=400)
        refill = {**setup.defaults(), **{k: v for k, v in answers.items()
                                         if k in ("board", "game", "language", "players",
                                                  "count", "mqtt_host", "mqtt_port")}}
        if not setup.check_code(answers.get("code", "")):
            return HTMLResponse(setup_pages.form_page(
                refill, setup.games, field="code",
                error="Wrong set-up code: type the six digits on the station's screen."),
                status_code=403)
        brake.succeeded(who)
        try:
            text, config = setup.answers_to_toml(answers)
        except SetupError as exc:
            return HTMLResponse(setup_pages.form_page(refill, setup.games, error=str(exc),
                                                      field=exc.field), status_code=400)
        try:
            async with writing:
                if setup.done:  # another answer with the code was written meanwhile
                    return HTMLResponse(setup_pages.message_page("Set up", SET_UP_ALREADY),
                                        status_code=403)
                await asyncio.to_thread(setup.write, text)
        except OSError as exc:
            return HTMLResponse(setup_pages.message_page(
                "Not saved", f"The station cannot write {setup.path}: "
                f"{exc.strerror or exc}. Nothing was changed; the set-up code still works.",
                link="/setup"), status_code=503)
        setup.restart_soon()
        network = (f" It joins the Wi-Fi {setup.join[0]} first: this phone may need to join "
                   "it too." if setup.join else "")
        return HTMLResponse(setup_pages.message_page(
            "Set up", f"Saved. The station starts again as {config.station.board}, for "
            f"{get_game(config.station.game).title}.{network} Its page's address is then on "
            "its screen at game over, with a QR code."))

    return [Route("/setup", form), Route("/SETUP", capitals),
            Route("/setup", submit, methods=["POST"])]
