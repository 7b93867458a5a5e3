"""The long soak: thousands of whole games through the station, the store and the wire, in
virtual time.

Run ``python -m tools.bench.longsoak [--games N] [--game NAME] [--seed S]``; it prints one JSON
object (``--merge FILE...`` joins the outputs of runs split across processes into one).
``tools.bench.soak`` plays through the real daemon on real clocks, so a game takes
minutes; issue #9 asks for 1,000 games per game type, so this bench runs the same code on a
virtual clock, in one thread, and a game takes a fraction of a second of CPU.

What is real and what is simulated:

- The players are :class:`pi_app.sim.table.SimTable`'s (moves by hand with slides, hesitations
  and knocked pieces, deliberate illegal moves, takebacks, prompts answered with buttons,
  mismatches fixed as guided, every move judged phantom or missed). SimTable's two seams carry
  the difference: its ``referee`` is a real :class:`~pi_app.referee.station.Station` (a real
  :class:`~pi_app.referee.store.EventStore` in a temporary SQLite file, LED frames and OLED
  screens rendered, no drivers) and its ``sensors`` are the wire below. Players answer questions
  with the buttons only (``tap_card`` 0): a card tap is a SimTable shortcut into the follower
  that has no station path, and answering by buttons keeps every answer on the real one.
- The wire (:class:`VirtualWire`) is real code end to end: the firmware's own ``Scanner`` and
  ``Device`` (firmware/tikifw) scan simulated readers that miss stacked tags now and then and a
  presence chain that chatters (a piece held above a cell is read there but leaves its contact
  open, as ``SensorModel`` has it); the frames they write pass through fault injection (bursts of
  garbage, dropped frames, duplicated frames, the USB cable cut and plugged back in, which
  reboots the firmware) into the host's :class:`~pi_app.hw.link.SerialLink`, whose decoder,
  handshake, sequence/gap/snapshot logic, liveness timer and time base produce the events the
  station steps on. No pty and no thread: the link's ``attach``/``receive``/``lost`` (the
  steps of its reader thread) are called directly at virtual times; the firmware's clock is
  the same virtual clock in milliseconds. Each reader scan takes what the firmware's driver
  takes on the emulated chip for the tags in its field (:data:`pi_app.sim.sensors.SCAN_MS`,
  PN5180 23-54 ms, MFRC522 7-12 ms), charged to that clock, and the firmware runs at its own
  pace as on a board: one reader per poll, idle cells left out but every 8th cycle, a new cycle
  no sooner than its ``scan_period_ms`` (the default 100 ms) after the last, sleeping between
  polls when nothing is due. So the cycle it measures and reports (SCAN_TIMES), which the
  station times its settling on, follows what lies on the board (TacTiki about 0.32 s at the
  start, 0.55 s full), as a real board's does. That pace runs while hands move, until the
  firmware reports what lies on the board, and for 8 more cycles (so the report is the still
  board's); then, until the next move, it is polled every heartbeat interval instead
  (heartbeats, periodic snapshots and their faults still flow; only scans that could find
  nothing new are skipped, and the cycle in progress goes on as if its scans had followed one
  another). Events reach the station at the sensor time the link gave them, which is at most
  the presence debounce before they arrived.
- Crashes: now and then, just before an event reaches it, the station is dropped without
  closing anything (its database connection closes, as a killed process's does) and a new one
  opens the same database, as the daemon does after a SIGKILL; the link reconnects as a new
  daemon's would (handshake, snapshot). The reopened station must hold exactly the moves and
  the position accepted before.
- At the end of each game the database is exported as ``tikiboard export`` does and the record
  replayed (:func:`pi_app.records.replay`): it must reach the station's final position and
  scores (``record_mismatches`` counts those that do not: lost or extra events).

- The station's own seats (``--bots LEVEL``: seat 1 is the station's, playing at LEVEL with
  ``--bot-playouts`` per decision): the station thinks as it does in the daemon (its worker
  thread, waited for at the virtual time it was asked, so a run repeats), shows its move, and
  the simulated hand carries it out, or now and then (``wrong``) first carries out another
  legal move, which the station must refuse and guide back, and is then put right as a person
  would, before the shown move is made. The record must hold only moves the station chose.

Targets: phantom, missed, restart_losses, record_mismatches and crashes all 0; with bots also
bot_unshown and bot_wrong_taken 0, and bot_wrong_guided plus bot_wrong_asked equal to
bot_wrong_made.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import logging
import platform
import random
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from pi_app.board.equipment import registry_for
from pi_app.board.follower import (
    Follower,
    Guidance,
    MoveAccepted,
    MoveRevised,
    Outcome,
    Prompt,
    PromptCleared,
    PromptKind,
    TakenBack,
)
from pi_app.board.geometry import Geometry, load_geometry
from pi_app.board.registry import TagRegistry
from pi_app.bots import LEVELS
from pi_app.bots.base import Budget
from pi_app.games import GAME_NAMES, RecordError, get_game
from pi_app.hw.link import SerialLink
from pi_app.hw.simfirmware import firmware_module
from pi_app.readings import ButtonPressed, HwEvent, PresenceChanged, Snapshot, TagsSeen
from pi_app.records import replay
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.session import Session
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore, StoreError
from pi_app.sim.hands import Action, Noise, apply_action, resting
from pi_app.sim.sensors import SCAN_MS
from pi_app.sim.table import Rates, SimTable, TableStats


@dataclass(frozen=True)
class Faults:
    """How badly the wire and the host behave."""

    garbage: float = 0.01    # per frame: a burst of random bytes just before it
    drop: float = 0.005      # per frame: the frame never arrives
    duplicate: float = 0.005  # per frame: it arrives twice
    cut: float = 0.02        # per batch of hand actions: the USB cable is pulled, then replugged
    restart: float = 0.004   # per sensor event: the station is killed and started again

    @classmethod
    def none(cls) -> Faults:
        return cls(0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass
class WireCounts:
    """What the fault injection did, and how long the link took to come back."""

    garbage_bursts: int = 0
    frames_dropped: int = 0
    frames_duplicated: int = 0
    cuts: int = 0
    host_restarts: int = 0
    longest_reconnect_s: float = 0.0


class _HostPort:
    """The host's end of the cable: what the link writes goes to the firmware's inbox."""

    def __init__(self, inbox: bytearray) -> None:
        self.inbox = inbox

    @property
    def in_waiting(self) -> int:
        return 0

    def read(self, size: int = 1) -> bytes:
        return b""  # bytes are handed to SerialLink.receive directly

    def write(self, data: bytes, /) -> int:
        self.inbox += data
        return len(data)

    def reset_input_buffer(self) -> None:
        """Nothing is buffered on this side."""

    def close(self) -> None:
        """Nothing to release."""


class _DeviceTransport:
    """The firmware's end of the cable: every frame it writes goes through fault injection."""

    def __init__(self, wire: VirtualWire) -> None:
        self.wire = wire
        self.inbox = bytearray()

    def write(self, data: bytes) -> None:
        self.wire.transmit(data)

    def read(self) -> bytes:
        data = bytes(self.inbox)
        self.inbox.clear()
        return data


