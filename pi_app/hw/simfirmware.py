"""A simulated sensor board speaking the real protocol over a pty: for tests, diag and the demo.

It runs the firmware itself (firmware/tikifw: Device, Scanner, the COBS/CRC codec) with
simulated readers (tikifw.sim) in a thread, so the Pi talks to the same code the Pico runs;
only the readers and the wire are simulated. ``tikifw`` is installed as a package of its own
(pyproject.toml maps ``firmware/tikifw`` in place), so the checkout and an installed wheel run
the same firmware files with no search-path tricks. The caller changes the "physical board"
(tags in each reader's field, presence per sensor, faults) and the firmware reports it as it
would.

Each simulated reader answers at once unless ``reader_ms`` says how long a scan of one takes:
then the firmware thread spends that long on it, as a Pico spends it on the radio, so the scan
cycle the firmware measures and reports (SCAN_TIMES) is the board's pace, and a change on a
cell is seen only when its reader's turn comes.

The device appears at a stable path (a symlink, like udev's /dev/tikiboard-sensors) that
``unplug`` removes and ``replug`` brings back with a freshly booted firmware, so the link's
reconnect path is exercised exactly as with a real USB cable.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import shutil
import tempfile
import threading
import time
import tty
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any


def firmware_module(name: str) -> ModuleType:
    """Import ``tikifw.<name>``, the firmware's own module (untyped MicroPython code, hence the
    import by name: mypy --strict does not follow it)."""
    return importlib.import_module(f"tikifw.{name}")


class PtyTransport:
    """The firmware's transport over a pty master: never blocks, drops what the host won't take.

    A real Pico's USB CDC also loses output when no host reads it; the link recovers through
    sequence gaps and snapshots.
    """

    def __init__(self, master: int) -> None:
        self.master = master
        self.dropped = 0
        self.inject: bytearray = bytearray()
        self.lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self.lock:
            if self.inject:
                data = bytes(self.inject) + data
                self.inject.clear()
        try:
            os.write(self.master, data)
        except BlockingIOError:
            self.dropped += 1
        except OSError as exc:
            if exc.errno not in (errno.EIO, errno.EBADF):
                raise
            self.dropped += 1

    def read(self) -> bytes:
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.EBADF):
                return b""
            raise


class _TimedReader:
    """A simulated reader whose every init and scan takes ``seconds`` (a real chip's radio
    time): the firmware's own clock then measures it."""

    def __init__(self, reader: Any, seconds: float) -> None:
        self.reader = reader
        self.seconds = seconds
        self.name = reader.name

    def init(self) -> None:
        self.reader.init()

    def scan(self) -> Any:
        if self.seconds > 0:
            time.sleep(self.seconds)
        return self.reader.scan()


