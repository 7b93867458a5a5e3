"""The simulated presence contacts follow the physics of the pieces, whatever the noise.

The sensor model adds rough contacts on top of what the hands do (a contact that closes early
under a piece set down slowly or carried just above, one that chatters when a piece lands), but
a contact is one switch under one cell: once a piece lies on it, it is closed, and the firmware
reports changes only. These tests check that against the pieces' own timeline (the hands'
actions), never against what the station makes of it.
"""

from __future__ import annotations

import random
from collections import defaultdict
from itertools import pairwise

import pytest

from pi_app.board.equipment import registry_for
from pi_app.board.geometry import Geometry, load_geometry
from pi_app.games import get_game
from pi_app.readings import PresenceChanged, SensorEvent
from pi_app.sim.hands import Action, Hands, Noise, PhysicalBoard
from pi_app.sim.sensors import SensorModel


def reported(events: list[SensorEvent]) -> dict[int, list[tuple[float, bool]]]:
    """Per presence sensor, what the firmware reported, in order."""
    out: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for event in sorted(events, key=lambda e: e.t):
        if isinstance(event, PresenceChanged):
            out[event.sensor].append((event.t, event.present))
    return out


def state_at(changes: list[tuple[float, bool]], t: float, start: bool) -> bool:
    state = start
    for at, closed in changes:
        if at > t:
            break
        state = closed
    return state


def test_a_contact_covered_again_before_its_opening_was_reported_stays_closed() -> None:
    """Nui is lifted off s4 and Lokahi set down on it 30 ms later, slowly (the contact closes
    a few millimetres early): the contact was never open long enough to report it. The old
    model reported the early closing first and the opening after it, leaving s4 open under
    Lokahi for good."""
    geometry, registry = load_geometry("topple"), registry_for("topple")
    board = PhysicalBoard(geometry, registry)
    board.set_view({"s4": ("Nui",), "s5": ("Lokahi",)})
    sensors = SensorModel(geometry, random.Random(3), early=1.0)
    sensors.lay_out({c: list(u) for c, u in board.cells.items()}, 0.0)
    nui, lokahi = board.cells["s4"][0], board.cells["s5"][0]
    actions = [Action(1.0, lokahi, "s5", put=False), Action(1.2, nui, "s4", put=False),
               Action(1.23, lokahi, "s4", put=True)]
    sensor = geometry.cell("s4").presence
    assert sensor is not None
    changes = reported(sensors.run(actions))[sensor]
    assert state_at(changes, 99.0, True) is True, changes
    assert all(a[1] != b[1] for a, b in pairwise(changes)), changes


def test_a_carried_tikis_early_blip_ends_when_another_tiki_lands_there() -> None:
    """A tiki carried just above the empty s9 closes its contact early for a moment; before
    that blip would have ended another tiki is set down on s9. The contact stays closed: the
    old model ended the blip after the landing and left s9 open under the tiki."""
    geometry, registry = load_geometry("topple"), registry_for("topple")
    board = PhysicalBoard(geometry, registry)
    board.set_view({"s8": ("Nui",), "s7": ("Lokahi",)})
    sensors = SensorModel(geometry, random.Random(5), early=1.0)
    sensors.lay_out({c: list(u) for c, u in board.cells.items()}, 0.0)
    nui, lokahi = board.cells["s8"][0], board.cells["s7"][0]
    actions = [Action(0.9, lokahi, "s7", put=False), Action(0.95, nui, "s8", put=False),
               Action(1.0, lokahi, "s9", put=True, hover=True),
               Action(1.03, lokahi, "s9", put=False, hover=True),
               Action(1.045, nui, "s9", put=True)]
    sensor = geometry.cell("s9").presence
    assert sensor is not None
    changes = reported(sensors.run(actions))[sensor]
    assert state_at(changes, 99.0, False) is True, changes
    assert all(a[1] != b[1] for a, b in pairwise(changes)), changes


@pytest.mark.parametrize("game_name", ["topple", "manami"])
def test_every_contact_is_closed_while_a_piece_lies_on_it(game_name: str) -> None:
    """Whole games of moves by rough hands (slides over neighbours, pieces carried above
    cells, knocks, fumbles) on contacts that close early and chatter: from 0.1 s after a piece
    lands until the next action on its cell, the firmware's last word on that contact is
    "closed"; it never reports the same state twice in a row; and once the hands are done every
    contact says what lies on its cell."""
    game, geometry, registry = get_game(game_name), load_geometry(game_name), \
        registry_for(game_name)
    checked = 0
    for seed in range(12):
        rng = random.Random(seed)
        state = game.new_game(rng)
        board = PhysicalBoard(geometry, registry)
        board.set_view(game.expected_view(state))
        noise = Noise(slide=0.5, hover=True, knock=0.2, fumble=0.2, slide_dwell=(0.02, 0.1))
        hands = Hands(rng, noise, pace=(0.02, 0.06))  # quick hands: contacts overlap
        sensors = SensorModel(geometry, rng, early=0.6, flicker=0.3)
        sensors.lay_out({c: list(u) for c, u in board.cells.items()}, 0.0)
        closed: dict[int, bool] = {}
        for cell in geometry.cells:
            if cell.presence is not None:
                closed[cell.presence] = board.resting(cell.name)
        t = 1.0
        for _ in range(25):
            if game.is_over(state) or game.to_move(state) is None:
                break
            move = game.random_move(state, rng)
            after = game.apply(state, move)
            actions, t = hands.change(board, game.placement_view(state, move), t)
            more, t = hands.change(board, game.expected_view(after), t)
            actions += more
            state = after
            events = sensors.run(actions)
            checked += _landings_hold(actions, events, geometry, closed)
            for sensor, changes in reported(events).items():
                assert all(a[1] != b[1] for a, b in zip([(0.0, closed[sensor]), *changes],
                                                        changes, strict=False)), changes
                closed[sensor] = changes[-1][1]
            for cell in geometry.cells:
                if cell.presence is not None:
                    assert closed[cell.presence] == board.resting(cell.name), cell.name
            t += 1.0
    assert checked > 100


def _landings_hold(actions: list[Action], events: list[SensorEvent], geometry: Geometry,
                   closed: dict[int, bool]) -> int:
    """Check every landing of these actions (``closed``: each contact as reported before
    them); how many were checked."""
    per_cell: dict[str, list[Action]] = defaultdict(list)
    for action in actions:
        if action.cell is not None:
            per_cell[action.cell].append(action)
    changes = reported(events)
    checked = 0
    for name, acts in per_cell.items():
        sensor = geometry.cell(name).presence
        if sensor is None:
            continue
        for i, action in enumerate(acts):
            if not action.put or action.hover:
                continue
            until = acts[i + 1].t if i + 1 < len(acts) else action.t + 1.0
            probe = action.t + 0.1
            while probe < until:
                assert state_at(changes[sensor], probe, closed[sensor]), (name, action, changes)
                probe += 0.02
            checked += 1
    return checked
