"""The station page under hostile or unlucky conditions (issue 15), through the real daemon.

* A web port someone else holds leaves the station refereeing, says so on its screen and feed,
  and the page comes up by itself once the port frees.
* SIGTERM with the page open (a live stream included) stops without a traceback.
* A large request body (by Content-Length or chunked) gets 413 and costs the daemon no memory.
* Live streams are capped per client address and in total (503 + Retry-After), a closed
  stream frees its place, and the page's script recovers from a refused stream without
  hammering (headless Chromium).
* ``X-Forwarded-For`` does not rename the client for the PIN brake.
* Odd action bodies (not UTF-8, not JSON, lone surrogates, deep nesting, wrong types) give 400.
* A configured PIN shorter than six characters is refused, naming the key.

The daemon is ``tikiboard run`` in a subprocess (one for the module, on the simulated sensor
board), except where the test needs the station object itself: then the daemon's own
``serve`` runs in this process, as tests/test_station_e2e.py does.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from net_fixtures import ServerThread, chromium_driver, request, wait_for
from selenium.webdriver.common.by import By

from pi_app.demo import DemoPlayers
from pi_app.net.broker import free_port, wait_connectable
from pi_app.net.limits import StreamCap
from pi_app.net.simstation import SimStation
from pi_app.net.web import create_station_app
from pi_app.referee.config import Config, ConfigError, Web, load_config
from pi_app.referee.config import Station as StationSection
from pi_app.referee.daemon import Hardware
from pi_app.referee.station import Station
from pi_app.station_main import serve

pytestmark = pytest.mark.realtime

PIN = "24681357"
BIG = 10 * 1024 * 1024


# -- the real daemon in a subprocess -------------------------------------------------------------
@dataclass
class Daemon:
    proc: subprocess.Popen[str]
    port: int
    lines: list[str]

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def peak_rss_kb(self) -> int:
        """The process's peak resident memory so far (VmHWM), in kB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