class SimFirmware:
    """The firmware with simulated readers, reachable at :attr:`path`."""

    def __init__(
        self,
        readers: int,
        presence: int,
        *,
        board: str = "sim",
        scan_period_ms: int = 50,
        heartbeat_ms: int = 200,
        snapshot_ms: int = 2000,
        presence_debounce_ms: int = 20,
        absent_misses: int = 3,
        protocol: int | None = None,
        presence_readers: dict[int, int] | None = None,
        link_dir: str | os.PathLike[str] | None = None,
        reader_ms: float = 0.0,
    ) -> None:
        sim = firmware_module("sim")
        self._proto = firmware_module("proto")
        self._scanner_mod = firmware_module("scanner")
        self._device_mod = firmware_module("device")
        self._reader_cls = sim.SimReader
        self._presence_cls = sim.SimPresence
        self.board: Any = sim.SimBoard(readers, presence)
        self.board_name = board
        self.protocol = self._proto.PROTOCOL_VERSION if protocol is None else protocol
        self.presence_readers = dict(presence_readers or {})
        self.reader_ms = reader_ms
        self.settings = {"scan_period_ms": scan_period_ms, "heartbeat_ms": heartbeat_ms,
                         "snapshot_ms": snapshot_ms, "absent_misses": absent_misses,
                         "presence_debounce_ms": presence_debounce_ms}
        self._own_dir = link_dir is None
        self._dir = Path(tempfile.mkdtemp(prefix="tikisim-") if link_dir is None else link_dir)
        self.path = str(self._dir / "tikiboard-sensors")
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._master = -1
        self._slave = -1
        self.device: Any = None
        self.transport: PtyTransport | None = None
        self.boots = 0
        self.paused = False

    # --- the physical board -------------------------------------------------------------------
    def set_tags(self, reader: int, uids: Iterable[str]) -> None:
        """Put exactly these tags (hex UIDs) in reader ``reader``'s field."""
        self.board.set_tags(reader, [bytes.fromhex(u) for u in uids])

    def place(self, reader: int, uid: str) -> None:
        self.set_tags(reader, [u.hex() for u in self.board.tags[reader]] + [uid])

    def lift(self, reader: int, uid: str) -> None:
        gone = bytes.fromhex(uid)
        self.board.set_tags(reader, [u for u in self.board.tags[reader] if u != gone])

    def set_presence(self, sensor: int, present: bool) -> None:
        self.board.set_presence(sensor, present)

    def fail_reader(self, reader: int, failed: bool = True) -> None:
        """Make a reader stop answering (or answer again)."""
        if failed:
            self.board.dead.add(reader)
        else:
            self.board.dead.discard(reader)

    def set_flaky(self, reader: int, every: int) -> None:
        """Hide one stacked tag every ``every``-th scan (0: never), as a real stack does."""
        self.board.flaky[reader] = every

    def break_chain(self, broken: bool = True) -> None:
        self.board.chain_broken = broken

    def inject(self, data: bytes) -> None:
        """Send raw bytes (garbage, a hand-made frame) before the firmware's next frame."""
        if self.transport is not None:
            with self.transport.lock:
                self.transport.inject += data

    # --- the cable ------------------------------------------------------------------------------
    def start(self) -> SimFirmware:
        self._plug()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sim-firmware", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        self._unplug()
        if self._own_dir:
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> SimFirmware:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def unplug(self) -> None:
        """Pull the USB cable: the device path vanishes and the host's port fails."""
        self._unplug()

    def replug(self) -> None:
        """Plug it back in: a new pty at the same path, and the firmware boots again."""
        self._plug()

    def _plug(self) -> None:
        with self._lock:
            if self._master >= 0:
                return
            master, slave = os.openpty()
            tty.setraw(slave)  # no echo of our own frames before the host opens the port
            os.set_blocking(master, False)
            self._master, self._slave = master, slave
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.symlink(os.ttyname(slave), self.path)
            self.transport = PtyTransport(master)
            self.device = self._boot(self.transport)
            self.boots += 1

    def _unplug(self) -> None:
        with self._lock:
            if self._master < 0:
                return
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self._master)
            os.close(self._slave)
            self._master = self._slave = -1
            self.device = None
            self.transport = None

    def _boot(self, transport: PtyTransport) -> Any:
        config = self._scanner_mod.Config()
        for name, value in self.settings.items():
            setattr(config, name, value)
        readers = [_TimedReader(self._reader_cls(self.board, i), self.reader_ms / 1000)
                   for i in range(len(self.board.tags))]
        scanner = self._scanner_mod.Scanner(readers, self._presence_cls(self.board), config, None)
        t0 = time.monotonic()
        return self._device_mod.Device(
            scanner, transport, lambda: int((time.monotonic() - t0) * 1000),
            board=self.board_name, chip=self._proto.CHIP_SIM, protocol=self.protocol,
            presence_readers=self.presence_readers)

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                busy = False
                if self.device is not None and not self.paused:
                    busy = self.device.poll()
            if not busy:
                self._stop.wait(0.001)