class _NoisyReader:
    """A simulated reader (the firmware's reader interface) that misses stacked tags now and
    then, as :class:`pi_app.sim.sensors.SensorModel` does: the higher the stack, the likelier.
    A scan takes the wire's virtual time that a real one takes with as many tags in the field
    (``costs``, seconds by tag count, the last for that many or more): the firmware times it,
    so the cycle it measures and reports is the board's real pace, not the poll rate's."""

    name = "SIM"

    def __init__(self, wire: VirtualWire, index: int, rng: random.Random, miss: float,
                 costs: tuple[float, ...]) -> None:
        self.wire = wire
        self.board = wire.board
        self.index = index
        self.rng = rng
        self.miss = miss
        self.costs = costs

    def init(self) -> None:
        """A simulated reader is always ready."""

    def scan(self) -> tuple[list[bytes], bool]:
        uids: tuple[bytes, ...] = self.board.tags[self.index]
        height = len(uids)
        self.wire.now += self.costs[min(height, len(self.costs) - 1)]
        chance = self.miss * (1 + height) / 2 if height > 1 else self.miss / 2
        return [u for u in uids if self.rng.random() >= chance], True


class VirtualWire:
    """Firmware, cable and host link on one virtual clock (the module text says how).

    Implements SimTable's ``Sensors``: :meth:`run` and :meth:`lay_out` yield the events the
    link hands to the station, lazily, so the station may restart (and the link reconnect)
    while the hands are still moving.
    """

    quiet_after = 0.6
    heartbeat = 0.2
    paced_cycles = 8
    """Cycles the firmware runs at its pace once the board is still, before it is polled only
    once a heartbeat: the firmware's ``reread_cycles``, so what SCAN_TIMES reports (the longest
    of the last 8 cycles, or the next one's projection) is the still board's figure, no longer
    the cycles of the move just made, as on a board that never stops; from then on it is the
    same at every report."""
    sleep = 0.005
    """While the firmware waits for its next cycle, it is polled this often (the Pico sleeps
    1 ms a poll): presence is sampled, debounced and its cell's reader put first meanwhile."""

    def __init__(self, geometry: Geometry, rng: random.Random, faults: Faults, *,
                 miss: float = 0.0, flicker: float = 0.0) -> None:
        self.geometry = geometry
        self.rng = rng
        self.faults = faults
        self.miss = miss
        self.flicker = flicker
        self.counts = WireCounts()
        self.now = 0.0
        self._fw = {name: firmware_module(name) for name in ("sim", "scanner", "device",
                                                             "proto", "pins")}
        self.board: Any = self._fw["sim"].SimBoard(geometry.reader_count,
                                                   geometry.presence_count)
        self.cells: dict[str, list[str]] = {c.name: [] for c in geometry.cells}
        self._hovering: set[str] = set()  # UIDs held above a cell: read, but not resting
        self._period = geometry.scan_period
        measured = SCAN_MS.get(geometry.reader_chip)
        self._costs = tuple(ms / 1000 for ms in measured) if measured else \
            (self._period / max(geometry.reader_count, 1),)  # a chip not measured: its share
        self._polled: tuple[Any, int] = (None, 0)  # the device last polled, its uptime then
        self._agenda: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()
        self._out: list[HwEvent] = []
        self._device: Any = None
        self._transport: _DeviceTransport | None = None
        self._port: _HostPort | None = None
        self._boot_at = 0.0
        self._awaiting_snapshot = False
        self._down_since: float | None = None
        self._host_back = 0.0  # a restarting station opens the port again at this time
        self._host_tags: dict[int, frozenset[str]] = {}   # what the link has told the host
        self._host_presence: dict[int, bool] = {}
        self.link = SerialLink("virtual:tikiboard-sensors", self._sink, clock=self._clock)
        self._boot()
        self._attach()

    # -- the clock and the agenda ----------------------------------------------------------------
    def _clock(self) -> float:
        return self.now

    def _at(self, t: float, what: Callable[[], None]) -> None:
        heapq.heappush(self._agenda, (t, next(self._order), what))

    def _due(self) -> None:
        while self._agenda and self._agenda[0][0] <= self.now:
            heapq.heappop(self._agenda)[2]()

    # -- the two ends of the cable ---------------------------------------------------------------
    def _boot(self) -> None:
        """Power the firmware up (at start, and on every replug): a fresh scanner and device."""
        fw = self._fw
        config = fw["scanner"].Config()  # scan_period_ms as on a board: the firmware's default
        config.heartbeat_ms = round(self.heartbeat * 1000)
        config.snapshot_ms = 2000
        config.presence_debounce_ms = 20
        readers = [_NoisyReader(self, i, self.rng, self.miss, self._costs)
                   for i in range(self.geometry.reader_count)]
        scanner = fw["scanner"].Scanner(readers, fw["sim"].SimPresence(self.board), config, None)
        self._transport = _DeviceTransport(self)
        self._boot_at = self.now
        self._device = fw["device"].Device(
            scanner, self._transport, self._uptime_ms, board=self.geometry.game,
            chip=fw["proto"].CHIP_SIM,
            presence_readers=fw["pins"].presence_readers(self._geometry_json()))

    def _geometry_json(self) -> dict[str, Any]:
        cells = [{"reader": c.reader, "presence": c.presence} for c in self.geometry.cells]
        return {"cells": cells}

    def _uptime_ms(self) -> int:
        return int((self.now - self._boot_at) * 1000)

    def _attach(self) -> None:
        """The host opens the port (at start, after a replug, after a station restart), if
        there is a device to open and a station to open it."""
        if self._transport is None or self._port is not None or self.now < self._host_back:
            return
        self._port = _HostPort(self._transport.inbox)
        self._awaiting_snapshot = True
        self.link.attach(self._port)

    def transmit(self, data: bytes) -> None:
        """A frame from the firmware, through the faults, to the host (if it listens)."""
        if self._port is None:
            return  # nobody reads the port: a USB CDC device loses what it writes
        faults, rng = self.faults, self.rng
        if rng.random() < faults.drop:
            self.counts.frames_dropped += 1
            return
        if rng.random() < faults.garbage:
            self.counts.garbage_bursts += 1
            self.link.receive(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))),
                              self.now)
        copies = 2 if rng.random() < faults.duplicate else 1
        self.counts.frames_duplicated += copies - 1
        for _ in range(copies):
            self.link.receive(data, self.now)

    def _sink(self, event: HwEvent) -> None:
        """An event from the link, for the station; also what the host now believes."""
        if isinstance(event, Snapshot):
            self._awaiting_snapshot = False
            self._host_tags = dict(enumerate(event.tags))
            self._host_presence = dict(enumerate(event.presence))
        elif isinstance(event, TagsSeen):
            self._host_tags[event.reader] = event.tags
        elif isinstance(event, PresenceChanged):
            self._host_presence[event.sensor] = event.present
        self._out.append(event)

    # -- faults over time ------------------------------------------------------------------------
    def _cut(self) -> None:
        """Pull the cable: the firmware loses power, the host's port fails."""
        self.counts.cuts += 1
        self._device = None
        self._transport = None
        self._down_since = self.now
        if self._port is not None:
            self._port = None
            self.link.lost("device unplugged")
        self._at(self.now + self.rng.uniform(0.3, 1.5), self._replug)

    def _replug(self) -> None:
        """Plug it back in: the firmware boots; the host's next retry (the link thread's
        exponential backoff from the moment of the cut) opens the port again."""
        self._boot()
        retry, delay = self._down_since or self.now, self.link.backoff[0]
        while retry < self.now:
            retry += delay
            delay = min(delay * 2, self.link.backoff[1])
        self._at(retry, self._attach)

    def restart_host(self, downtime: float) -> None:
        """The station process died: its port is gone until the new one opens it."""
        self.counts.host_restarts += 1
        self._host_tags, self._host_presence = {}, {}  # the new station knows nothing yet
        if self._port is not None:
            self._port = None
            self.link.lost("station restarted")
        self._host_back = self.now + downtime
        self._at(self._host_back, self._attach)

    # -- running ---------------------------------------------------------------------------------
    def _poll(self) -> bool:
        """One poll of the firmware (it lasts as long as the reader scan it makes: the readers
        charge their time to the clock) and one turn of the host's loop; True if the firmware
        was busy (it goes on at once, as its main loop does)."""
        self._due()
        busy = False
        device = self._device
        if device is not None:
            busy = bool(device.poll())
            self._polled = (device, self._uptime_ms())
        if self._port is not None:
            self.link.receive(b"", self.now)
            if self.link.up and self._down_since is not None:
                self.counts.longest_reconnect_s = max(self.counts.longest_reconnect_s,
                                                      self.now - self._down_since)
                self._down_since = None
        return busy

    def _wait(self) -> float:
        """How long the firmware sleeps after a poll with nothing to do: until its next cycle
        is due or the next thing happens on the board, at most :attr:`sleep`."""
        wait = self.sleep
        device = self._device
        if device is not None and device.cycle_start is not None:
            due = device.cycle_start + device.config.scan_period_ms - self._uptime_ms()
            wait = min(wait, max(due / 1000, 0.001))
        if self._agenda:
            wait = min(wait, max(self._agenda[0][0] - self.now, 0.001))
        return wait

    def _drain(self) -> Iterator[HwEvent]:
        while self._out:
            events, self._out = self._out, []
            yield from events

    def _settled(self) -> bool:
        """The link is up with a fresh picture, the firmware reports what lies on the board
        and the host has heard it all (a lost frame heals, through a gap and a snapshot, in
        the wire's time, as in the daemon's, before the players look at the station)."""
        if self._agenda or self._port is None or not self.link.up or self._awaiting_snapshot:
            return False
        scanner = self._device.scanner
        for i, tags in enumerate(self.board.tags):
            if scanner.cells[i].reported != set(tags) or self._host_tags.get(i, frozenset()) \
                    != frozenset(u.hex().upper() for u in tags):
                return False
        return all(self._host_presence.get(i, False) == present
                   for i, present in enumerate(scanner.present)) and \
            bool(scanner.present == self.board.presence)

    def _idle_until(self, t: float) -> Iterator[HwEvent]:
        """Nothing changes on the board until ``t``: the firmware runs at its own pace for
        :attr:`paced_cycles` more cycles, then it is polled once a heartbeat (heartbeats and
        snapshots only)."""
        device = self._device
        if device is not None:
            first = device.cycles
            yield from self._paced(lambda: self.now < t and self._device is device and
                                   device.cycles - first < self.paced_cycles)
        while self.now + self.heartbeat < t:
            start = self.now
            self._skip_gap()
            self._poll()
            self.now = max(self.now, start + self.heartbeat)
            yield from self._drain()
        self.now = max(self.now, t)
        self._skip_gap()

    def _skip_gap(self) -> None:
        """Keep the firmware's measured cycle (SCAN_TIMES) what it stands for while idle
        stretches are skipped: polled once a heartbeat, a board cycle would be measured over
        seconds, and the station times its waits on that figure (``ScanCycle``). So the cycle
        in progress goes on as if its scans had followed one another: its start moves up by
        the time since the last poll, and the cycle measured is its readers' scan time, as on
        a board that never stops. A cycle that has ended is left alone: the gap is its pause
        before the next."""
        device, polled = self._polled
        if device is None or device is not self._device or device.cycle_start is None:
            return  # not polled since it booted: its first poll says hello
        now = self._uptime_ms()
        if device.pos < len(device.scanner.readers):
            device.cycle_start += now - polled
        self._polled = (device, now)

    def _paced(self, going: Callable[[], bool]) -> Iterator[HwEvent]:
        """Poll the firmware as its main loop does while ``going()``: again at once after a
        busy poll (a reader scan has taken its time), after :meth:`_wait` when it had nothing
        to do."""
        stalled = 0
        while going():
            start = self.now
            busy = self._poll()
            stalled = stalled + 1 if busy and self.now == start else 0
            if not busy or stalled > self.geometry.reader_count + 2:
                self.now += self._wait()  # (busy without scanning: a cycle starting or ending)
            yield from self._drain()

    def _busy_until(self, end: float) -> Iterator[HwEvent]:
        limit = end + 10.0
        yield from self._paced(lambda: self.now <= end or (not self._settled() and
                                                           self.now <= limit))

    def run(self, actions: Iterable[Action]) -> Iterator[HwEvent]:
        """The events the station gets while ``actions`` happen."""
        pending = sorted(actions, key=lambda a: a.t)
        if not pending:
            yield from self._busy_until(self.now)
            return
        yield from self._idle_until(pending[0].t - self._period)
        for action in pending:
            self._at(action.t, partial(self._act, action))
        if self.rng.random() < self.faults.cut:
            self._at(self.rng.uniform(pending[0].t, pending[-1].t + 0.3), self._cut)
        yield from self._busy_until(pending[-1].t + self.quiet_after)

    def lay_out(self, cells: dict[str, list[str]], t: float) -> Iterator[HwEvent]:
        """Every piece put down at once at ``t`` (a set-up, a new Topple round)."""
        yield from self._idle_until(t)
        self.cells = {name: list(uids) for name, uids in cells.items()}
        self._hovering.clear()
        for cell in self.geometry.cells:
            self._sense(cell.name)
        yield from self._busy_until(t + self.quiet_after)

    def _act(self, action: Action) -> None:
        if action.cell is None:
            return
        before = self._resting(action.cell)
        apply_action(self.cells, self._hovering, action)
        self._sense(action.cell)
        cell = self.geometry.cell(action.cell)
        if cell.presence is not None and before != self._resting(action.cell) and \
                self.rng.random() < self.flicker:  # the contact chatters past the debounce
            self._at(self.now + 0.03, partial(self.board.set_presence, cell.presence, before))
            self._at(self.now + 0.06, partial(self._sense, cell.name))

    def _sense(self, name: str) -> None:
        """The firmware's readers and contacts see what lies on ``name`` now."""
        cell = self.geometry.cell(name)
        uids = self.cells[name]
        if cell.reader is not None:
            self.board.set_tags(cell.reader, [bytes.fromhex(u) for u in uids
                                              if u != cell.presence_piece])
        if cell.presence is not None:
            self.board.set_presence(cell.presence, self._resting(name))

    def _resting(self, name: str) -> bool:
        """What a presence sensor says: a piece lies there (one held above it does not)."""
        return resting(self.cells[name], self._hovering)


