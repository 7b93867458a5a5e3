"""The languages people read at the table: English, Dutch, French and Italian, by gettext.

English is the source language: the strings in the code are the English texts, and
``pi_app/locale/<lang>/LC_MESSAGES/tikiboard.po`` hold the translations, compiled to the
``.mo`` files the package ships (``pi_app/locale/README.md`` has the Babel commands). Only the
standard library's :mod:`gettext` runs on the station; Babel is a tool for whoever edits the
catalogs.

There is no global language: a station screen is drawn in its station's language
(``[station] language``) and a page in its viewer's (``?lang=``, then ``Accept-Language``), so
each caller asks :func:`translator` for the language it serves and calls that object's
``gettext``. Code that defines texts before knowing who reads them marks them with
:func:`N_` and translates them where they are shown.
"""

from __future__ import annotations

import gettext
from collections.abc import Callable
from functools import cache
from pathlib import Path

DOMAIN = "tikiboard"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
#: The languages the station speaks; the first is the source language.
LANGUAGES = ("en", "nl", "fr", "it")
#: Each language in its own words, for a language menu.
LANGUAGE_NAMES = {"en": "English", "nl": "Nederlands", "fr": "Français", "it": "Italiano"}
SOURCE = "en"


def N_(message: str) -> str:  # noqa: N802 (gettext's own name for it)
    """Mark ``message`` for extraction without translating it yet: it is translated where it
    is shown, in the reader's language."""
    return message


#: The game titles that an edition prints otherwise in some language (docs/rules-sources.md
#: §6): each English title is its own catalog id, translated to that edition's name. A title
#: that every edition prints alike is not here and never looked up.
EDITION_TITLES = (N_("Tiki (Manami island)"),)


def game_title(english: str, gettext_: Callable[[str], str]) -> str:
    """A game's title (its engine's ``title``) as the reader's edition prints it."""
    return gettext_(english) if english in EDITION_TITLES else english


class Said(str):
    """A text with values, made where the reader is not known yet: it *is* the English text
    (so logs, tests and English screens read it as a plain ``str``) and keeps its catalog id
    and values, so :meth:`say` gives it in the reader's language with the values put in.

    Made with :meth:`gettext` or :meth:`ngettext` (the names ``pybabel extract`` knows, so the
    ids reach the catalogs): ``Said.gettext("{name}: tap your card", name=who)``."""

    msgid: str
    plural: str | None
    n: int
    values: dict[str, object]

    def __new__(cls, msgid: str, plural: str | None = None, n: int = 1, /,
                **values: object) -> Said:
        english = msgid if plural is None or n == 1 else plural
        said = super().__new__(cls, english.format(**values))
        said.msgid, said.plural, said.n, said.values = msgid, plural, n, values
        return said

    @classmethod
    def gettext(cls, msgid: str, **values: object) -> Said:
        """``msgid`` with ``values``, to be said in the reader's language."""
        return cls(msgid, None, 1, **values)

    @classmethod
    def ngettext(cls, singular: str, plural: str, count: int, **values: object) -> Said:
        """The text for ``count`` (the language's plural rule picks the form where shown);
        ``{count}`` in the text is ``count`` unless ``values`` name it otherwise."""
        return cls(singular, plural, count, **{"count": count, **values})

    def say(self, gettext_: Callable[[str], str],
            ngettext_: Callable[[str, str, int], str]) -> str:
        """This text through a language's ``gettext`` and ``ngettext``."""
        text = gettext_(self.msgid) if self.plural is None else \
            ngettext_(self.msgid, self.plural, self.n)
        values = {key: value.say(gettext_, ngettext_) if isinstance(value, Said) else value
                  for key, value in self.values.items()}  # a value may be a text to say too
        return text.format(**values)

    def in_language(self, lang: str) -> str:
        """This text in ``lang``."""
        words = translator(lang)
        return self.say(words.gettext, words.ngettext)


@cache
def translator(lang: str) -> gettext.NullTranslations:
    """The translations for ``lang`` (one of :data:`LANGUAGES`); English, or a language the
    station does not have, gets the source texts unchanged. A missing catalog falls back to
    English rather than stopping the station (the tests check that every one is shipped)."""
    if lang == SOURCE or lang not in LANGUAGES:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


def choose(accept_language: str | None, asked: str | None = None,
           default: str = SOURCE) -> str:
    """The language to show a page in: ``asked`` (the page's ``?lang=``) when the station has
    it, else the best of the browser's ``Accept-Language`` (q-values honoured, ``fr-BE`` counts
    as ``fr``, ``q=0`` means "not this one"), else ``default`` (the station's language)."""
    if asked in LANGUAGES:
        return asked
    ranked: list[tuple[float, int, str]] = []
    for order, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        lang = tag.strip().lower().split("-")[0]
        if lang == "*":
            lang = default
        if q > 0 and lang in LANGUAGES:
            ranked.append((-q, order, lang))
    return min(ranked)[2] if ranked else (default if default in LANGUAGES else SOURCE)


def said_of(exc: BaseException) -> str:
    """An error's message as it was made: the :class:`Said` when the code gave it one (the
    rules engines' reasons, the station's refusals), so it can still be said in the reader's
    language; else the error's text as it is."""
    said = exc.args[0] if len(exc.args) == 1 else None
    return said if isinstance(said, Said) else str(exc)


def in_language(text: str, lang: str) -> str:
    """``text`` in ``lang`` when it is a :class:`Said`; any other text (a file name, a reason
    no catalog has) as it is."""
    return text.in_language(lang) if isinstance(text, Said) else text
