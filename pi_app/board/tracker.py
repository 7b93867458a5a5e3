"""The tracker: from a noisy stream of sensor events to what is on each cell now.

The hardware reports per reader channel and per presence sensor; the tracker maps them to cells
through the geometry and to pieces through the tag registry, and keeps one current
:class:`Observation`. Three kinds of noise are handled here, so inference can compare clean
pictures with engine views:

* **Missed tags.** A reader can miss a tag in a stack for a scan or several. A tag that stops
  being reported on a cell whose presence sensor still says "occupied" stays in the picture for
  ``miss_grace`` seconds (docs/design.md: a tag that was in a cell stays there until the presence
  sensor or a later reading says otherwise). It leaves at once when the cell goes empty or the
  tag turns up elsewhere. The picture keeps it, so neither the miss nor a re-read there within
  ``miss_grace`` is a change of the board (``last_change``): a re-read gives it back what it
  had (its read and take times), as if the reader had never let it go.
* **Presence flicker.** A presence sensor must hold a new state, "empty" or "occupied", for
  ``presence_debounce`` seconds before the tracker believes it (a reed contact chatters when a
  piece slides over it, and an empty cell's contact may close for a moment on its own). The
  firmware reports a change after 20 ms of agreeing samples; this is the second stage, on the
  host (80 ms by default). A flicker shorter than that changes
  nothing, so it never restarts the board's stillness, and a tag read on an empty cell is not
  taken as a piece lying there until the contact has stayed closed that long.
* **Ghosts.** A piece carried over a neighbouring cell may be read there, and the firmware
  reports a tag gone only after several clean misses. A tag is in one place: when a reader
  newly reports a tag, every other cell forgets it at once.
* **Neighbours' tags.** At a short pitch a reader also reads, now and then, a tag lying on the
  next cell (hardware/README.md, "Neighbour reads"). On a cell with a presence sensor, a tag
  that lies on another cell is this cell's own only while its presence is believed closed: a
  tag read on an open cell while it lies elsewhere is dropped (counted in
  ``neighbour_reads``; it becomes the cell's own if the contact closes while it is still read
  there, as when a piece is set down and read before its contact has held closed, or when
  its old cell lets it go and no closed cell reads it). A tag that lies nowhere else is the
  open cell's, as before the gating: a contact that closes late, chatters or stays open under
  a piece set down (players at pace, the varied sensors) must not lose the piece, and a
  neighbour's tag always lies on its own cell. A tag lying on an open cell moves at once to a
  cell whose contact is closing under it (the firmware reports it closed; the host debounce
  still runs): the open cell's read may be a piece carried over it, a reader cycle stale on
  a slow board. A tag read on two closed cells at once stays where it lay (it was placed
  there, and that reader still reports it); the other read is counted in ``seen_twice``.
  It moves when its old cell stops reporting it, to the closed cell that read it last (an
  open one if no closed cell reads it), and at once to a cell whose contact had just closed
  before the other cell took it (a piece set down next to an occupied cell whose reader,
  scanned first, read it before its own did). It also moves at once to a cell whose contact
  has just closed (within ``miss_grace``) and that reads it alone, no tag of its own: the
  piece that closed the contact was carried past or lifted off the other cell
  (``_closed_under``).
  A cell whose contact opens keeps showing the tags it still reports (inconsistent, so not
  judged) until its reader lets them go, as before.
  A cell without a presence sensor (Topple's card pad) is not gated: a tag newly read there
  is there, as before. ``tikiboard diag`` shows both counts.
* **Unknown tags.** A UID the registry does not know is kept apart, on its cell, so the referee
  can say "unknown piece on c3" instead of crashing or ignoring it. A faulty reader or a
  stranger's tags can bring any number of them: the tracker keeps state only for the tags read
  now (at most ``MAX_TAGS`` per reader, by the link protocol) and counts the strangers, keeping
  only the last :data:`RECENT_UNKNOWN` of them, so its memory stays bounded.

The tracker has no clock of its own: every call passes the time. It is pure bookkeeping, fast
enough to run on every event (a few microseconds per event).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from pi_app.board.geometry import Geometry
from pi_app.board.registry import TagRegistry
from pi_app.readings import (
    ButtonPressed,
    LinkStatus,
    PresenceChanged,
    ScanCycle,
    SensorEvent,
    Snapshot,
    TagsSeen,
)

#: How many of the unknown UIDs seen last the tracker remembers (for a log or a screen); the
#: rest are only counted.
RECENT_UNKNOWN = 32

#: Clean scans in a row that miss a tag before the firmware reports it gone (its default
#: ``absent_misses``, firmware/PROTOCOL.md): a piece lifted off a stack is reported there that
#: many cycles more.
ABSENT_MISSES = 3

#: What is on each cell, comparable with an engine view: cell -> sorted piece names.
ViewKey = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Observation:
    """The tracker's picture of the board at one moment."""

    t: float
    pieces: Mapping[str, tuple[str, ...]]
    """Cell -> the registered pieces on it, sorted (sensors see sets, never stack order)."""
    unknown: Mapping[str, tuple[str, ...]]
    """Cell -> UIDs on it that the registry does not know."""
    inconsistent: tuple[str, ...]
    """Cells whose presence sensor disagrees with the tags read there (a read is missing)."""

    @property
    def complete(self) -> bool:
        """True when every cell's sensors agree and every tag is known."""
        return not self.inconsistent and not self.unknown

    def key(self, cells: Iterable[str]) -> ViewKey:
        """The picture of ``cells`` as a hashable key, for comparing with engine views."""
        pieces = self.pieces
        return tuple((c, pieces.get(c, ())) for c in cells)


