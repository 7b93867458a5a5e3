"""TacTiki's set-up read by the station: a field whose two pieces arrived in one reading has no
known order, and a guess gets a hidden rank wrong for the whole game. The station asks the
players to lift the pieces off and put them back one at a time, lights the field, and its
question shows no rank (the opponent reads the screen too). Driven through the station with
exact times, as the players would set up."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pi_app.board.equipment import registry_for
from pi_app.readings import PresenceChanged, TagsSeen
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore

CHOSEN = {"a1": [5, 3], "b1": [4, 1], "c1": [2, 2], "d1": [3, 5], "e1": [4, 1],
          "a5": [1, 2], "b5": [3, 4], "c5": [5, 5], "d5": [2, 3], "e5": [4, 1]}


class Table:
    """One station and the players' hands on its start fields."""

    def __init__(self, tmp_path: Path) -> None:
        config = Config(station=replace(StationConfig(), game="tactiki", seed=1,
                                        data_dir=str(tmp_path)))
        self.station = Station(config, EventStore(tmp_path / "tikiboard.db"),
                               registry_for("tactiki"), clock=lambda: 0.0)
        self.used: set[str] = set()
        self.on: dict[str, list[str]] = {}
        self.t = 1.0

    def uid(self, piece: str) -> str:
        uid = next(u for u in self.station.registry.uids_of(piece) if u not in self.used)
        self.used.add(uid)
        return uid

    def show(self, field: str, uids: list[str]) -> None:
        """The field's reader and presence sensor report ``uids`` in one scan."""
        cell = self.station.geometry.cell(field)
        assert cell.reader is not None and cell.presence is not None
        self.on[field] = uids
        self.station.step(TagsSeen(self.t, cell.reader, frozenset(uids)), self.t)
        self.station.step(PresenceChanged(self.t, cell.presence, bool(uids)), self.t)
        self.t += 0.3
        self.station.step(None, self.t)  # the presence debounce has passed

    def set_up(self, together: set[str], chosen: dict[str, list[int]] | None = None) -> None:
        """Every field of ``chosen`` one piece at a time, bottom first, except the fields
        ``together``, whose two pieces arrive in the same scan."""
        for field, ranks in (chosen or CHOSEN).items():
            owner = "T" if field.endswith("1") else "C"
            if field in together:
                self.show(field, [self.uid(f"{owner}{r}") for r in ranks])
                continue
            for rank in ranks:
                self.show(field, [*self.on.get(field, []), self.uid(f"{owner}{rank}")])


def test_two_pieces_read_at_once_are_asked_about_not_guessed(tmp_path: Path) -> None:
    table = Table(tmp_path)
    station = table.station
    table.set_up({"b1"})  # T4 below T1; by name the station used to guess T1 below
    station.step(None, table.t + 2.0)
    table.t += 2.0
    assert station.status.reading is not None  # not read: its order is not known
    prompt = station.status.prompt
    assert prompt is not None and prompt.kind == "order" and prompt.options == ("b1",)
    scene = station.scene(table.t)
    assert scene.prompt_cells == ("b1",)
    assert station.feed.snapshot["prompt"]["options"] == ["b1"]
    # The field's LEDs ask (blue, the question's colour); a field that is known stays dark.
    frame = station.last_frame
    b1 = [frame[i] for i in station.geometry.cell("b1").leds]
    a1 = [frame[i] for i in station.geometry.cell("a1").leds]
    assert all(b > max(r, g) for r, g, b in b1) and all(c == (0, 0, 0) for c in a1)
    # The players lift both pieces off and put them back one at a time, bottom first.
    bottom, top = table.on["b1"]
    table.show("b1", [])
    assert station.status.reading is not None
    table.show("b1", [bottom])
    table.show("b1", [bottom, top])
    assert station.status.prompt is None
    station.step(None, table.t + 1.5)
    assert station.status.reading is None
    assert station.session.export()["setup"] == CHOSEN


def test_lifting_the_top_piece_alone_also_tells_the_order(tmp_path: Path) -> None:
    table = Table(tmp_path)
    station = table.station
    table.set_up({"d1", "c5"})  # two C5 need no order
    prompt = station.status.prompt
    assert prompt is not None and prompt.options == ("d1",)
    bottom, top = table.on["d1"]
    table.show("d1", [bottom])  # the top piece lifted: what stays is the bottom
    table.t += 1.0  # held up longer than a tag missed in a stack is kept (miss_grace)
    station.step(None, table.t)
    assert station.status.prompt is None
    table.show("d1", [bottom, top])
    station.step(None, table.t + 1.5)
    assert station.status.reading is None and station.status.prompt is None
    assert station.session.export()["setup"] == CHOSEN


def test_the_question_shows_no_rank(tmp_path: Path) -> None:
    """The same field with other ranks arriving together draws the very same screen, and
    nothing the station publishes about the question names a piece."""
    screens = []
    swapped = dict(CHOSEN, b1=CHOSEN["d1"], d1=CHOSEN["b1"])
    for run, chosen in enumerate((CHOSEN, swapped)):
        table = Table(tmp_path / str(run))
        table.set_up({"b1"}, chosen)
        station = table.station
        prompt = station.status.prompt
        assert prompt is not None and prompt.kind == "order"
        screen = station.last_screen
        assert screen is not None
        screens.append(screen.tobytes())
        published = str(station.feed.snapshot["prompt"])
        assert not any(f"T{rank}" in published for rank in range(1, 6)), published
    assert screens[0] == screens[1]