@dataclass
class StationCounts:
    """What happened to the station itself."""

    restarts: int = 0
    restart_losses: int = 0
    """Restarts after which the reopened station did not hold the moves accepted before."""
    crashes: int = 0
    events: int = 0
    """Events from the wire and the buttons the station stepped on."""
    corrections: int = 0
    """Times the players' judge had to put the station on the position they really had."""
    unstorable: int = 0
    """Corrections no single stored move or takeback could make (the record then differs)."""
    first_traceback: str = ""
    bot_moves: int = 0
    """Moves of the station's seats the hands carried out (with bots)."""
    bot_unshown: int = 0
    """Turns of the station's seats with no move shown (the hand then played at random)."""
    bot_wrong_made: int = 0
    """Other moves the hands made first for the station's seat (wrong executions)."""
    bot_wrong_guided: int = 0
    """Wrong executions the station answered with guidance back to the position."""
    bot_wrong_asked: int = 0
    """Wrong executions whose picture is an earlier position's, which the station asked about
    as a takeback to confirm (the players put the board back; nothing is taken). A Topple
    line can look, after another legal move, exactly as it did two plies before."""
    bot_wrong_taken: int = 0
    """Wrong executions the station took as the move (a move it never chose in the record)."""


class StationReferee:
    """A real station behind SimTable's ``Referee`` seam, killed and restarted now and then."""

    def __init__(self, config: Config, db: Path, registry: TagRegistry, wire: VirtualWire,
                 rng: random.Random, restart: float, bot_budget: Budget | None = None) -> None:
        self.config = config
        self.bot_budget = bot_budget
        self.db = db
        self.registry = registry
        self.wire = wire
        self.rng = rng
        self.restart_rate = restart
        self.counts = StationCounts()
        self.now = 0.0
        self._round_end: Any = None  # Topple: the last round's end, until the players set up
        self.station = self._open()

    def _open(self) -> Station:
        station = Station(self.config, EventStore(self.db), self.registry, clock=self._clock)
        if self.bot_budget is not None:  # playouts only: the same move on any machine
            station.opponent.budget = self.bot_budget
        return station

    def _clock(self) -> float:
        return self.now

    # -- what the players see --------------------------------------------------------------------
    @property
    def follower(self) -> Follower:
        return self.station.follower

    @property
    def state(self) -> Any:
        return self._round_end if self._round_end is not None else self.station.follower.state

    @property
    def history(self) -> list[tuple[Any, str]]:
        return self.station.follower.history

    # -- stepping --------------------------------------------------------------------------------
    def feed(self, event: HwEvent, now: float) -> list[Outcome]:
        if not isinstance(event, ButtonPressed) and self._may_restart() and \
                self.rng.random() < self.restart_rate:
            return self._restart(now)  # the event dies with the process
        return self._step(event, now)

    def tick(self, now: float) -> list[Outcome]:
        return self._step(None, now)

    def prepare(self, now: float) -> list[Outcome]:
        return []  # Station.step prepares the follower after rendering

    def choose(self, card: str, now: float) -> list[Outcome]:
        raise NotImplementedError("card taps go over the pad reader; run with tap_card=0")

    def next_deadline(self, now: float) -> float | None:
        return self.station.next_deadline(now)

    def place(self, event: HwEvent) -> None:
        self._step(event, max(self.now, event.t))

    def start(self, now: float) -> list[Outcome]:
        return self._step(None, now)

    def deal(self, state: Any, rng: random.Random) -> Any:
        """The station deals the next round itself when the last one ended (a little later
        when the board alone decided the round's last move): the players wait for it."""
        game = self.station.session.game
        for _ in range(1_000):
            if game.to_move(self.station.session.state) is not None or \
                    game.is_over(self.station.session.state):
                break
            deadline = self.station.next_deadline(self.now)
            if deadline is None:
                break
            self._step(None, deadline)
        self._round_end = None
        return self.station.follower.state

    def reset(self, state: Any, history: Sequence[tuple[Any, str]] = ()) -> None:
        """A set-up of the position the station holds changes nothing; any other position is a
        correction after a phantom or missed move, stored as a referee would rule it (phantoms
        taken back, the missed move played) so the run goes on from the players' position.
        A correction the session cannot store leaves the station where it was (counted)."""
        station = self.station
        if state != station.follower.state:
            self.counts.corrections += 1
            self._round_end = None
            if not _rule(station.session, state):
                self.counts.unstorable += 1
        station.follower.reset(station.session.state, list(station.session.history))

    def _step(self, event: HwEvent | None, now: float) -> list[Outcome]:
        self.now = max(self.now, now)
        self.counts.events += event is not None
        stored = len(self.station.session.history)
        try:
            out = self.station.step(event, self.now)
            for _ in range(3):  # a bot's answer for the position: waited for in virtual time
                if not self._answer_due():
                    break
                self.station.opponent.wait()
                out += self.station.step(None, self.now)
        except Exception:
            self.counts.crashes += 1
            if not self.counts.first_traceback:
                self.counts.first_traceback = traceback.format_exc()
                print(self.counts.first_traceback, file=sys.stderr)
            return []
        out = self._refused_dropped(out, stored)
        game = self.station.session.game
        for outcome in out:
            if isinstance(outcome, MoveAccepted | MoveRevised):
                ended = game.to_move(outcome.state) is None and not game.is_over(outcome.state)
                self._round_end = outcome.state if ended else self._round_end
                if isinstance(outcome, MoveRevised) and not ended:
                    self._round_end = None  # the round's last move was the middle of another
            elif isinstance(outcome, TakenBack):
                self._round_end = None  # the round's last move undone before the deal
        if self._round_end is not None:  # a new line to set up is no mismatch
            out = [o for o in out if not isinstance(o, Guidance)]
        return out

    def _answer_due(self) -> bool:
        """Is a bot thinking about the station's position, or its answer in and not yet
        collected? Asked of the job, not of the thread: ``thinking()`` is false once the
        thread has finished, so an answer that came in before the question was asked waited
        for the next event, and the run's figures changed with the thread's speed (Topple's
        8 games made 472 or 471 moves, from one run to the next)."""
        opponent, state = self.station.opponent, self.station.session.state
        return opponent.pending("station", state) or opponent.pending("hint", state)

    def _refused_dropped(self, out: list[Outcome], stored: int) -> list[Outcome]:
        """The outcomes without the moves the station refused (a move for its own seat that
        is not the one it showed: the follower took it, the station put it back): what the
        players see is the station's record, which never held them."""
        history = self.station.session.history
        if len(history) < stored:
            return out
        taken = [text for _, text in history[stored:]]
        kept: list[Outcome] = []
        for outcome in out:
            if isinstance(outcome, MoveAccepted):
                if outcome.text not in taken:
                    continue
                taken.remove(outcome.text)
            kept.append(outcome)
        return kept

    # -- crashes ---------------------------------------------------------------------------------
    def _may_restart(self) -> bool:
        """Not after the game's end: a restarted station would open the next game."""
        return not self.station.session.game.is_over(self.station.session.state)

    def _restart(self, now: float) -> list[Outcome]:
        """SIGKILL and restart: nothing is closed or flushed but the connection, as the
        kernel closes a dead process's files; the new station resumes from the database."""
        self.now = max(self.now, now)
        old = self.station
        moves, state = old.session.moves(), old.session.state
        old.store.close()
        self.station = self._open()
        self.counts.restarts += 1
        if self.station.session.moves() != moves or self.station.session.state != state:
            self.counts.restart_losses += 1
        self.wire.restart_host(self.rng.uniform(0.5, 2.0))
        return [PromptCleared(self.now)]  # the screen went blank: no question is open


