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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_app.board.geometry import Geometry, load_geometry
from pi_app.board.registry import TagRegistry
from pi_app.hw.faults import HwEvent
from pi_app.referee import feedback as fb
from pi_app.referee import sdnotify
from pi_app.referee.config import Config
from pi_app.referee.feed import StationFeed
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
        from pi_app.sim.players import registry_for

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
                          scan_period_ms=max(1, int(geometry.scan_period * 1000))).start()
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


#: Called after each step with the event, when it arrived (the link thread handed it over),
#: when the step was done (LEDs written), and what the follower said: for the benchmark.
StepProbe = Callable[[HwEvent | None, float, float, list[Any]], None]


async def serve(config: Config, *, stop: asyncio.Event | None = None, sim: Any = None,
                on_ready: Callable[[Station, Hardware], None] | None = None,
                feed: StationFeed | None = None, probe: StepProbe | None = None) -> None:
    """Run one station until ``stop`` is set (or SIGTERM/SIGINT)."""
    loop = asyncio.get_running_loop()
    stop = stop or asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    queue: asyncio.Queue[tuple[float, HwEvent]] = asyncio.Queue()

    def sink(event: HwEvent) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (time.perf_counter(), event))

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
    tasks = _start_network(config, station, store)
    try:
        station.render(time.monotonic())
        sdnotify.notify("READY=1\nSTATUS=refereeing " + station.session.game.title)
        log.info("station ready: %s, game %d, %d moves so far", station.session.game.title,
                 station.session.game_id, len(station.session.history))
        if on_ready is not None:
            on_ready(station, hardware)
        await _loop(station, queue, stop, probe)
    finally:
        sdnotify.notify("STOPPING=1")
        await _stop_network(tasks)
        hardware.close()
        store.close()


async def _loop(station: Station, queue: asyncio.Queue[tuple[float, HwEvent]],
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
                scene = fb.Scene(phase="error", game=config.station.game,
                                 board=config.station.board, store_error=why,
                                 store_damaged=("Press OK again to set the file aside and "
                                                "start a new one" if confirm.armed(now)
                                                else words),
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


def _start_network(config: Config, station: Station, store: EventStore) -> list[Any]:
    """The web page and the MQTT publisher, when configured (pi_app.net).

    The page never stops the station: while its port is taken it is off, the screen and the
    feed say why (the station's notice), and it comes back by itself once the port frees.
    """
    tasks: list[Any] = []
    if config.web.enabled:
        def notice(text: str) -> None:
            station.status.notice = text
            now = time.monotonic()
            station.render(now)  # the screen, unless a game message covers it
            if station.feed.snapshot.get("notice") != text:  # the scene did not change
                station.feed.update(station.snapshot(station.scene(now)))

        try:
            from pi_app.net import web

            tasks.append(web.start_station_server(station.feed, station.geometry, config,
                                                  notice=notice, store=store))
            station.page_url = web.page_address(config)  # the game-over screen's QR code
        except Exception:
            log.exception("the station's web page could not start")
    if config.mqtt.enabled:
        try:
            from pi_app.net import mqtt

            tasks.append(mqtt.start_publisher(station.feed, store, config))
        except Exception:
            log.exception("the MQTT publisher could not start")
    return tasks


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


def run(config: Config) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(serve(config))
    return 0