#: The most stacks :func:`view_key` keeps sorted; past it the memo starts afresh (a game shows
#: a few hundred different stacks, so it never should).
SORTED_STACKS_MAX = 50_000
#: :func:`view_key`'s memo: each stack (bottom first) -> the same pieces sorted, shared by every
#: follower (the results of a pure function, so sharing is safe, threads included). A plain
#: dict, not ``functools.lru_cache``: view_key is the inner loop of move inference, and the
#: dict lookup measured 40 % faster per key.
_SORTED_STACKS: dict[tuple[str, ...], tuple[str, ...]] = {}


def view_key(view: Mapping[str, tuple[str, ...]], cells: Iterable[str]) -> ViewKey:
    """An engine view as the key sensors would produce for it (order inside a cell dropped).

    The sorted form of each stack is memoised: the same stacks recur in every candidate move
    of a position, and building candidate keys is most of the work of move inference.
    """
    out = []
    for c in cells:
        stack = view.get(c, ())
        key = _SORTED_STACKS.get(stack)
        if key is None:
            if len(_SORTED_STACKS) >= SORTED_STACKS_MAX:
                _SORTED_STACKS.clear()
            key = _SORTED_STACKS[stack] = tuple(sorted(stack))
        out.append((c, key))
    return tuple(out)


