"""One error root: every exception the project defines derives from ``TikiError``, and input
that cannot be read (a record, a frame, a configuration...) is an ``UnreadableInput``, apart from
an illegal move, which is well-formed input the rules refuse."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import random

import pytest

import pi_app
from pi_app.errors import TikiError, UnreadableInput
from pi_app.games import IllegalMove, RecordError, get_game
from pi_app.hw.frames import FrameDecoder, FrameError
from pi_app.records import parse_record
from pi_app.referee.config import ConfigError, parse_config


def _project_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in a module of the package (``__main__`` runs the CLI)."""
    found = []
    for info in pkgutil.walk_packages(pi_app.__path__, "pi_app."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        found += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, BaseException) and cls.__module__ == info.name]
    return found


def test_every_project_exception_has_the_one_root() -> None:
    found = _project_exceptions()
    assert len(found) >= 20  # the walk really saw the package
    assert [c.__qualname__ for c in found if not issubclass(c, TikiError)] == []


def test_unreadable_input_is_apart_from_an_illegal_move() -> None:
    assert not issubclass(IllegalMove, UnreadableInput)
    assert issubclass(RecordError, UnreadableInput) and issubclass(FrameError, UnreadableInput)
    assert issubclass(ConfigError, UnreadableInput)
    # (the built-in bases stay, so existing handlers catch what they caught)
    assert issubclass(FrameError, ValueError) and issubclass(ConfigError, ValueError)


def test_real_failures_raise_the_right_branch() -> None:
    with pytest.raises(UnreadableInput):
        parse_record("{not json")
    with pytest.raises(UnreadableInput):
        parse_config({"station": {"board": 7}}, "test")
    game = get_game("topple")
    with pytest.raises(TikiError) as illegal:
        game.apply_text(game.new_game(random.Random(1)), "toast Nobody")
    assert isinstance(illegal.value, IllegalMove)
    assert not isinstance(illegal.value, UnreadableInput)
    bad = [item for item in FrameDecoder().feed(b"\x05\x01\x02\x03\x04\x00")
           if isinstance(item, FrameError)]
    assert bad and isinstance(bad[0], UnreadableInput)
