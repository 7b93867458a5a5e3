"""A simulated physical board behind the reader interface: the firmware's own best mock.

``SimBoard`` is the table: per reader the tags lying in its field, per sensor whether a piece
is there, plus the faults a test wants (a reader that stops answering, a reader that misses a
stacked tag now and then, a broken presence chain). ``SimReader`` and ``SimPresence`` expose it
through exactly the interfaces the real drivers have, so the Scanner and Device run unchanged:
the Pi's simulator (pi_app/hw/simfirmware.py) and the host self-test both use them.

Writers replace whole tuples, so another thread can change the board while the device scans.
"""

from tikifw.readers import ReaderError
from tikifw.shiftin import SENTINEL, PresenceError


class SimBoard:
    def __init__(self, readers, sensors):
        self.tags = [() for _ in range(readers)]
        self.presence = [False] * sensors
        self.dead = set()
        self.flaky = {}
        self.chain_broken = False

    def set_tags(self, reader, uids):
        self.tags[reader] = tuple(sorted(set(uids)))

    def set_presence(self, sensor, present):
        self.presence[sensor] = bool(present)


class SimReader:
    """Reader ``index`` of a SimBoard. ``flaky[index] = k`` hides one tag every k-th scan."""

    name = "SIM"

    def __init__(self, board, index):
        self.board = board
        self.index = index
        self.scans = 0

    def init(self):
        if self.index in self.board.dead:
            raise ReaderError(f"simulated reader {self.index} does not answer")

    def scan(self):
        self.init()
        self.scans += 1
        uids = list(self.board.tags[self.index])
        every = self.board.flaky.get(self.index, 0)
        if every and uids and self.scans % every == 0:
            uids.pop(self.scans % len(uids))
        return uids, True


class SimPresence:
    """The presence chain of a SimBoard, sentinel bits and all."""

    def __init__(self, board):
        self.board = board
        self.count = len(board.presence)

    def read_raw(self):
        if self.board.chain_broken:
            return [1] * (self.count + len(SENTINEL))
        return [0 if p else 1 for p in self.board.presence] + list(SENTINEL)

    def read(self):
        if self.board.chain_broken:
            raise PresenceError("presence chain broken (sentinel bits [1, 1])")
        return list(self.board.presence)
