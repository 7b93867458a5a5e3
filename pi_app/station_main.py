"""The station as ``tikiboard run`` starts it: the referee's daemon with the network attached.

The referee (``pi_app.referee``) runs a station and publishes what happens through its feed;
the network (``pi_app.net``) serves that feed as the station page and over MQTT. Neither
imports the other's running parts: this module, above both, hands the daemon the function that
starts the page and the publisher. ``tikiboard run``, ``tikiboard demo``, the benches and the
tests start stations through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from pi_app.referee import daemon, firstboot
from pi_app.referee.address import page_address
from pi_app.referee.config import Config
from pi_app.referee.daemon import Notices
from pi_app.referee.firstboot import FirstBoot
from pi_app.referee.station import Station
from pi_app.referee.store import EventStore

if TYPE_CHECKING:
    from pi_app.net.schema import LocksPayload, PairingPayload

log = logging.getLogger("pi_app.referee.daemon")  # the journal's lines keep their source


def start_network(config: Config, station: Station, store: EventStore, notices: Notices,
                  setup: Any = None) -> list[Any]:
    """The web page and the MQTT publisher, when configured (pi_app.net).

    The page never stops the station: while its port is taken it is off, the screen and the
    feed say why (the station's notice), and it comes back by itself once the port frees.
    The publisher's connection news (refused: wrong password, not allowed; connected) is the
    notice's MQTT part; the referee's locks it reads (``tiki/EVENT/locks``) lock the hints.
    """
    tasks: list[Any] = []
    if config.web.enabled:
        try:  # imported here: a station installed without the net extra still runs
            from pi_app.net import web
            from pi_app.net.setup_app import setup_routes

            tasks.append(web.start_station_server(
                station.feed, station.geometry, config,
                notice=lambda text: notices.say("page", text), store=store,
                routes=setup_routes(setup)))
            station.page_url = page_address(config)  # the game-over screen's QR code
        except Exception:
            notices.parts["page"] = "page off: it could not start (see the log)"
            notices.page_known.set()
            log.exception("the station's web page could not start")
    if config.mqtt.enabled:
        loop = asyncio.get_running_loop()

        def mqtt_news(text: str) -> None:  # from the publisher's thread
            with contextlib.suppress(RuntimeError):  # the loop closed while stopping
                loop.call_soon_threadsafe(notices.say, "mqtt", text)

        def locks(payload: LocksPayload) -> None:  # from paho's thread: the referee's locks changed
            by = None if payload.hints else (payload.by or "referee")
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(lambda: station.lock_hints(by, station.clock()))

        def pairing(payload: PairingPayload | None) -> None:  # from paho's thread
            offer = None if payload is None else (payload.round, payload.table, payload.game,
                                                  tuple(payload.players))
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(lambda: station.offer_pairing(
                    offer, station.clock(), None if payload is None else payload.ends_in))

        try:
            from pi_app.net import mqtt

            tasks.append(mqtt.start_publisher(station.feed, store, config, on_link=mqtt_news,
                                              on_locks=locks, on_pairing=pairing))
        except Exception:
            log.exception("the MQTT publisher could not start")
    return tasks


async def serve(config: Config, **kwargs: Any) -> None:
    """One station with its page and publisher (:func:`pi_app.referee.daemon.serve`)."""
    await daemon.serve(config, network=start_network, **kwargs)


async def serve_configured(config: Config, setup: FirstBoot | None, **kwargs: Any) -> None:
    """The station through its first-boot set-up and on
    (:func:`pi_app.referee.firstboot.serve_configured`), with its page and publisher."""
    await firstboot.serve_configured(config, setup, network=start_network, **kwargs)


def run(config: Config, setup: FirstBoot | None = None) -> int:
    """``tikiboard run``: the daemon with its page and publisher until stopped (through the
    first-boot set-up when ``setup`` is given)."""
    return daemon.run(serve(config) if setup is None else serve_configured(config, setup))