@contextlib.contextmanager
def daemon(directory: Path, *, port: int | None = None,
           nofile: int | None = None) -> Iterator[Daemon]:
    """``tikiboard run`` with the page on 127.0.0.1 (stderr collected), stopped by its pid;
    ``nofile``: at most that many descriptors (the unit's ``LimitNOFILE``)."""
    port = port or free_port()
    config = directory / "station.toml"
    config.write_text(f"""
[station]
board = "sec"
game = "manami"
data_dir = "{directory / 'data'}"
[web]
enabled = true
host = "127.0.0.1"
port = {port}
token = "{PIN}"
""")
    exe = shutil.which("tikiboard", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "pi_app"]
    if nofile is not None:
        cmd = ["sh", "-c", f'ulimit -n {nofile} && exec "$@"', "sh", *cmd]
    proc = subprocess.Popen([*cmd, "run", "--config", str(config)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            lines.append(raw.rstrip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    running = Daemon(proc, port, lines)
    try:
        assert wait_connectable("127.0.0.1", port, 30), "the page did not come up:\n" + \
            running.log
        yield running
    finally:
        running.stop()
        reader.join(5)


@pytest.fixture(scope="module")
def station_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with daemon(tmp_path_factory.mktemp("station")) as running:
        yield running


def connect(port: int, source: str = "127.0.0.1", timeout: float = 10) -> socket.socket:
    """A TCP connection to the page from ``source`` (any 127.x.y.z is this machine)."""
    return socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                    source_address=(source, 0))


def read_head(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status and headers of the response on ``sock``, and what came after them."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    raw_head, _, rest = data.partition(b"\r\n\r\n")
    head = raw_head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in head[1:] if ": " in line)
    return int(head[0].split()[1]), {k.lower(): v for k, v in headers.items()}, rest


def open_stream(port: int, source: str = "127.0.0.1") -> tuple[socket.socket, int,
                                                               dict[str, str]]:
    sock = connect(port, source)
    sock.sendall(b"GET /api/stream HTTP/1.1\r\nHost: station\r\n\r\n")
    status, headers, _ = read_head(sock)
    return sock, status, headers


# -- 1. a taken port ----------------------------------------------------------------------------
def test_a_taken_port_leaves_the_station_refereeing_and_the_page_comes_back(
        tmp_path: Path) -> None:
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    config = Config(station=replace(StationSection(), game="manami", seed=4, board="busy",
                                    data_dir=str(tmp_path)),
                    web=Web(enabled=True, host="127.0.0.1", port=port, token=PIN))
    seen: dict[str, Any] = {}

    async def main() -> None:
        stop = asyncio.Event()
        done: list[asyncio.Future[None]] = []

        def ready(station: Station, hardware: Hardware) -> None:
            players = DemoPlayers(station, hardware, random.Random(1), pace=(0.05, 0.1))

            async def play() -> None:
                try:
                    await players.play(2)                      # the station still referees
                    seen["moves"] = list(station.accepted_log)
                    notice = f"page off: port {port} in use"
                    await players.wait_for(lambda: station.status.notice == notice, 5)
                    seen["notice"] = station.status.notice
                    seen["screen"] = station.scene(time.monotonic()).message
                    seen["feed"] = station.feed.snapshot.get("notice")
                    holder.close()                             # the port frees
                    page = await asyncio.to_thread(_wait_for_page, port, 12.0)
                    seen["page"] = page
                    await players.wait_for(lambda: station.status.notice == "", 2)
                    seen["after"] = (station.status.notice, station.feed.snapshot["notice"],
                                     station.scene(time.monotonic()).message)
                finally:
                    stop.set()

            done.append(asyncio.ensure_future(play()))

        await asyncio.wait_for(serve(config, stop=stop, on_ready=ready), timeout=90)
        for task in done:
            task.result()

    try:
        asyncio.run(main())
    finally:
        holder.close()
    notice = f"page off: port {port} in use"
    assert seen["notice"] == notice
    assert len(seen["moves"]) >= 2
    assert seen["screen"] == notice and seen["feed"] == notice      # OLED and feed say it
    assert seen["page"] == 200
    assert seen["after"] == ("", "", "")


def _wait_for_page(port: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            return request(port, "GET", "/api/state", timeout=2).status
        time.sleep(0.1)
    return 0


# -- 2. a clean stop ----------------------------------------------------------------------------
def test_sigterm_with_the_page_and_a_stream_open_logs_no_traceback(tmp_path: Path) -> None:
    with daemon(tmp_path) as running:
        assert request(running.port, "GET", "/").status == 200
        sock = connect(running.port)
        try:
            sock.sendall(b"GET /api/stream HTTP/1.1\r\nHost: station\r\n\r\n")
            status, _, first = read_head(sock)
            assert status == 200
            while b"event: status" not in first:
                first += sock.recv(65536)
            rc = running.stop()
            sock.settimeout(5)
            rest = b""
            with contextlib.suppress(OSError):
                while chunk := sock.recv(65536):   # the stream ends: the server closed it
                    rest += chunk
        finally:
            sock.close()
    assert rc == 0, running.log
    assert "Traceback" not in running.log and "CancelledError" not in running.log, running.log
    assert "ERROR" not in running.log, running.log


# -- 3. request body limit ----------------------------------------------------------------------
def _post_big(port: int, *, chunked: bool) -> int:
    """POST 10 MB to an action with the right PIN; the status the daemon answers with.

    The body is sent from a thread while the response is read, as a client that does not
    wait would: the daemon may answer (and close) long before the body is through."""
    sock = connect(port)
    framing = b"Transfer-Encoding: chunked" if chunked else f"Content-Length: {BIG}".encode()
    sock.sendall(b"POST /api/action/override HTTP/1.1\r\nHost: station\r\n"
                 b"Content-Type: application/json\r\nAuthorization: Bearer " + PIN.encode() +
                 b"\r\n" + framing + b"\r\n\r\n")
    piece = b"x" * 65536

    def send_body() -> None:
        with contextlib.suppress(OSError):
            for _ in range(BIG // len(piece)):
                sock.sendall(b"10000\r\n" + piece + b"\r\n" if chunked else piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")

    sender = threading.Thread(target=send_body, daemon=True)
    sender.start()
    try:
        status, _, _ = read_head(sock)
    finally:
        sender.join(20)
        sock.close()
    return status


def test_a_large_body_gets_413_and_costs_no_memory(station_daemon: Daemon) -> None:
    port = station_daemon.port
    for _ in range(3):  # warm up: imports and buffers of an ordinary action are paid for
        assert request(port, "POST", "/api/action/undo", {},
                       {"Authorization": f"Bearer {PIN}"}).status in (200, 409)
    before = station_daemon.peak_rss_kb()
    statuses = [_post_big(port, chunked=False), _post_big(port, chunked=True)]
    grown = station_daemon.peak_rss_kb() - before
    assert grown < 3 * 1024, f"peak memory grew by {grown} kB for 10 MB bodies"
    assert statuses == [413, 413]
    assert request(port, "GET", "/api/state").status == 200           # still serving


# -- 4. live streams ----------------------------------------------------------------------------
def test_streams_are_capped_per_client_and_in_total_and_freed_on_close(
        station_daemon: Daemon) -> None:
    port = station_daemon.port
    cap = StreamCap()                                   # the daemon's: the defaults
    held: list[socket.socket] = []
    try:
        for _ in range(cap.per_client):
            sock, status, _ = open_stream(port)
            held.append(sock)
            assert status == 200
        refused, status, headers = open_stream(port)
        refused.close()
        assert status == 503 and int(headers["retry-after"]) > 0
        held[0].close()                                   # a page closes: its place is free
        held.pop(0)
        wait_for(lambda: _admitted(port, held), 5, "a place after a stream closed", 0.1)
        # the total: more clients, each under its own cap, until the station is full
        refusal: tuple[str, int, dict[str, str]] | None = None
        for i in range(2, 2 + cap.total):
            source = f"127.0.0.{i}"
            for _ in range(cap.per_client):
                sock, status, headers = open_stream(port, source)
                if status != 200:
                    sock.close()
                    refusal = (source, status, headers)
                    break
                held.append(sock)
            if refusal is not None:
                break
        assert refusal is not None and refusal[1] == 503 and "retry-after" in refusal[2]
        assert len(held) == cap.total
    finally:
        for sock in held:
            sock.close()
    wait_for(lambda: _admitted(port, []), 5, "places freed after every stream closed", 0.1)
    assert request(port, "GET", "/api/state").status == 200


def _admitted(port: int, held: list[socket.socket]) -> bool:
    sock, status, _ = open_stream(port)
    if status == 200:
        held.append(sock)
        return True
    sock.close()
    return False


# -- 5. the brake keys on the real peer ---------------------------------------------------------
def test_x_forwarded_for_does_not_escape_the_pin_brake(station_daemon: Daemon) -> None:
    port = station_daemon.port
    statuses = []
    for i in range(7):
        statuses.append(request(port, "POST", "/api/action/undo", {},
                                {"Authorization": "Bearer 00000000",
                                 "X-Forwarded-For": f"10.9.8.{i}",
                                 "Forwarded": f"for=10.9.7.{i}"}).status)
    assert statuses[:5] == [403] * 5 and 429 in statuses[5:], statuses
    time.sleep(1.2)          # the first wait is a second; the right PIN then resets the brake
    assert request(port, "POST", "/api/action/nothing", {},
                   {"Authorization": f"Bearer {PIN}"}).status == 404


# -- 7. odd action bodies -----------------------------------------------------------------------
@pytest.mark.parametrize(("name", "body"), [
    ("override", b"\xff\xfe{"),                                   # not UTF-8
    ("override", b'{"text": "\xff"}'),                            # not UTF-8 inside
    ("override", b"hello"),                                       # not JSON
    ("override", b"[" * 20_000 + b"]" * 20_000),                  # deeper than the parser
    ("override", b'{"text": "\\ud800"}'),                         # a lone surrogate
    ("new_game", b'{"game": "manami", "players": ["\\udfff", "B"]}'),
    ("new_game", b'{"game": 5}'),
    ("new_game", b'{"game": "manami", "players": "Ana, Ben"}'),
    ("override", b'{"text": ["up1"]}'),
    ("undo", b"[1, 2]"),
])
def test_odd_action_bodies_get_400(station_daemon: Daemon, name: str, body: bytes) -> None:
    reply = request(station_daemon.port, "POST", f"/api/action/{name}", body,
                    {"Authorization": f"Bearer {PIN}", "Content-Type": "application/json"})
    assert reply.status == 400, reply.text
    assert "error" in reply.json()
    assert "Traceback" not in station_daemon.log, station_daemon.log


# -- 6. PIN length ------------------------------------------------------------------------------
@pytest.mark.parametrize(("token", "why"), [
    ("1234", "at least 6 characters, not 4"),
    ("12345", "at least 6 characters, not 5"),
    ("123456\u00e9", "printable ASCII"),
    (" 123456", "printable ASCII"),
    ("1234\t56", "printable ASCII"),
])
def test_a_short_or_untypable_pin_is_refused_naming_the_key(tmp_path: Path, token: str,
                                                            why: str) -> None:
    path = tmp_path / "station.toml"
    path.write_text(f"[web]\nenabled = true\ntoken = {json.dumps(token)}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    message = str(raised.value)
    assert "web.token" in message and why in message
    assert token.strip() not in message                     # the PIN is not logged


def test_six_characters_and_no_pin_are_accepted_and_the_cli_says_why(tmp_path: Path) -> None:
    path = tmp_path / "station.toml"
    for token in ("", "123456", "correct-horse battery"):
        path.write_text(f'[web]\ntoken = "{token}"\n')
        assert load_config(path).web.token == token
    path.write_text('[web]\ntoken = "1234"\n')
    out = subprocess.run([sys.executable, "-m", "pi_app", "run", "--config", str(path)],
                         check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "web.token" in out.stderr and "Traceback" not in out.stderr, out.stderr


# -- 4b. the page's script and a refused stream -------------------------------------------------
class Counting:
    """ASGI wrapper counting the stream requests and how each was answered."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.answers: list[int] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/api/stream":
            await self.app(scope, receive, send)
            return

        async def noted(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.answers.append(message["status"])
            await send(message)

        await self.app(scope, receive, noted)


def test_the_page_waits_and_comes_back_after_a_refused_stream(tmp_path: Path) -> None:
    sim = SimStation(tmp_path, "table-5", seed=3, game="topple", players=["Ana", "Ben"])
    app = Counting(create_station_app(sim.feed, token=PIN,
                                      streams=StreamCap(per_client=1, total=1)))
    server = ServerThread(app).start()
    browser = chromium_driver(tmp_path / "chromium")
    taker = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        server.call(sim.new_game)
        taker.request("GET", "/api/stream")
        assert taker.getresponse().status == 200          # the only place is taken
        browser.get(server.url + "/")
        wait_for(lambda: app.answers[-1:] == [503], 5, "the page's stream refused")
        time.sleep(3.0)
        assert app.answers == [200, 503], app.answers      # no hammering while refused
        taker.close()                                      # the place frees
        wait_for(lambda: app.answers[-1] == 200, 12, "the page's stream admitted", 0.1)
        assert len(app.answers) <= 4, app.answers
        before = len(browser.find_elements(By.CSS_SELECTOR, "#moves li"))
        server.call(sim.step)
        wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#moves li")) > before,
                 3, "the move on the page, live again")
    finally:
        taker.close()
        browser.quit()
        server.stop()
        sim.close()
