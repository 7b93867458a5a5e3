"""The first-boot set-up's pages (:mod:`pi_app.net.setup_app`): a plain HTML form.

No script at all: the form posts as forms do, so it works on any phone, and the station's
Content-Security-Policy (no inline script) needs no exception. Values are escaped by
:func:`pi_app.net.pages.render`; a PIN or password is never put back into a page.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from pi_app.games import get_game
from pi_app.i18n import LANGUAGE_NAMES, game_title, translator
from pi_app.net import pages

FORM_HTML = """<!doctype html>
<html lang="{{lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{w_title}} · tikiboard</title><link rel="stylesheet" href="/static/site.css"></head>
<body><header><h1>{{w_heading}}</h1>
<nav id="languages" aria-label="{{w_language}}">{{{language_links}}}</nav></header>
<main><section>
{{{error}}}
<form method="post" action="/setup" id="setup-form" autocomplete="off">
<input type="hidden" name="lang" value="{{lang}}">
<p><label>{{w_code}}
<input name="code" id="code" inputmode="numeric" required maxlength="12"></label></p>
<p><label>{{w_join}}
<input name="join" id="join" maxlength="600" autocapitalize="characters"></label></p>
<p><label>{{{board_label}}}
<input name="board" id="board" value="{{board}}" maxlength="64"></label></p>
<p><label>{{w_game}} <select name="game" id="game">{{{games}}}</select></label></p>
<p><label>{{w_spoken}}
<select name="language" id="language">{{{languages}}}</select></label></p>
<p><label>{{w_players}}
<input name="players" id="players" value="{{players}}" maxlength="200"></label></p>
<p><label>{{w_count}}
<input name="count" id="count" value="{{count}}" inputmode="numeric" maxlength="1"></label></p>
<p><label>{{w_pin}}
<input name="pin" id="pin" type="password" required maxlength="128"></label></p>
<h2>{{w_network}}</h2>
<p><label>{{w_ssid}} <input name="ssid" id="ssid" maxlength="32"></label></p>
<p><label>{{w_passphrase}} <input name="passphrase" id="passphrase" type="password"
 maxlength="64"></label></p>
<p><label>{{w_mqtt_host}} <input name="mqtt_host" id="mqtt_host"
 value="{{mqtt_host}}" maxlength="253"></label></p>
<p><label>{{w_mqtt_port}} <input name="mqtt_port" id="mqtt_port" value="{{mqtt_port}}"
 inputmode="numeric" maxlength="5"></label></p>
<p><label>{{w_mqtt_password}} <input name="mqtt_password" id="mqtt_password" type="password"
 maxlength="256"></label></p>
<p><button type="submit" id="save">{{w_save}}</button></p>
</form></section></main></body></html>
"""


def setup_words(_: Callable[[str], str]) -> dict[str, str]:
    """The set-up form's words in one language (``_``: its gettext)."""
    return {
        "title": _("Set up {board}"), "heading": _("Set up this station"),
        "language": _("Language"), "code": _("Set-up code (on the station's screen)"),
        "join": _("Tournament join code (from the referee; it fills the table name and "
                  "the broker)"),
        "board": _("Table name (letters, digits, {signs})"), "game": _("Game"),
        "spoken": _("Language of the screen and the page"),
        "players": _("Players' names, separated by commas (optional)"),
        "count": _("Number of players (when no names are given)"),
        "pin": _("PIN for the page's actions (at least 6 characters)"),
        "network": _("Network (optional)"), "ssid": _("Wi-Fi network"),
        "passphrase": _("Wi-Fi password"), "mqtt_host": _("Tournament broker (MQTT host)"),
        "mqtt_port": _("Broker port"), "mqtt_password": _("Broker password"),
        "save": _("Save and restart the station"),
    }


MESSAGE_HTML = """<!doctype html>
<html lang="{{lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}} · tikiboard</title><link rel="stylesheet" href="/static/site.css"></head>
<body><header><h1>{{title}}</h1></header>
<main><section><p id="message">{{message}}</p>{{{more}}}</section></main></body></html>
"""


def form_page(values: dict[str, str], games: tuple[str, ...], *, error: str = "",
              field: str = "", lang: str = "en") -> str:
    """The set-up form with ``values`` filled in; ``error`` above it, about ``field``; its
    words in ``lang`` (the reader's: the language the station will speak is a field)."""
    gettext = translator(lang).gettext
    words = setup_words(gettext)
    chosen = values.get("game", "")
    options = "".join(
        f'<option value="{escape(g)}"{" selected" if g == chosen else ""}>'
        f"{escape(game_title(get_game(g).title, gettext))}</option>" for g in games)
    spoken = values.get("language", "")
    languages = "".join(
        f'<option value="{code}" lang="{code}"{" selected" if code == spoken else ""}>'
        f"{escape(name)}</option>" for code, name in LANGUAGE_NAMES.items())
    shown = (f'<p class="error" id="error" data-field="{escape(field)}">{escape(error)}</p>'
             if error else "")
    board = values.get("board", "")
    return pages.render(FORM_HTML, error=shown, games=options, languages=languages,
                        board=board, lang=lang,
                        language_links=pages.language_links(lang),
                        players=values.get("players", ""), count=values.get("count", ""),
                        mqtt_host=values.get("mqtt_host", ""),
                        mqtt_port=values.get("mqtt_port", ""),
                        **{f"w_{key}": value for key, value in words.items()
                           if key not in ("title", "board")},
                        w_title=words["title"].format(board=board),
                        board_label=escape(words["board"]).replace(
                            "{signs}", "<code>_ . -</code>"))


def message_page(title: str, message: str, *, link: str = "", lang: str = "en") -> str:
    """A page that says one thing (done, refused, wait), with a link back when given (the
    caller says ``title`` and ``message`` in ``lang``)."""
    more = f'<p><a href="{escape(link)}">{escape(link)}</a></p>' if link else ""
    return pages.render(MESSAGE_HTML, title=title, message=message, more=more, lang=lang)
