"""The daemon: the station's hardware opened from the configuration, and the asyncio loop.

One loop, one queue. The sensor link's reader thread and the buttons put events on the queue;
the loop takes one event at a time (or wakes at the follower's next deadline, or to animate
blinking LEDs) and calls :meth:`Station.step`. systemd hears READY=1 once the station is up
and WATCHDOG=1 from the loop itself, so a stuck loop is restarted.

With ``sensors.source = "sim"`` the sensor board is the real firmware code running against
simulated readers behind a pty (:class:`pi_app.hw.simfirmware.SimFirmware`): the daemon still
talks the real protocol over a real serial device, exactly as on a Pi.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_app.board.geometry import Geometry, load_geometry
from pi_app.board.registry import TagRegistry
from pi_app.i18n import translator
from pi_app.readings import HwEvent
from pi_app.referee import feedback as fb
from pi_app.referee import sdnotify
from pi_app.referee.address import lan_address
from pi_app.referee.config import Config
from pi_app.referee.feed import Phase, StationFeed
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore, StoreDamaged, StoreError

log = logging.getLogger(__name__)

#: The fastest the LEDs are redrawn while something blinks or fades (frames only go out when
#: they change; an idle board wakes the loop only for its timers).
ANIMATION_HZ = 20
#: Seconds between attempts to open a game database that would not open (a read-only or full
#: SD card): the station waits, saying why, instead of exiting into a restart loop.
STORE_RETRY_S = 2.0


@dataclass
class Hardware:
    """What a station is wired to; each part real or mock by configuration."""

    link: Any
    leds: Any
    display: Any
    buttons: Any
    sim: Any = None  # the simulated firmware, when sensors.source is "sim"

    def close(self) -> None:
        for part in (self.buttons, self.link, self.sim, self.leds, self.display):
            if part is None:
                continue
            closer = getattr(part, "stop", None) or getattr(part, "close", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    closer()


def registry_path(config: Config) -> Path:
    return config.data_dir / "tags.json"


def open_registry(config: Config, geometry: Geometry, game_name: str) -> TagRegistry:
    """The station's tag registry; on the simulated board, made-up tags for every piece."""
    if config.sensors.source == "sim":
        from pi_app.board.equipment import registry_for

        return registry_for(game_name)
    return TagRegistry.load(registry_path(config))


def open_hardware(config: Config, geometry: Geometry, sink: Callable[[HwEvent], None],
                  *, sim: Any = None) -> Hardware:
    """Open the sensor link, LEDs, display and buttons the configuration names."""
    from pi_app.hw.buttons import Buttons
    from pi_app.hw.display import open_display
    from pi_app.hw.leds import open_strip
    from pi_app.hw.link import SerialLink
    from pi_app.hw.pinmap import load_pinmap

    pins = load_pinmap()
    device = config.sensors.device
    if config.sensors.source == "sim" and sim is None:
        from pi_app.hw.simfirmware import SimFirmware

        sim = SimFirmware(geometry.reader_count, geometry.presence_count,
                          board=config.station.board,
                          scan_period_ms=max(1, int(geometry.scan_period * 1000)),
                          # each reader's scan takes its share of the board's cycle, as on the
                          # real board, so the firmware measures and reports that pace
                          reader_ms=geometry.scan_period * 1000 / max(geometry.reader_count, 1)
                          ).start()
    if sim is not None:
        device = sim.path
    # A read returns as soon as a byte arrives; the timeout only bounds how often an idle
    # link wakes up (100 ms: well under the heartbeat, a tenth of the idle CPU of 20 ms).
    link = SerialLink(device, sink, baudrate=config.sensors.baudrate, read_timeout=0.1).start()
    leds = open_strip(max(geometry.led_count, 1), pins.neopixel, config.leds.driver,
                      brightness=config.leds.brightness)
    display = open_display(pins.oled, config.display.driver)
    if config.buttons.driver == "mock":
        os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")
    buttons = Buttons(pins.buttons, sink)
    return Hardware(link, leds, display, buttons, sim)


