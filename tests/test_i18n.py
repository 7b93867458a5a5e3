"""The translations: the catalogs are complete and current, and every OLED screen in every
language has all its words translated and fits the 128x64 screen.

The catalogs are checked against Babel's own extraction and compilation (the same commands
``pi_app/locale/README.md`` gives), run into a temporary directory: a text added to the code
and not extracted, a translation left empty, or a ``.po`` edited without recompiling its
``.mo`` fails here, not at a table in Lyon.
"""

from __future__ import annotations

import gettext
import io
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from pi_app import i18n
from pi_app.board.fixes import Fix
from pi_app.board.follower import GuidanceKind, Prompt, PromptKind
from pi_app.referee import feedback as fb
from pi_app.referee.feed import Phase
from pi_app.referee.feedback import Scene
from tools import render_docs

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "pi_app" / "locale"
TRANSLATED = [lang for lang in i18n.LANGUAGES if lang != i18n.SOURCE]


def _po(lang: str) -> Catalog:
    with open(LOCALE / lang / "LC_MESSAGES" / f"{i18n.DOMAIN}.po", "rb") as fh:
        return read_po(fh, locale=lang)


def _source_ids() -> set[str]:
    """Every text the code marks for translation, as ``pybabel extract -F babel.cfg -k N_``
    finds them."""
    method_map = [("pi_app/**.py", "python")]
    keywords = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None}
    found = extract_from_dir(str(ROOT), method_map, keywords=keywords)
    ids: set[str] = set()
    for _filename, _line, message, _comments, _context in found:
        ids.update([message] if isinstance(message, str) else [m for m in message if m])
    return ids


def _parts(value: Any) -> list[str]:
    """A catalog entry's id or translation as texts (a plural one has several)."""
    return [str(v) for v in value] if isinstance(value, (tuple, list)) else [str(value)]


def test_the_template_holds_exactly_the_texts_of_the_code() -> None:
    with open(LOCALE / f"{i18n.DOMAIN}.pot", "rb") as fh:
        template = {part for m in read_po(fh) if m.id for part in _parts(m.id)}
    source = _source_ids()
    assert source - template == set(), "texts not extracted: run pybabel extract (README)"
    assert template - source == set(), "texts no longer in the code: run pybabel extract"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_text_is_translated(lang: str) -> None:
    catalog = _po(lang)
    ids = _source_ids()
    translated: dict[str, list[str]] = {}
    for m in catalog:
        for part in _parts(m.id) if m.id else []:
            translated[part] = _parts(m.string)
    assert sorted(ids - set(translated)) == [], f"{lang}: run pybabel update (README)"
    empty = sorted(m for m in ids if not all(translated[m]))
    fuzzy = sorted(str(m.id) for m in catalog if m.id and m.fuzzy)
    assert empty == [] and fuzzy == [], f"{lang}: untranslated {empty}, fuzzy {fuzzy}"
    for msgid in ids:  # the same placeholders, or .format() fails at the table
        for text in translated[msgid]:
            assert _fields(text) == _fields(msgid), (lang, msgid)


def _fields(text: str) -> set[str]:
    import string

    return {f for _lit, f, _spec, _conv in string.Formatter().parse(text) if f is not None}


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_shipped_mo_is_compiled_from_the_po(lang: str) -> None:
    buffer = io.BytesIO()
    write_mo(buffer, _po(lang))
    shipped = LOCALE / lang / "LC_MESSAGES" / f"{i18n.DOMAIN}.mo"
    assert shipped.read_bytes() == buffer.getvalue(), f"{lang}: run pybabel compile (README)"


def test_the_station_finds_its_catalogs() -> None:
    assert i18n.translator("fr").gettext("Game over") == "Partie finie"
    assert i18n.translator("it").gettext("Game over") == "Fine partita"
    assert i18n.translator("nl").gettext("Game over") == "Einde spel"
    assert i18n.translator("en").gettext("Game over") == "Game over"
    assert i18n.translator("xx").gettext("Game over") == "Game over"


