"""One way to put a fix into words (``pi_app.board.fixes.fix_words``), said alike everywhere.

The station's screen, the event log and the stored events each say the fixes the board needs.
They all take their words from ``fix_words``; these tests fail when one of them says a fix
otherwise: in another language than its reader's, or in words of its own.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_referee import lay_out, station_for

from pi_app.board.fixes import Fix, fix_words
from pi_app.games import get_game
from pi_app.i18n import LANGUAGES, translator
from pi_app.net.eventlog import event_words
from pi_app.net.redact import public_data
from pi_app.readings import TagsSeen

FIXES = (Fix("move", "Nani", "s2", "s1"), Fix("remove", "Lono", "s3"),
         Fix("place", "Ku", "s4"), Fix("unknown", "04A1B2", "s5"))


def test_the_english_sentence_is_the_stored_one() -> None:
    """``str(fix)`` (what stations stored and stored before) is the English sentence."""
    assert [str(f) for f in FIXES] == [
        "move Nani from s2 to s1", "remove Lono from s3", "put Ku on s4",
        "remove the unknown tag 04A1B2 from s5"]
    assert [fix_words(f).sentence for f in FIXES] == [str(f) for f in FIXES]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_event_log_says_a_fix_as_the_station_does_in_the_readers_language(
        lang: str) -> None:
    words = translator(lang)
    data = {"fixes": [str(f) for f in FIXES[:3]], "marks": [f.to_json() for f in FIXES[:3]]}
    line = event_words("mismatch", data, ["Ana", "Ben"], None, words=words)
    said = [fix_words(f, words) for f in FIXES[:3]]
    assert line == words.gettext("mismatch") + ": " + "; ".join(s.sentence for s in said)
    if lang != "en":  # the sentence is translated, as the screen's lines are
        assert all(s.sentence != str(f) for s, f in zip(said, FIXES[:3], strict=True))
        assert all(s.action != fix_words(f).action for s, f in zip(said, FIXES[:3], strict=True))


def test_an_event_stored_without_marks_is_said_as_stored() -> None:
    line = event_words("follow_up", {"fixes": ["remove Nani from s2"]}, [], None,
                       words=translator("nl"))
    assert line.endswith(": remove Nani from s2")


def test_marks_survive_the_public_view_and_unreadable_ones_are_skipped() -> None:
    game = get_game("tactiki")
    hidden = game.pieces(game.new_game(random.Random(1)))[0]
    data = {"fixes": [f"remove {hidden} from c3"],
            "marks": [Fix("remove", hidden, "c3").to_json(), {"kind": 3}, "junk"]}
    shown = public_data("tactiki", "mismatch", data)
    assert shown is not None
    assert [Fix.from_json(m) for m in shown["marks"]] == [
        Fix("remove", game.public_piece(hidden), "c3")]
    line = event_words("mismatch", shown, [], None)
    assert hidden not in line or hidden == game.public_piece(hidden)
    assert Fix.from_json({"kind": "move", "piece": "a", "cell": "b", "to": 4}) is None


def test_the_station_stores_each_fix_as_a_sentence_and_as_a_mark(tmp_path: Path) -> None:
    """A mismatch the real station notes: its marks are the fixes it shows, so the event log
    says them as the screen did."""
    station = station_for(tmp_path)
    lay_out(station, 0.5)
    station.step(None, 1.0)
    s1 = station.geometry.cell("s1")
    assert s1.reader is not None
    station.step(TagsSeen(2.0, s1.reader, frozenset()), 2.0)  # a tiki taken off
    for t in (3.0, 5.0, 8.0, 12.0):
        station.step(None, t)
    stored = station.store.events(station.session.game_id, ["mismatch"])
    assert stored, "no mismatch was noted"
    data = stored[-1].data
    fixes = [Fix.from_json(m) for m in data["marks"]]
    assert fixes and [str(f) for f in fixes] == data["fixes"]
    assert station.status.guidance is not None
    assert fixes == list(station.status.guidance.fixes)
