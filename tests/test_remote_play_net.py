"""Remote play through a real mosquitto on loopback (pi_app.net.remote_link).

Two tables (boards ``alpha`` and ``beta``, each with its own broker user) and the authority (the
referee's user) play whole games; one board's connection is cut mid-game (its last will pauses
both boards), the other station restarts with an empty record and resynchronises. Every stored
record must equal the authority's, and nothing either board received may carry a hidden fact.
"""

from __future__ import annotations

import json
import random
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from net_fixtures import EVENT, REFEREE, Broker, broker  # noqa: F401 (a fixture)

from pi_app.games import get_game
from pi_app.net import topics
from pi_app.net.remote import Authority, Table, replay
from pi_app.net.remote_link import AuthorityLink, TableLink, wait_for

GAME = "remote-test-1"


def _caught_up(table: Table, authority: Authority) -> Callable[[], bool]:
    return lambda: (len(table.record) == len(authority.record) and table.pending is None
                    and table.paused == ())


def _has(holder: Table | Authority, n: int) -> Callable[[], bool]:
    return lambda: len(holder.record) == n


def _play(broker: Broker, tmp_path: Path, game: str, seed: int) -> dict[str, Any]:  # noqa: F811
    engine = get_game(game)
    start = engine.new_game(random.Random(seed))
    seats: dict[str, tuple[int, ...]] = {"alpha": (0,), "beta": (1,)}
    store = tmp_path / f"{game}-authority.json"
    authority = Authority(engine, f"{GAME}-{game}", seats, start)
    auth_link = AuthorityLink(authority, broker.options(REFEREE), EVENT, store).start()
    pauses: list[tuple[str, ...]] = []
    links = {b: TableLink(Table(authority.game, b), broker.options(b), EVENT, tick=0.2,
                          on_change=lambda t: pauses.append(t.paused)).start()
             for b in seats}
    received: list[bytes] = []
    rng = random.Random(seed)
    try:
        wait_for(lambda: authority.missing == (), 10, "both boards online")
        n = 0
        cut = restarted = False
        while not engine.is_over(authority.state):
            seat = engine.to_move(authority.state)
            board = "alpha" if seat == 0 else "beta"
            link = links[board]
            wait_for(_caught_up(link.table, authority), 10, f"{board} caught up")
            # a TacTiki table knows its own ranks only: the simulated hand picks from the
            # authority's state, as the player picks from what is on the board
            moves = engine.legal_moves(authority.state)
            link.propose(engine.move_text(authority.state, moves[rng.randrange(len(moves))]))
            n += 1
            wait_for(_has(authority, n), 10, f"move {n} applied")
            if n == 6 and not cut:  # the beta board's link drops without a goodbye
                cut = True
                sock = links["beta"].client.socket()
                assert isinstance(sock, socket.socket)
                sock.shutdown(socket.SHUT_RDWR)
                wait_for(lambda: ("beta",) in pauses, 10, "the pause on alpha")
                wait_for(lambda: authority.missing == (), 15, "beta back")
            if n == 12 and not restarted:  # the alpha station restarts, its record lost
                restarted = True
                received += links["alpha"].received
                links["alpha"].stop()
                links["alpha"] = TableLink(Table(authority.game, "alpha"), broker.options("alpha"),
                                           EVENT, tick=0.2).start()
        for board, link in links.items():
            wait_for(_has(link.table, len(authority.record)), 10, f"{board} has the record")
        received += links["alpha"].received + links["beta"].received
    finally:
        for link in links.values():
            link.stop()
        auth_link.stop()
    stored = json.loads(store.read_text(encoding="utf-8"))
    return {"engine": engine, "authority": authority, "links": links, "stored": stored,
            "received": received, "pauses": pauses, "start": start}


def test_a_whole_manami_game_between_two_boards(broker: Broker,  # noqa: F811
                                                tmp_path: Path) -> None:
    out = _play(broker, tmp_path, "manami", 5)
    authority, engine = out["authority"], out["engine"]
    public = list(authority.public_record())
    assert engine.is_over(authority.state)
    for link in out["links"].values():
        assert link.table.record == public
        assert link.table.refused == []
        # the table's own replay reaches the authority's position (no hidden facts in Manami)
        assert engine.position_key(replay(engine, out["start"], link.table.record)) == \
            engine.position_key(authority.state)
    assert [tuple(m) for m in out["stored"]["record"]] == authority.record
    assert ("beta",) in out["pauses"]


def test_a_whole_tactiki_game_keeps_the_ranks_at_the_authority(broker: Broker,  # noqa: F811
                                                              tmp_path: Path) -> None:
    out = _play(broker, tmp_path, "tactiki", 9)
    authority, engine = out["authority"], out["engine"]
    assert engine.is_over(authority.state)
    for link in out["links"].values():
        assert link.table.record == list(authority.public_record())
    # nothing a board received names a rank: the public pieces of the start and every move text
    secrets = _hidden_words(engine, out["start"])
    everything = b"\n".join(out["received"]).decode()
    assert secrets and not [w for w in secrets if w in everything]


def _hidden_words(engine: Any, state: Any) -> set[str]:
    """Names of pieces in the state's view that differ from their public form (ranks)."""
    hidden = set()
    for stack in engine.expected_view(state).values():
        for piece in stack:
            if engine.public_piece(piece) != piece:
                hidden.add(piece)
    return hidden


def test_the_acl_lets_a_board_write_only_its_own_up_topic(
        broker: Broker,  # noqa: F811
) -> None:
    text = broker.files.acl.read_text(encoding="utf-8")
    assert f"pattern write tiki/{EVENT}/remote/%u/up" in text
    assert f"pattern read tiki/{EVENT}/remote/%u/down" in text
    assert topics.remote_board(EVENT, f"tiki/{EVENT}/remote/beta/up", "up") == "beta"
    assert topics.remote_board(EVENT, f"tiki/{EVENT}/remote/+/up", "up") is None