def _rule(session: Session, target: Any) -> bool:
    """Bring ``session`` to ``target`` as a referee would: take back some of this round's
    moves, then play one move and the forced moves after it. False if no such ruling."""
    game = session.game
    for plies in range(len(session.history) + 1):
        start = session.state if plies == 0 else session.history[-plies][0]
        line = [] if start == target else _line_to(game, start, target)
        if line is None:
            continue
        if plies:
            session.taken_back(plies, start)
        for before, move, after in line:
            session.moved(game.move_text(before, move), game.to_move(before), after)
        return True
    return False


def _line_to(game: Any, start: Any, target: Any) -> list[tuple[Any, Any, Any]] | None:
    """One legal move from ``start`` and the forced moves after it that reach ``target``."""
    if game.to_move(start) is None or game.is_over(start):
        return None
    for move in game.legal_moves(start):
        state = game.apply(start, move)
        line = [(start, move, state)]
        while state != target and len(line) < 5 and game.to_move(state) is not None \
                and not game.is_over(state):
            moves = game.legal_moves(state)
            if len({game.apply(state, m) for m in moves}) != 1:
                break
            line.append((state, moves[0], game.apply(state, moves[0])))
            state = line[-1][2]
        if state == target:
            return line
    return None


@dataclass
class Totals:
    """One game type's figures over all its games."""

    table: TableStats = field(default_factory=TableStats)
    wire: WireCounts = field(default_factory=WireCounts)
    station: StationCounts = field(default_factory=StationCounts)
    link: dict[str, int] = field(default_factory=dict)
    finished: int = 0
    record_mismatches: int = 0
    bad_games: list[int] = field(default_factory=list)
    """Seeds of the games that missed a target, to replay them one by one."""

    def add(self, table: TableStats, referee: StationReferee, wire: VirtualWire,
            record_ok: bool) -> None:
        table.decision_seconds.clear()  # wall-clock figures belong to the accuracy bench
        self.table.merge(table)
        for name, value in vars(wire.counts).items():
            mine = getattr(self.wire, name)
            setattr(self.wire, name, max(mine, value) if isinstance(value, float)
                    else mine + value)
        for name, value in vars(referee.counts).items():
            if isinstance(value, int):
                setattr(self.station, name, getattr(self.station, name) + value)
            elif value and not self.station.first_traceback:
                self.station.first_traceback = value
        for name, value in wire.link.counters.as_dict().items():
            if isinstance(value, int):
                self.link[name] = self.link.get(name, 0) + value
        self.finished += int(referee.station.session.game.is_over(referee.station.session.state))
        self.record_mismatches += int(not record_ok)


