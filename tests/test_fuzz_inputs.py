"""Malformed input never crashes: records, traces, configuration, board geometry and tag
registries get a clear error of their own kind (what the CLI prints in one line), never a
traceback. Inputs come from hypothesis: random JSON, and valid files with parts broken."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_app.board.geometry import GeometryError, parse_geometry
from pi_app.board.registry import RegistryError, TagRegistry
from pi_app.board.trace import TraceError, parse_trace, run_trace
from pi_app.games import GameError
from pi_app.records import parse_record, replay
from pi_app.referee.config import ConfigError, parse_config

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 100) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=5),
    max_leaves=25)

VALID = {
    "topple": {"game": "topple", "options": {"players": 2}, "rounds": [{
        "line": ["Hookipa", "Kapu", "Eepo", "Nui", "Lokahi", "Akamai", "Nani", "Wikiwiki",
                 "Huhu"],
        "cards": [["Hookipa", "Lokahi", "Nani"], ["Wikiwiki", "Hookipa", "Akamai"]],
        "first": 0, "moves": ["up1 Nani", "topple Kapu", "toast"]}]},
    "manami": {"game": "manami", "options": {"shaman": True}, "villages": {
        "a1": 1, "b1": 0, "c1": 1, "a2": -1, "b2": 2, "c2": 1, "a3": 0, "b3": 1, "c3": 0},
        "first": 0, "moves": ["place b2", "shaman a1/b1", "place a1", "b2-c2"]},
    "tactiki": {"game": "tactiki", "options": {}, "setup": {
        "a1": [5, 3], "b1": [1, 4], "c1": [2, 2], "d1": [3, 5], "e1": [4, 1],
        "a5": [1, 2], "b5": [3, 4], "c5": [5, 5], "d5": [2, 3], "e5": [4, 1]},
        "moves": ["c1-c2 c2-c3", "a5-a4 b5-b4"]},
}


def replay_text(text: str) -> None:
    # RecordError is a GameError: the CLI prints it in one line and exits 2.
    with contextlib.suppress(GameError):
        replay(parse_record(text))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_random_json_records(value: Any) -> None:
    replay_text(json.dumps(value))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(VALID)), st.data(), json_values)
def test_valid_records_with_one_part_broken(game: str, data: st.DataObject,
                                            junk: Any) -> None:
    record = json.loads(json.dumps(VALID[game]))
    path = data.draw(st.sampled_from(_paths(record)[1:]))
    target = record
    for key in path[:-1]:
        target = target[key]
    if data.draw(st.booleans()):
        target[path[-1]] = junk
    elif isinstance(target, dict):
        del target[path[-1]]
    else:
        target.pop(path[-1])
    replay_text(json.dumps(record))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40), json_values.map(json.dumps)), max_size=8))
def test_random_trace_lines(lines: list[str]) -> None:
    header = json.dumps({"trace": 1, "game": "topple", "record": VALID["topple"],
                         "registry": {"04000000000001": "Hookipa"}})
    for candidate in (lines, [header, *lines]):
        with contextlib.suppress(TraceError):
            run_trace(parse_trace(candidate), linger=0.5)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["station", "sensors", "timing", "leds", "web", "x"]),
                       json_values, max_size=4))
def test_random_configuration(data: dict[str, Any]) -> None:
    with contextlib.suppress(ConfigError):
        parse_config(data)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_random_geometry_and_registry(value: Any) -> None:
    with contextlib.suppress(GeometryError):
        parse_geometry(value)
    with contextlib.suppress(RegistryError):
        TagRegistry(value if isinstance(value, dict) else {})