#: Starts the station's page and publisher (``pi_app.station_main.start_network``): given the
#: configuration, the station, its store, its notice line and its first-boot set-up, it returns
#: the tasks to cancel at the end. Passed in by the layer above, so the referee never imports
#: the network: the network reads the referee's feed, not the other way round.
Network = Callable[[Config, Station, EventStore, "Notices", Any], list[Any]]

#: Called after each step with the event, when it arrived (the link thread handed it over),
#: when the step was done (LEDs written), and what the follower said: for the benchmark.
StepProbe = Callable[[HwEvent | None, float, float, list[Any]], None]


async def serve(config: Config, *, stop: asyncio.Event | None = None, sim: Any = None,
                on_ready: Callable[[Station, Hardware], None] | None = None,
                feed: StationFeed | None = None, probe: StepProbe | None = None,
                setup: Any = None, network: Network | None = None) -> None:
    """Run one station until ``stop`` is set (or SIGTERM/SIGINT). ``setup``: its first-boot
    set-up (:class:`pi_app.referee.firstboot.FirstBoot`), on the screen and the page.
    ``network``: what starts the page and the MQTT publisher (none without it)."""
    loop = asyncio.get_running_loop()
    stop = stop or asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    queue: asyncio.Queue[tuple[float, HwEvent | None]] = asyncio.Queue()

    def sink(event: HwEvent) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (time.perf_counter(), event))

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to wake
            loop.call_soon_threadsafe(queue.put_nowait, (time.perf_counter(), None))

    store = await _open_store(config, stop)
    if store is None:
        return
    # The board is the configured one, not the last game's: its LED strip, sensors and
    # (simulated) firmware are opened for it once, and the station plays only its games.
    game_name = config.station.game
    geometry = load_geometry(config.sensors.geometry or game_name)
    registry = open_registry(config, geometry, game_name)
    hardware = open_hardware(config, geometry, sink, sim=sim)
    station = Station(config, store, registry, leds=hardware.leds, display=hardware.display,
                      feed=feed, geometry=geometry)
    station.wake = wake
    notices = Notices(station)
    tasks = (network(config, station, store, notices, setup) if network is not None
             else _without_network(config, notices))
    if setup is not None:
        setup.attach(station, notices.say)
    try:
        station.render(time.monotonic())
        sdnotify.notify("READY=1\nSTATUS=refereeing " + station.session.game.title)
        if config.web.enabled:  # the page's first bind: up, or off and why
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(notices.page_known.wait(), PAGE_WAIT_S)
        for line in startup_lines(config, station, hardware, store.path, notices):
            log.info("%s", line)
        if on_ready is not None:
            on_ready(station, hardware)
        await _loop(station, queue, stop, probe)
    finally:
        sdnotify.notify("STOPPING=1")
        await _stop_network(tasks)
        hardware.close()
        store.close()


async def _loop(station: Station, queue: asyncio.Queue[tuple[float, HwEvent | None]],
                stop: asyncio.Event, probe: StepProbe | None = None) -> None:
    watchdog = _watchdog_interval()
    next_ping = time.monotonic()
    stopping = asyncio.ensure_future(stop.wait())
    errors = _RepeatedErrors()
    try:
        while not stop.is_set():
            now = time.monotonic()
            wake = [now + 5.0]
            try:
                blink = station.next_frame_change(now)
                if blink is not None:
                    wake.append(max(blink, now + 1.0 / ANIMATION_HZ))
                deadline = station.next_deadline(now)
                if deadline is not None:
                    wake.append(deadline)
            except Exception as exc:
                errors.report(exc, "planning the next wake-up")
                wake.append(now + 1.0)
            if watchdog:
                wake.append(next_ping)
            timeout = max(0.0, min(wake) - now)
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter, stopping}, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            event: HwEvent | None = None
            if getter in done:
                arrived, event = getter.result()
            else:
                getter.cancel()
                arrived = time.perf_counter()
            try:
                outcomes = station.step(event, time.monotonic())
                if probe is not None:
                    probe(event, arrived, time.perf_counter(), outcomes)
            except Exception as exc:  # never let one bad event stop the referee
                errors.report(exc, f"handling {event!r}")
            if watchdog and time.monotonic() >= next_ping:
                sdnotify.notify("WATCHDOG=1")
                next_ping = time.monotonic() + watchdog
    finally:
        stopping.cancel()


