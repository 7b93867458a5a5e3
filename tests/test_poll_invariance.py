"""The station's decisions depend on the pictures, their times and its own deadlines, never on
when it is polled (issue 18).

A real station hears the firmware's measured scan cycle (``ScanCycle``, every 0.5 s) and steps
at other moments too (a button, a bot's answer, a redraw): each is a ``step`` that ends with
``follower.prepare(now)``. A report of the period already in force, or a poll between two
deadlines, must change nothing. With the sensor model's ``report_cycle`` on, the accuracy bench
and some scenario tests did worse; the cause was not a poll: the model sent reports after a
run's last reading, and the simulated table and ``tests/rig.py`` time the players' next move
from a run's last event, so the players paused longer than they meant to.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rig import Rig
from test_inference_pace import toasted
from test_neighbour_tags import tactiki_follower

from pi_app.board.equipment import registry_for
from pi_app.board.follower import Follower, Guidance, MoveAccepted, Outcome
from pi_app.board.geometry import load_geometry
from pi_app.games import get_game
from pi_app.readings import HwEvent, PresenceChanged, ScanCycle, SensorEvent, TagsSeen
from pi_app.sim.hands import Action, Noise
from pi_app.sim.sensors import REPORT_EVERY, SensorModel
from pi_app.sim.table import FollowerReferee, Pace, Rates, SimTable


@dataclass
class Reporting:
    """A sensor model whose runs carry the firmware's ``ScanCycle`` every
    :data:`REPORT_EVERY` seconds between their first and last reading, always with the
    board file's period: news of nothing, as far as the pictures and the waits go."""

    model: SensorModel
    period: float

    def lay_out(self, cells: dict[str, list[str]], t: float) -> list[SensorEvent]:
        return self.model.lay_out(cells, t)

    def run(self, actions: Iterable[Action]) -> list[SensorEvent]:
        events = self.model.run(actions)
        if not events:
            return events
        first, last = events[0].t, events[-1].t
        reports = [ScanCycle(REPORT_EVERY * k, self.period)
                   for k in range(int(first / REPORT_EVERY) + 1, int(last / REPORT_EVERY) + 1)]
        return sorted([*events, *reports], key=lambda e: e.t)


@dataclass
class Polled(FollowerReferee):
    """The follower, stepped also at times of its own (a button, a bot, a redraw would step a
    station then): gaps drawn from ``rng``, independent of play. The extra steps are taken
    inside, before the table's next call, so the table's clock (which times the players'
    next move) is the same with them or without."""

    rng: random.Random = field(default_factory=random.Random)
    _next: float = 0.0

    def _poll_until(self, now: float) -> list[Outcome]:
        out: list[Outcome] = []
        while self._next < now:
            if self._next > 0.0:
                out += self.follower.tick(self._next) + self.follower.prepare(self._next)
            self._next += self.rng.uniform(0.02, 0.8)
        return out

    def feed(self, event: HwEvent, now: float) -> list[Outcome]:
        return self._poll_until(now) + super().feed(event, now)

    def tick(self, now: float) -> list[Outcome]:
        return self._poll_until(now) + super().tick(now)


def accepted(game_name: str, seed: int, moves: int, *, polls: int | None = None,
             reports: bool = False) -> list[tuple[str, float]]:
    """Varied-pace players (as ``tools.bench.accuracy --players varied``) make ``moves`` moves
    on a noisy board; the moves the follower accepted and when."""
    game, geometry, registry = get_game(game_name), load_geometry(game_name), \
        registry_for(game_name)
    rng = random.Random(seed)
    fast = rng.uniform(0.06, 0.3)
    model = SensorModel(geometry, rng, scan_period=geometry.scan_period,
                        miss=rng.uniform(0.0, 0.08), flicker=rng.uniform(0.0, 0.1),
                        chatter=rng.uniform(0.0, 0.02), early=rng.uniform(0.0, 0.2))
    state = game.new_game(rng)
    follower = Follower(game, state, geometry, registry)
    referee = FollowerReferee(follower) if polls is None else \
        Polled(follower, random.Random(polls))
    table = SimTable(game, geometry, registry, rng, state=state, referee=referee,
                     sensors=Reporting(model, geometry.scan_period) if reports else model,
                     noise=Noise.varied(rng, game_name != "topple"), rates=Rates.table(),
                     pace=Pace(), hand_pace=(fast, fast + rng.uniform(0.1, 0.6)))
    for _ in range(moves):
        believed = table.believed
        if game.is_over(believed) or game.to_move(believed) is None:
            break
        table.play_move(game.random_move(believed, rng))
    table.end_row()
    return [(a.text, round(a.t, 6)) for a in table.accepted]


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow])
@given(game_name=st.sampled_from(["topple", "manami", "tactiki"]),
       seed=st.integers(0, 10_000), polls=st.integers(0, 10_000))