def record_replays(db: Path, station: Station) -> bool:
    """Export the station's game as ``tikiboard export`` does; does it replay to the station's
    final position and scores?"""
    store = EventStore(db)
    try:
        record = Session.resume(store, store.game(station.session.game_id)).export()
        result = replay(json.loads(json.dumps(record)))
    except (StoreError, RecordError):
        return False
    finally:
        store.close()
    game, state = station.session.game, station.session.state
    return result.ok and result.state == state and \
        list(game.scores(result.state)) == list(game.scores(state))


class BotTable(SimTable):
    """SimTable whose hands carry out the station's moves for the station's seats (the
    people's seats play at random with their mischief, as in :meth:`SimTable.play_game`)."""

    def __init__(self, *args: Any, station_referee: StationReferee, wrong: float,
                 **kwargs: Any) -> None:
        self.station_referee = station_referee
        self.wrong = wrong
        super().__init__(*args, **kwargs)

    def play_game(self, max_decisions: int = 2_000) -> TableStats:
        game = self.game
        for _ in range(max_decisions):
            state = self.referee.state
            if game.is_over(state):
                break
            if game.to_move(state) is None:  # between Topple rounds: deal and set up
                self._lay_out(self.referee.deal(state, self.rng))
                continue
            if self.station_referee.station.opponent.plays(game.to_move(state)):
                self._station_turn(state)
                continue
            roll = self.rng.random()
            if roll < self.rates.illegal:
                self.play_illegal()
            elif roll < self.rates.illegal + self.rates.takeback:
                self.play_takeback()
            else:
                self.play_move(game.random_move(state, self.rng))
        self.stats.games += 1
        return self.stats

    def _shown(self, state: Any) -> Any:
        """The move the station shows for its seat in ``state`` (None: none yet)."""
        shown = self.station_referee.station.opponent.shown
        if shown is None or shown.kind != "station" or shown.state != state:
            return None
        return shown.move

    def _station_turn(self, state: Any) -> None:
        """Read the station's move, now and then carry out another first (refused, guided
        back, put right as guided), then carry out the shown one."""
        counts = self.station_referee.counts
        move = self._shown(state)
        for _ in range(5):  # the person waits for the LEDs; the daemon steps on heartbeats
            if move is not None:
                break
            self.now += 0.2
            self._take(None, partial(self.referee.tick, self.now))
            move = self._shown(state)
        if move is None:
            counts.bot_unshown += 1
            self.play_move(self.game.random_move(state, self.rng))
            return
        if self.rng.random() < self.wrong:
            self._wrong_execution(state, move)
            if not self._same(self.referee.state, state):
                return  # taken (counted): the game goes on from what the station holds
        counts.bot_moves += 1
        self.play_move(move)

    def _wrong_execution(self, state: Any, shown: Any) -> None:
        game = self.game
        counts = self.station_referee.counts
        here, meant = game.expected_view(state), game.placement_view(state, shown)
        others = [m for m in game.legal_moves(state)
                  if game.placement_view(state, m) not in (here, meant)]
        if not others:
            return
        counts.bot_wrong_made += 1
        before = len(self.outcomes)
        self._move_by_hand(game.placement_view(state, self.rng.choice(others)))
        answers = self.outcomes[before:]
        if any(isinstance(o, Guidance) and o.kind == "mismatch" for o in answers):
            counts.bot_wrong_guided += 1
        elif any(isinstance(o, Prompt) and o.kind is PromptKind.TAKEBACK for o in answers):
            counts.bot_wrong_asked += 1
        if not self._same(self.referee.state, state):
            counts.bot_wrong_taken += 1
            return
        self._settle_back()  # the board put back as the LEDs guide
        self._move_by_hand(here)  # unguided, the person puts back what they moved (else no-op)