class _RepeatedErrors:
    """Logs an error with its traceback the first time, then the same error only as a count
    once a minute: a fault that recurs on every wake-up (a redraw that fails) must not bury
    the log in identical tracebacks, nor go unsaid."""

    QUIET_S = 60.0

    def __init__(self) -> None:
        self.last = ""
        self.repeats = 0
        self.said_at = 0.0

    def report(self, exc: Exception, doing: str) -> None:
        key = f"{type(exc).__name__}: {exc}"
        now = time.monotonic()
        if key != self.last:
            self.last, self.repeats, self.said_at = key, 0, now
            log.error("error %s", doing, exc_info=exc)
            return
        self.repeats += 1
        if now - self.said_at >= self.QUIET_S:
            log.error("the same error %d more time(s) since: %s", self.repeats, key)
            self.repeats, self.said_at = 0, now


async def _open_store(config: Config, stop: asyncio.Event) -> EventStore | None:
    """The game database. While it cannot be opened (the card is read-only or full), the
    screen and the status LEDs say so, and it is tried again every :data:`STORE_RETRY_S`
    until it opens (None when the daemon is stopped first). systemd hears READY with the
    reason as STATUS, so it neither restarts the station in a loop nor kills it as stuck.

    A file that cannot be used as it is (damaged, a newer schema, unreadable rows:
    :class:`StoreDamaged`) is never retried as it is nor replaced unasked: the screen says what
    is wrong and what would be kept, and the players set it aside with OK pressed twice
    (:mod:`pi_app.referee.store_damage`); it is opened again only if the file itself changes
    (someone put a sound one in its place)."""
    from pi_app.referee import store_damage

    path = config.data_dir / "tikiboard.db"
    shown: Hardware | None = None
    geometry: Geometry | None = None
    watchdog = _watchdog_interval()
    loop = asyncio.get_running_loop()
    presses: asyncio.Queue[str] = asyncio.Queue()
    confirm = store_damage.Confirm()
    said = ""

    def pressed(event: HwEvent) -> None:  # from gpiozero's thread
        loop.call_soon_threadsafe(presses.put_nowait, getattr(event, "button", ""))

    try:
        while True:
            damage: StoreDamaged | None = None
            try:
                return EventStore(path)
            except StoreDamaged as exc:
                damage, why = exc, str(exc)
            except StoreError as exc:
                why = str(exc)
            if shown is None:
                geometry = load_geometry(config.sensors.geometry or config.station.game)
                shown = _open_feedback(config, geometry)
                shown.buttons = _open_buttons(config, pressed)
            kept = store_damage.salvage(path, damage.kind) if damage is not None else None
            if why != said:
                said = why
                sdnotify.notify("READY=1\nSTATUS=" + why)
                if damage is None or kept is None:
                    log.error("%s; the station says so and tries again every %.0f s", why,
                              STORE_RETRY_S)
                else:
                    log.error("%s; the file is kept as it is until the players press OK twice "
                              "to set it aside and start a new database (then %s)", why,
                              store_damage.kept_words(kept))
            assert geometry is not None
            words = "" if damage is None or kept is None else store_damage.explain(damage, kept)
            seen = _file_state(path)
            retry = time.monotonic() + STORE_RETRY_S
            while not stop.is_set():
                now = time.monotonic()
                if damage is None and now >= retry:
                    break
                if damage is not None and _file_state(path) != seen:
                    break  # the file was changed or replaced: look at it again
                while not presses.empty():
                    button = presses.get_nowait()
                    if damage is None or kept is None or not confirm.press(button, now):
                        continue
                    try:
                        store, aside, kept = store_damage.replace(path, damage)
                    except StoreError as exc:
                        log.error("%s", exc)
                        continue
                    log.warning("%s set aside as %s, unchanged; a new database is in its "
                                "place: %s", path, aside, store_damage.kept_words(kept))
                    return store
                scene = fb.Scene(phase=Phase.ERROR, game=config.station.game,
                                 language=config.station.language,
                                 board=config.station.board, store_error=why,
                                 store_damaged=(translator(config.station.language).gettext(
                                     "Press OK again to set the file aside and start a new "
                                     "one") if confirm.armed(now) else words),
                                 confirming=confirm.armed(now))
                shown.display.show(fb.screen(scene))  # skipped by the driver when unchanged
                shown.leds.show(fb.led_frame(scene, geometry, now))  # blinking
                if watchdog:
                    sdnotify.notify("WATCHDOG=1")
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1.0 / ANIMATION_HZ)
            if stop.is_set():
                return None
    finally:
        if shown is not None:
            shown.close()


