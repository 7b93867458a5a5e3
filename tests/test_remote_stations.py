"""Two real stations, one Manami game over a real mosquitto on loopback (issue 36).

Each station is the real :class:`pi_app.referee.station.Station` on its simulated board, with
the simulated hands and sensors of test_station_bot; the other board's seat is a remote seat
(:class:`pi_app.net.remote_station.RemoteSeat` over a table link), the authority runs on the
referee's user. The other player's move is shown on the LEDs like the station's own bot move, a
wrong execution of it is guided back, and at the end both stations' stored moves equal the
authority's record. Mid-game one board's connection is cut without a goodbye (the other
board's table is paused until it is back), and the other board's station is restarted (its
process: a new station over its store, a new link that knows nothing) after its player's move
was stored and before the authority had it: the move reaches the authority after the restart.
"""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path
from typing import Any

from net_fixtures import EVENT, REFEREE, Broker, broker  # noqa: F401 (a fixture)
from test_game_change_and_names import shows
from test_station_bot import Table as StationTable

from pi_app.net.remote import Authority, Table
from pi_app.net.remote_link import AuthorityLink, TableLink, wait_for
from pi_app.net.remote_station import RemoteSeat
from pi_app.referee.opponent import REMOTE


def _remote_shown(table: StationTable, timeout: float = 10.0) -> Any:
    """The other board's move as the station shows it, once it arrived (real time)."""
    deadline = time.monotonic() + timeout
    while True:
        table.wait_until(table.now + 0.05)
        shown = table.station.opponent.shown
        if shown is not None and shown.kind == "station" and shown.state == table.state:
            return shown
        assert time.monotonic() < deadline, "the remote move was not shown"
        time.sleep(0.01)


def _settle(boards: dict[str, StationTable], links: dict[str, TableLink],
            authority: Authority, wrong: list[str], timeout: float = 10.0) -> None:
    """Until both stations have stored the authority's whole record: each carries out the
    other board's move it shows; the first time (after a few moves) its player first makes
    another move, which must be guided back."""
    deadline = time.monotonic() + timeout
    while not all(len(t.station.session.history) == len(authority.record)
                  and links[b].table.pending is None for b, t in boards.items()):
        assert time.monotonic() < deadline, "the stations did not catch up"
        for board, table in boards.items():
            if len(table.station.session.history) >= len(authority.record):
                table.wait_until(table.now + 0.05)  # a stored move of its own still to send
                continue
            shown = _remote_shown(table)
            assert (shown.text, "beta" if board == "alpha" else "alpha") == \
                authority.record[len(table.station.session.history)]
            before = table.state
            if not wrong and len(authority.record) > 4:
                wrong.append(board)
                game = table.game
                other = next(m for m in game.legal_moves(before)
                             if game.move_text(before, m) != shown.text)
                table.show(game.placement_view(before, other))
                table.wait_until(table.now + 3.0)
                assert table.state == before
                guidance = table.station.status.guidance
                assert guidance is not None and guidance.kind == "mismatch"
                table.show(game.expected_view(before))
                assert table.station.status.guidance is None
                shown = _remote_shown(table)
            k = len(table.station.session.history)
            table.carry_out(shown.move)
            assert table.station.session.history[k][1] == shown.text
        time.sleep(0.01)


def test_two_stations_play_a_whole_manami_game(broker: Broker,  # noqa: F811
                                                tmp_path: Path) -> None:
    boards = {"alpha": StationTable(tmp_path / "alpha", "manami", {}),
              "beta": StationTable(tmp_path / "beta", "manami", {})}
    game = boards["alpha"].game
    start = boards["alpha"].state
    assert game.position_key(boards["beta"].state) == game.position_key(start)
    seats: dict[str, tuple[int, ...]] = {"alpha": (0,), "beta": (1,)}
    authority = Authority(game, "remote-stations-1", seats, start)
    auth_link = AuthorityLink(authority, broker.options(REFEREE), EVENT,
                              tmp_path / "authority.json").start()
    links: dict[str, TableLink] = {}
    for board, table in boards.items():
        links[board] = TableLink(Table(authority.game, board), broker.options(board), EVENT,
                                 tick=0.2).start()
        table.station.opponent.levels = {1 - seats[board][0]: REMOTE}
        table.station.opponent.remote = RemoteSeat(links[board])
    rng = random.Random(4)
    wrong: list[str] = []
    faults: list[str] = []
    try:
        wait_for(lambda: authority.missing == (), 10, "both boards online")
        while not game.is_over(authority.state):
            _settle(boards, links, authority, wrong)
            if game.is_over(authority.state):
                break
            if len(authority.record) >= 10 and not faults:  # beta's link drops, no goodbye
                faults.append("cut")
                sock = links["beta"].client.socket()
                assert isinstance(sock, socket.socket)
                sock.shutdown(socket.SHUT_RDWR)
                wait_for(lambda: links["alpha"].table.paused == ("beta",), 10, "alpha paused")
                alpha = boards["alpha"]
                alpha.wait_until(alpha.now + 0.1)
                assert alpha.station.scene(alpha.now).message == "paused: beta away"
                assert shows(alpha.station.last_screen, "paused: beta away")
                wait_for(lambda: links["alpha"].table.paused == (), 15, "resumed")
            if len(authority.record) >= 20 and len(faults) == 1 and \
                    game.to_move(authority.state) == 0:
                # alpha's player moves while alpha's link is down; alpha's station stores the
                # move, then its process restarts before the authority had the move
                faults.append("restart")
                links["alpha"].stop()
                wait_for(lambda: links["beta"].table.paused == ("alpha",), 10, "beta paused")
                n = len(authority.record)
                alpha = boards["alpha"]
                moves = game.legal_moves(alpha.state)
                alpha.carry_out(moves[rng.randrange(len(moves))])
                assert len(alpha.station.session.history) == n + 1
                made = alpha.station.session.history[n][1]
                alpha.station.store.close()
                boards["alpha"] = alpha = StationTable(tmp_path / "alpha", "manami", {})
                assert [m for _s, m in alpha.station.session.history][n] == made
                links["alpha"] = TableLink(Table(authority.game, "alpha"),
                                           broker.options("alpha"), EVENT, tick=0.2).start()
                alpha.station.opponent.levels = {1: REMOTE}
                alpha.station.opponent.remote = RemoteSeat(links["alpha"])
                deadline = time.monotonic() + 10
                while len(authority.record) == n:  # the restarted station sends what it stored
                    assert time.monotonic() < deadline, "the stored move never arrived"
                    alpha.wait_until(alpha.now + 0.05)
                    time.sleep(0.01)
                assert authority.record[n] == (made, "alpha")
                continue
            seat = game.to_move(authority.state)
            here = boards["alpha" if seat == 0 else "beta"]
            moves = game.legal_moves(here.state)
            here.carry_out(moves[rng.randrange(len(moves))])
        _settle(boards, links, authority, wrong)
    finally:
        for link in links.values():
            link.stop()
        auth_link.stop()
    assert wrong, "no wrong execution was tried"
    assert faults == ["cut", "restart"]
    assert len(authority.record) > 20
    record = [text for text, _by in authority.record]
    for table in boards.values():
        stored = [e.data["text"] for e in
                  table.station.store.events(table.station.session.game_id, ("move",))]
        assert stored == record
