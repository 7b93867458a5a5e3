"""The contracts between layers are types, not words: how a move was accepted (stored with it),
what a question or a guidance is about, and the sensor link's state.

The stored words never change (games stored by earlier stations must resume as they were), so
the enums are ``str`` enums whose values are exactly those words.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
import typing
from pathlib import Path

import pytest
from mypy import api as mypy_api

from pi_app.board.fixes import Fix, FixKind
from pi_app.board.follower import (
    BOARD_DECIDED,
    Acceptance,
    Follower,
    GuidanceKind,
    MoveAccepted,
    MoveRevised,
    PromptKind,
    TakenBack,
)
from pi_app.games import get_game
from pi_app.hw.link import LinkPhase, SerialLink
from pi_app.readings import LinkState, LinkStatus
from pi_app.referee.config import ConfigError, parse_config
from pi_app.referee.firstboot import SetupError, load_for_run
from pi_app.referee.session import Session
from pi_app.referee.store import EventStore

#: The words stations have stored as a move's ``"how"`` (docs: pi_app/referee/store.py).
STORED_HOW = ("at once", "rested", "settled", "asked", "forced")


def test_the_acceptances_are_the_stored_words() -> None:
    assert [a.value for a in Acceptance] == list(STORED_HOW)
    assert {a.value for a in BOARD_DECIDED} == {"at once", "rested", "settled"}
    assert [a.board_decided for a in Acceptance] == [True, True, True, False, False]
    assert [k.value for k in GuidanceKind] == ["follow_up", "mismatch"]
    assert {k.value for k in PromptKind} == {"ambiguous", "takeback", "decision", "draw",
                                             "order"}


@pytest.mark.parametrize("how", list(Acceptance))
def test_a_stored_move_keeps_the_plain_word_and_reads_back(tmp_path: Path,
                                                           how: Acceptance) -> None:
    """The event row holds the very JSON an earlier station wrote for the same move, and
    reading it back gives the same acceptance."""
    path = tmp_path / "s.db"
    store = EventStore(path)
    session = Session.new(store, "topple", rng=random.Random(3))
    game, state = session.game, session.state
    move = game.legal_moves(state)[0]
    text = game.move_text(state, move)
    session.moved(text, game.to_move(state), game.apply(state, move), how, lifts_only=True)
    store.close()
    with sqlite3.connect(path) as db:
        (raw,) = db.execute("SELECT data FROM events WHERE kind = 'move'").fetchone()
    assert raw == json.dumps({"text": text, "player": game.to_move(state),
                              "how": how.value, "lifts_only": True})
    again = EventStore(path)
    (event,) = [e for e in again.events(session.game_id) if e.kind == "move"]
    assert type(event.data["how"]) is str
    assert Acceptance.stored(event.data["how"]) is how
    again.close()


@pytest.mark.parametrize("raw", [None, "", "Settled", "at  once", ["at once"], 3])
def test_an_unknown_stored_how_is_no_acceptance(raw: object) -> None:
    """Older games stored no ``how``; a hand-edited store may hold anything: such a move is
    one the players chose (never revised by the board), and nothing raises."""
    assert Acceptance.stored(raw) is None


def test_a_game_stored_with_the_old_words_resumes(tmp_path: Path) -> None:
    """A move stored by hand with the plain words (as every earlier station wrote them)
    resumes: the session replays it and the acceptance reads back."""
    store = EventStore(tmp_path / "s.db")
    session = Session.new(store, "manami", rng=random.Random(5))
    game = get_game("manami")
    state = session.state
    move = game.legal_moves(state)[0]
    store.append(session.game_id, "move", {"text": game.move_text(state, move),
                                           "player": game.to_move(state), "how": "settled"})
    resumed = Session.resume(store, store.game(session.game_id))
    assert resumed.state == game.apply(state, move)
    last = store.events(session.game_id)[-1]
    assert Acceptance.stored(last.data["how"]) is Acceptance.SETTLED


# -- the sensor link ------------------------------------------------------------------------------
class _Port:
    """A port that reads and writes nothing (the link is driven by hand)."""

    in_waiting = 0

    def read(self, size: int = 1) -> bytes:
        return b""

    def write(self, data: bytes, /) -> int:
        return len(data)

    def reset_input_buffer(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_every_new_reason_for_a_down_link_is_reported_whatever_its_words() -> None:
    """Only a failed retry while the link is down already is kept quiet, and the link knows a
    retry by its state, not by the word "retrying" in the reason (an OS message, a path or a
    board name may hold that word)."""
    events: list[object] = []
    link = SerialLink("virtual", events.append, clock=lambda: 1.0)
    link.attach(_Port())
    link.lost("usb: device retrying enumeration")
    link.lost("usb: device gone, retrying later")
    statuses = [e for e in events if isinstance(e, LinkStatus)]
    assert [(s.state, s.detail) for s in statuses] == [
        (LinkState.DOWN, "sensor board lost (usb: device retrying enumeration); reconnecting"),
        (LinkState.DOWN, "sensor board lost (usb: device gone, retrying later); reconnecting")]


def test_a_port_that_cannot_be_opened_is_one_retrying_status() -> None:
    events: list[object] = []

    def refuse(path: str, baudrate: int, timeout: float) -> _Port:
        raise OSError(2, "No such file or directory")

    link = SerialLink("/dev/nothing", events.append, backoff=(0.001, 0.002), opener=refuse)
    with link:
        deadline = time.monotonic() + 5.0
        while link.counters.open_failures < 4 and time.monotonic() < deadline:
            time.sleep(0.005)
    statuses = [e for e in events if isinstance(e, LinkStatus)]
    assert link.counters.open_failures >= 4
    assert [s.state for s in statuses] == [LinkState.RETRYING] and not statuses[0].up
    assert link.state is LinkPhase.CLOSED


# -- the follower and the session are generic over the engine's types ----------------------------
def _fields_with_any(cls: type) -> list[str]:
    hints = typing.get_type_hints(cls)
    return [name for name, hint in hints.items() if name in ("game", "state", "history") and (
            hint is typing.Any or typing.Any in typing.get_args(hint)
            or any(typing.Any in typing.get_args(a) for a in typing.get_args(hint)))]


@pytest.mark.parametrize("cls", [Follower, Session, MoveAccepted, MoveRevised, TakenBack])
def test_no_engine_state_is_typed_any(cls: type) -> None:
    assert "state" in typing.get_type_hints(cls)
    assert _fields_with_any(cls) == []


def test_the_type_checker_sees_the_engine_state(tmp_path: Path) -> None:
    """A follower and a session of Topple give Topple states: reading one as something else is
    a type error (with ``Any`` it would pass unnoticed)."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from pi_app.board.follower import Follower, MoveAccepted\n"
        "from pi_app.games.topple import Move, ToppleState\n"
        "from pi_app.referee.session import Session\n"
        "def f(follower: Follower[ToppleState, Move], session: Session[ToppleState, Move],\n"
        "      accepted: MoveAccepted[ToppleState]) -> None:\n"
        "    a: int = follower.state\n"
        "    b: int = follower.history[0][0]\n"
        "    c: int = session.state\n"
        "    d: int = session.history[0][0]\n"
        "    e: int = accepted.state\n")
    out, _, _ = mypy_api.run(["--strict", "--no-error-summary", "--follow-imports=silent",
                              str(probe)])
    lines = [line for line in out.splitlines() if "probe.py" in line]
    assert len(lines) == 5 and all('"ToppleState"' in line for line in lines), out


