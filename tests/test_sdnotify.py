"""sd_notify over real AF_UNIX datagram sockets: a path, the abstract namespace, and no systemd."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_app.referee.sdnotify import notify


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A bound datagram socket standing in for systemd, and its NOTIFY_SOCKET value."""
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(2)
        yield sock, str(path)


def test_sends_one_datagram_to_a_path(listener: tuple[socket.socket, str]) -> None:
    sock, address = listener
    assert notify("READY=1\nSTATUS=refereeing Tiki Topple", {"NOTIFY_SOCKET": address})
    assert sock.recv(4096) == b"READY=1\nSTATUS=refereeing Tiki Topple"
    assert notify("WATCHDOG=1", {"NOTIFY_SOCKET": address})
    assert sock.recv(4096) == b"WATCHDOG=1"


def test_abstract_namespace() -> None:
    name = f"tikiboard-test-{os.getpid()}-{id(object())}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        assert notify("READY=1", {"NOTIFY_SOCKET": "@" + name})
        assert sock.recv(4096) == b"READY=1"


def test_reads_the_process_environment(listener: tuple[socket.socket, str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    sock, address = listener
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    assert notify("STOPPING=1")
    assert sock.recv(4096) == b"STOPPING=1"


def test_unicode_status_is_utf8(listener: tuple[socket.socket, str]) -> None:
    sock, address = listener
    assert notify("STATUS=Tiki (Manami island) — ready", {"NOTIFY_SOCKET": address})
    assert sock.recv(4096).decode("utf-8") == "STATUS=Tiki (Manami island) — ready"


@pytest.mark.parametrize("env", [{}, {"NOTIFY_SOCKET": ""}, {"NOTIFY_SOCKET": "vsock:2:1234"}])
def test_without_systemd_it_is_a_quiet_false(env: dict[str, str]) -> None:
    assert notify("READY=1", env) is False


def test_a_missing_socket_is_false_not_an_exception(tmp_path: Path) -> None:
    assert notify("WATCHDOG=1", {"NOTIFY_SOCKET": str(tmp_path / "gone")}) is False
    assert notify("WATCHDOG=1", {"NOTIFY_SOCKET": "@tikiboard-nobody-listens-here"}) is False
