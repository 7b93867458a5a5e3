"""The remote-play protocol (pi_app.net.remote) under duplication, reordering, loss and restarts.

A simulated network holds every message in flight; hypothesis chooses which is delivered next,
which is duplicated or dropped, when a table's timer fires, when a station or the authority
restarts and when a board goes offline. At every step each table's record must be a prefix of
the authority's (nothing applied twice, nothing out of order); after a fair phase (everything
delivered, every timer fired) the records are equal and every proposal is either in the record
exactly once or refused with a reason.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_app.games import get_game
from pi_app.net import remote
from pi_app.net.remote import (
    ALL,
    Accepted,
    Authority,
    Hello,
    Paused,
    Presence,
    Propose,
    Refused,
    Sync,
    Table,
)

GAME = "g1"
STATIONS = ("a", "b")


@dataclass
class Net:
    engine: Any
    auth: Authority
    tables: dict[str, Table]
    flight: list[tuple[str, remote.Message]] = field(default_factory=list)
    proposals: dict[str, int] = field(default_factory=lambda: {s: 0 for s in STATIONS})
    stored: dict[str, Any] = field(default_factory=dict)

    def send_auth(self, out: list[tuple[str, remote.Message]]) -> None:
        self.stored = self.auth.to_json()  # store before confirm
        for to, message in out:
            for station in (STATIONS if to == ALL else (to,)):
                self.flight.append((station, message))

    def deliver(self, i: int) -> None:
        to, message = self.flight.pop(i)
        if to == "auth":
            self.send_auth(self.auth.handle(message))
        else:
            self.flight += [("auth", m) for m in self.tables[to].handle(message)]

    def play(self, station: str, k: int) -> None:
        table = self.tables[station]
        seat = STATIONS.index(station)
        if (table.pending is not None or self.engine.is_over(self.auth.state)
                or len(table.record) != len(self.auth.record)
                or self.engine.to_move(self.auth.state) != seat):
            return
        moves = self.engine.legal_moves(self.auth.state)
        text = self.engine.move_text(self.auth.state, moves[k % len(moves)])
        self.proposals[station] += 1
        self.flight += [("auth", m) for m in table.propose(text)]

    def check_prefix(self) -> None:
        public = list(self.auth.public_record())
        for table in self.tables.values():
            assert table.record == public[:len(table.record)]


def new_net(game: str) -> Net:
    engine = get_game(game)
    state = engine.new_game(random.Random(7))
    auth = Authority(engine, GAME, {"a": (0,), "b": (1,)}, state)
    net = Net(engine, auth, {s: Table(GAME, s) for s in STATIONS})
    for s in STATIONS:
        net.send_auth(auth.handle(Presence(s, True)))
    return net


ACTION = st.one_of(
    st.tuples(st.just("deliver"), st.integers(0, 50)),
    st.tuples(st.just("dup"), st.integers(0, 50)),
    st.tuples(st.just("drop"), st.integers(0, 50)),
    st.tuples(st.just("swap"), st.integers(0, 50)),
    st.tuples(st.just("tick"), st.sampled_from(STATIONS)),
    st.tuples(st.just("play"), st.sampled_from(STATIONS), st.integers(0, 200)),
    st.tuples(st.just("offline"), st.sampled_from(STATIONS)),
    st.tuples(st.just("online"), st.sampled_from(STATIONS)),
    st.tuples(st.just("restart"), st.sampled_from(STATIONS)),
    st.tuples(st.just("restart-authority")),
)


def run(net: Net, actions: list[tuple[Any, ...]]) -> None:
    for action in actions:
        kind = action[0]
        if kind in ("deliver", "dup", "drop", "swap") and net.flight:
            i = action[1] % len(net.flight)
            if kind == "deliver":
                net.deliver(i)
            elif kind == "dup":
                net.flight.append(net.flight[i])
            elif kind == "drop":
                net.flight.pop(i)
            else:
                net.flight.append(net.flight.pop(i))
        elif kind == "tick":
            net.flight += [("auth", m) for m in net.tables[action[1]].tick()]
        elif kind == "play":
            net.play(action[1], action[2])
        elif kind in ("offline", "online"):
            net.send_auth(net.auth.handle(Presence(action[1], kind == "online")))
        elif kind == "restart":
            # the station kept its player's proposal (stored before sending), not its record
            old = net.tables[action[1]]
            net.tables[action[1]] = Table(GAME, action[1], pending=old.pending,
                                          refused=old.refused)
        elif kind == "restart-authority":
            online = set(net.auth.online)
            net.auth = Authority.from_json(net.engine, net.stored)
            for s in sorted(online):  # the stations' retained status, read again
                net.send_auth(net.auth.handle(Presence(s, True)))
        net.check_prefix()


def settle(net: Net) -> None:
    """The fair phase: everyone online, every message delivered, every timer fired."""
    for s in STATIONS:
        net.send_auth(net.auth.handle(Presence(s, True)))
    for _ in range(20):
        for s in STATIONS:
            net.flight += [("auth", m) for m in net.tables[s].tick()]
        while net.flight:
            net.deliver(0)
            net.check_prefix()
        if all(t.pending is None for t in net.tables.values()):
            break


def check_settled(net: Net) -> None:
    public = list(net.auth.public_record())
    for s, table in net.tables.items():
        assert table.record == public
        assert table.pending is None
        assert table.early == {}
        assert table.paused == ()
        mine = sum(1 for _m, by in net.auth.record if by == s)
        assert net.proposals[s] == mine + len(table.refused), (s, table.refused)
    # the record replays legally, and the stored copy is the authority's
    state = net.engine.new_game(random.Random(7))
    for move, _by in net.auth.record:
        state = net.engine.apply_text(state, move)
    assert Authority.from_json(net.engine, net.stored).record == net.auth.record


@pytest.mark.parametrize("game", ["manami", "tactiki"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=st.lists(ACTION, max_size=150))
def test_no_move_twice_or_lost(game: str, actions: list[tuple[Any, ...]]) -> None:
    net = new_net(game)
    run(net, actions)
    settle(net)
    check_settled(net)


def test_a_whole_manami_game_through_a_lossy_net() -> None:
    """A whole game, every third message dropped and every fifth duplicated, ends equal."""
    net = new_net("manami")
    rng = random.Random(3)
    n = 0
    while not net.engine.is_over(net.auth.state):
        for s in STATIONS:
            net.play(s, rng.randrange(1000))
            net.flight += [("auth", m) for m in net.tables[s].tick()]
        while net.flight:
            n += 1
            if n % 3 == 0:
                net.flight.pop(0)
            elif n % 5 == 0:
                net.flight.append(net.flight[0])
                net.deliver(0)
            else:
                net.deliver(rng.randrange(len(net.flight)))
            net.check_prefix()
    settle(net)
    check_settled(net)
    assert net.engine.is_over(net.auth.state)
    assert len(net.auth.record) > 10


def test_refusals_say_why() -> None:
    engine = get_game("manami")
    auth = Authority(engine, GAME, {"a": (0,), "b": (1,)}, engine.new_game(random.Random(7)))
    first = engine.move_text(auth.state, engine.legal_moves(auth.state)[0])
    me, other = ("a", "b") if engine.to_move(auth.state) == 0 else ("b", "a")

    def reason(message: remote.Message) -> str:
        (_to, answer), = auth.handle(message)
        assert isinstance(answer, Refused)
        return answer.reason

    assert reason(Propose(GAME, me, 1, first)) == remote.PAUSED  # nobody online yet
    auth.handle(Presence(me, True))
    out = auth.handle(Presence(other, True))
    assert out == [(ALL, Paused(GAME, ()))]
    assert reason(Propose("other", me, 1, first)) == remote.NOT_THIS_GAME
    assert reason(Propose(GAME, "z", 1, first)) == remote.NOT_A_PLAYER
    assert reason(Propose(GAME, other, 1, first)) == remote.NOT_YOUR_TURN
    assert reason(Propose(GAME, me, 1, "no such move")) == remote.ILLEGAL
    assert reason(Propose(GAME, me, 2, first)) == remote.EARLY
    assert auth.handle(Propose(GAME, me, 1, first)) == [(ALL, Accepted(GAME, 1, first, me))]
    # the same proposal again is answered, not applied again; a different one is stale
    assert auth.handle(Propose(GAME, me, 1, first)) == [(me, Accepted(GAME, 1, first, me))]
    assert reason(Propose(GAME, other, 1, first)) == remote.STALE
    assert len(auth.record) == 1
    assert auth.handle(Presence(other, False)) == [(ALL, Paused(GAME, (other,)))]


def test_wire_form_round_trips_and_refuses_junk() -> None:
    messages: list[remote.Message] = [
        Propose(GAME, "a", 1, "place a1"), Accepted(GAME, 1, "place a1", "a"),
        Refused(GAME, "a", 2, remote.EARLY, 1), Hello(GAME, "b", 0),
        Sync(GAME, 0, (("place a1", "a"),)), Presence("a", False), Paused(GAME, ("b",))]
    for message in messages:
        assert remote.from_json(remote.to_json(message)) == message
    assert remote.from_json({"kind": "propose", "game": GAME, "station": "a", "seq": -1,
                             "move": "x"}) is None
    assert remote.from_json({"kind": "propose", "game": GAME, "station": "a", "seq": True,
                             "move": "x"}) is None
    assert remote.from_json({"kind": "hello", "game": GAME, "station": "a"}) is None
    assert remote.from_json({"kind": "sync", "game": GAME, "start": 0,
                             "moves": [["a"]]}) is None
    assert remote.from_json({"kind": "nope"}) is None