def test_polls_and_reports_of_the_same_period_change_no_decision(
        game_name: str, seed: int, polls: int) -> None:
    plain = accepted(game_name, seed, 8)
    assert len(plain) >= 4
    assert accepted(game_name, seed, 8, polls=polls) == plain
    assert accepted(game_name, seed, 8, reports=True) == plain


def test_a_runs_reports_end_with_its_readings() -> None:
    """The model reports while it scans, but not after the run's last reading: the table
    times the players' next move from that event."""
    geometry = load_geometry("tactiki")
    model = SensorModel(geometry, random.Random(3), report_cycle=True)
    cells: dict[str, list[str]] = {c.name: [] for c in geometry.cells}
    uid = "04A1B2C3D4E5F6"
    model.lay_out({**cells, "c3": [uid]}, 0.0)
    events = model.run([Action(1.0, uid, "c3", put=False), Action(2.2, uid, "c4", put=True)])
    assert any(isinstance(e, ScanCycle) for e in events)
    assert not isinstance(events[-1], ScanCycle), events[-3:]


def test_a_topple_held_two_tikis_a_while_is_one_topple_with_the_boards_reports() -> None:
    """tests/test_inference_pace.py's hand that swaps Akamai down, then holds the bottom two
    tikis two seconds before it finishes the Topple, on a board that reports its scan cycle:
    still the Topple alone (the trailing reports made the hand pause 0.14 s longer after its
    swap, long enough for an Up 1 and two Toasts)."""
    rig = Rig("topple", toasted())
    rig.sensors.report_cycle = True
    rig.act(("lift", "Akamai", "s6"), ("lift", "Nani", "s7"), ("put", "Akamai", "s7"),
            ("put", "Nani", "s6"), gap=0.15, linger=0.0)
    rig.act(("lift", "Huhu", "s9"), ("lift", "Wikiwiki", "s8"), gap=0.45, linger=2.2)
    rig.act(("lift", "Akamai", "s7"), ("put", "Wikiwiki", "s7"), ("put", "Huhu", "s8"),
            ("put", "Akamai", "s9"), gap=0.15, linger=2.0)
    assert [t for _, t in rig.follower.history] == ["topple Akamai"]


def neighbours_read_then_half_a_turn(poll: float | None) -> list[tuple[str, float, str]]:
    """tests/test_neighbour_tags.py's neighbour's read (b1's reader reads c1's T3 at 0.5 s,
    c1 still holds it) followed by half a turn (T5 from a1 onto the empty a2 at 2.5 s), at
    TacTiki's 1.036 s cycle; the follower stepped at its deadlines, and at ``poll`` too."""
    follower, board, out = tactiki_follower(1.036)
    t5 = next(u for u in board.tracker._seen["a1"] if board.registry.lookup(u) == "T5")
    t3 = next(u for u in board.tracker._seen["c1"] if board.registry.lookup(u) == "T3")
    a2, b1 = board.geometry.cell("a2"), board.geometry.cell("b1")
    assert a2.presence is not None and a2.reader is not None and b1.reader is not None
    events: list[SensorEvent] = [TagsSeen(0.5, b1.reader, board.tracker._seen["b1"] | {t3}),
                                 PresenceChanged(2.5, a2.presence, True),
                                 TagsSeen(2.504, a2.reader, frozenset({t5}))]
    now = 1.0
    for until, event in [*((e.t, e) for e in events), (8.0, None)]:
        while (due := follower.next_deadline(now)) is not None and due <= until:
            if poll is not None and now < poll < due:
                out += follower.handle(None, poll)
            now = due
            out += follower.handle(None, now)
        if poll is not None and now < poll < until:
            out += follower.handle(None, poll)
        now = until
        if event is not None:
            out += follower.handle(event, now)
    return [(type(o).__name__, round(o.t, 3), o.text if isinstance(o, MoveAccepted) else "")
            for o in out if isinstance(o, MoveAccepted | Guidance)]


@pytest.mark.parametrize("poll", [4.2, 4.5])
def test_a_poll_after_a_contested_read_went_stale_changes_nothing(poll: float) -> None:
    """Tracker.contested lists a read on a second closed cell only for (ABSENT_MISSES+1)
    cycles. The layout's read of T5 on a1 (0.0 s) drops out at 4.14 s, T3's neighbour read
    on b1 (0.5 s) at 4.64 s; neither moment was a deadline. Stepped at its deadlines only,
    the follower next looked at 4.98 s (both gone): the half turn is shown as a mismatch.
    Stepped once in between (a ScanCycle report, a button), it saw T3 alone on b1 and took
    the turn 'a1-a2 c1-b1' that nobody made. Now each read's end is a deadline of the
    follower (``Tracker.contested_window``), and a picture read from the reads that remain
    shows from then on: the whole turn must rest from 4.14 s, and T3's read ends first."""
    plain = neighbours_read_then_half_a_turn(None)
    assert [kind for kind, _, _ in plain] == ["Guidance"]
    assert neighbours_read_then_half_a_turn(poll) == plain
