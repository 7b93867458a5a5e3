"""The station times its waits on the scan cycle the firmware measures (issue 19), and
``tikiboard sim --trace --json`` says when each move was accepted (issue 18).

The first tests run the real firmware (tikifw) behind a pty with simulated readers that take
their time, the real serial link and the real follower: what the firmware measures must reach
the tracker and stretch the waits that stand for "until the readers have looked again".
"""

from __future__ import annotations

import json
import queue
import random
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Follower, Outcome
from pi_app.board.geometry import load_geometry
from pi_app.board.pacing import CYCLES, paced
from pi_app.board.trace import Trace, event_from_json, event_to_json, run_trace
from pi_app.cli import main
from pi_app.games import get_game
from pi_app.hw.link import SerialLink
from pi_app.hw.simfirmware import SimFirmware
from pi_app.readings import HwEvent, PresenceChanged, ScanCycle, SensorEvent, TagsSeen
from pi_app.records import replay
from pi_app.sim.hands import Hands, PhysicalBoard
from pi_app.sim.sensors import SensorModel


def _measured(sim: SimFirmware, follower: Follower, at_least: float,
              timeout: float = 6.0) -> list[ScanCycle]:
    """Run the link on ``sim`` into ``follower`` until it reports a cycle of ``at_least``."""
    events: queue.Queue[HwEvent] = queue.Queue()
    cycles: list[ScanCycle] = []
    with SerialLink(sim.path, events.put, heartbeat_timeout=3.0) as link:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                event = events.get(timeout=0.1)
            except queue.Empty:
                continue
            if isinstance(event, ScanCycle):
                cycles.append(event)
            if isinstance(event, SensorEvent):
                now = time.monotonic()
                follower.feed(event, max(now, event.t))
            if cycles and cycles[-1].period >= at_least:
                break
        assert link.scan_times is not None
    return cycles


@pytest.mark.realtime
def test_a_slow_board_measured_by_the_firmware_stretches_the_waits() -> None:
    """A Manami board file says 0.385 s; the firmware behind the pty takes 0.5 s per reader,
    two readers: it measures and reports about a second, and from then on a tag missed on a
    closed cell is kept a whole cycle (it comes back at its reader's next turn) and a move
    onto a stack rests half a cycle."""
    game = get_game("manami")
    geometry = load_geometry("manami")
    follower = Follower(game, game.new_game(random.Random(1)), geometry, registry_for("manami"))
    assert follower.tracker.scan_period == geometry.scan_period  # the board file's, at first
    before = follower.tracker.miss_grace
    with SimFirmware(2, 2, board="manami", scan_period_ms=20, heartbeat_ms=200,
                     reader_ms=500) as sim:
        cycles = _measured(sim, follower, at_least=0.9)
    period = cycles[-1].period
    assert 0.9 <= period <= 1.5, cycles
    assert cycles[-1].reader is not None and 0.45 <= cycles[-1].reader <= 0.75
    assert follower.tracker.scan_period == period
    assert follower.tracker.miss_grace == pytest.approx(CYCLES["miss_grace"] * period)
    assert follower.tracker.miss_grace > before
    next_deadline = follower.next_deadline(follower.tracker.last_change)
    assert next_deadline is not None
    waits = paced({"settle_min": geometry.settle_min}, period)
    assert waits["settle_min"] == pytest.approx(0.5 * period)
    assert waits["settle_min"] > geometry.settle_min


@pytest.mark.realtime
def test_a_fast_board_keeps_the_configured_waits() -> None:
    """Readers that answer at once: the firmware measures next to nothing, and the waits stay
    at their configured floors (the station's figures for players' hands)."""
    game = get_game("manami")
    geometry = load_geometry("manami")
    follower = Follower(game, game.new_game(random.Random(1)), geometry, registry_for("manami"))
    with SimFirmware(2, 2, board="manami", scan_period_ms=20, heartbeat_ms=100) as sim:
        cycles = _measured(sim, follower, at_least=0.0)
    assert cycles and cycles[-1].period < 0.05
    assert follower.tracker.miss_grace == 0.6
    assert follower.settle == 0.25 and follower.grace == 1.2


def test_a_missed_tag_on_a_closed_cell_stays_a_measured_cycle() -> None:
    """Told a cycle of 1.2 s, the tracker keeps a tag its reader stopped reporting on a closed
    cell for that long; at the board file's pace (0.6 s floor) it would have dropped it."""
    geometry = load_geometry("manami")
    game = get_game("manami")
    follower = Follower(game, game.new_game(random.Random(1)), geometry, registry_for("manami"))
    cell = geometry.cell("a1")
    assert cell.reader is not None and cell.presence is not None
    uid = next(iter(registry_for("manami")))
    tracker = follower.tracker
    follower.feed(ScanCycle(0.5, 1.2, 0.05), 0.5)
    follower.feed(PresenceChanged(1.0, cell.presence, True), 1.0)
    follower.feed(TagsSeen(1.0, cell.reader, frozenset({uid})), 1.0)
    follower.tick(1.5)
    follower.feed(TagsSeen(2.0, cell.reader, frozenset()), 2.0)
    follower.tick(2.9)
    assert tracker.observation(2.9).pieces.get("a1"), "dropped before its reader's next turn"
    follower.tick(3.3)
    assert not tracker.observation(3.3).pieces.get("a1")


