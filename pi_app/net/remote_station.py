"""A station's remote seat on the network: :class:`pi_app.referee.opponent.RemoteMoves` over a
:class:`pi_app.net.remote_link.TableLink` (issue 36, docs/remote-play.md).

The referee layer may not import the network, so the station only knows the protocol
``RemoteMoves``; this adapter answers it from the table's confirmed record and hands the
station's own moves to the table.
"""

from __future__ import annotations

from pi_app.net.remote_link import TableLink


class RemoteSeat:
    """The other board's moves for the station, and the station's moves for the other board."""

    def __init__(self, link: TableLink) -> None:
        self.link = link

    def move_at(self, ply: int) -> str | None:
        """The confirmed move at ``ply`` when the other board made it (a move of our own
        board is the station's follower's business, not shown)."""
        record = self.link.table.record
        if ply >= len(record) or record[ply][1] == self.link.table.station:
            return None
        return record[ply][0]

    def away(self) -> tuple[str, ...]:
        """The boards the authority cannot reach (its last ``paused``)."""
        return self.link.table.paused

    def confirmed(self) -> int:
        return len(self.link.table.record)

    def made(self, ply: int, text: str) -> None:
        """Send the local player's move at ``ply`` when it is the record's next and nothing is
        waiting for its confirmation. Otherwise it is confirmed, sent and waiting, refused
        (its reason is kept in the table), or the record is still behind (a restarted link
        before its sync): the station calls again on its next step."""
        table = self.link.table
        if ply != len(table.record) or table.pending is not None or \
                any(refusal.seq == ply + 1 for refusal in table.refused):
            return
        self.link.propose(text)