def play_one(game_name: str, seed: int, faults: Faults, *, noisy: bool = True,
             max_decisions: int = 2_000, bots: str | None = None, bot_playouts: int = 30,
             wrong: float = 0.2) -> tuple[TableStats, StationReferee, VirtualWire, bool]:
    """One whole game through a fresh station and database; its figures and whether its
    stored record replays to the station's result. ``bots``: seat 1 is the station's, at
    that level, with ``bot_playouts`` per decision; ``wrong``: the share of its moves whose
    execution by hand starts with another move."""
    rng = random.Random(seed)
    geometry = load_geometry(game_name)
    registry = registry_for(game_name)
    wire = VirtualWire(geometry, random.Random(rng.random()), faults,
                       miss=0.05 if noisy else 0.0, flicker=0.05 if noisy else 0.0)
    with tempfile.TemporaryDirectory(prefix="longsoak-") as tmp:
        db = Path(tmp) / "tikiboard.db"
        config = Config(station=replace(StationConfig(), game=game_name, seed=seed,
                                        data_dir=tmp, topple_cards="deal",
                                        tactiki_setup="deal",
                                        bots={"1": bots} if bots else {}))
        referee = StationReferee(config, db, registry, wire, random.Random(rng.random()),
                                 faults.restart, Budget(playouts=bot_playouts) if bots else None)
        rates = replace(Rates.table() if noisy else Rates(), tap_card=0.0)
        kwargs: dict[str, Any] = dict(
            noise=Noise.table(carried=game_name != "topple") if noisy else Noise.clean(),
            rates=rates, state=referee.state, referee=referee, sensors=wire)
        table = BotTable(referee.station.session.game, geometry, registry, rng,
                         station_referee=referee, wrong=wrong, **kwargs) if bots else \
            SimTable(referee.station.session.game, geometry, registry, rng, **kwargs)
        stats = table.play_game(max_decisions)
        ok = record_replays(db, referee.station)
        referee.station.store.close()
    return stats, referee, wire, ok