@pytest.mark.parametrize(("header", "asked", "default", "expected"), [
    ("fr-BE,fr;q=0.9", None, "en", "fr"),
    ("de-DE,de;q=0.9,it;q=0.5,nl;q=0.6", None, "en", "nl"),
    ("en;q=0.2, it", None, "nl", "it"),
    ("fr;q=0, nl;q=0.1", None, "en", "nl"),
    ("de", None, "it", "it"),
    ("", None, "fr", "fr"),
    (None, None, "nl", "nl"),
    ("*", None, "fr", "fr"),
    ("fr;q=abc, it;q=0.5", None, "en", "it"),
    ("fr", "nl", "en", "nl"),
    ("fr", "xx", "en", "fr"),
])
def test_the_page_language_follows_the_viewer(header: str | None, asked: str | None,
                                              default: str, expected: str) -> None:
    assert i18n.choose(header, asked, default) == expected


# -- every screen in every language --------------------------------------------------------------
#: Screens and states that render_docs.SCREENS does not show: the rest of each screen's words.
EXTRA_SCREENS: dict[str, Scene] = {
    "firstboot": Scene(phase=Phase.MENU, setup_code="482913", setup_url="http://192.168.1.20/setup",
                       setup_qr="http://192.168.1.20/setup?code=482913"),
    "store-damaged": Scene(store_damaged="the database file is not a database; 12 games kept"),
    "store-damaged-sure": Scene(store_damaged="the database file is not a database",
                                confirming=True),
    "menu-plain": Scene(phase=Phase.MENU, game="manami", board="table-5"),
    "over-page": Scene(phase=Phase.OVER, game="topple", board="table-7", scores=(3, 3),
                       winners=(0, 1), page_url="http://192.168.1.20:8080/",
                       menu_game="topple", menu_players=2),
    "over-none": Scene(phase=Phase.OVER, game="tactiki", board="table-3", winners=()),
    "play-wait": Scene(phase=Phase.PLAY, game="topple", board="table-7"),
    "setup-empty": Scene(phase=Phase.SETUP, game="topple", board="table-7"),
    "takeback-plain": Scene(phase=Phase.PLAY, game="topple", board="table-7",
                            takeback=("s3", "s4")),
    "prompt-other": Scene(phase=Phase.PROMPT, game="topple", to_move=1,
                          prompt=Prompt(0.0, PromptKind.DRAW, (), 0)),
    "order-more": Scene(phase=Phase.SETUP, game="tactiki", board="table-3",
                        prompt=Prompt(0.0, PromptKind.ORDER, ("b1", "d5", "e2"))),
    "guidance-moves": Scene(phase=Phase.PLAY, game="topple", board="table-7", to_move=0,
                            guidance_kind=GuidanceKind.MISMATCH,
                            fixes=(Fix("remove", "Kapu", "s2"), Fix("place", "Nui", "s3"))),
    "error-plain": Scene(phase=Phase.ERROR, board="table-7"),
}
ALL_SCREENS = {**render_docs.SCREENS, **EXTRA_SCREENS}


class _Recorder:
    """Wraps a language's translations and records every text a screen asks for that its
    catalog does not have (English: that the template does not have)."""

    def __init__(self, lang: str, known: set[str]) -> None:
        self.inner = i18n.translator(lang)
        self.known = known
        self.missing: list[str] = []

    def gettext(self, message: str) -> str:
        if message not in self.known:
            self.missing.append(message)
        return self.inner.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        if singular not in self.known:
            self.missing.append(singular)
        return self.inner.ngettext(singular, plural, n)


def _known(lang: str) -> set[str]:
    if lang == i18n.SOURCE:
        with open(LOCALE / f"{i18n.DOMAIN}.pot", "rb") as fh:
            return {_parts(m.id)[0] for m in read_po(fh) if m.id}
    inner = i18n.translator(lang)
    assert isinstance(inner, gettext.GNUTranslations), f"no catalog shipped for {lang}"
    keys = inner._catalog  # type: ignore[attr-defined]
    return {k[0] if isinstance(k, tuple) else k for k in keys if k and k != ("", 0)}