def _file_state(path: Path) -> tuple[int, int, int] | None:
    """Enough of a file's identity to see it was changed or replaced."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _open_feedback(config: Config, geometry: Geometry) -> Hardware:
    """The LEDs and the screen alone (nothing to referee without a database)."""
    from pi_app.hw.display import open_display
    from pi_app.hw.leds import open_strip
    from pi_app.hw.pinmap import load_pinmap

    pins = load_pinmap()
    leds = open_strip(max(geometry.led_count, 1), pins.neopixel, config.leds.driver,
                      brightness=config.leds.brightness)
    return Hardware(link=None, leds=leds, display=open_display(pins.oled, config.display.driver),
                    buttons=None)


def _open_buttons(config: Config, sink: Callable[[HwEvent], None]) -> Any:
    """The buttons alone, to confirm setting a damaged database aside (None when they will
    not open: the screen still says what is wrong, and the file can be moved by hand)."""
    from pi_app.hw.buttons import Buttons
    from pi_app.hw.pinmap import load_pinmap

    if config.buttons.driver == "mock":
        os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")
    try:
        return Buttons(load_pinmap().buttons, sink)
    except Exception:
        log.exception("the buttons could not be opened")
        return None


def _watchdog_interval() -> float:
    """Half of systemd's WatchdogSec (WATCHDOG_USEC), or 0 when not under a watchdog."""
    usec = os.environ.get("WATCHDOG_USEC", "")
    return int(usec) / 2e6 if usec.isdigit() and int(usec) > 0 else 0.0


class Notices:
    """The station's one notice line, shared by the page ("page off: port 8080 in use") and
    the MQTT link ("MQTT: wrong password"): each source sets or clears its own part, so the
    page coming up never wipes the broker's complaint. Set on the daemon's loop only (the
    publisher's thread hands its news over with ``call_soon_threadsafe``)."""

    def __init__(self, station: Station) -> None:
        self.station = station
        self.parts: dict[str, str] = {}
        self.page_known = asyncio.Event()
        """Set once the page said how its first bind went (the start-up lines wait for it)."""

    def say(self, source: str, text: str) -> None:
        self.parts[source] = text
        if source == "page":
            self.page_known.set()
        joined = "; ".join(part for part in self.parts.values() if part)
        station = self.station
        station.status.notice = joined
        now = time.monotonic()
        station.render(now)  # the screen, unless a game message covers it
        if station.feed.snapshot.get("notice") != joined:  # the scene did not change
            station.feed.update(station.snapshot(station.scene(now)))


