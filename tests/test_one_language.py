"""Issue 31, item 5: one language per run. Each command a person reads (``demo``, ``export``,
``replay``, ``examples``) is run in English and with ``--lang nl|fr|it``; every word of the
translated run that the English run also says must be data: move notation, a tiki's or a
game's name, a field, a number. The demo and the replay include illegal moves, so the engines'
reasons are checked too (they once stayed English), and "Player 1" beside "Speler 1" is
caught as the word "Player" left over.

The four demos run at once (they mostly wait on the simulated hands), so the test costs one
demo's time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_app.board.fixes import FixKind
from pi_app.cli import example_record

LANGS = ("nl", "fr", "it")


def _command(*args: str) -> list[str]:
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    return [*([exe] if exe else [sys.executable, "-m", "pi_app"]), *args]


def _run(*args: str) -> str:
    run = subprocess.run(_command(*args), capture_output=True, text=True, timeout=120,
                         check=False)
    assert run.returncode in (0, 1), (args, run.stderr)  # 1: a replay stopped at an illegal move
    return run.stdout + run.stderr


#: Words both runs may say: the games' move notation and names (tikis, the TacTiki players, the
#: games, cards as printed), the command line the demo prints to deal a game again. Nothing a
#: person reads as English prose.
DATA_WORDS = {
    # Topple: its tikis, its cards as written in a record and as printed
    "nani", "kapu", "eepo", "huhu", "nui", "akamai", "lokahi", "hookipa", "wikiwiki",
    "toast", "topple", "tiki", "toastx", "topplex", "up", "upx",
    # Manami and TacTiki notation (a move is written alike in every language)
    "place", "resolve", "shaman", "stay", "pass", "reincarnate", "tac", "tikiboard", "demo",
    "game", "seed", "manami", "tactiki", "export", "replay", "lang",
    # game titles as the editions print them
    "tacTiki".lower(),
}
#: Words a language writes as English does, checked by eye in each run: Dutch "fruit", "hand",
#: "scores", "won" (past of "winnen"), "database"; French "points", "scores", "statue",
#: "village", "totem"; Italian "round" (the word its players use for a Topple round), "database".
ALIKE = {"nl": {"totem", "totems", "fruit", "hand", "scores", "won", "database"},
         "fr": {"village", "villages", "totem", "totems", "question", "points", "scores",
                "statue"},
         "it": {"totem", "round", "database"}}


def _words(text: str) -> set[str]:
    """The words of ``text`` a person reads: runs of letters (three or more), lower case, taken
    outside quotes and file paths."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|/\S+", " ", text)
    return {w.lower() for w in re.findall(r"[^\W\d_]{3,}", text)}


def english_left(english: str, other: str, lang: str) -> list[str]:
    """The English run's words that the ``lang`` run says too, data aside: each with the first
    line of the ``lang`` run that has it."""
    shared = (_words(english) & _words(other)) - DATA_WORDS - ALIKE.get(lang, set())
    return sorted(f"{w!r} in: {next(line for line in other.splitlines() if w in _words(line))}"
                  for w in shared)