def _render(monkeypatch: pytest.MonkeyPatch, lang: str,
            scene: Scene) -> tuple[list[str], list[str], list[tuple[int, int, str, int]]]:
    """Draw ``scene`` in ``lang``; returns the untranslated texts, the texts ``fit`` had to
    cut, and every text drawn with its place and scale."""
    recorder = _Recorder(lang, _known(lang))
    monkeypatch.setattr(fb, "translator", lambda _lang: recorder)
    cut: list[str] = []
    real_fit = fb.fit

    def fit(text: str, width: int, scale: int = 1) -> str:
        out = real_fit(text, width, scale)
        if out != fb.printable(text):
            cut.append(text)
        return out

    drawn: list[tuple[int, int, str, int]] = []
    real_text = fb._Canvas.text

    def text(self: Any, x: int, y: int, words: str, scale: int = 1, fill: int = 1) -> int:
        drawn.append((x, y, words, scale))
        width: int = real_text(self, x, y, words, scale, fill)
        return width

    monkeypatch.setattr(fb, "fit", fit)
    monkeypatch.setattr(fb._Canvas, "text", text)
    fb.screen(replace(scene, language=lang))
    monkeypatch.undo()
    return recorder.missing, cut, drawn


def _screens() -> Iterator[tuple[str, str]]:
    for name in ALL_SCREENS:
        for lang in i18n.LANGUAGES:
            yield name, lang


@pytest.mark.parametrize(("name", "lang"), list(_screens()))
def test_every_screen_in_every_language(monkeypatch: pytest.MonkeyPatch, name: str,
                                        lang: str) -> None:
    """"Overflow", precisely: a text the screen cuts to fit (``fit`` ending it in ``..``) that
    English does not cut (so a translation, not a long name or path from the scene, made it
    too long); or ink drawn outside 128x64, including a capital's accent above the line or in
    the header bar. A button legend too wide raises in the screen itself."""
    scene = ALL_SCREENS[name]
    missing, cut, drawn = _render(monkeypatch, lang, scene)
    assert missing == [], f"{name} in {lang}: not in the catalog: {missing}"
    _, english_cut, _ = _render(monkeypatch, i18n.SOURCE, scene)
    assert [t for t in cut if t not in english_cut] == [], f"{name} in {lang}: cut"
    width, height = fb.SIZE
    for x, y, words, scale in drawn:
        right = x + fb.text_width(words, scale)
        assert x >= 0 and right <= width and y + fb.INK_H * scale <= height, (name, lang, words)
        accents = fb.accent_mask(words, scale)
        if accents is not None:
            top = y - fb.INK_TOP * scale + accents.getbbox()[1]  # type: ignore[index]
            assert top >= 0, f"{name} in {lang}: the accent of {words!r} is off the screen"
            assert y <= fb._BAR_BOTTOM or top > fb._BAR_BOTTOM, \
                f"{name} in {lang}: the accent of {words!r} is lost in the header bar"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_font_draws_every_letter_of_every_translation(lang: str) -> None:
    """Every character of every translation is in the OLED font (Latin-1: no ``?`` in its
    place), and the accents of capitals show (drawn above the line, not cropped away)."""
    for message in _po(lang):
        if not message.id:
            continue
        for text in _parts(message.string):
            assert fb.printable(text).count("?") == text.count("?"), (lang, text)
    capital = fb.accent_mask("À")
    assert capital is not None and capital.getbbox() is not None
    assert fb.accent_mask("A") is None