# -- the first-boot form marks the field the loader names by key, not by reading its message -----
@pytest.mark.parametrize(("answers", "field"), [
    ({"players": "station.board, station.board"}, "players"),   # a name that reads like a key
    ({"board": "web.token/1"}, "board"),
    ({"pin": "12345"}, "pin"),
])
def test_a_refused_answer_marks_its_own_field(tmp_path: Path, answers: dict[str, str],
                                              field: str) -> None:
    _config, setup = load_for_run(tmp_path / "t.toml", first_boot=True)
    assert setup is not None
    good = {"board": "Table-7", "game": "manami", "players": "Ana, Ben", "count": "",
            "pin": "246810", "ssid": "", "passphrase": "", "mqtt_host": "", "mqtt_port": "",
            "language": "en"}
    with pytest.raises(SetupError) as refused:
        setup.answers_to_toml({**good, **answers})
    assert refused.value.field == field


def test_a_config_error_names_its_key() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({"station": {"players": ["web.token", "web.token"]}})
    assert refused.value.key == "station.players"
    with pytest.raises(ConfigError) as unknown:
        parse_config({"nowhere": {}})
    assert unknown.value.key == ""


# -- a fix's kind ---------------------------------------------------------------------------------
def test_a_stored_mark_of_an_unknown_kind_is_no_fix() -> None:
    """A stored event's marks are read, never trusted: a kind no fix has is not shown as some
    fix (the sentence of a kind it does not know used to be "remove the unknown tag")."""
    mark = {"kind": "move", "piece": "Nui", "cell": "s1", "to": "s2"}
    assert Fix.from_json(mark) == Fix("move", "Nui", "s1", "s2")
    assert Fix.from_json({**mark, "kind": "teleport"}) is None
    assert Fix.from_json({**mark, "kind": ["move"]}) is None
    assert set(typing.get_args(FixKind)) == {"move", "remove", "place", "unknown"}


def test_a_misspelt_phase_or_kind_is_a_type_error(tmp_path: Path) -> None:
    """The station's phase, a question's kind and a fix's kind are typed: a word that is none
    of them fails the type check where it is written (as "playing" for "play" once did at
    run time only)."""
    probe = tmp_path / "probe_words.py"
    probe.write_text(
        "from pi_app.board.fixes import Fix\n"
        "from pi_app.board.follower import Prompt\n"
        "from pi_app.referee.feedback import Scene\n"
        "a = Scene(phase='playing')\n"
        "b = Prompt(0.0, 'ambigous', ())\n"
        "c = Fix('teleport', 'Nui', 's1')\n"
        "d = Scene(guidance_kind='mismatsh')\n")
    out, _, _ = mypy_api.run(["--strict", "--no-error-summary", "--follow-imports=silent",
                              str(probe)])
    flagged = {int(line.split(":")[1]) for line in out.splitlines() if "probe_words.py" in line}
    assert flagged == {4, 5, 6, 7}, out
