"""Shared set-up of the tournament (``pi_app.net``) tests: a real mosquitto, servers, Chromium.

Import the fixtures a test module uses (``from net_fixtures import broker``). Everything binds to
127.0.0.1 on ports the OS picked, every process is stopped by its pid, every wait has a deadline.
A missing mosquitto or Chromium is an error, not a skip: ``tests/bootstrap.sh`` installs them.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import http.client
import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import uvicorn

from pi_app.net.broker import BrokerFiles, BrokerProcess, free_port, write_broker_config
from pi_app.net.dashboard import DashboardConfig, build_dashboard
from pi_app.net.desk import Desk
from pi_app.net.mqtt import BrokerOptions

T = TypeVar("T")
EVENT = "testcup"
REFEREE = "referee"
REFEREE_PASSWORD = "referee-secret"
BOARDS = [f"t{i:02d}" for i in range(40)] + ["alpha", "beta"]


def password_of(board: str) -> str:
    return f"pw-{board}"


@dataclass
class Broker:
    files: BrokerFiles
    process: BrokerProcess

    @property
    def port(self) -> int:
        return self.files.port

    def options(self, user: str, password: str | None = None) -> BrokerOptions:
        secret = password if password is not None else (
            REFEREE_PASSWORD if user == REFEREE else password_of(user))
        return BrokerOptions(host="127.0.0.1", port=self.port, username=user, password=secret)

    def restart(self, down: float = 0.0) -> None:
        self.process.stop()
        time.sleep(down)
        self.process.start()


@pytest.fixture(scope="session")
def broker() -> Iterator[Broker]:
    """One mosquitto for the whole session: auth, ACL and persistence as at a venue."""
    directory = Path(tempfile.mkdtemp(prefix="tiki-broker-"))
    port = free_port()
    files = write_broker_config(directory, event=EVENT,
                                boards={b: password_of(b) for b in BOARDS},
                                referee_user=REFEREE, referee_password=REFEREE_PASSWORD,
                                port=port, log=directory / "mosquitto.log",
                                user=getpass.getuser())
    process = BrokerProcess(files.conf, "127.0.0.1", port, log=directory / "mosquitto.out")
    process.start()
    try:
        yield Broker(files, process)
    finally:
        process.stop()
        shutil.rmtree(directory, ignore_errors=True)


class QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers (the test process owns its signals)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class ServerThread:
    """An ASGI app served by uvicorn on its own loop in a thread, on a pre-bound socket."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.loop = asyncio.new_event_loop()
        config = uvicorn.Config(app, log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=1)
        self.server = QuietServer(config)
        self.thread = threading.Thread(target=self._run, daemon=True, name="uvicorn-test")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve(sockets=[self.sock]))

    def start(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the test server did not start"
            assert self.thread.is_alive(), "the test server died"
            time.sleep(0.01)
        return self

    def call(self, fn: Callable[[], T], timeout: float = 5.0) -> T:
        """Run ``fn`` on the server's loop (where the feed and desk live) and wait for it."""
        async def run() -> T:
            return fn()
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        self.sock.close()
        if not self.thread.is_alive():
            self.loop.close()


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()


def request(port: int, method: str, path: str, body: Any = None,
            headers: dict[str, str] | None = None, timeout: float = 5.0) -> Response:
    """One HTTP request to 127.0.0.1 (no redirects followed, no cookies kept)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    data: bytes | None = None
    sent = dict(headers or {})
    if isinstance(body, bytes | str):
        data = body.encode() if isinstance(body, str) else body
    elif body is not None:
        data = json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=data, headers=sent)
        reply = conn.getresponse()
        return Response(reply.status, {k.lower(): v for k, v in reply.getheaders()},
                        reply.read())
    finally:
        conn.close()


def wait_for(check: Callable[[], bool], timeout: float, what: str, step: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


@dataclass
class Dashboard:
    server: ServerThread
    desk: Desk
    config: DashboardConfig

    def call(self, fn: Callable[[], T]) -> T:
        return self.server.call(fn)


def end_session(broker: Broker, user: str) -> None:
    """Connect as ``user`` with a clean start and no session expiry: the broker drops the
    user's queued session (its client id is the user name)."""
    from pi_app.net.mqtt import new_client

    client = new_client(user, broker.options(user))
    client.connect("127.0.0.1", broker.port, clean_start=True)
    client.loop_start()
    try:
        wait_for(client.is_connected, 5, f"{user} to connect")
    finally:
        client.disconnect()
        client.loop_stop()


@contextlib.contextmanager
def running_dashboard(broker: Broker, directory: Path, *,
                      referees: dict[str, str] | None = None,
                      client_db: str = "referee.sqlite") -> Iterator[Dashboard]:
    """The real dashboard app (MQTT subscriber in its lifespan) with a fresh session.

    The broker ties the session to the user name (``use_username_as_clientid``), so the
    referee's session left by an earlier test is ended first."""
    end_session(broker, REFEREE)
    config = DashboardConfig(event=EVENT, db=directory / client_db,
                             broker=broker.options(REFEREE), secret=os.urandom(32),
                             referees=referees or {})
    app, desk = build_dashboard(config)
    server = ServerThread(app).start()
    try:
        yield Dashboard(server, desk, config)
    finally:
        server.stop()


def chromium_driver(user_data: Path) -> Any:
    """Headless Debian Chromium through /usr/bin/chromedriver; never downloads a browser."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must not fetch anything
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={user_data}", "--window-size=1200,900"):
        options.add_argument(flag)
    service = Service(executable_path="/usr/bin/chromedriver")
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(15)
    driver.set_script_timeout(10)
    return driver


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium per test module (``from net_fixtures import driver``).

    Starting Chromium costs about a second, so the page tests of a module share one browser
    and each test loads the page it needs; it is quit even when a test fails.
    """
    browser = chromium_driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield browser
    finally:
        browser.quit()
