"""Shared test set-up. Hardware: mock GPIO, pty pairs, and no reaching for real devices.

The environment variables are set before anything imports gpiozero or Blinka: gpiozero then
uses MockFactory pins, Blinka its OS-agnostic board and never offers to install packages,
pygame stays quiet, and lgpio (should anything load it) keeps its pipe out of the tree.
"""

from __future__ import annotations

import contextlib
import os
import tty
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")
os.environ.setdefault("BLINKA_OS_AGNOSTIC", "1")
os.environ.setdefault("BLINKA_SKIP_DEPENDENCY_CHECK", "1")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ.setdefault("LG_WD", "/tmp")


@pytest.fixture
def mock_factory() -> Iterator[Any]:
    """A fresh gpiozero MockFactory as the default pin factory, reset afterwards."""
    from gpiozero import Device  # type: ignore[import-untyped]
    from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped]

    previous = Device.pin_factory
    Device.pin_factory = MockFactory()
    try:
        yield Device.pin_factory
    finally:
        Device.pin_factory.reset()
        Device.pin_factory = previous


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, str]]:
    """(master fd, slave path): the test plays the device on the master side, raw mode."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    try:
        yield master, os.ttyname(slave)
    finally:
        for fd in (master, slave):
            with contextlib.suppress(OSError):
                os.close(fd)
