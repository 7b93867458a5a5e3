"""The rest of the table's words in every language: the dashboard's page of one board (its
event log and results too), the tournament page, the first-boot set-up, the demo's frame and
summary, and the station's messages that carry values.

Each view is rendered in English and in each other language, and every English text of it
(a text node, a button, a placeholder or a tooltip) must be gone from the other language's
rendering, except the names and data a view shows as they are (:data:`AS_IS`). So a text left
unmarked, or marked and not translated, fails here in French, Dutch and Italian alike.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from babel.messages.pofile import read_po
from net_fixtures import ServerThread, driver, request

from pi_app import i18n
from pi_app.i18n import Said
from pi_app.json_types import JSON
from pi_app.net import topics
from pi_app.net.auth import hash_password
from pi_app.net.dashboard_app import create_dashboard_app
from pi_app.net.desk import Desk, Incoming
from pi_app.net.eventlog import event_words
from pi_app.net.ledger import Ledger
from pi_app.net.tournament_pages import live_html
from pi_app.referee import feedback as fb
from pi_app.referee.feed import Phase
from pi_app.tournament import director

TRANSLATED = [lang for lang in i18n.LANGUAGES if lang != i18n.SOURCE]
__all__ = ["driver"]

#: Texts a view shows as they are in every language: names of people, boards, games and
#: events, moves in the games' notation, numbers, file names, abbreviations.
AS_IS = re.compile(r"^(?:[\d\s.,:;()·\u2013\u2014\-+/#%|←→◀▶●○]*|Ana|Ben|Caro|Dan|table-\d|t\d|cup|"
                   r"Tiki Topple|TacTiki|Tiki \(Manami island\)|English|Nederlands|Français|"
                   r"Italiano|tikiboard|[a-z]+\.(?:csv|json)|Bh|Bh-1|SB|PIN|menu|MQTT.*|"
                   r"up\d \w+|\w+ \(\d\)(?: \u2013 \w+ \(\d\))*|\d+\u2013\d+|JSON|Wi-Fi.*|"
                   r"table-\d · cup|card|s\d|.* board: .*|lyon-open|a report)$")
"""(``.* board: .*`` is the picture's label, the board's title from its geometry file; ``card``
and ``s1``... its cells' names: data, as the board files name them.)"""


class _Texts(HTMLParser):
    """The words of a page as a reader meets them: text nodes, and the placeholders,
    tooltips and labels of its controls (scripts and styles left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name in ("placeholder", "title", "aria-label") and value:
                self.found.append(value.strip())

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.found.append(" ".join(data.split()))


def texts(html: str) -> list[str]:
    parser = _Texts()
    parser.feed(html)
    return parser.found


def english_left(english: list[str], other: list[str], lang: str) -> list[str]:
    """The English texts still in the ``lang`` rendering: names and data aside, and words
    the language's catalog says alike (Dutch "live", French "question")."""
    seen, ids, said = set(other), _catalog_ids(), i18n.translator(lang).gettext
    return sorted({t for t in english if t in seen and not AS_IS.match(t)
                   and re.search(r"[A-Za-z]{2}", t) and not (t in ids and said(t) == t)
                   and not ALIKE.get(lang, re.compile("^$")).match(t)})


#: Texts with values that a language says as English does ("Table {number}" in French).
ALIKE = {"fr": re.compile(r"^Table \d+$")}


def _catalog_ids() -> set[str]:
    with open(Path(i18n.LOCALE_DIR) / f"{i18n.DOMAIN}.pot", "rb") as fh:
        return {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(fh) if m.id}


# -- the dashboard's page of one board -----------------------------------------------------------
def _message(leaf: str, payload: JSON, board: str = "table-1") -> Incoming:
    return Incoming(topics.topic("cup", board, leaf), topics.encode(payload), 0, 1, 1,
                    time.time())


def _events() -> list[JSON]:
    kinds: list[tuple[str, JSON]] = [
        ("move", {"player": 0, "text": "up1 Nani"}), ("move", {"player": 1, "text": "up2 Huhu"}),
        ("revise", {"replaced": "up2 Huhu", "text": "up3 Huhu"}), ("takeback", {"plies": 1}),
        ("prompt", {"kind": "ambiguous", "options": ["up1 Nani", "topple Kapu"]}),
        ("mismatch", {"fixes": ["put Nani on s3"]}), ("in_sync", {}),
        ("fault", {"source": "reader", "index": 3, "detail": "no reply"}),
        ("fault", {"source": "reader", "index": 3, "ok": True}),
        ("result", {"winners": [1], "scores": [5, 9]}),
    ]
    return [{"id": n, "game_id": 1, "seq": n, "t": time.time(), "kind": kind, "data": data}
            for n, (kind, data) in enumerate(kinds, start=1)]


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[ServerThread]:
    desk = Desk(Ledger(tmp_path / "ref.sqlite"), "cup", boards=("table-2",))
    users = {"alice": hash_password("correct horse", iterations=1000)}
    server = ServerThread(create_dashboard_app(desk, users=users, secret=b"k" * 32)).start()
    state = {"board": "table-1", "status": "over", "seq": 10, "game": "topple", "game_id": 1,
             "title": "Tiki Topple", "players": ["Ana", ""], "scores": [5, 9], "winners": [1],
             "to_move": None, "moves": ["up1 Nani"], "guidance": []}
    messages = [_message("game", {"game_id": 1, "game": "topple", "setup": {},
                                  "players": ["Ana", ""]}),
                *(_message("events", topics.event_payload("table-1", e)) for e in _events()),
                _message("state", state), _message("status", {"online": True})]
    server.call(lambda: desk.receive_all(messages))
    server.app_desk = desk  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        server.stop()
        desk.ledger.close()


def _page(server: ServerThread, path: str) -> str:
    reply = request(server.port, "GET", path)
    assert reply.status == 200, (path, reply.status)
    return str(reply.text)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_board_page_speaks_the_viewers_language(dashboard: ServerThread,
                                                    lang: str) -> None:
    english = texts(_page(dashboard, "/board/table-1?lang=en"))
    other = _page(dashboard, f"/board/table-1?lang={lang}")
    assert f'<html lang="{lang}">' in other
    assert "Events" in english and "to confirm: player 2 won 5\u20139" in english
    assert english_left(english, texts(other), lang) == []
    # the live data the page's script asks for is said in the same language
    said = request(dashboard.port, "GET", f"/api/board/table-1?lang={lang}").json()
    words = i18n.translator(lang).gettext
    assert said["last_result"]["text"].startswith(words("to confirm: {result}")[:6])
    lines = [e["line"].split(" ", 1)[1] for e in said["events_tail"]]
    assert words("new round dealt") not in lines  # (no deal in this log)
    assert any(line.startswith(words("move {number}: {move}").split("{")[0]) for line in lines)


@pytest.mark.realtime
def test_in_the_browser_the_board_page_stays_in_its_language(dashboard: ServerThread,
                                                             driver: Any) -> None:
    """The page's script redraws from the live stream in the page's language: a new event
    arrives as a French line, the badge and the feed stay French."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(dashboard.url + "/board/table-1?lang=fr")
    wait = WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException,))
    wait.until(lambda d: d.find_element(By.ID, "status").text == "partie finie")
    event = {"id": 11, "game_id": 1, "seq": 11, "t": time.time(), "kind": "deal", "data": {}}
    desk = dashboard.app_desk  # type: ignore[attr-defined]
    dashboard.call(lambda: desk.receive_all(
        [_message("events", topics.event_payload("table-1", event))]))
    wait.until(lambda d: "nouvelle manche distribuée" in d.find_element(By.ID, "events").text)
    assert "new round" not in driver.find_element(By.ID, "events").text
    assert driver.find_element(By.ID, "status").text == "partie finie"
    assert driver.find_element(By.ID, "feed").text in ("en direct", "")


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_login_page_speaks_the_viewers_language(dashboard: ServerThread, lang: str) -> None:
    english = texts(_page(dashboard, "/login?lang=en"))
    assert "Log in" in english
    assert english_left(english, texts(_page(dashboard, f"/login?lang={lang}")), lang) == []
    wrong = request(dashboard.port, "POST", "/login", "username=bob&password=nope",
                    {"Content-Type": "application/x-www-form-urlencoded",
                     "Accept-Language": lang})
    said = i18n.translator(lang).gettext("Wrong name or password.")
    assert wrong.status == 401 and said in wrong.text and said != "Wrong name or password."


def test_the_overview_says_results_in_the_viewers_language(dashboard: ServerThread) -> None:
    italian = _page(dashboard, "/?lang=it")
    assert "da confermare: vittoria di giocatore 2 5\u20139" in italian
    assert "to confirm" not in italian
    assert "to confirm: player 2 won 5\u20139" in _page(dashboard, "/?lang=en")


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_event_line_is_said_in_every_language(lang: str) -> None:
    words = i18n.translator(lang)
    for event in _events() + [{"kind": k, "data": {}} for k in ("deal", "cards", "setup_read",
                                                              "follow_up")]:
        english = event_words(str(event["kind"]), event["data"], ["Ana"], 3)
        said = event_words(str(event["kind"]), event["data"], ["Ana"], 3, words=words)
        assert said != english, (lang, english)


# -- the tournament page -------------------------------------------------------------------------
def _tournament() -> Any:
    t = director.new_tournament("lyon-open", "manami", seed=1)
    for name in ("Ana", "Ben", "Caro", "Dan"):
        t = director.add_player(t, name, None)
    t = director.pair_next_round(t)
    t = director.assign_boards(t, {1: "table-1"}, 1)
    t = director.set_withdrawn(t, t.players[3].id, True)
    return t


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("referee", [False, True])
def test_the_tournament_page_in_every_language(lang: str, referee: bool) -> None:
    t = _tournament()

    def page(language: str) -> str:
        return live_html(t, boards=["table-1", "table-2"], notices=["a report"],
                         referee=referee, event="lyon-open", lang=language)

    english = texts(page("en"))
    assert "Standings" in english and "no board" in english
    assert english_left(english, texts(page(lang)), lang) == []
    empty = texts(live_html(None, boards=[], notices=[], referee=referee, event="cup"))
    assert english_left(empty, texts(live_html(None, boards=[], notices=[], referee=referee,
                                               event="cup", lang=lang)), lang) == []


def test_the_tournament_rows_keep_their_english_status_for_scripts() -> None:
    html = live_html(_tournament(), boards=["table-1"], notices=[], referee=False,
                     event="lyon-open", lang="fr")
    assert 'data-status="playing"' in html and "<td>en cours</td>" in html


# -- the first-boot set-up -----------------------------------------------------------------------
@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_set_up_form_in_every_language(lang: str) -> None:
    from pi_app.net.setup_pages import form_page

    values = {"board": "table-1", "game": "topple", "language": "en", "count": "2"}
    english = texts(form_page(values, ("topple",), error="x"))
    other = form_page(values, ("topple",), error="x", lang=lang)
    assert "Set up this station" in english
    assert english_left(english, texts(other), lang) == []
    assert '<option value="en" lang="en" selected>English</option>' in other  # the station's


def test_the_set_up_pages_follow_the_readers_language(tmp_path: Path) -> None:
    from starlette.applications import Starlette

    from pi_app.net.setup_app import setup_routes
    from pi_app.referee.firstboot import load_for_run

    _config, setup = load_for_run(tmp_path / "t.toml", first_boot=True)
    server = ServerThread(Starlette(routes=setup_routes(setup))).start()
    try:
        form = request(server.port, "GET", "/setup", headers={"Accept-Language": "it-IT,it"})
        wrong = request(server.port, "POST", "/setup", "code=000000&board=t1&lang=nl",
                        {"Content-Type": "application/x-www-form-urlencoded",
                         "Accept-Language": "fr"})
    finally:
        server.stop()
    assert '<html lang="it">' in form.text and "Configura questa stazione" in form.text
    assert '<input type="hidden" name="lang" value="it">' in form.text  # read in Italian
    assert wrong.status == 403 and "Verkeerde instelcode" in wrong.text  # the form's own


# -- the demo ------------------------------------------------------------------------------------
@pytest.fixture
def station_in(tmp_path: Path) -> Any:
    from pi_app.board.equipment import registry_for
    from pi_app.referee.config import parse_config
    from pi_app.referee.station import Station
    from pi_app.referee.store import EventStore

    def make(lang: str) -> Station:
        config = parse_config({"station": {"language": lang, "game": "tactiki", "seed": 1,
                                           "data_dir": str(tmp_path / lang)}})
        return Station(config, EventStore(tmp_path / f"{lang}.db"), registry_for("tactiki"),
                       clock=lambda: 0.0)
    return make


def _demo_words(station: Any) -> list[str]:
    import io

    from pi_app.demo import _summary, frame_lines, legend

    stats = SimpleNamespace(moves=3, illegal=1, takebacks=0)
    hands = SimpleNamespace(players=SimpleNamespace(stats=stats))
    out = io.StringIO()
    station.session.state = station.session.state._replace(winner=1)
    _summary(station, hands, out)  # type: ignore[arg-type]
    lines = frame_lines(station, hands.players, False, "t")
    lines += legend(station, False)
    lines += out.getvalue().splitlines()[-1:]  # the engine's description above stays English
    return [part.strip() for line in lines for part in re.split(r"[·○●▕]", line)
            if part.strip()]


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_demo_speaks_the_stations_language(station_in: Any, lang: str) -> None:
    english = _demo_words(station_in("en"))
    other = _demo_words(station_in(lang))
    assert any(line.startswith("result: Player 2 won; scores") for line in english)
    assert "still differs" in english
    left = english_left([t for t in english if not t.startswith("⠀")], other, lang)
    assert left == []
    words = i18n.translator(lang).gettext
    assert words("Player {number}").format(number=2) in " ".join(other)
    from pi_app.demo import demo_title

    def title(language: str) -> list[str]:
        return demo_title("topple", 4, 4.0, vs_bot="greedy", lang=language).split(" · ")

    assert title("en") == ["tikiboard demo", "topple", "seed 4", "speed 4",
                           "Player 2 is the station (greedy)"]
    assert english_left(title("en")[3:], title(lang), lang) == []  # (Dutch says "seed" too)


# -- the station's messages with values ----------------------------------------------------------
MESSAGES = (Said.gettext("resumed game {number}", number=12),
            Said.ngettext("took back {count} move", "took back {count} moves", 1),
            Said.ngettext("took back {count} move", "took back {count} moves", 3),
            Said.gettext("{name}: tap your Secret Tiki card on the pad", name="P1"),
            Said.gettext("Station: {move}", move="up1 Nani"),
            Said.gettext("Hint: {move}", move="up1 Nani"))


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_the_station_messages_with_values_are_said_in_the_screens_language(
        monkeypatch: pytest.MonkeyPatch, lang: str) -> None:
    from test_i18n import _render

    for message in MESSAGES:
        said = message.in_language(lang)
        assert lang == i18n.SOURCE or said != message or \
            (lang, message.msgid) == ("nl", "Station: {move}"), (lang, message)
        assert str(message.values.get("name", message.values.get("move", ""))) in said
        assert len(fb.wrap(said, fb.SIZE[0])) <= 2, (lang, said)
        scene = fb.Scene(phase=Phase.SETUP, game="topple", board="table-7", message=message)
        missing, cut, drawn = _render(monkeypatch, lang, scene)
        assert missing == [] and cut == [], (lang, message, missing, cut)
        shown = " ".join(words for _x, _y, words, _s in drawn)
        assert said.split()[-1] in shown, (lang, said, shown)
    assert MESSAGES[2] == "took back 3 moves"  # English screens and logs read it as it was
    assert replace(fb.Scene(), message=MESSAGES[1]).message == "took back 1 move"


# -- the games' names as each edition prints them (docs/rules-sources.md §6) ---------------------
def test_the_edition_titles_are_the_engines_titles() -> None:
    from pi_app.games import GAME_NAMES, get_game

    assert set(i18n.EDITION_TITLES) <= {get_game(name).title for name in GAME_NAMES}


@pytest.mark.parametrize(("lang", "title"), [("fr", "Tiki (île de Manami)"),
                                             ("nl", "Tiki (eiland Manami)"),
                                             ("it", "Tiki (isola Manami)"),
                                             ("en", "Tiki (Manami island)")])
def test_manami_is_named_as_its_edition_in_each_language(
        monkeypatch: pytest.MonkeyPatch, lang: str, title: str) -> None:
    from test_i18n import _render

    from pi_app.net import pages
    from pi_app.net.setup_pages import form_page

    gettext = i18n.translator(lang).gettext
    assert i18n.game_title("Tiki (Manami island)", gettext) == title
    assert i18n.game_title("Tiki Topple", gettext) == "Tiki Topple"  # printed alike
    words = pages.page_words(gettext)
    assert pages.title_words({"title": "Tiki (Manami island)"}, words) == title
    assert words["title:Tiki (Manami island)"] == title  # the page's script says it too
    assert pages.board_words(gettext)["title:Tiki (Manami island)"] == title
    assert f">{title}</option>" in form_page({"game": "manami"}, ("manami",), lang=lang)
    t = director.new_tournament("cup", "manami")
    assert f"<p>{title} · " in live_html(t, boards=[], notices=[], referee=False,
                                         event="cup", lang=lang)
    scene = fb.Scene(phase=Phase.MENU, game="manami", board="t1", language=lang)
    missing, _cut, drawn = _render(monkeypatch, lang, scene)
    assert missing == [] and title in [words for _x, _y, words, _s in drawn]


@pytest.mark.parametrize(("answers", "field", "french"), [
    ({"pin": ""}, "pin", "Code PIN : nécessaire pour les actions de la page"),
    ({"count": "two"}, "count", "Nombre de joueurs : un nombre entier, pas 'two'"),
    ({"ssid": "", "passphrase": "secret99"}, "ssid", "Réseau Wi-Fi : le nom du réseau"),
    ({"game": "chess"}, "game", "Jeu : ce plateau est fait pour Tiki Topple"),
])
def test_the_set_up_says_what_is_wrong_in_the_readers_language(
        tmp_path: Path, answers: dict[str, str], field: str, french: str) -> None:
    from pi_app.referee.firstboot import SetupError, load_for_run

    _config, setup = load_for_run(tmp_path / "t.toml", first_boot=True)
    assert setup is not None
    form = {"board": "t1", "game": "topple", "pin": "246810", "count": "2", **answers}
    with pytest.raises(SetupError) as refused:
        setup.answers_to_toml(form)
    assert refused.value.field == field
    assert refused.value.words("fr").startswith(french)
    assert refused.value.words("en") == str(refused.value)  # logs and English stay as they were
    for lang in TRANSLATED:
        assert refused.value.words(lang) != str(refused.value), lang


# -- the station page's refusals -----------------------------------------------------------------
def test_the_station_page_refuses_in_the_viewers_language() -> None:
    """An action the station refuses, and a missing PIN, answered in the page's language
    (its script sends ?lang=); the API without one answers in the station's."""
    from pi_app.net.web import create_station_app
    from pi_app.referee.feed import ActionError, StationFeed

    feed = StationFeed("table-9")
    feed.update({"board": "table-9", "status": "playing", "seq": 1, "game": "topple"})

    async def undo() -> JSON:
        raise ActionError(Said.gettext("nothing to take back"))

    feed.handle("undo", undo)
    server = ServerThread(create_station_app(feed, token="246810", language="nl")).start()
    pin = {"Authorization": "Bearer 246810"}
    try:
        french = request(server.port, "POST", "/api/action/undo?lang=fr", {}, pin)
        station = request(server.port, "POST", "/api/action/undo", {}, pin)
        no_pin = request(server.port, "POST", "/api/action/undo?lang=it", {})
    finally:
        server.stop()
    assert (french.status, french.json()["error"]) == (409, "rien à annuler")
    assert station.json()["error"] == "niets om terug te nemen"
    assert no_pin.json()["error"] == "questa azione richiede il PIN della stazione"
    assert str(ActionError(Said.gettext("nothing to take back"))) == "nothing to take back"
