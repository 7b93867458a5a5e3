"""The long soak's wire scans at the board's real pace (issue 19): each virtual reader scan
takes what the firmware's driver takes on the emulated chip for the tags in its field
(``pi_app.sim.sensors.SCAN_MS``), so the cycle the firmware measures and reports (SCAN_TIMES)
follows what lies on the board, and the station times its settling on that figure.

The wire used to scan one reader per fixed step, ``scan_period / readers``: the firmware then
reported the board file's slowest cycle (TacTiki 0.55 s) whatever lay on the board.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator

import pytest

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Follower
from pi_app.board.geometry import Geometry, load_geometry
from pi_app.board.pacing import CYCLES, paced
from pi_app.games import get_game
from pi_app.readings import HardwareFault, HwEvent, ScanCycle
from pi_app.sim.sensors import REREAD_CYCLES, SCAN_MS
from tools.bench.longsoak import Faults, VirtualWire, play_one


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.WARNING)  # the link logs its handshake
    yield
    logging.disable(logging.NOTSET)


def _expected_ms(geometry: Geometry, cells: dict[str, list[str]]) -> float:
    """What SCAN_TIMES should say for a still board: every occupied reader at its scan's cost
    by tag count, plus this cycle's share of re-reads of the empty ones."""
    costs = SCAN_MS[geometry.reader_chip]
    occupied = [len(cells[c.name]) for c in geometry.cells if c.reader is not None
                and cells[c.name]]
    empty = geometry.reader_count - len(occupied)
    share = -(-empty // REREAD_CYCLES)
    return sum(costs[min(n, len(costs) - 1)] for n in occupied) + share * costs[0]


def test_the_reported_cycle_follows_the_pieces_on_the_board_and_paces_the_follower() -> None:
    """TacTiki's start (two tags on each of a1-e1 and a5-e5): the firmware reports the sum of
    its occupied readers' scans and a share of re-reads (about 0.41 s with the Pico's
    interpreter time, issue 35), or the cycle the pieces were laid in; every piece on a cell
    of its own (rows 1, 2, 4 and 5): single tags, a 1-slot round each. A follower fed the
    wire's events times its waits on each."""
    geometry = load_geometry("tactiki")
    registry = registry_for("tactiki")
    game = get_game("tactiki")
    follower = Follower(game, game.new_game(random.Random(1)), geometry, registry)
    wire = VirtualWire(geometry, random.Random(1), Faults.none())
    uids = iter(registry)
    cells: dict[str, list[str]] = {c.name: [] for c in geometry.cells}
    for col in "abcde":
        for row in "15":
            cells[col + row] = [next(uids), next(uids)]
    reported: list[float] = []

    def still(at: float, seconds: float) -> float:
        events: list[HwEvent] = [*wire.lay_out(cells, at), *wire._idle_until(at + seconds)]
        for event in events:
            if not isinstance(event, HardwareFault):
                follower.feed(event, max(event.t, 0.0))
        periods = [e.period for e in events if isinstance(e, ScanCycle)]
        assert periods, "no SCAN_TIMES reached the host"
        reported.append(periods[-1])
        assert follower.tracker.scan_period == periods[-1]
        follower.tick(wire.now)
        return periods[-1]

    start = still(1.0, 5.0)
    # The report covers the cycle the twenty pieces were laid in: each occupied reader read
    # at once when its contact closed and again in its turn, up to twice the still board's
    # cycle (issue 35: with empty cells' readers at 5 ms the round-robin reaches the new
    # stacks before their contacts' reads are done); the model idles once nothing changes,
    # so that cycle stays among the last eight.
    still_ms = _expected_ms(geometry, cells) / 1000
    assert still_ms - 0.01 <= start <= 2 * still_ms + 0.02, reported
    assert 0.38 <= still_ms <= 0.45  # firmware/README.md, "Scan cycle": start ≈ 0.40 s
    configured = follower.configured_waits.as_dict()  # the waits as configured, unpaced
    assert follower.tracker.miss_grace == pytest.approx(
        max(configured["miss_grace"], CYCLES["miss_grace"] * start))
    for col in "abcde":  # every piece on a cell of its own
        for row, to in (("1", "2"), ("5", "4")):
            cells[col + to] = [cells[col + row].pop()]
    more = still(wire.now + 0.5, 7.0)
    more_ms = _expected_ms(geometry, cells) / 1000
    assert more_ms - 0.01 <= more <= 2 * more_ms + 0.02, reported
    waits = paced(configured, more)
    assert follower.tracker.miss_grace == pytest.approx(waits["miss_grace"])
    assert follower.revise_placed == pytest.approx(waits["revise_placed"])
    # spread out, single tags cost a 1-slot round each (issue 35): cheaper than the stacks
    assert (waits["revise_placed"] > paced(configured, start)["revise_placed"]) == (
        more > start)


def test_the_soaked_station_times_its_waits_on_the_reported_cycle() -> None:
    """A few moves of a long-soak game: the station's tracker holds the cycle the firmware
    last reported over the link, the start position's (about 0.36 s), not the board file's
    0.55 s."""
    stats, referee, wire, _ = play_one("tactiki", 7, Faults.none(), max_decisions=3)
    assert stats.moves_made >= 1
    assert wire.link.scan_times is not None
    period = wire.link.scan_times.cycle_ms / 1000
    tracker = referee.station.follower.tracker
    assert tracker.scan_period == period
    assert 0.3 <= period <= 0.5 and period != load_geometry("tactiki").scan_period