def test_scan_cycles_go_through_traces() -> None:
    event = ScanCycle(1.5, 0.384, 0.059)
    assert event_from_json(json.loads(json.dumps(event_to_json(event)))) == event
    assert event_from_json({"t": 0, "type": "scan", "period": 1.0}) == ScanCycle(0.0, 1.0)


def test_the_simulated_sensors_read_a_piece_set_down_ahead_of_the_round_robin() -> None:
    """As the firmware does: a presence change puts its cell's reader next, so on a 25-reader
    board scanning at 1 s a piece set down on an empty field is read within a reader's scan."""
    geometry = load_geometry("tactiki")
    registry = registry_for("tactiki")
    model = SensorModel(geometry, random.Random(3), scan_period=geometry.scan_period)
    board = PhysicalBoard(geometry, registry)
    model.lay_out({c: list(u) for c, u in board.cells.items()}, 0.0)
    uid = next(iter(registry))
    actions, _ = Hands(random.Random(3)).change(board, {"e5": (registry.lookup(uid) or "",)},
                                                 1.0)
    events = model.run(actions)
    put = max(a.t for a in actions)
    reads = [e for e in events if isinstance(e, TagsSeen) and e.tags]
    step = geometry.scan_period / geometry.reader_count
    assert reads and reads[0].t - put <= model.presence_debounce + 2 * step, (reads[0], put)


def _manami_trace(tmp_path: Path) -> Path:
    """A Manami trace of three moves made by simulated hands through the sensor model."""
    from pi_app.sim.table import simulate_trace

    game = get_game("manami")
    header, events = simulate_trace(game, load_geometry("manami"), registry_for("manami"), 4, 3)
    path = tmp_path / "manami.trace"
    Trace(header, events).save(path)
    return path


def test_sim_trace_json_gives_each_accepted_move_its_time(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    path = _manami_trace(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["sim", "--trace", str(path), "--json"])
    assert exited.value.code == 0
    out = json.loads(capsys.readouterr().out)
    accepted = out["accepted"]
    assert [a["move"] for a in accepted] == out["moves"] and len(accepted) == 3
    times = [a["t"] for a in accepted]
    assert times == sorted(times) and times[0] > 0
    for entry in accepted:
        assert entry["rested"] <= entry["t"] <= entry["rested"] + 2.0
        assert entry["how"] in ("at once", "rested", "settled", "asked", "forced")
        assert isinstance(entry["prompts"], list) and isinstance(entry["guidance"], list)


def test_guidance_is_given_with_the_move_it_led_to() -> None:
    """A Topple tiki lifted out of the middle of the line and held (a mismatch is shown), put
    back, then an Up 1: the guidance shown on the way is listed with that move, before it."""
    from rig import Rig

    record = {"game": "topple", "options": {"players": 2},
              "rounds": [{"line": ["Hookipa", "Kapu", "Eepo", "Nui", "Lokahi", "Akamai",
                                   "Nani", "Wikiwiki", "Huhu"],
                          "cards": [["Hookipa", "Lokahi", "Nani"],
                                    ["Wikiwiki", "Hookipa", "Akamai"]],
                          "first": 0, "moves": []}]}
    start = replay(record)
    assert start.ok
    rig = Rig("topple", start.state)
    layout = SensorModel(rig.geometry, random.Random(0))  # the board as it lay at the start
    events: list[SensorEvent] = layout.lay_out({c: list(u) for c, u in rig.board.cells.items()},
                                                0.0)
    deliver = rig.deliver

    def record_events(batch: Sequence[SensorEvent], linger: float = 3.0) -> list[Outcome]:
        events.extend(batch)
        return deliver(batch, linger)

    rig.deliver = record_events  # type: ignore[method-assign,assignment]
    assert Rig.guidance(rig.act(("lift", "Nani", "s7"), linger=3.0))
    rig.act(("put", "Nani", "s7"), linger=1.0)
    assert Rig.accepted(rig.act(("lift", "Nui", "s4"), ("lift", "Eepo", "s3"),
                                ("put", "Nui", "s3"), ("put", "Eepo", "s4"))) == ["up1 Nui"]
    header = {"trace": 1, "game": "topple", "record": record,
              "registry": dict(registry_for("topple")), "geometry": "topple"}
    accepted = run_trace(Trace(header, events)).accepted()
    assert [a["move"] for a in accepted] == ["up1 Nui"]
    guided = accepted[0]["guidance"]
    assert guided and guided[0]["kind"] == "mismatch"
    assert any("Nani" in fix for fix in guided[0]["fixes"])
    assert all(g["t"] < accepted[0]["rested"] <= accepted[0]["t"] for g in guided)
    assert accepted[0]["how"] == "settled" and accepted[0]["prompts"] == []
