"""The first-boot set-up (issue 16), through the real daemon.

A station whose file says ``[station] configured = false`` is run by
:func:`pi_app.referee.firstboot.serve_configured` (what ``tikiboard run`` calls) on the
simulated sensor board, its page on a free port of 127.0.0.1. What people see is read where they
see it: the OLED picture (searched for the words' pixels) and the page over HTTP. The set-up
is posted as the page's form posts it; the file it writes is read back with the real loader;
the station that comes back is the one the daemon restarted. The Wi-Fi goes through a fake
``nmcli`` first on ``PATH``: a real process, so its argv is what a real one would get.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from net_fixtures import request
from test_game_change_and_names import play_then_stop, shows, until

from pi_app.net.broker import free_port, wait_connectable
from pi_app.net.mqtt import refused_write
from pi_app.referee.config import ConfigError, load_config, parse_config
from pi_app.referee.daemon import Hardware
from pi_app.referee.firstboot import (
    FirstBoot,
    SetupError,
    Wifi,
    load_for_run,
    qr_address,
    write_private,
)
from pi_app.referee.joincode import JoinCode, JoinCodeError, read_join_code
from pi_app.referee.qr import qr_code
from pi_app.referee.station import Station

pytestmark = pytest.mark.realtime

NEW_PIN = "tiki-pin-7"
SSID = "Café \"Tiki\" $HOME; rm -rf"
PASSPHRASE = "pass word 'q' \\ $(x)"

Scenario = Callable[[list[Station], list[Hardware], FirstBoot, int], Awaitable[None]]


def fake_nmcli(folder: Path, *, status: int = 0, said: str = "") -> Path:
    """An ``nmcli`` that writes its argv (as JSON) to ``folder/nmcli.json``."""
    folder.mkdir(exist_ok=True)
    log = folder / "nmcli.json"
    script = folder / "nmcli"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        f"sys.stderr.write({said!r})\nsys.exit({status})\n")
    script.chmod(0o755)
    return log


def station_file(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "tikiboard.toml"
    path.write_text(
        "# written by the station's maker: the hardware part\n"
        "[station]\nconfigured = false\n"
        f"data_dir = {str(tmp_path / 'data')!r}\nseed = 5\ntopple_cards = \"deal\"\n"
        f"[web]\nhost = \"127.0.0.1\"\nport = {port}\n")
    return path


def run_first_boot(tmp_path: Path, scenario: Scenario) -> Path:
    """Run the daemon on a file that asks for the set-up until ``scenario`` returns."""
    port = free_port()
    path = station_file(tmp_path, port)
    config, setup = load_for_run(path)
    assert setup is not None and config.web.enabled
    failures: list[BaseException] = []
    stations: list[Station] = []
    parts: list[Hardware] = []

    async def main() -> None:
        from pi_app.station_main import serve_configured

        stop = asyncio.Event()
        tasks: list[asyncio.Future[None]] = []

        def ready(station: Station, hardware: Hardware) -> None:
            stations.append(station)
            parts.append(hardware)
            if len(stations) > 1:
                return
            tasks.append(play_then_stop(port, lambda: scenario(stations, parts, setup, port),
                                        stop, failures))

        await asyncio.wait_for(serve_configured(config, setup, stop=stop, on_ready=ready),
                               timeout=120)

    asyncio.run(main())
    if failures:
        raise failures[0]
    return path


async def http(port: int, method: str, path: str, body: Any = None,
               headers: dict[str, str] | None = None) -> Any:
    return await asyncio.to_thread(request, port, method, path, body, headers)


def form(**fields: str) -> tuple[str, dict[str, str]]:
    return urlencode(fields), {"Content-Type": "application/x-www-form-urlencoded"}


GOOD = {"board": "Table-7", "game": "manami", "players": "Ana, Ben", "count": "",
        "pin": NEW_PIN, "ssid": SSID, "passphrase": PASSPHRASE, "mqtt_host": "",
        "mqtt_port": "", "language": "it"}


def test_set_up_at_the_table_names_the_station_and_restarts_it(tmp_path: Path,
                                                               monkeypatch: Any) -> None:
    log = fake_nmcli(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    seen: dict[str, Any] = {}

    async def scenario(stations: list[Station], parts: list[Hardware], setup: FirstBoot,
                       port: int) -> None:
        station = stations[0]
        code = setup.code
        assert len(code) == 6 and code.isdigit()
        # The screen: the code, the address to open, its QR code; the page never shows it.
        await until(lambda: station.last_screen is not None and shows(station.last_screen,
                                                                      code), 5, "the code")
        assert shows(station.last_screen, "Set-up code")
        assert shows(station.last_screen, "127.0.0.1:") and shows(station.last_screen,
                                                                  "/setup")
        qr_text = qr_address(f"http://127.0.0.1:{port}/")
        assert qr_text == f"HTTP://127.0.0.1:{port}/SETUP"  # capitals: alphanumeric, version 2
        matrix = [list(row) for row in qr_code(qr_text).matrix]
        image = station.last_screen
        assert image is not None
        side = len(matrix) * 2 + 4  # two pixels a module, a lit quiet zone of two
        x0, y0 = image.width - side, image.height - side
        pixels = image.load()
        assert pixels is not None and len(matrix) == 25
        assert [[not pixels[x0 + 2 + 2 * c, y0 + 2 + 2 * r] for c in range(len(matrix))]
                for r in range(len(matrix))] == [[bool(m) for m in row] for row in matrix]
        for page in ("/", "/api/state", "/setup"):
            got = await http(port, "GET", page)
            assert got.status == 200 and code not in got.text, page
        assert (await http(port, "GET", "/SETUP")).headers["location"] == "/setup"
        page = (await http(port, "GET", "/setup")).text  # the form posts what the tests post
        names = set(re.findall(r'<(?:input|select) name="(\w+)"', page))
        assert names == {"code", "join", "mqtt_password", *GOOD}
        assert '<form method="post" action="/setup"' in page and "<script" not in page

        # Wrong codes: refused, then braked.
        wrong = f"{(int(code) + 1) % 10 ** 6:06d}"
        for _ in range(5):
            got = await http(port, "POST", "/setup", *form(**GOOD, code=wrong))
            assert got.status == 403 and 'data-field="code"' in got.text
        got = await http(port, "POST", "/setup", *form(**GOOD, code=code))
        assert got.status == 429 and "retry-after" in got.headers
        await asyncio.sleep(1.1)

        # The right code with a wrong field: 400, naming it; nothing written, code still good.
        before = setup.path.read_text()
        for name, value in (("board", "table 7!"), ("pin", "12345"), ("game", "chess"),
                            ("players", "Ana, ana"), ("passphrase", "short"),
                            ("mqtt_port", "99999")):
            answers = {**GOOD, name: value}
            if name == "mqtt_port":
                answers["mqtt_host"] = "broker.local"
            got = await http(port, "POST", "/setup", *form(**answers, code=code))
            assert got.status == 400 and f'data-field="{name}"' in got.text, (name, got.text)
            assert NEW_PIN not in got.text and PASSPHRASE not in got.text
        assert setup.path.read_text() == before and not log.exists()

        # The right code and good answers: written, applied, and the code is spent.
        got = await http(port, "POST", "/setup", *form(**GOOD, code=code))
        assert got.status == 200 and "Table-7" in got.text
        await until(lambda: len(stations) > 1, 30, "the station to start again")
        new = stations[1]
        assert new.config.station.board == "Table-7" and new.feed.board == "Table-7"
        assert new.player_names() == ("Ana", "Ben")
        assert new.session.game.name == "manami" and new.geometry.game == "manami"
        assert len(new.last_frame) == new.geometry.led_count  # the Manami board's strip
        assert new.setup_code == "" and not shows(new.screen_image(new.clock()), code)
        assert new.status.notice == ""  # the Wi-Fi was joined: nothing to say
        await asyncio.to_thread(wait_connectable, "127.0.0.1", port, 10)
        got = await http(port, "POST", "/setup", *form(**GOOD, code=code))
        assert got.status == 403
        refused = await http(port, "POST", "/api/action/undo", None,
                             {"Authorization": "Bearer 424242"})
        allowed = await http(port, "POST", "/api/action/undo", None,
                             {"Authorization": f"Bearer {NEW_PIN}"})
        assert refused.status == 403 and allowed.status == 409  # right PIN, nothing to undo
        seen["snapshot"] = (await http(port, "GET", "/api/state")).json()["snapshot"]

    path = run_first_boot(tmp_path, scenario)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    config = load_config(path)
    assert config.station.configured and config.station.board == "Table-7"
    assert config.station.game == "manami" and config.station.language == "it"
    assert config.station.players == ("Ana", "Ben")
    assert config.web.token == NEW_PIN and config.web.port > 0
    assert config.web.host == "127.0.0.1" and not config.mqtt.enabled
    text = path.read_text()
    assert "# written by the station's maker" in text and PASSPHRASE not in text
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert json.loads(log.read_text()) == ["--wait", "60", "device", "wifi", "connect", SSID,
                                           "password", PASSPHRASE]
    assert seen["snapshot"]["players"] == ["Ana", "Ben"]


def test_a_network_that_is_not_joined_is_said_on_the_new_station(tmp_path: Path,
                                                                monkeypatch: Any) -> None:
    fake_nmcli(tmp_path / "bin", status=10,
               said=f"Error: No network with SSID '{SSID}' found; password {PASSPHRASE}\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")

    async def scenario(stations: list[Station], parts: list[Hardware], setup: FirstBoot,
                       port: int) -> None:
        answers = {**GOOD, "mqtt_host": "127.0.0.1", "mqtt_port": str(free_port()),
                   "mqtt_password": "broker-secret"}
        got = await http(port, "POST", "/setup", *form(**answers, code=setup.code))
        assert got.status == 200
        await until(lambda: len(stations) > 1, 30, "the station to start again")
        notice = stations[1].status.notice
        assert "not joined" in notice and "No network with SSID" in notice
        assert PASSPHRASE not in notice

    path = run_first_boot(tmp_path, scenario)
    config = load_config(path)
    assert config.mqtt.enabled and config.mqtt.host == "127.0.0.1"
    assert config.mqtt.password == "broker-secret"


def test_ok_on_the_set_up_screen_plays_the_defaults_at_once(tmp_path: Path) -> None:
    async def scenario(stations: list[Station], parts: list[Hardware], setup: FirstBoot,
                       port: int) -> None:
        station = stations[0]
        await until(lambda: station.last_screen is not None
                    and shows(station.last_screen, setup.code), 5, "the set-up screen")
        pin = parts[0].buttons.buttons["ok"].pin
        pin.drive_low()
        await asyncio.sleep(0.08)
        pin.drive_high()
        await until(lambda: station.setup_code == "", 5, "OK to hide the set-up")
        assert not shows(station.screen_image(station.clock()), setup.code)
        assert station.session.game.name == "topple"
        assert setup.check_code(setup.code)  # the page's set-up still works this boot

    path = run_first_boot(tmp_path, scenario)
    assert not load_config(path).station.configured  # nothing was written


def test_a_missing_file_starts_the_set_up_only_when_asked(tmp_path: Path) -> None:
    missing = tmp_path / "tikiboard.toml"
    with pytest.raises(ConfigError, match="cannot read"):
        load_for_run(missing)
    config, setup = load_for_run(missing, first_boot=True)
    assert setup is not None and setup.path == missing
    assert config.web.enabled and config.web.host == "0.0.0.0"  # the phone is on the LAN
    assert not config.station.configured
    configured = tmp_path / "done.toml"
    configured.write_text("[station]\nboard = \"t1\"\n")
    assert load_for_run(configured, first_boot=True)[1] is None


def test_codes_are_six_random_digits_and_spent_once_written(tmp_path: Path) -> None:
    config, setup = load_for_run(tmp_path / "t.toml", first_boot=True)
    assert setup is not None
    codes = {FirstBoot(setup.path, config).code for _ in range(50)}
    assert len(codes) > 45 and all(len(c) == 6 and c.isdigit() for c in codes)
    text, written = setup.answers_to_toml({**GOOD, "ssid": "", "passphrase": ""})
    assert written.station.board == "Table-7"
    setup.write(text)
    assert not setup.check_code(setup.code)
    assert load_config(setup.path).web.host == "0.0.0.0"


def test_the_file_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    old = os.umask(0)
    try:
        write_private(path, "a = 1\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and path.read_text() == "a = 1\n"
    with pytest.raises(OSError):
        write_private(tmp_path / "no-such-folder" / "t.toml", "b = 2\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.toml"]


def test_the_loader_refuses_a_board_id_the_broker_would(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"station\.board"):
        parse_config({"station": {"board": "table/1"}})
    assert parse_config({"station": {"board": "Table-7"}}).station.board == "Table-7"


def test_tikiboard_run_goes_through_the_set_up_and_serves_the_new_station(
        tmp_path: Path) -> None:
    """The command the service runs: its log says where to go (the code is in the log too,
    for the station's administrator, as it is on the screen); the set-up posted there brings
    the same process back as the new table."""
    port = free_port()
    path = station_file(tmp_path, port)
    exe = Path(sys.executable).parent / "tikiboard"
    proc = subprocess.Popen([str(exe), "run", "--config", str(path), "--first-boot"],
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    stderr = proc.stderr
    assert stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(stderr.readline, "")),
                              daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        found = None
        while found is None and time.monotonic() < deadline:
            found = next((m for m in map(re.compile(r"open (\S+) on a phone.*\((\d{6})\)")
                                         .search, list(lines)) if m), None)
            time.sleep(0.05)
        assert found is not None, lines
        assert found.group(1) == f"http://127.0.0.1:{port}/setup"
        wait_connectable("127.0.0.1", port, 10)
        got = request(port, "POST", "/setup", *form(**{**GOOD, "ssid": "", "passphrase": ""},
                                                    code=found.group(2)))
        assert got.status == 200, got.text
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if request(port, "GET", "/api/state").json()["snapshot"].get("players") == \
                        ["Ana", "Ben"]:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError("the station did not come back with the set-up's players")
        assert b"Table-7" in request(port, "GET", "/").body
        assert proc.poll() is None  # the same process, restarted in place
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    assert load_config(path).station.board == "Table-7"


def test_a_wifi_name_that_begins_with_a_dash_never_reaches_nmcli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nmcli reads an argument that begins with ``-`` as one of its options (issue 29): the
    form refuses such a name, naming the field, and the joiner never runs nmcli with one."""
    _config, setup = load_for_run(tmp_path / "t.toml", first_boot=True)
    assert setup is not None
    for ssid in ("-h", "--ask", "-"):
        with pytest.raises(SetupError) as refused:
            setup.answers_to_toml({**GOOD, "ssid": ssid})
        assert refused.value.field == "ssid" and "'-'" in refused.value.words("en")
    log = fake_nmcli(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert "nmcli option" in Wifi().connect("--ask", PASSPHRASE)
    assert not log.exists()
    assert Wifi().connect("Tiki-net", PASSPHRASE) == "" and log.exists()  # the fake runs


# -- a tournament station joins with one code (issue 33) ------------------------------------------
def test_a_join_code_fills_the_board_and_the_broker_and_a_bad_one_says_why(
        tmp_path: Path) -> None:
    code = JoinCode("10.0.0.2", 1884, "open25", "table-4", "s3cret pw", tls=True)
    text = code.text()
    assert text.startswith("TIKI1-") and read_join_code(" " + text.lower() + "\n") == code
    _config, setup = load_for_run(tmp_path / "t.toml", first_boot=True)
    assert setup is not None
    _, written = setup.answers_to_toml({**GOOD, "board": "", "join": text, "ssid": "",
                                        "passphrase": ""})
    mqtt = written.mqtt
    assert written.station.board == "table-4" and mqtt.enabled
    assert (mqtt.host, mqtt.port, mqtt.event, mqtt.username, mqtt.password, mqtt.tls) == (
        "10.0.0.2", 1884, "open25", "table-4", "s3cret pw", True)
    for bad, why in (("hello", "not a join code: a join code starts with TIKI1-"),
                     (text[:-3], "damaged: a character is missing or wrong"),
                     (text[:10] + ("A" if text[10] != "A" else "B") + text[11:], "damaged")):
        with pytest.raises(SetupError, match=why) as refused:
            setup.answers_to_toml({**GOOD, "join": bad, "ssid": "", "passphrase": ""})
        assert refused.value.field == "join" and "Join code" in str(refused.value)
    with pytest.raises(JoinCodeError, match="bad name"):
        read_join_code(JoinCode("h", 1, "open/25", "t", "p").text())


def test_a_refused_message_names_the_real_cause() -> None:
    wrong_event = refused_write("event 3", "tiki/cup/board/t1/events", "t1", "t1", None)
    assert "not set up for event 'cup' with board 't1'" in wrong_event
    assert "join code" in wrong_event and "user name its board" not in wrong_event
    wrong_user = refused_write("event 3", "tiki/cup/board/t1/events", "t1", "admin", None)
    assert "logs in as 'admin' but is board 't1'" in wrong_user