def _without_network(config: Config, notices: Notices) -> list[Any]:
    """No page and no publisher: this station was started without the network layer (a
    caller that passes no ``network``). Said once, so a configured page is not silently off."""
    if config.web.enabled or config.mqtt.enabled:
        log.warning("the station page and MQTT are not started: the station was started "
                    "without pi_app.net (tikiboard run starts them)")
    notices.page_known.set()
    return []


#: How long the start-up lines wait for the page's first bind, to say where it is (a bind is
#: one system call: this is only a bound, not a delay anyone sees).
PAGE_WAIT_S = 2.0


def startup_lines(config: Config, station: Station, hardware: Hardware, db: Path,
                  notices: Notices) -> list[str]:
    """What the station is doing, said once at start (journalctl, or the terminal of a
    ``tikiboard run`` with the defaults): someone who started it must not have to guess
    whether it reads a real board, where its games are kept, or where its page is."""
    game = station.session.game
    drivers = (config.leds.driver, config.display.driver, config.buttons.driver)
    if config.sensors.source == "sim":
        sensors = ("simulated sensor board (the firmware's own scanner behind the pty "
                   f"{getattr(hardware.link, 'path', '?')}, no hardware)")
    else:
        sensors = f"sensor board on {config.sensors.device} at {config.sensors.baudrate} baud"
    return [
        f"station ready: board {config.station.board!r}, configuration: {config.source}",
        f"  game: {game.title}, game {station.session.game_id}, "
        f"{len(station.session.history)} moves so far",
        f"  sensors: {sensors}",
        f"  LEDs: {config.leds.driver}, display: {config.display.driver}, buttons: "
        f"{config.buttons.driver}" + (" (mock: drawn in memory only, no hardware driven)"
                                      if "mock" in drivers else ""),
        f"  database: {db}",
        f"  page: {_page_words(config, notices)}",
        f"  MQTT: {_mqtt_words(config)}",
    ]


def _page_words(config: Config, notices: Notices) -> str:
    where = f"{config.source}" if config.source != "(embedded defaults)" else "the defaults"
    if not config.web.enabled:
        return (f"off ([web] enabled = false in {where}; `tikiboard run --print-config` "
                "shows every key)")
    off = notices.parts.get("page", "")
    if off:
        return f"{off} (tried again every few seconds)"
    if not notices.page_known.is_set():
        return f"not listening yet on {config.web.host}:{config.web.port}"
    return "http://" + _people_address(config.web.host, config.web.port) + "/"


def _people_address(host: str, port: int) -> str:
    """The address people type: a page bound to every address is reached by this machine's
    LAN address (the one its default route leaves from; no packet is sent to find it)."""
    if host not in ("", "0.0.0.0", "::"):
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return f"{lan_address() or '127.0.0.1'}:{port} (all addresses)"


def _mqtt_words(config: Config) -> str:
    if not config.mqtt.enabled:
        return "off"
    m = config.mqtt
    tls = ", TLS" if m.tls or m.tls_ca else ""
    return (f"broker {m.host}:{m.port}{tls}, event {m.event!r}, board "
            f"{config.station.board!r}, user {m.username or config.station.board!r}")


async def _stop_network(tasks: list[Any]) -> None:
    """Stop the page and the publisher, and wait for the page to close its connections (a
    task cancelled and left behind would be cancelled again mid-shutdown by ``asyncio.run``,
    which logs a traceback)."""
    for task in tasks:
        task.cancel()
    pending = [t for t in tasks if isinstance(t, asyncio.Future)]
    if pending:
        done, _ = await asyncio.wait(pending, timeout=5.0)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                log.error("the station page ended with %r", task.exception())


def run(main: Coroutine[Any, Any, None]) -> int:
    """Run a station coroutine (:func:`serve`, or the first-boot set-up's
    :func:`pi_app.referee.firstboot.serve_configured`) until stopped, logging to stderr, which
    systemd's journal keeps."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(main)
    return 0