def run(game_name: str, games: int, seed: int, faults: Faults, *,
        noisy: bool = True, bots: str | None = None, bot_playouts: int = 30) -> dict[str, Any]:
    """``games`` games of ``game_name``; the figures issue #9 asks for."""
    totals = Totals()
    started = time.process_time()
    for number in range(games):
        game_seed = seed * 1_000_003 + number
        result = play_one(game_name, game_seed, faults, noisy=noisy, bots=bots,
                          bot_playouts=bot_playouts)
        table, referee, _, record_ok = result
        bot = referee.counts
        if table.phantom or table.missed or not record_ok or \
                table.illegal_reported != table.illegal_made or \
                table.takebacks_done != table.takebacks_made or bot.bot_unshown or \
                bot.bot_wrong_taken or \
                bot.bot_wrong_guided + bot.bot_wrong_asked != bot.bot_wrong_made:
            totals.bad_games.append(game_seed)  # replay one with play_one(name, seed, ...)
        totals.add(*result)
    return report(totals, games, time.process_time() - started)


def report(totals: Totals, games: int, cpu: float) -> dict[str, Any]:
    t, w, s = totals.table, totals.wire, totals.station
    return {
        "games": games, "finished": totals.finished,
        "moves_made": t.moves_made, "moves_accepted": t.moves_accepted,
        "phantom": t.phantom, "missed": t.missed, "revised": t.revised,
        "illegal_made": t.illegal_made, "illegal_reported": t.illegal_reported,
        "takebacks_made": t.takebacks_made, "takebacks_done": t.takebacks_done,
        "prompts": t.prompts,
        "mismatches_raised": t.mismatches_raised, "mismatches_resolved": t.mismatches_resolved,
        "longest_recovery_s": round(t.longest_recovery, 2),
        "restarts": s.restarts, "restart_losses": s.restart_losses,
        "corrections": s.corrections, "unstorable": s.unstorable, "events": s.events,
        "record_mismatches": totals.record_mismatches, "crashes": s.crashes,
        "bad_games": totals.bad_games,
        "bots": {"moves": s.bot_moves, "unshown": s.bot_unshown,
                 "wrong_made": s.bot_wrong_made, "wrong_guided": s.bot_wrong_guided,
                 "wrong_asked": s.bot_wrong_asked,
                 "wrong_taken": s.bot_wrong_taken},
        "wire": {"garbage_bursts": w.garbage_bursts, "frames_dropped": w.frames_dropped,
                 "frames_duplicated": w.frames_duplicated, "cuts": w.cuts,
                 "host_restarts": w.host_restarts,
                 "longest_reconnect_s": round(w.longest_reconnect_s, 3)},
        "link": {k: totals.link.get(k, 0) for k in (
            "frames_good", "frames_bad", "missing", "duplicates", "reordered", "ignored",
            "connects", "disconnects", "liveness_timeouts", "snapshots_requested")},
        "cpu_s": round(cpu, 1),
    }