class Tracker:
    """Keeps the current picture of one board from its sensor events."""

    def __init__(self, geometry: Geometry, registry: TagRegistry, *,
                 miss_grace: float = 0.6, presence_debounce: float = 0.08) -> None:
        self.geometry = geometry
        self.registry = registry
        self.miss_grace = miss_grace
        self.presence_debounce = presence_debounce
        self.scan_period = geometry.scan_period
        """Seconds per full scan of the board: the board file's figure until the firmware
        reports its own (:class:`ScanCycle`); the follower times its waits on it
        (``pi_app/board/pacing.py``)."""
        self._seen: dict[str, frozenset[str]] = {}       # cell -> UIDs its reader reports
        self._home: dict[str, str] = {}                  # UID -> the cell that read it last
        self._sticky: dict[str, dict[str, float]] = {}   # cell -> UID -> kept until
        self._read_at: dict[tuple[str, str], float] = {}  # (cell, UID) -> newly read at
        self._closed_at: dict[str, float] = {}           # cell -> contact believed closed at
        self._claimed_at: dict[str, float] = {}          # UID -> when its home took it
        self._guessed: set[str] = set()  # UIDs whose home is the last of two closed readers
        self._lost: dict[str, tuple[str, float]] = {}  # UID -> cell that let it go, read nowhere
        self._from_hand: dict[str, tuple[str, float]] = {}  # UID -> as _lost, before its home
        # UID -> the cell keeping it through its reader's misses (``_sticky``), and what it
        # had there: when that reader began to report it, when the cell took it, from a hand
        # or not. A re-read there before miss_grace runs out is the same reading going on.
        self._kept: dict[str, tuple[str, float | None, float | None,
                                    tuple[str, float] | None]] = {}
        self._present: dict[str, bool] = {}              # cell -> believed presence
        self._empty_since: dict[str, float] = {}         # cell -> raw "empty" since
        self._full_since: dict[str, float] = {}          # cell -> raw "occupied" since
        self.last_change = 0.0
        self.link_up = True
        self.fresh = True
        """False from the sensor link going down until the first snapshot after it: the
        picture is stale (nothing was heard while the cable was out), so nobody may judge it."""
        self.unrouted = 0  # events for channels the geometry does not use
        self.unknown_count = 0
        """How many times a UID the registry does not know was newly read on a cell."""
        self.recent_unknown: OrderedDict[str, str] = OrderedDict()
        """The last :data:`RECENT_UNKNOWN` unknown UIDs read, oldest first, with their cell."""
        self.neighbour_reads: Counter[str] = Counter()
        """Per cell, tags newly read there while its presence was open: a neighbour's."""
        self.seen_twice: Counter[str] = Counter()
        """Per cell, tags newly read there while they lay on another closed cell."""

    # -- input -----------------------------------------------------------------------------------
    def feed(self, event: SensorEvent) -> bool:
        """Take one event; True when the picture may have changed."""
        if isinstance(event, TagsSeen):
            return self._tags(event.t, event.reader, event.tags)
        if isinstance(event, PresenceChanged):
            return self._presence(event.t, event.sensor, event.present)
        if isinstance(event, Snapshot):
            changed = not self.fresh
            if not self.fresh:  # the board as it is now: settle timers start from here
                self.fresh = True
                self.last_change = max(self.last_change, event.t)
            for reader, tags in enumerate(event.tags):
                changed |= self._tags(event.t, reader, tags)
            for sensor, present in enumerate(event.presence):
                changed |= self._presence(event.t, sensor, present)
            return changed
        if isinstance(event, LinkStatus):
            self.link_up = event.up
            if not event.up:
                self.fresh = False
            return False
        if isinstance(event, ButtonPressed):
            return False
        if isinstance(event, ScanCycle):
            self.scan_period = event.period
            return False
        raise TypeError(f"not a sensor event: {event!r}")

    def _tags(self, t: float, reader: int, tags: frozenset[str]) -> bool:
        cell = self.geometry.cell_of_reader(reader)
        if cell is None:
            self.unrouted += 1
            return False
        name = cell.name
        old = self._seen.get(name, frozenset())
        if tags == old:
            return False
        self._seen[name] = tags
        before = {uid: self._home.get(uid) for uid in tags ^ old}
        same: set[str] = set()  # tags missed or read again where the picture keeps them
        for uid in tags - old:  # newly read here: it has left wherever it was before
            if self._resume(uid, name):
                same.add(uid)
                continue
            self._read_at[(name, uid)] = t
            if self.registry.lookup(uid) is None:
                self._stranger(uid, name)
            if self._gated(name) and self._lies_elsewhere(uid, name) \
                    and not self._closing_over_open(name, uid):
                self.neighbour_reads[name] += 1  # not this cell's own (not yet, at least)
            else:
                self._claim(uid, name, t)
        let_go: dict[str, float | None] = {}  # UID -> when this reader began to report it
        for uid in old - tags:
            let_go[uid] = self._read_at.pop((name, uid), None)
            if self._home.get(uid) == name:
                # Gone from its home, still read elsewhere: it lies there. (A snapshot lists a
                # tag on the cell it was carried over, until three misses clear it, as well as
                # on the cell it lies on, and makes whichever comes first in it the home.)
                elsewhere = self._last_reader(uid, name)
                if elsewhere is not None:
                    self._home[uid] = elsewhere
                    self._claimed_at[uid] = t
                    self._guessed.add(uid)
                    self._from_hand.pop(uid, None)
        sticky = self._sticky.setdefault(name, {})
        for uid in tags:
            if self._home.get(uid, name) != name:
                continue  # read here, but it lies on another cell: not this cell's
            sticky.pop(uid, None)
            for other, kept in self._sticky.items():  # a tag read here has left other cells
                if other != name:
                    kept.pop(uid, None)
        if cell.presence is not None and self._present.get(name, False):
            for uid in old - tags:
                # Not already read somewhere else, and not only a guess: a tag that came here
                # when its old cell let it go, by a read of this reader's that may be the
                # piece carried over (table 1000020: T1 carried over b3's stack, set on b2,
                # lifted again; b3 let it go 0.1 s after b2 did). This reader letting it go
                # too says the guess was wrong: the piece is in a hand, not missed on a stack.
                if self._home.get(uid, name) == name and uid not in self._guessed:
                    sticky[uid] = t + self.miss_grace
                    same.add(uid)  # the picture keeps it: no change (yet)
                    if self._home.get(uid) == name and self.registry.lookup(uid) is not None:
                        # (bounded: registered pieces only)
                        self._kept[uid] = (name, let_go[uid], self._claimed_at.get(uid),
                                           self._from_hand.get(uid))
        for uid in old - tags:  # read nowhere now: forget where it was (bounded memory)
            if self._home.get(uid) == name:
                del self._home[uid]
                self._claimed_at.pop(uid, None)
                self._guessed.discard(uid)
                self._from_hand.pop(uid, None)
                if self.registry.lookup(uid) is not None:  # (bounded: registered pieces only)
                    self._lost[uid] = (name, t)
        if all(home != name and self._home.get(uid) != name and home is not None
               for uid, home in before.items() if uid not in same):
            return False  # only reads of tags lying on other cells: the picture is the same
        self.last_change = t
        return True

    def _resume(self, uid: str, name: str) -> bool:
        """Is ``uid``, newly read on ``name``, a tag that cell keeps through its reader's
        misses (``_sticky``), read there again? Then it lies where it lay all along: it gets
        back what it had there (when it was first read and taken there, from a hand or not),
        and the picture, which showed it all the while, has not changed. (Varied-pace TacTiki
        table 1000025: a1's reader, under a stack of four, missed C3 and read it again; each
        read as news restarted the board's quiet time, a turn onto a stack waited past the
        next player's first lift and both turns were missed.)"""
        kept = self._kept.get(uid)
        if kept is None or kept[0] != name or uid not in self._sticky.get(name, ()) \
                or self._gated(name) or uid in self._home:
            return False
        del self._kept[uid]
        _, read, claimed, from_hand = kept
        self._home[uid] = name
        if read is not None:
            self._read_at[(name, uid)] = read
        if claimed is not None:
            self._claimed_at[uid] = claimed
        if from_hand is not None:
            self._from_hand[uid] = from_hand
        self._lost.pop(uid, None)
        return True

    def _gated(self, name: str) -> bool:
        """True when a tag read on ``name`` cannot be that cell's own: it has a presence
        sensor, and the sensor is not believed closed."""
        cell = self.geometry.cell(name)
        return cell.presence is not None and not self._present.get(name, False)

    def _lies_elsewhere(self, uid: str, name: str) -> bool:
        """Does ``uid`` lie on a cell other than ``name`` (its reader reports it there)? Only
        such a tag, read on an open cell, is a neighbour's: a tag lying nowhere else lies
        here, whatever the contact says (one that closes late or chatters open under a piece
        set down must not lose it). A tag only kept through its old reader's misses is not
        counted: it turns up elsewhere because it was moved there."""
        home = self._home.get(uid)
        return home is not None and home != name

    def _closing_over_open(self, name: str, uid: str) -> bool:
        """Is ``name``'s contact closing (the firmware reports it closed, the debounce is
        still running) under ``uid`` while the cell the tag lies on is open? An open cell
        holds a tag only because no other cell claimed it (a piece carried just above it is
        read there too), so a cell whose contact closes under the same tag has the better
        claim: the piece is being set down there. Waiting for the debounce would leave the
        stale read on the open cell as the picture, long enough on a slow-scanning board
        for it to be taken as a move."""
        home = self._home.get(uid)
        return name in self._full_since and home is not None and home != name \
            and self._gated(home)

    def _holds(self, name: str, uid: str) -> bool:
        """Does ``uid`` still lie on ``name`` by its sensors (closed, and its reader still
        reports it: the firmware reports a tag gone only after several clean misses, so a
        piece lifted off a stack is still reported there for a few scans)?"""
        return not self._gated(name) and uid in self._seen.get(name, ())

    def _claim(self, uid: str, name: str, t: float) -> None:
        """``uid`` was read on ``name``, whose sensors say a piece lies there: it is there,
        unless it lies on another cell with a presence sensor that still holds it (a tag read
        on two closed cells is the one it was placed on; the other read is a neighbour's).
        Placed means: the cell it lay on already, unless this cell's contact closed (within
        :attr:`_first_read`) before the other cell took the tag: then the piece was set down here
        and the closed neighbour, scanned first, read it before this cell's reader did."""
        home = self._home.get(uid)
        if home is not None and home != name and self.geometry.cell(name).presence is not None \
                and self.geometry.cell(home).presence is not None and self._holds(home, uid):
            closed = self._closed_at.get(name, -1e18)
            if t - closed > self._first_read or (
                    closed > self._claimed_at.get(uid, -1e18)
                    and not self._closed_under(home, name, uid, closed)):
                self.seen_twice[name] += 1
                return
            self.seen_twice[home] += 1  # just set down here: the other read is the neighbour's
        if self._home.get(uid) != name:
            self._claimed_at[uid] = t
            lost = self._lost.pop(uid, None)
            if home is None and lost is not None:
                self._from_hand[uid] = lost
            else:
                self._from_hand.pop(uid, None)
        self._home[uid] = name
        self._guessed.discard(uid)
        for other, kept in self._sticky.items():  # it has left the cell that missed it
            if other != name:
                kept.pop(uid, None)

    @property
    def _first_read(self) -> float:
        """How long after a cell's contact closed its reader has read the piece that closed
        it: at its next turn, or the one after if that scan missed it (two cycles), and not
        longer than ``miss_grace``. A tag read there later, while it lies on a closed
        neighbour, is the neighbour's. On a fast board the two cycles are the shorter
        (Topple, 0.1 s: a slot's reader read its own tiki and scanned four more times; the
        tiki set down next door, read there 0.43 s after the slot closed, was taken for the
        slot's and the legal swap shown as two tikis on one slot)."""
        return min(self.miss_grace, 2 * self.scan_period)

    def _closed_under(self, home: str, name: str, uid: str, closed: float) -> bool:
        """Is ``uid``, lying on ``home``, the piece that closed ``name``'s contact, with no
        tag of its own there, while ``home`` still reports it? Then it was carried past (or
        lifted off) ``home`` and set down here. A stack's reader goes on reporting a tag until
        three scans miss it, three cycles on a slow board (TacTiki: 3 s), long after the move
        was taken with the piece on the wrong cell. It is so when ``uid`` is the one foreign
        tag read there, or, with several, the one newly read since the contact began to close
        (the firmware scans a cell's reader as soon as its contact changes): the others were
        read before, neighbour reads of the stack next door (a TacTiki step off e1 onto the
        empty e2, whose reader had picked up the tiki left on e1 half a second earlier).
        Otherwise it stays undecided: one of them is a neighbour's."""
        read = self._seen.get(name, frozenset())
        if closed <= self._closed_at.get(home, -1e18) or \
                any(self._home.get(u, name) == name for u in read):
            return False
        foreign = [u for u in read if self._home.get(u) not in (None, name)]
        if foreign == [uid]:
            return True
        began = closed - self.presence_debounce
        since = [u for u in foreign if self._read_at.get((name, u), -1e18) >= began]
        return since == [uid]

    def _last_reader(self, uid: str, leaving: str) -> str | None:
        """The cell other than ``leaving`` that read ``uid`` last and may hold it: a closed
        one if any reads it, else an open one (a piece set down where the contact does not
        hold closed under it; the cell shows it, inconsistent, rather than losing it)."""
        best: tuple[bool, float, str] | None = None
        for other, seen in self._seen.items():
            if other != leaving and uid in seen:
                closed = not self._gated(other)
                at = self._read_at.get((other, uid), 0.0)
                if best is None or (closed, at) > best[:2]:
                    best = (closed, at, other)
        return None if best is None else best[2]

    def _stranger(self, uid: str, cell: str) -> None:
        """Count an unknown UID and remember it among the last few (never all of them)."""
        self.unknown_count += 1
        self.recent_unknown.pop(uid, None)
        self.recent_unknown[uid] = cell
        while len(self.recent_unknown) > RECENT_UNKNOWN:
            self.recent_unknown.popitem(last=False)

    def _presence(self, t: float, sensor: int, present: bool) -> bool:
        cell = self.geometry.cell_of_presence(sensor)
        if cell is None:
            self.unrouted += 1
            return False
        name = cell.name
        if present:
            self._empty_since.pop(name, None)
            if not self._present.get(name, False) and name not in self._full_since:
                self._full_since[name] = t
                moved = [uid for uid in self._seen.get(name, ())
                         if self._closing_over_open(name, uid)]
                for uid in moved:  # read here, lying on an open cell: set down here
                    self._claim(uid, name, t)
                if moved:
                    self.last_change = t
                return True  # not believed yet: poll() will settle it
            return False
        self._full_since.pop(name, None)
        if self._present.get(name, False) and name not in self._empty_since:
            self._empty_since[name] = t
            return True  # not believed yet: poll() will settle it
        return False

    def poll(self, now: float) -> bool:
        """Apply what time alone decides (debounced emptiness, expired misses)."""
        changed = False
        # ``now >= since + debounce``, the very sum next_deadline() hands out: written as
        # ``now - since >= debounce`` it can come out a hair short at that deadline, and the
        # change would then wait for the next event.
        for name, since in list(self._empty_since.items()):
            if now >= since + self.presence_debounce:
                del self._empty_since[name]
                self._present[name] = False
                self._sticky.pop(name, None)  # the cell is empty: no tag is hiding in it
                self.last_change = max(self.last_change, since + self.presence_debounce)
                changed = True
        for name, since in list(self._full_since.items()):
            if now >= since + self.presence_debounce:
                del self._full_since[name]
                self._present[name] = True
                self._closed_at[name] = since + self.presence_debounce
                for uid in self._seen.get(name, ()):  # read while the contact was closing
                    self._claim(uid, name, since + self.presence_debounce)
                self.last_change = max(self.last_change, since + self.presence_debounce)
                changed = True
        for sticky in self._sticky.values():
            for uid, until in list(sticky.items()):
                if now >= until:
                    del sticky[uid]
                    self.last_change = max(self.last_change, until)
                    changed = True
        return changed

    def next_deadline(self) -> float | None:
        """When :meth:`poll` next has something to decide (None: nothing pending)."""
        times = [since + self.presence_debounce for since in
                 (*self._empty_since.values(), *self._full_since.values())]
        times += [until for sticky in self._sticky.values() for until in sticky.values()]
        return min(times, default=None)

    # -- output ----------------------------------------------------------------------------------
    def observation(self, now: float) -> Observation:
        """The current picture (call :meth:`poll` first to apply time-based changes)."""
        pieces: dict[str, tuple[str, ...]] = {}
        unknown: dict[str, tuple[str, ...]] = {}
        inconsistent: list[str] = []
        lookup = self.registry.lookup
        for cell in self.geometry.cells:
            name = cell.name
            gated = self._gated(name)
            # An open cell shows only tags that lay there (lifted, still reported until the
            # firmware's misses clear them: inconsistent, so not judged), never new reads.
            uids = {u for u in self._seen.get(name, ())
                    if self._home.get(u, None if gated else name) == name}
            uids.update(self._sticky.get(name, ()))
            known = []
            strangers = []
            for uid in uids:
                piece = lookup(uid)
                if piece is None:
                    strangers.append(uid)
                else:
                    known.append(piece)
            if cell.presence_piece is not None and self._present.get(name, False):
                known.append(cell.presence_piece)
            if known:
                pieces[name] = tuple(sorted(known))
            if strangers:
                unknown[name] = tuple(sorted(strangers))
            if cell.presence is not None and cell.reader is not None:
                present = self._present.get(name, False) or name in self._empty_since
                if present != bool(uids) or (name in self._full_since and self._seen.get(name)):
                    inconsistent.append(name)
        return Observation(now, pieces, unknown, tuple(inconsistent))

    def contested(self, now: float, recent: bool = False) -> dict[str, tuple[str, str, float]]:
        """Tags read on two closed cells: UID -> (the cell it lies on, the other closed cell
        that reports it, when that one first read it). Either the other read is a
        neighbour's, or the piece lies there: moved from a stack onto a stack, no contact
        changes, and the old cell's reader reports it until :data:`ABSENT_MISSES` scans have
        missed it (3 s on TacTiki's 1.04 s cycle), or it went to whichever of two closed
        cells read it last when its old cell let it go, and that was the neighbour. The
        sensors cannot tell which; the follower asks the game (a picture that only one of
        them explains). Listed only while it is news: read in the last few cycles, or in the
        few cycles before the tag went to the last of two closed cells that read it, when its
        old cell let it go (the other cell had it first; a cell whose contact closed under
        the tag is no guess). A
        read older than both is a neighbour's: a piece put there is missed by its old reader
        from its next turn on. ``recent``: only the reads of the last few cycles."""
        out: dict[str, tuple[str, str, float]] = {}
        for uid, home, other, at, until in self._contest_reads(recent):
            if now < until and (uid not in out or at > out[uid][2]):
                out[uid] = (home, other, at)
        return out

    def contested_window(self, now: float, recent: bool = False
                         ) -> tuple[float | None, float | None]:
        """When the last read :meth:`contested` lists no longer went stale, at ``now`` or
        before, and when the next one listed now will (None: none). A read going stale
        changes the picture :meth:`contested` shows as surely as a reading does, but no
        event says so: the follower looks again then, and a picture that only shows once a
        read went stale (the tag of two read on other cells that remains) has been there
        since then, not since the board last changed."""
        last: float | None = None
        due: float | None = None
        for _, _, _, _, until in self._contest_reads(recent):
            if until <= now:  # (the very moment the deadline hands out: stale then)
                last = until if last is None else max(last, until)
            elif until != float("inf"):
                due = until if due is None else min(due, until)
        return last, due

    def _contest_reads(self, recent: bool) -> Iterator[tuple[str, str, str, float, float]]:
        """The reads of tags on a second closed cell (UID, the cell it lies on, the other
        cell, when that one first read it) and until when :meth:`contested` lists each
        (infinity: for as long as the reads stay as they are)."""
        window = (ABSENT_MISSES + 1) * self.scan_period
        for other, seen in self._seen.items():
            if self._gated(other):
                continue
            for uid in sorted(seen):  # a set's order changes with PYTHONHASHSEED; ties must not
                home = self._home.get(uid)
                if home is None or home == other or self.registry.lookup(uid) is None or \
                        not self._holds(home, uid):
                    continue
                at = self._read_at.get((other, uid))
                if at is None:
                    continue
                claimed = self._claimed_at.get(uid, -1e18) \
                    if uid in self._guessed and not recent else -1e18
                yield uid, home, other, at, \
                    float("inf") if 0 <= claimed - at <= window else at + window

    def taken_at(self, uid: str) -> float | None:
        """When the cell ``uid`` lies on took it by a read of its own (read there while no
        closed cell held it, or its contact closed under it, read alone): a read of it on
        another cell before that was the piece carried over that cell. None when it lies
        nowhere, or its cell is a guess (the last of two closed cells that read it, when its
        old cell let it go: the other read may be where it lies)."""
        if uid not in self._home or uid in self._guessed:
            return None
        return self._claimed_at.get(uid)

    def lifted(self) -> dict[str, tuple[str, float]]:
        """UID -> the cell it lay on before the one it lies on now, and when that cell's
        reader let it go, for the pieces no reader reported between (each was in a hand:
        lifted, carried, set down). A piece carried over a stack and set down beyond is not
        listed: its new cell reads it while the stack's reader still reports it (a reader lets
        a tag go only after :data:`ABSENT_MISSES` clean scans). One that rested on the stack
        and was lifted off again later is."""
        return {uid: lost for uid, lost in self._from_hand.items() if uid in self._home}

    def presence(self, cell: str) -> bool:
        """Believed presence on ``cell`` (False for a cell without a sensor)."""
        return self._present.get(cell, False)

    def closing(self, cell: str) -> bool:
        """Has ``cell``'s contact closed, not believed yet (its debounce still running)?"""
        return cell in self._full_since

    def read_since(self, cell: str, uid: str) -> float | None:
        """When ``cell``'s reader began to report ``uid`` (None: it does not report it)."""
        return self._read_at.get((cell, uid))