def _illegal_records() -> list[dict[str, Any]]:
    """Each bundled example cut short, then a move its rules refuse (a reason with values)."""
    topple = json.loads(example_record("topple"))
    topple["rounds"] = [{**topple["rounds"][0], "moves": ["toast"]}]
    manami = json.loads(example_record("manami"))
    first = manami["moves"][0]
    assert first.startswith("place ")
    manami["moves"] = [first, first]  # a new totem on a village that is not empty
    tactiki = json.loads(example_record("tactiki"))
    tactiki["moves"] = [*tactiki["moves"][:1], "a1-a2"]  # TAC to move, a TIKI piece on a1
    return [topple, manami, tactiki]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("one-language")
    demos = {lang: subprocess.Popen(
        _command("demo", "--turns", "3", "--seed", "3", "--speed", "50", "--game", "manami",
                 "--keep", str(tmp / f"{lang}.db"), "--lang", lang),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for lang in ("en", *LANGS)}
    out: dict[str, dict[str, str]] = {}
    for lang, proc in demos.items():
        said, _ = proc.communicate(timeout=180)
        assert proc.returncode == 0, said
        out[lang] = {"demo": said}
    records = tmp / "illegal.json"
    records.write_text(json.dumps(_illegal_records()))
    for lang in ("en", *LANGS):
        flag = ("--lang", lang)
        exported = tmp / f"{lang}.json"
        out[lang]["export"] = _run("export", "--db", str(tmp / f"{lang}.db"), "--out",
                                   str(exported), *flag)
        out[lang]["replay"] = _run("replay", str(exported), *flag) + \
            _run("replay", str(records), *flag)
        out[lang]["examples"] = _run("examples", *flag)
    return out


@pytest.mark.realtime  # four demos on the simulated board
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("command", ["demo", "export", "replay", "examples"])
def test_one_language_per_run(runs: dict[str, dict[str, str]], command: str,
                              lang: str) -> None:
    english, other = runs["en"][command], runs[lang][command]
    assert english.strip() and other.strip()
    assert english_left(english, other, lang) == []


@pytest.mark.realtime
def test_the_runs_say_what_is_checked(runs: dict[str, dict[str, str]]) -> None:
    """The English runs really say what the check is for: the engines' reasons, people
    counted from 1, the demo's closing lines (so a run that printed nothing cannot pass)."""
    replay = runs["en"]["replay"]
    assert "Tiki Toast may not be played on your first turn of a round." in replay
    assert "is not empty: a new totem goes on an empty village" in replay
    assert "The top piece on a1 is TIKI's: you move only your own pieces" in replay
    assert "Player 1" in runs["en"]["examples"]
    assert "result:" in runs["en"]["demo"]
    assert "wrote 1 record" in runs["en"]["export"]
    assert "Tiki Toast" in runs["nl"]["replay"] and "eerste beurt" in runs["nl"]["replay"]


def test_the_check_finds_english() -> None:
    """The check itself: an English sentence left in a Dutch run is found, names are not."""
    english = "Player 1: 3 points\nNani is number 2 in line\n"
    assert english_left(english, "Speler 1: 3 punten\nNani staat op plaats 2\n", "nl") == []
    assert english_left(english, "Player 1: 3 punten\n", "nl") == \
        ["'player' in: Player 1: 3 punten"]


@pytest.mark.parametrize("lang", ("en", *LANGS))
@pytest.mark.parametrize("kind", ["move", "remove", "place"])
def test_guidance_names_a_token_as_people_do(lang: str, kind: FixKind) -> None:
    """A Manami token is "Player 1's token" in the guidance, never its record id ``p0``; on
    the small screen in a short form that still fits its line (21 characters)."""
    from pi_app.board.fixes import Fix, fix_words
    from pi_app.i18n import translator

    to = "c2" if kind == "move" else None
    words = fix_words(Fix(kind, "p0", "b2", to),
                      translator(lang))
    for text in (words.sentence, words.action):
        assert "p0" not in text and "1" in text, text
    assert len(words.action) <= 21, words.action
    english = fix_words(Fix(kind, "p1", "b2", to))
    assert "Player 2's token" in english.sentence and "P2's token" in english.action
    assert str(Fix(kind, "Nani", "s1", to)).count("Nani") == 1


def test_an_engines_reason_is_said_in_the_readers_language() -> None:
    """The engines raise their reasons in a form each reader's language can say, and the
    English text stays what it was (logs, tests, the rules' results unchanged)."""
    from pi_app.games import IllegalMove, get_game
    from pi_app.i18n import in_language, said_of

    game = get_game("tactiki")
    record = json.loads(example_record("tactiki"))
    state = game.record_segments(record)[0].start(None)
    state = game.apply_text(state, record["moves"][0])
    with pytest.raises(IllegalMove) as refused:
        game.apply_text(state, "a1-a2")
    said = said_of(refused.value)
    assert str(refused.value) == said == \
        "The top piece on a1 is TIKI's: you move only your own pieces"
    assert in_language(said, "nl") == \
        "Het bovenste stuk op a1 is van TIKI: je verzet alleen je eigen stukken"
