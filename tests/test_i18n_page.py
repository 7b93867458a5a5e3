"""The station page in its viewer's language: ``?lang=``, then the browser's
``Accept-Language`` (q-values), then the station's own language; the server-rendered words
and the page's script (through the words in the initial JSON) alike. A real server on
127.0.0.1, and headless Chromium for the script."""

from __future__ import annotations

import json
import os
import re
import urllib.request
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import (
    REFEREE,
    Broker,
    ServerThread,
    broker,
    driver,
    end_session,
    request,
    wait_for,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from pi_app.net.dashboard import DashboardConfig, build_dashboard
from pi_app.net.web import create_station_app
from pi_app.referee.feed import StationFeed

__all__ = ["broker", "driver"]

OVER = {"board": "table-9", "status": "over", "seq": 3, "game": "topple",
        "title": "Tiki Topple", "players": ["Ana", ""], "scores": [20, 20], "winners": [0, 1],
        "to_move": None, "moves": ["up1 Nani"], "guidance": []}


@pytest.fixture
def server() -> Iterator[tuple[ServerThread, StationFeed]]:
    feed = StationFeed("table-9")
    feed.update(dict(OVER))
    running = ServerThread(create_station_app(feed, token=None, language="nl")).start()
    try:
        yield running, feed
    finally:
        running.stop()


def _get(url: str, accept: str | None = None) -> tuple[str, dict[str, str]]:
    request = urllib.request.Request(url)
    if accept is not None:
        request.add_header("Accept-Language", accept)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode(), {k.lower(): v for k, v in response.headers.items()}


def _words(html: str) -> dict[str, str]:
    found = re.search(r'<script type="application/json" id="initial">(.*?)</script>', html,
                      re.S)
    assert found is not None
    words: dict[str, str] = json.loads(found.group(1))["words"]
    return words


@pytest.mark.parametrize(("accept", "query", "lang", "seen"), [
    ("fr-BE,fr;q=0.9", "", "fr", ["Parties précédentes", "Partie terminée. Victoire : Ana et "
                                  "Joueur 2.", "Nouvelle partie", "partie finie"]),
    ("fr-BE,fr;q=0.9", "?lang=it", "it", ["Partite precedenti", "Vittoria: Ana e Giocatore 2",
                                          "Nuova partita"]),
    ("de-DE,de;q=0.9,en;q=0.5", "", "en", ["Past games", "Game over: Ana and Player 2 won.",
                                           "New game"]),
    (None, "", "nl", ["Eerdere spellen", "Gewonnen: Ana en Speler 2.", "Nieuw spel"]),
])
def test_the_page_speaks_the_viewers_language(server: tuple[ServerThread, StationFeed],
                                              accept: str | None, query: str, lang: str,
                                              seen: list[str]) -> None:
    running, _feed = server
    html, headers = _get(running.url + "/" + query, accept)
    text = unescape(html)
    assert f'<html lang="{lang}">' in html
    for words in seen:
        assert words in text, (lang, words)
    assert "accept-language" in headers.get("vary", "").lower()
    assert _words(html)["past_games"] == seen[0]  # the script gets the same language


def test_the_title_says_the_rule_options_in_the_viewers_language(
        server: tuple[ServerThread, StationFeed]) -> None:
    running, feed = server
    feed.update({**OVER, "seq": 4, "options": ["6 rounds"],
                 "option_words": {"en": "6 rounds", "fr": "6 manches", "nl": "6 rondes"}})
    for query, title in (("?lang=fr", "Tiki Topple · 6 manches"),
                         ("?lang=en", "Tiki Topple · 6 rounds"),
                         ("?lang=it", "Tiki Topple · 6 rounds")):  # none in Italian: English
        html, _headers = _get(running.url + "/" + query)
        assert title in unescape(html), (query, title)


def test_the_page_offers_every_language_by_name(server: tuple[ServerThread,
                                                              StationFeed]) -> None:
    running, _feed = server
    html, _headers = _get(running.url + "/?lang=fr")
    for code, name in (("en", "English"), ("nl", "Nederlands"), ("it", "Italiano")):
        assert f'href="?lang={code}"' in html and name in html
    assert '<b lang="fr">Français</b>' in html


@pytest.mark.realtime
def test_in_the_browser_the_live_page_stays_in_its_language(
        driver: Any, server: tuple[ServerThread, StationFeed]) -> None:
    """The script redraws from the stream in the page's language, not in English."""
    running, feed = server
    driver.get(running.url + "/?lang=it")
    wait = WebDriverWait(driver, 10)
    wait.until(lambda d: d.find_element(By.ID, "waiting").text.startswith("Partita finita"))
    feed.update({**OVER, "status": "mismatch", "seq": 4, "winners": None})
    expected = "Il tabellone non corrisponde alla partita: correggilo."
    wait.until(lambda d: d.find_element(By.ID, "waiting").text == expected)
    assert driver.find_element(By.ID, "status").text == "discrepanza"
    feed.update({**OVER, "status": "playing", "seq": 5, "winners": None, "to_move": 1,
                 "options": ["6 rounds"], "option_words": {"it": "6 round", "en": "6 rounds"}})
    wait.until(lambda d: d.find_element(By.ID, "waiting").text == "Tocca a Giocatore 2.")
    wait.until(lambda d: d.find_element(By.ID, "title").text.endswith(" · 6 round"))


# -- the dashboard's public overview -------------------------------------------------------------
def test_the_feed_words_follow_the_dashboard_language() -> None:
    from pi_app.i18n import translator
    from pi_app.net.eventlog import feed_text
    from pi_app.net.pages import dashboard_words

    italian = dashboard_words(translator("it").gettext)
    assert feed_text(heard=None, online=None, behind=None, now=0.0) == "never connected"
    assert feed_text(heard=None, online=None, behind=None, now=0.0, words=italian) == \
        "mai collegato"
    assert feed_text(heard=0.0, online=False, behind=None, now=300.0, words=italian) == \
        "ultimo segnale 5 min fa"
    assert feed_text(heard=0.0, online=True, behind=9.0, now=120.0, words=italian) == \
        "9 s di ritardo · silenzio 2 min"


@pytest.mark.realtime
def test_the_dashboard_overview_speaks_the_viewers_language(broker: Broker,
                                                            tmp_path: Path) -> None:
    """A real dashboard (real broker) lists two configured boards that never spoke."""
    end_session(broker, REFEREE)
    config = DashboardConfig(event="lyon-open", db=tmp_path / "referee.sqlite",
                             broker=broker.options(REFEREE), secret=os.urandom(32),
                             boards=("t1", "t2"))
    app, desk = build_dashboard(config)
    running = ServerThread(app).start()
    try:
        wait_for(desk.ready.is_set, 10, "the dashboard's subscription")
        french = request(running.port, "GET", "/",
                         headers={"Accept-Language": "fr-BE,fr;q=0.9"})
        italian = request(running.port, "GET", "/?lang=it")
        english = request(running.port, "GET", "/", headers={"Accept-Language": "de"})
    finally:
        running.stop()
    assert '<html lang="fr">' in french.text and "2 plateaux" in french.text
    assert "<th>Dernier coup</th>" in french.text
    assert unescape(french.text).count("jamais connecté") == 2
    assert '<html lang="it">' in italian.text and "mai collegato" in italian.text
    assert "accept-language" in french.headers.get("vary", "").lower()
    assert "2 boards" in english.text and "never connected" in english.text
    assert _words(italian.text)["s_never"] == "mai collegato"
