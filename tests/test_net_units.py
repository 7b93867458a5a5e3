"""The small pieces of ``pi_app.net`` on their own: topics, redaction, SVG, auth, config, CLI."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from pi_app.net import topics
from pi_app.net.auth import Brake, CookieSigner, hash_password, same, verify_password
from pi_app.net.dashboard import ConfigError, load_config, main
from pi_app.net.pages import json_for_script, render
from pi_app.net.redact import public_event, public_snapshot
from pi_app.net.svg import board_svg
from pi_app.referee.joincode import read_join_code


def test_topic_layout_and_names() -> None:
    assert topics.topic("cup", "t1", "events") == "tiki/cup/board/t1/events"
    assert topics.event_filter("cup") == "tiki/cup/board/+/+"
    parsed = topics.parse_topic("tiki/cup/board/t1/state")
    assert parsed is not None and (parsed.event, parsed.board, parsed.leaf) == ("cup", "t1",
                                                                                "state")
    for bad in ("tiki/cup/board/t1", "tiki/cup/board/t+/state", "x/cup/board/t1/state",
                "tiki/cup/board/t1/other"):
        assert topics.parse_topic(bad) is None
    for name in ("a/b", "+", "#", "", "x" * 65, "-lead", "tab le"):
        with pytest.raises(topics.TopicError):
            topics.check_name(name)
    assert topics.decode(b"") is None and topics.decode(b"[1]") is None
    assert topics.decode(topics.encode({"n": "é"})) == {"n": "é"}


def test_public_views_hide_secret_cards_and_ranks() -> None:
    topple = {"game": "topple", "status": "playing", "record": {"rounds": [{"cards": [[1]]}]},
              "text": "hands", "moves": ["up1 Nani"], "winners": None}
    shown = public_snapshot(topple)
    assert "record" not in shown and "text" not in shown and shown["moves"] == ["up1 Nani"]
    tac = {"game": "tactiki", "status": "prompt", "view": {"a1": ["T4", "T2"], "e5": ["C1"]},
           "moves": ["a1-a2", "reincarnate 3 c1"], "guidance": ["put T4 on a2"],
           "winners": None}
    masked = public_snapshot(tac)
    assert masked["view"] == {"a1": ["T?", "T?"], "e5": ["C?"]}
    assert masked["moves"] == ["a1-a2", "reincarnate ? c1"]
    assert masked["guidance"] == ["put T? on a2"]
    assert public_snapshot({**tac, "status": "over", "winners": [0]})["view"]["a1"] == ["T4",
                                                                                       "T2"]
    dealt = {"round": {"line": ["Nani"], "first": 1, "moves": [], "cards": [["Nani", "Nui",
                                                                            "Kapu"]]}}
    assert public_event("topple", {"kind": "deal", "data": dealt}) == \
        {"kind": "deal", "data": {"round": {"line": ["Nani"], "first": 1, "moves": []}}}
    assert public_event("topple", {"kind": "new_kind", "data": {}}) is None  # fails closed
    assert public_event("tactiki", {"kind": "move", "data": {"text": "reincarnate 2 b1"}}) == \
        {"kind": "move", "data": {"text": "reincarnate ? b1"}}


def test_board_svg_escapes_every_text() -> None:
    svg = board_svg("topple", {"s1": ["<b>x</b>"], "s2": ["Nani"]})
    assert svg.startswith("<svg") and "<b>" not in svg and "&lt;b&gt;" in svg
    assert 'data-cell="s9"' in svg and 'data-cell="card"' in svg
    assert "no board picture" in board_svg("<chess>", {})
    assert "&lt;chess&gt;" in board_svg("<chess>", {})
    manami = board_svg("manami", {"a1": ["p0", "p1"], "a1/b1": ["shaman"]})
    assert manami.count('fill="#222"') == 1                       # the shaman on one edge


def test_auth_pieces() -> None:
    assert same("1234", "1234") and not same("1234", "1235") and not same("", "")
    assert not same(None, "x") and not same("x", None)
    encoded = hash_password("s3cret-pass", iterations=1000)
    assert verify_password("s3cret-pass", encoded) and not verify_password("other", encoded)
    assert not verify_password("x", "md5$1$2$3") and not verify_password("x", "garbage")
    now = [1000.0]
    signer = CookieSigner(b"k" * 32, ttl=60, clock=lambda: now[0])
    cookie = signer.sign("alice|admin")
    assert signer.verify(cookie) == "alice|admin"
    assert signer.verify(cookie.replace("|", "|9", 1)) is None
    assert CookieSigner(b"j" * 32).verify(cookie) is None
    assert signer.csrf(cookie) != signer.csrf(signer.sign("bob"))
    now[0] += 61
    assert signer.verify(cookie) is None
    t = [0.0]
    brake = Brake(free=2, clock=lambda: t[0])
    brake.failed("ip")
    assert brake.wait("ip") == 0
    brake.failed("ip")
    assert brake.wait("ip") == 1.0
    brake.failed("ip")
    assert brake.wait("ip") == 2.0
    t[0] = 5.0
    assert brake.wait("ip") == 0 and brake.wait("other") == 0
    brake.succeeded("ip")
    assert brake.wait("ip") == 0


def test_render_escapes_and_json_cannot_close_a_script() -> None:
    assert render("<p>{{x}}</p>{{{y}}}", x="<i>", y="<i>") == "<p>&lt;i&gt;</p><i>"
    text = json_for_script({"n": "</script><script>alert(1)</script>&"})
    assert "</" not in text and "<" not in text and json.loads(text)["n"].startswith("</script>")


def test_setup_config_and_hash_password(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["setup", "--dir", str(tmp_path), "--event", "cup", "--boards", "t1",
                 "t2"]) == 0
    stations = json.loads((tmp_path / "stations.json").read_text())
    assert stations["t1"]["username"] == "t1" and stations["t1"]["topics"] == \
        "tiki/cup/board/t1/#"
    # one line per leaf a station writes, and its own pairing that it reads (issue 33)
    station_lines = sorted(line for line in (tmp_path / "broker" / "acl").read_text().splitlines()
                           if "%u" in line)
    assert station_lines == sorted(  # a station's leaves, its pairing, its remote play
        [f"pattern write tiki/cup/board/%u/{leaf}" for leaf in topics.LEAVES]
        + ["pattern read tiki/cup/pairing/%u", "pattern write tiki/cup/remote/%u/up",
           "pattern read tiki/cup/remote/%u/down"])
    code = read_join_code(stations["t1"]["join"])
    assert (code.event, code.board, code.password) == ("cup", "t1", stations["t1"]["password"])
    assert (tmp_path / "join" / "t2.svg").read_text().startswith("<?xml")
    config = load_config(tmp_path / "referee.toml")
    assert config.event == "cup" and config.broker.username == "referee"
    assert config.broker.password == (tmp_path / "referee.password").read_text().strip()
    assert len(config.secret) == 32 and config.db == tmp_path / "referee.sqlite"
    assert main(["setup", "--dir", str(tmp_path / "x"), "--event", "c/up", "--boards",
                 "t1"]) == 2
    monkeypatch.setattr(sys, "stdin", io.StringIO("a long password\n"))
    capsys.readouterr()
    assert main(["hash-password"]) == 0
    assert verify_password("a long password", capsys.readouterr().out.strip())
    (tmp_path / "bad.toml").write_text('event = "a/b"\n')
    with pytest.raises(ConfigError):
        load_config(tmp_path / "bad.toml")
    assert main(["export", "--config", str(tmp_path / "referee.toml")]) == 2   # no ledger yet


def test_referee_setup_writes_the_bridges_of_an_event_over_several_venues(
        tmp_path: Path) -> None:
    central = tmp_path / "central"
    assert main(["setup", "--dir", str(central), "--event", "cup", "--boards", "a1", "a2", "b1",
                 "--bridges", "hallA=a1,a2", "hallB=b1"]) == 0
    bridges = json.loads((central / "bridges.json").read_text())
    assert bridges["hallA"]["boards"] == ["a1", "a2"]
    acl = (central / "broker" / "acl").read_text()
    hall_a = acl.split("user hallA\n")[1].split("\n\n")[0]
    assert "topic write tiki/cup/board/a1/events" in hall_a and "board/b1/" not in hall_a
    assert "topic read tiki/cup/pairing/a2" in hall_a
    assert main(["setup", "--dir", str(tmp_path / "x"), "--event", "cup", "--boards", "a1",
                 "--bridges", "hallA=zz"]) == 2
    secret = tmp_path / "hallA.password"
    secret.write_text(bridges["hallA"]["password"] + "\n")
    venue = tmp_path / "venue"
    assert main(["setup", "--dir", str(venue), "--event", "cup", "--boards", "a1", "a2",
                 "--central", "10.0.0.9:1883", "--bridge-user", "hallA",
                 "--bridge-password-file", str(secret)]) == 0
    conf = (venue / "broker" / "mosquitto.conf").read_text()
    assert "address 10.0.0.9:1883" in conf and "topic tiki/cup/board/# out 1" in conf
    assert f"remote_password {bridges['hallA']['password']}" in conf
    assert main(["setup", "--dir", str(tmp_path / "y"), "--event", "cup", "--boards", "a1",
                 "--central", "10.0.0.9:1883"]) == 2