def merge(outputs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One report from several runs at the same fault rates. TacTiki costs the most CPU, so a
    long run is split by seed into one process per core; counts add up, ``longest_*`` take the
    largest, bad games join, and ``runs`` keeps each part's seed, games and commit."""
    if len({json.dumps(output["faults"], sort_keys=True) for output in outputs}) != 1:
        raise ValueError("the runs were made at different fault rates")
    figures: dict[str, dict[str, Any]] = {}
    runs: dict[str, list[dict[str, Any]]] = {}
    for output in outputs:
        for name, part in output["figures"].items():
            figures[name] = _add(figures[name], part) if name in figures else part
            runs.setdefault(name, []).append(
                {"seed": output["seed"], "games": part["games"], "code": output["code"]})
    codes = {json.dumps(part["code"], sort_keys=True) for parts in runs.values() for part in parts}
    return {"benchmark": "longsoak", "virtual_time": True, "faults": outputs[0]["faults"],
            "code": json.loads(codes.pop()) if len(codes) == 1 else "several: see runs",
            "machine": outputs[0]["machine"], "figures": figures, "runs": runs}


def _add(a: Any, b: Any, key: str = "") -> Any:
    if isinstance(a, dict):
        return {k: _add(a[k], b[k], k) for k in a}
    if isinstance(a, list):
        return a + b
    if key.startswith("longest"):
        return max(a, b)
    return round(a + b, 1) if isinstance(a, float) else a + b


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000, help="games per game type")
    parser.add_argument("--games-for", action="append", default=[], metavar="NAME=N",
                        help="another count for one game type (TacTiki costs the most CPU)")
    parser.add_argument("--game", choices=GAME_NAMES, action="append", help="only this game")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--clean", action="store_true", help="no noise, no faults, no mischief")
    parser.add_argument("--bots", choices=LEVELS, metavar="LEVEL",
                        help="seat 1 is the station's, at this level (random, greedy, search)")
    parser.add_argument("--bot-playouts", type=int, default=30,
                        help="the station's search budget per decision (default 30)")
    parser.add_argument("--merge", nargs="+", metavar="FILE", type=Path,
                        help="print one report from the JSON of several runs, and run nothing")
    args = parser.parse_args(argv)
    if args.merge:
        try:
            print(json.dumps(merge([json.loads(path.read_text()) for path in args.merge]),
                             indent=2))
        except (OSError, ValueError, KeyError) as error:
            parser.error(f"--merge: {error}")
        return
    logging.disable(logging.WARNING)  # the link and the station log every fault they survive
    faults = Faults.none() if args.clean else Faults()
    counts = {name: args.games for name in args.game or GAME_NAMES}
    for item in args.games_for:
        name, _, number = item.partition("=")
        if name not in counts or not number.isdigit():
            parser.error(f"--games-for {item!r}: expected NAME=N for a game being run")
        counts[name] = int(number)
    for name in counts:  # load every engine now: a long run should not pick up later edits
        get_game(name)
    code = _code_version()  # now, while the code on disk is the code loaded
    figures = {}
    for name, games in counts.items():
        figures[name] = run(name, games, args.seed, faults, noisy=not args.clean,
                            bots=args.bots, bot_playouts=args.bot_playouts)
        print(json.dumps({name: figures[name]}), file=sys.stderr, flush=True)  # progress
    print(json.dumps({"benchmark": "longsoak", "virtual_time": True, "seed": args.seed,
                      "faults": vars(faults), "code": code,
                      "bots": {"1": args.bots, "playouts": args.bot_playouts} if args.bots
                      else {},
                      "machine": {"cpu": platform.processor() or platform.machine(),
                                  "python": platform.python_version()},
                      "figures": figures}, indent=2))


def _code_version() -> dict[str, Any]:
    """The commit the run used, and whether the working tree differed from it (a long run's
    figures belong to the code that produced them)."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True, timeout=10,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    return {"commit": commit, "modified": bool(dirty)}


if __name__ == "__main__":
    main()
