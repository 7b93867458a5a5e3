"""The first-boot set-up's pages (:mod:`pi_app.net.setup_app`): a plain HTML form.

No script at all: the form posts as forms do, so it works on any phone, and the station's
Content-Security-Policy (no inline script) needs no exception. Values are escaped by
:func:`pi_app.net.pages.render`; a PIN or password is never put back into a page.
"""

from __future__ import annotations

from html import escape

from pi_app.games import get_game
from pi_app.i18n import LANGUAGE_NAMES
from pi_app.net import pages

FORM_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Set up {{board}} · tikiboard</title><link rel="stylesheet" href="/static/site.css"></head>
<body><header><h1>Set up this station</h1></header>
<main><section>
{{{error}}}
<form method="post" action="/setup" id="setup-form" autocomplete="off">
<p><label>Set-up code (on the station's screen)
<input name="code" id="code" inputmode="numeric" required maxlength="12"></label></p>
<p><label>Table name (letters, digits, <code>_ . -</code>)
<input name="board" id="board" value="{{board}}" required maxlength="64"></label></p>
<p><label>Game <select name="game" id="game">{{{games}}}</select></label></p>
<p><label>Language of the screen and the page
<select name="language" id="language">{{{languages}}}</select></label></p>
<p><label>Players' names, separated by commas (optional)
<input name="players" id="players" value="{{players}}" maxlength="200"></label></p>
<p><label>Number of players (when no names are given)
<input name="count" id="count" value="{{count}}" inputmode="numeric" maxlength="1"></label></p>
<p><label>PIN for the page's actions (at least 6 characters)
<input name="pin" id="pin" type="password" required maxlength="128"></label></p>
<h2>Network (optional)</h2>
<p><label>Wi-Fi network <input name="ssid" id="ssid" maxlength="32"></label></p>
<p><label>Wi-Fi password <input name="passphrase" id="passphrase" type="password"
 maxlength="64"></label></p>
<p><label>Tournament broker (MQTT host) <input name="mqtt_host" id="mqtt_host"
 value="{{mqtt_host}}" maxlength="253"></label></p>
<p><label>Broker port <input name="mqtt_port" id="mqtt_port" value="{{mqtt_port}}"
 inputmode="numeric" maxlength="5"></label></p>
<p><label>Broker password <input name="mqtt_password" id="mqtt_password" type="password"
 maxlength="256"></label></p>
<p><button type="submit" id="save">Save and restart the station</button></p>
</form></section></main></body></html>
"""

MESSAGE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}} · tikiboard</title><link rel="stylesheet" href="/static/site.css"></head>
<body><header><h1>{{title}}</h1></header>
<main><section><p id="message">{{message}}</p>{{{more}}}</section></main></body></html>
"""


def form_page(values: dict[str, str], games: tuple[str, ...], *, error: str = "",
              field: str = "") -> str:
    """The set-up form with ``values`` filled in; ``error`` above it, about ``field``."""
    chosen = values.get("game", "")
    options = "".join(
        f'<option value="{escape(g)}"{" selected" if g == chosen else ""}>'
        f"{escape(get_game(g).title)}</option>" for g in games)
    spoken = values.get("language", "")
    languages = "".join(
        f'<option value="{code}" lang="{code}"{" selected" if code == spoken else ""}>'
        f"{escape(name)}</option>" for code, name in LANGUAGE_NAMES.items())
    shown = (f'<p class="error" id="error" data-field="{escape(field)}">{escape(error)}</p>'
             if error else "")
    return pages.render(FORM_HTML, error=shown, games=options, languages=languages,
                        board=values.get("board", ""),
                        players=values.get("players", ""), count=values.get("count", ""),
                        mqtt_host=values.get("mqtt_host", ""),
                        mqtt_port=values.get("mqtt_port", ""))


def message_page(title: str, message: str, *, link: str = "") -> str:
    """A page that says one thing (done, refused, wait), with a link back when given."""
    more = f'<p><a href="{escape(link)}">{escape(link)}</a></p>' if link else ""
    return pages.render(MESSAGE_HTML, title=title, message=message, more=more)