def test_english_screens_are_drawn_from_the_source_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The language really reaches the screen: the same scene in French is not the English
    picture, and shows the French words."""
    scene = render_docs.SCREENS["over"]
    _, _, drawn = _render(monkeypatch, "fr", scene)
    assert any("Partie finie" in words for _x, _y, words, _s in drawn)
    assert fb.screen(scene).tobytes() != fb.screen(replace(scene, language="fr")).tobytes()


# -- the station's language ----------------------------------------------------------------------
def test_the_configured_language_reaches_the_station_screen(tmp_path: Path) -> None:
    from pi_app.board.equipment import registry_for
    from pi_app.referee.config import ConfigError, parse_config
    from pi_app.referee.station import Station
    from pi_app.referee.store import EventStore

    with pytest.raises(ConfigError, match="language"):
        parse_config({"station": {"language": "de"}})
    config = parse_config({"station": {"language": "it", "game": "topple", "seed": 1,
                                       "topple_cards": "deal", "data_dir": str(tmp_path)}})
    assert config.station.language == "it"
    station = Station(config, EventStore(tmp_path / "tikiboard.db"), registry_for("topple"),
                      clock=lambda: 0.0)
    scene = station.scene(0.0)
    assert scene.language == "it"
    english = fb.screen(replace(scene, language="en"))
    assert fb.screen(scene).tobytes() != english.tobytes()


def test_the_first_boot_set_up_chooses_the_language(tmp_path: Path) -> None:
    from pi_app.net.setup_pages import form_page
    from pi_app.referee.config import load_config
    from pi_app.referee.firstboot import SetupError, load_for_run

    config, setup = load_for_run(tmp_path / "t.toml", first_boot=True)
    assert setup is not None
    answers = {"board": "Table-7", "game": setup.games[0], "pin": "246810", "count": "2"}
    page = form_page({**setup.defaults(), "language": "it"}, setup.games)
    assert '<option value="it" lang="it" selected>Italiano</option>' in page
    assert '<option value="fr" lang="fr">Français</option>' in page
    text, written = setup.answers_to_toml({**answers, "language": "fr"})
    assert written.station.language == "fr"
    setup.write(text)
    assert load_config(setup.path).station.language == "fr"
    _, kept = setup.answers_to_toml(answers)  # not asked: the station's own stays
    assert kept.station.language == config.station.language
    with pytest.raises(SetupError) as refused:
        setup.answers_to_toml({**answers, "language": "de"})
    assert refused.value.field == "language"


#: The station's fixed messages (pi_app/referee/station.py marks them with N_): the set-up
#: screen shows two lines of them, the play screen one.
STATION_MESSAGES = ("round over", "new round: set up the line", "draw agreed",
                    "Stack two pieces on each start field",
                    "set-up complete: hands off the board")


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_the_station_messages_fit_their_lines(lang: str) -> None:
    gettext_ = i18n.translator(lang).gettext
    for message in STATION_MESSAGES:
        said = gettext_(message)
        assert lang == i18n.SOURCE or said != message, (lang, message)
        assert len(fb.wrap(said, fb.SIZE[0])) <= 2, (lang, said)
        if len(message) <= 21:  # the ones the play screen shows on its last line
            assert fb.text_width(said) <= fb.SIZE[0], (lang, said)


def test_the_setup_screen_says_the_station_message_in_its_language(
        monkeypatch: pytest.MonkeyPatch) -> None:
    scene = replace(render_docs.SCREENS["setup"], fixes=())
    _, _, drawn = _render(monkeypatch, "fr", scene)
    assert "nouvelle manche :" in [words for _x, _y, words, _s in drawn]


# -- the command line's summaries ----------------------------------------------------------------
def _tikiboard(*args: str) -> str:
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "pi_app", *args], capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode in (0, 1), run.stderr
    return run.stdout


def test_the_replay_summary_speaks_the_asked_language(tmp_path: Path) -> None:
    italian = _tikiboard("examples", "--game", "manami", "--lang", "it")
    assert "punteggi: Giocatore 1: 0, Giocatore 2: 4" in italian
    assert "risultato: ha vinto Giocatore 2" in italian
    english = _tikiboard("examples", "--game", "manami")
    assert "scores: Player 1: 0, Player 2: 4" in english and "result: Player 2 won" in english
    from test_replay_cli import CARDS, LINE

    record = tmp_path / "g.tiki.json"
    record.write_text(json.dumps({
        "game": "topple", "options": {"players": 2}, "players": ["Ana", "Ben"],
        "rounds": [{"line": LINE, "cards": CARDS, "first": 0, "moves": ["up1 Nani", "fly"]}]}))
    french = _tikiboard("replay", str(record), "--lang", "fr")
    assert "scores : Ana: 0, Ben: 0" in french and "la partie continue" in french
    assert "coup illégal à " in french and ": 'fly' : " in french


def test_the_takeback_question_counts_the_moves_in_the_screens_language(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The follower words the option in English ("take back 2 move(s)"); the screen says it
    from the prompt's count, with the language's plural."""
    scene = render_docs.SCREENS["prompt-takeback"]
    for lang, plies, expected in (("fr", 1, "annuler 1 coup"), ("it", 3, "annulla 3 mosse"),
                                  ("nl", 2, "neem 2 zetten terug"),
                                  ("en", 2, "take back 2 moves")):
        assert scene.prompt is not None
        asked = replace(scene, prompt=replace(scene.prompt, plies=plies))
        _, _, drawn = _render(monkeypatch, lang, asked)
        assert expected in [words for _x, _y, words, _s in drawn], (lang, drawn)
