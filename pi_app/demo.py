"""``tikiboard demo``: a whole game played by simulated hands through the real station.

Everything but the hands and the hardware is the product itself: the firmware's own scanner
runs against simulated readers behind a pty, the daemon's serial link reads it, the tracker,
inference, engine and event store referee it, and the LED frames and OLED screens are the ones
a real board would show. The terminal draws the board, the LEDs and the OLED screen live.
Embedded defaults: no hardware, no broker, a throw-away database.
"""

from __future__ import annotations

import asyncio
import gettext
import random
import re
import secrets
import shutil
import socket
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from PIL import Image

from pi_app.board.follower import Prompt, takeback_plies
from pi_app.board.outcomes import PromptKind
from pi_app.i18n import N_, translator
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware
from pi_app.referee.feed import Phase
from pi_app.referee.station import Station
from pi_app.sim.hands import Noise
from pi_app.sim.players_live import LivePlayers
from pi_app.station_main import serve

ESC = "\x1b"


_BRAILLE_BITS = ((0, 0, 0x01), (0, 1, 0x02), (0, 2, 0x04), (1, 0, 0x08), (1, 1, 0x10),
                 (1, 2, 0x20), (0, 3, 0x40), (1, 3, 0x80))


def oled_ascii(image: Image.Image | None) -> list[str]:
    """The OLED screen at full resolution in braille: 2 x 4 pixels per character."""
    if image is None:
        return []
    mono = image.convert("1")
    pixels = mono.load()
    assert pixels is not None
    rows = []
    for y in range(0, mono.height, 4):
        line = []
        for x in range(0, mono.width, 2):
            code = 0
            for dx, dy, bit in _BRAILLE_BITS:
                if x + dx < mono.width and y + dy < mono.height and pixels[x + dx, y + dy]:
                    code |= bit
            line.append(chr(0x2800 + code))
        rows.append("".join(line))
    return rows


#: The terminal the demo must fit: a plain 80 x 24 one.
WIDTH, HEIGHT = 80, 24
#: The OLED drawn in braille: 2 x 4 pixels a character, 128 x 64 -> 64 x 16.
OLED_COLS = 64
#: The most grid rows the board may take (title 1 + board + OLED 16 + two status lines = 24).
BOARD_ROWS = 5
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def visible(text: str) -> str:
    """``text`` as the terminal shows it (colour codes take no room)."""
    return _ANSI.sub("", text)


def _rgb(colour: tuple[int, int, int], text: str, ansi: bool) -> str:
    if not ansi:
        return text
    r, g, b = colour
    return f"{ESC}[38;2;{r};{g};{b}m{text}{ESC}[0m"


def _led(colour: tuple[int, int, int], ansi: bool) -> str:
    """One LED: ● lit (in its colour on a colour terminal), ○ dark."""
    return _rgb(colour, "●", ansi) if any(colour) else "○"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)] + "…"


def board_text(station: Station, ansi: bool) -> list[str]:
    """The board in at most :data:`BOARD_ROWS` lines of :data:`WIDTH` columns: each cell's name,
    its LEDs and its pieces (as the engine says). A board longer than it is wide (Topple's
    line of nine) is drawn across; narrow cells take two lines (name and LEDs over pieces)."""
    geometry = station.geometry
    view = station.session.game.expected_view(station.session.state)
    frame = station.last_frame or []
    cells = [c for c in geometry.cells if c.kind != "edge"]
    xs = sorted({round(c.center_mm[0]) for c in cells})
    ys = sorted({round(c.center_mm[1]) for c in cells})
    across = len(ys) > BOARD_ROWS and len(xs) < len(ys)
    cols, rows = (len(ys), len(xs)) if across else (len(xs), len(ys))
    width = (WIDTH - (cols - 1)) // cols
    grid: dict[tuple[int, int], tuple[str, str, str]] = {}
    for cell in cells:
        x, y = xs.index(round(cell.center_mm[0])), ys.index(round(cell.center_mm[1]))
        leds = "".join(_led(frame[i] if i < len(frame) else (0, 0, 0), ansi)
                       for i in cell.leds[:2])
        grid[(y, x) if across else (x, y)] = (cell.name, leds, ",".join(view.get(cell.name, ())))
    two_lines = width < 14
    lines = []
    for row in range(rows):
        tops, bottoms = [], []
        for col in range(cols):
            name, leds, pieces = grid.get((col, row), ("", "", ""))
            head = f"{name} {leds}" if name else ""
            pad = width - len(visible(head))
            if two_lines:
                tops.append(head + " " * pad)
                bottoms.append(_cut(pieces or ("·" if name else ""), width).ljust(width))
            else:
                rest = _cut(" " + (pieces or "·"), pad) if name else ""
                tops.append(head + rest.ljust(pad))
        lines.append(" ".join(tops).rstrip())
        if two_lines:
            lines.append(" ".join(bottoms).rstrip())
    return lines


def legend(station: Station, ansi: bool) -> list[str]:
    """What the LEDs say (:data:`pi_app.referee.feedback.SIGNALS`), ● for the ones lit now."""
    from pi_app.referee import feedback as fb

    now = station.clock()
    lit = {lamp.signal.key for lamp in fb.lamps(station.scene(now), station.geometry,
                                                  now).values()}
    _ = _words(station).gettext
    room = WIDTH - OLED_COLS - 1  # beside the OLED and its one-column rule
    lines = [_cut(_("LEDs ({dot} = lit)").format(dot="●"), room)]
    for signal in fb.SIGNALS.values():
        dot = _rgb(signal.colour, "●", ansi) if signal.key in lit else "○"
        lines.append(f"{dot} {_cut(_(signal.label), room - 2)}")
    return lines


def _words(station: Station) -> gettext.NullTranslations:
    """The demo speaks its station's language (``tikiboard demo --lang``), as its screen."""
    return translator(station.config.station.language)


def _people(station: Station) -> list[str]:
    """The players by name, the default names ("Player 2") in the demo's language."""
    _ = _words(station).gettext
    return [_("Player {number}").format(number=i + 1) if name == f"Player {i + 1}" else name
            for i, name in enumerate(station.player_names())]


#: The station's phases in words, for the demo's status line.
PHASE_WORDS = {"menu": N_("menu"), "setup": N_("set-up"), "play": N_("playing"),
               "prompt": N_("question"), "over": N_("game over"), "offline": N_("offline"),
               "error": N_("error")}


def frame_lines(station: Station, players: LivePlayers, ansi: bool, title: str = "") -> list[str]:
    """One picture of the demo, at most :data:`WIDTH` x :data:`HEIGHT`: the title, the board
    with its LEDs, the OLED screen with the LEDs' legend beside it, the last moves and the
    scores."""
    status = station.scene(station.clock())
    _ = _words(station).gettext
    people = _people(station)
    head = title or f"tikiboard demo · {station.session.game.title}"
    lines = [_cut(head, WIDTH)]
    lines += board_text(station, ansi)
    screen = oled_ascii(station.last_screen) or [" " * OLED_COLS] * 16
    side = legend(station, ansi)
    for i, row in enumerate(screen):
        lines.append(f"{row}▕{side[i]}" if i < len(side) else row)
    moves = [t for _, t in station.session.history][-12:]
    lines.append(_cut(_("moves: {moves}").format(moves="  ".join(moves)), WIDTH))
    scores = ", ".join(f"{people[p] if p < len(people) else p + 1} {s}"
                       for p, s in enumerate(status.scores))
    if station.session.game.winners(station.session.state) is not None:
        tail = _("result: {outcome}").format(outcome=outcome(station))
    else:
        phase = _(PHASE_WORDS.get(status.phase, status.phase))
        tail = _("{phase}, to move: {name}").format(
            phase=phase, name=people[status.to_move] if status.to_move is not None
            and status.to_move < len(people) else "-")
    hands = _("made {moves}, illegal {illegal}").format(moves=players.stats.moves,
                                                           illegal=players.stats.illegal)
    lines.append(_cut(f"{tail} · {scores} · {hands}", WIDTH))
    return lines


def draw(station: Station, players: LivePlayers, out: TextIO, ansi: bool,
         title: str = "") -> None:
    lines = frame_lines(station, players, ansi, title)
    if ansi:
        out.write(f"{ESC}[H{ESC}[2J" + "\n".join(lines) + "\n")
    out.flush()


def outcome(station: Station) -> str:
    """"not finished", "draw", or who won, by name ("Player 1" where no name was given), in
    the demo's language."""
    _ = _words(station).gettext
    game, state = station.session.game, station.session.state
    winners = game.winners(state)
    if winners is None:
        return _("not finished")
    if not winners:
        return _("draw")
    people = _people(station)
    names = people[winners[0]]
    for w in winners[1:]:
        names = _("{first} and {second}").format(first=names, second=people[w])
    return _("{names} won").format(names=names)


class DemoPlayers:
    """The players of the demo and the end-to-end tests: they play random legal moves, now
    and then an illegal one or a takeback, and answer the station's questions."""

    def __init__(self, station: Station, hardware: Hardware, rng: random.Random, *,
                 illegal: float = 0.0, takeback: float = 0.0, noise: Noise | None = None,
                 pace: tuple[float, float] = (0.1, 0.25),
                 script: dict[int, str] | None = None,
                 think: tuple[float, float] = (0.0, 0.0)) -> None:
        self.think = think  # seconds a player looks at the board before a turn
        self.script = dict(script or {})  # turn number -> "illegal" or "takeback"
        self.turns = 0
        self.station = station
        self.hardware = hardware
        self.rng = rng
        self.illegal = illegal
        self.takeback = takeback
        self.players = LivePlayers(hardware.sim, station.geometry, station.registry, rng,
                                   noise=noise, pace=pace, press=self.press)

    async def press(self, button: str) -> None:
        pin = self.hardware.buttons.buttons[button].pin
        pin.drive_low()
        await asyncio.sleep(0.08)
        pin.drive_high()

    async def wait_for(self, condition: Any, timeout: float) -> bool:
        """Wait until ``condition()`` holds, at most ``timeout`` seconds; whether it holds."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end:
            if condition():
                return True
            await asyncio.sleep(0.05)
        return bool(condition())

    def _prompt(self) -> Prompt | None:
        return self.station.status.prompt

    async def answer(self, intended: Any) -> None:
        """Answer open questions until the station holds ``intended`` (or nothing is asked)."""
        game = self.station.session.game
        for _ in range(10):
            if self.station.session.state == intended:
                return
            prompt = self._prompt()
            if prompt is None:
                if not await self.wait_for(lambda: self._prompt() is not None or
                                           self.station.session.state == intended,
                                           SLOW_READ):
                    return
                continue
            if prompt.kind == PromptKind.TAKEBACK:
                await self.players.press("back")
                continue
            before = self.station.session.state
            wanted = next((i for i, text in enumerate(prompt.options)
                           if game.apply_text(before, text) == intended), 0)
            for _ in range((wanted - prompt.selected) % max(len(prompt.options), 1)):
                await self.players.press("menu")
            await self.players.press("ok")
            self.players.stats.answers += 1
            await self.wait_for(lambda: self._prompt() is None, SLOW_READ)

    async def settle_board(self) -> None:
        """Fix the board as the station guides, until it matches the position."""
        game = self.station.session.game
        await self.players.change(game.expected_view(self.station.session.state))
        self.players.stats.fixes += 1

    async def turn(self) -> None:
        station, game = self.station, self.station.session.game
        state = station.session.state
        set_ups = self._set_ups()
        self.turns += 1
        planned = self.script.pop(self.turns, "")
        bot = station.opponent.plays(game.to_move(state))  # the hands carry out its move
        if not bot and (planned == "illegal" or self.rng.random() < self.illegal):
            await self.illegal_move()
            return
        if not bot and (planned == "takeback" or self.rng.random() < self.takeback) and \
                station.session.history:
            await self.take_back()
            return
        move = await self.station_move(state) if bot else game.random_move(state, self.rng)
        intended = game.apply(state, move)
        text = game.move_text(state, move)
        placement = game.placement_view(state, move)
        if placement == game.expected_view(state):  # a decision the sensors cannot see
            if self._prompt() is None:
                await self.players.press("ok")
        else:
            await self.players.change(placement)
        await self.wait_for(lambda: station.session.state != state or
                            self._prompt() is not None, SLOW_READ)
        await self.answer(intended)
        final = game.expected_view(intended)
        if final != placement:
            await asyncio.sleep(self.rng.uniform(0.3, 0.6))
            await self.players.change(final)
        self.players.stats.moves += 1
        self.players.stats.made.append(text)
        await self.wait_for(lambda: self._holds(intended, set_ups), SLOW_READ)
        if self._holds(intended, set_ups):
            self.players.stats.followed += 1
        else:
            self.players.stats.lost += 1
            await self.settle_board()  # the players put the board right, as guided

    async def station_move(self, state: Any) -> Any:
        """The move the station shows for its own seat (a random one if it shows none in
        time: the station then guides the board back, as for any wrong execution)."""
        def shown() -> Any:
            move = self.station.opponent.shown
            return move.move if move is not None and move.kind == "station" \
                and move.state == state else None

        await self.wait_for(lambda: shown() is not None, PATIENCE)
        return shown() or self.station.session.game.random_move(state, self.rng)

    def _set_up(self) -> bool:
        """The set-up is done, or the station waits on the players' cards (Topple's Secret
        Tiki cards, tapped in the play loop): what the hands wait for after laying out."""
        status = self.station.status
        return status.cards is not None or (status.phase == Phase.PLAY
                                            and not self.station.blocked())

    def _holds(self, intended: Any, set_ups: int) -> bool:
        """The station holds ``intended``, or a position it reached by itself from there: the
        moves nobody chooses (a forced pass), or the next round it dealt where nobody is to
        move and the game goes on (``set_ups``: :meth:`_set_ups` before the move)."""
        station, game = self.station, self.station.session.game
        reached, _ = game.advance_forced(intended)
        if station.session.state in (intended, reached):
            return True
        return game.to_move(reached) is None and not game.is_over(reached) and \
            self._set_ups() > set_ups

    def _set_ups(self) -> int:
        """How many set-ups the station's game record holds (a deal adds one)."""
        game = self.station.session.game
        return len(game.record_segments(self.station.session.record))

    async def illegal_move(self) -> None:
        """Put a piece where no rule allows, wait to be told, put it back."""
        game = self.station.session.game
        view = {c: list(p) for c, p in game.expected_view(self.station.session.state).items()}
        cells = [c.name for c in self.station.geometry.cells if c.kind == "cell"]
        occupied = [c for c in cells if view.get(c)]
        if not occupied:
            return
        src = self.rng.choice(occupied)
        dst = self.rng.choice([c for c in cells if c != src])
        view[dst].append(view[src].pop())
        key = tuple((c, tuple(sorted(view.get(c, [])))) for c in self.station.follower.cells)
        if key in self.station.follower.position.by_placement:
            return  # that happens to be legal: not an illegal move after all
        self.players.stats.illegal += 1
        await self.players.change({c: tuple(p) for c, p in view.items()})
        await self.wait_for(lambda: self.station.status.guidance is not None, SLOW_READ)
        await asyncio.sleep(0.3)
        await self.settle_board()

    async def take_back(self) -> None:
        """Put the pieces back one move and confirm; or say it with the back button."""
        station = self.station
        history = station.session.history
        earlier = history[-takeback_plies(station.session.game, history)][0]
        view = station.session.game.expected_view(earlier)
        self.players.stats.takebacks += 1
        if not station.follower.sees_put_back(earlier):
            await self.players.press("back")
            await self.wait_for(lambda: station.session.state == earlier, PATIENCE)
            await self.players.change(view)
            return
        await self.players.change(view)
        await self.wait_for(lambda: self._prompt() is not None, SLOW_READ)
        if self._prompt() is not None and self._prompt().kind == PromptKind.TAKEBACK:  # type: ignore[union-attr]
            await self.players.press("ok")
        await self.wait_for(lambda: station.session.state == earlier, SLOW_READ)

    async def restack(self, view: Any) -> None:
        """TacTiki: the stacks were laid out at once, so the station asks for the fields whose
        order it could not see; lift their pieces off and put them back one at a time, each
        once the board has read the one before (two pieces first seen in one scan have no
        order, and the station has to ask again).

        Every wait is on what the station has read, not on a clock (issue 31: at about a
        second a scan, hands paced by the clock outran a busy machine's board, and the demo
        never left its set-up): :data:`PATIENCE` is only reached when nothing moves."""
        station = self.station

        def read_or_asked() -> bool:
            prompt = self._prompt()
            return station.status.reading is None or (prompt is not None
                                                      and prompt.kind == PromptKind.ORDER)

        def seen(stacks: dict[str, tuple[str, ...]]) -> Callable[[], bool]:
            def check() -> bool:
                pieces = station.follower.tracker.observation(station.clock()).pieces
                return all(sorted(pieces.get(c, ())) == sorted(s) for c, s in stacks.items())
            return check

        for _ in range(6):  # the board is read reader by reader: more fields may follow
            await self.wait_for(read_or_asked, PATIENCE)
            prompt = self._prompt()
            if station.status.reading is None or prompt is None or prompt.kind != PromptKind.ORDER:
                return
            fields = prompt.options
            empty: dict[str, tuple[str, ...]] = {c: () for c in fields}
            await self.players.change(empty)
            await self.wait_for(seen(empty), PATIENCE)  # seen empty before the first goes back
            for height in range(1, max(len(view[c]) for c in fields) + 1):
                stacks = {c: tuple(view[c][:height]) for c in fields}
                await self.players.change(stacks)
                await asyncio.sleep(0.3)  # a person's hands are not faster
                await self.wait_for(seen(stacks), PATIENCE)

    async def tap_cards(self) -> None:
        """Each player draws a secret card (a Topple Secret Tiki card) from the whole deck and
        taps it on the card pad: the deck is every tag of the game's table that is a card."""
        station = self.station
        game = station.session.game
        deck = [tag for tag in game.table_tags() if game.secret_card_of(tag) is not None]
        drawn = self.rng.sample(deck, 4)
        for tag in drawn:
            if station.status.cards is None:
                return
            await self.players.change({"card": (tag,)})
            await asyncio.sleep(0.3)
            await self.players.change({"card": ()})
            await asyncio.sleep(0.2)

    async def play(self, max_turns: int, on_turn: Any = None) -> None:
        station = self.station
        game = station.session.game
        view = game.expected_view(station.session.state)
        self.players.lay_out(view)
        if station.status.reading is not None:
            await self.restack(view)
        await self.wait_for(self._set_up, PATIENCE)
        for _ in range(max_turns):
            state = station.session.state
            if game.is_over(state):
                break
            if station.status.cards is not None:
                await self.tap_cards()
                continue
            if game.to_move(state) is None:  # a round is over: the station deals the next
                await self.wait_for(lambda ended=state: station.session.state is not ended,
                                    PATIENCE)
                continue
            if station.status.phase == Phase.SETUP:  # a new round: lay out the new line by hand
                await self.settle_board()
                await self.wait_for(self._set_up, PATIENCE)
                continue
            if self.think[1] > 0:
                await asyncio.sleep(self.rng.uniform(*self.think))
            await self.turn()
            if on_turn is not None:
                on_turn()


#: At ``--speed 1`` (real pace): seconds a player thinks before a turn, and the hands' seconds
#: per action. Faster speeds divide both; the hands never go below :data:`FASTEST_HANDS`, the
#: quickest the station's settle times are tuned for (a real hand is not faster).
THINK = (1.0, 3.0)
HANDS = (0.3, 0.75)
FASTEST_HANDS = (0.1, 0.25)
#: Seconds the demo's hands wait for the station to read what they did before they give up
#: on it: waits end as soon as the station has read it, so this is reached only when the
#: station is stuck, never because a busy machine reads slowly.
PATIENCE = 60.0
#: Seconds to wait for the station to read a move the hands made, where a noisy demo's board
#: may read something else (the hands then put the board right, as guided): five times what
#: an idle machine needs, so a busy one still gets there first.
SLOW_READ = 15.0


def paces(speed: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """(thinking, hands) at ``speed`` times the real pace."""
    think = (THINK[0] / speed, THINK[1] / speed)
    hands = (max(FASTEST_HANDS[0], HANDS[0] / speed), max(FASTEST_HANDS[1], HANDS[1] / speed))
    return think, hands


def free_port() -> int:
    """A port the OS has free on 127.0.0.1 now (for ``--web`` without a port)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def demo_title(game: str, seed: int, speed: float, *, vs_bot: str | None = None,
               web_port: int | None = None, pin: str = "", lang: str = "en") -> str:
    """The frame's first line: the game, how to deal it again, the pace, the station's seat
    and the page, in the demo's language."""
    _ = translator(lang).gettext
    title = _("tikiboard demo · {game} · seed {seed} · speed {speed}").format(
        game=game, seed=seed, speed=f"{speed:g}")
    if vs_bot:
        # Which seat is the bot, as people count seats (issue 31: "P2" said nothing).
        seat = _("Player {number}").format(number=2)
        title += " · " + _("{seat} is the station ({level})").format(seat=seat, level=_(vs_bot))
    if web_port is not None:
        # The PIN first: the frame cuts its title at 80 columns (issue 31: "PIN 35...").
        title = (f"PIN {pin} · " if pin else "") + f"http://127.0.0.1:{web_port}/ · " + title
    return title


async def run_demo(game: str = "topple", *, seed: int = 7, max_turns: int = 400,
                   out: TextIO = sys.stdout, data_dir: Path | None = None,
                   illegal: float = 0.04, takeback: float = 0.03,
                   snapshot: Path | None = None, speed: float = 4.0,
                   web_port: int | None = None, pin: str = "",
                   keep: Path | None = None, vs_bot: str | None = None,
                   linger: bool = False,
                   lang: str = "en") -> Station:
    """Play one game on the simulated board and draw it; returns the station at the end.

    ``web_port``: serve the station's page on 127.0.0.1 (``pin``: its PIN for actions).
    ``keep``: copy the game database there at the end (``tikiboard export --db`` reads it).
    ``vs_bot``: the station plays the second seat at this level; the hands carry out its moves.
    ``lang``: the station's language (its screen, the legend and the summary).
    ``linger``: with ``web_port``, keep serving the page after the game until SIGINT/SIGTERM
    (Ctrl-C), so that its review and records can be read (issue 31: the page went with the
    game); ``keep`` then copies the database as Ctrl-C left it.
    """
    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="tikiboard-demo-")
        data_dir = Path(tmp)
    config = Config(station=replace(StationConfig(), game=game, seed=seed,
                                    data_dir=str(data_dir), language=lang,
                                    bots={"1": vs_bot} if vs_bot else {}), source="demo")
    if web_port is not None:
        config = replace(config, web=replace(config.web, enabled=True, host="127.0.0.1",
                                             port=web_port, token=pin))
    ansi = out.isatty()
    stop = asyncio.Event()
    result: dict[str, Station] = {}
    title = demo_title(game, seed, speed, vs_bot=vs_bot, web_port=web_port, pin=pin,
                       lang=lang)
    think, hands = paces(speed)

    def ready(station: Station, hardware: Hardware) -> None:
        result["station"] = station

        async def players() -> None:
            demo = DemoPlayers(station, hardware, random.Random(seed), illegal=illegal,
                               takeback=takeback, pace=hands, think=think)

            async def screen() -> None:
                while not stop.is_set():
                    draw(station, demo.players, out, ansi, title)
                    await asyncio.sleep(0.25)

            drawer = asyncio.ensure_future(screen()) if ansi else None
            def turn_done() -> None:
                if not ansi:
                    _log_turn(station, out)
                if snapshot is not None:
                    picture(station).save(snapshot)

            try:
                await demo.play(max_turns, on_turn=turn_done)
                await asyncio.sleep(1.0 / speed)
            finally:
                if drawer is not None:
                    drawer.cancel()
                draw(station, demo.players, out, ansi, title)
                _summary(station, demo, out)
                if linger and web_port is not None:
                    _ = translator(lang).gettext
                    out.write(_("The page stays served until Ctrl-C:") + "\n"
                              + f"  http://127.0.0.1:{web_port}/\n  PIN {pin}\n")
                    out.flush()
                    await stop.wait()  # the daemon sets it on SIGINT and SIGTERM
                stop.set()

        tasks.append(asyncio.ensure_future(players()))

    tasks: list[asyncio.Future[None]] = []
    try:
        await serve(config, stop=stop, on_ready=ready)
        if keep is not None:
            _keep(data_dir / "tikiboard.db", keep)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return result["station"]


def _keep(db: Path, keep: Path) -> None:
    """The demo's database, whole, at ``keep`` (SQLite's backup: the WAL's pages included)."""
    source = sqlite3.connect(db)
    target = sqlite3.connect(keep)
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal
    finally:
        target.close()
        source.close()


def picture(station: Station) -> Image.Image:
    """The board with its LEDs and the OLED screen as one picture (for the README)."""
    from PIL import ImageDraw, ImageFont

    from pi_app.referee.board_picture import draw_board

    board = draw_board(station.geometry, station.last_frame, size=360)
    screen = (station.last_screen or Image.new("1", (128, 64))).convert("RGB")
    screen = screen.resize((screen.width * 3, screen.height * 3), Image.Resampling.NEAREST)
    text = station.session.game.describe(station.session.state)
    try:
        font: ImageFont.ImageFont | ImageFont.FreeTypeFont = ImageFont.truetype(
            "DejaVuSansMono.ttf", 14)
    except OSError:
        font = ImageFont.load_default()
    height = max(board.height, screen.height + 40 + 18 * (text.count("\n") + 1))
    out = Image.new("RGB", (board.width + screen.width + 150, height), (24, 24, 28))
    out.paste(board, (0, 0))
    out.paste(screen, (board.width + 20, 10))
    ImageDraw.Draw(out).multiline_text((board.width + 20, screen.height + 30), text,
                                       fill=(220, 220, 220), font=font, spacing=4)
    return out


def _log_turn(station: Station, out: TextIO) -> None:
    """A line per turn when the demo does not draw (output not a terminal): the move in the
    record's notation and the station's phase, in the demo's language."""
    history = station.session.history
    if history:
        phase = station.status.phase
        said = _words(station).gettext(PHASE_WORDS.get(phase, phase))
        out.write(f"{len(history):3d}. {history[-1][1]:<20} {said}\n")
        out.flush()


def _summary(station: Station, demo: DemoPlayers, out: TextIO) -> None:
    """The end of the demo in its language, the engine's description of the position too."""
    _ = _words(station).gettext
    game, state = station.session.game, station.session.state
    out.write("\n" + game.describe(state, _) + "\n")
    people = _people(station)  # names, or "Player 1"...: people count from 1
    scores = ", ".join(f"{people[p]} {s}" for p, s in enumerate(game.scores(state)))
    stats = demo.players.stats
    out.write(_("result: {outcome}; scores {scores}; moves accepted {accepted} of {moves} "
                "made, illegal tries {illegal}, takebacks {takebacks}").format(
        outcome=outcome(station), scores=scores, accepted=len(station.accepted_log),
        moves=stats.moves, illegal=stats.illegal, takebacks=stats.takebacks) + "\n")
    out.flush()


def main(game: str, seed: int | None, max_turns: int, snapshot: str | None = None, *,
         speed: float = 4.0, web: int | None = None, keep: str | None = None,
         vs_bot: str | None = None, lang: str = "en") -> int:
    """``tikiboard demo``: ``seed`` None draws one (printed, to play the same game again);
    ``web`` 0 picks a free port; ``lang`` the language of the station and the summary."""
    _ = translator(lang).gettext
    if speed <= 0:
        print("tikiboard demo: --speed must be more than 0", file=sys.stderr)
        return 2
    kept = Path(keep) if keep else None
    if kept is not None and kept.exists():
        print(f"tikiboard demo: {kept} exists; --keep writes a new file, never over one",
              file=sys.stderr)
        return 2
    if seed is None:
        seed = secrets.randbelow(1_000_000)
    print(_("seed {seed} ({command} deals this game again)").format(
        seed=seed, command=f"tikiboard demo --game {game} --seed {seed}"))
    pin = ""
    if web is not None:
        web = web or free_port()
        pin = f"{secrets.randbelow(10**6):06d}"
        # Each on a line of its own: an 80-column terminal cut the PIN (issue 31).
        print(_("page: {address}").format(address=f"http://127.0.0.1:{web}/"))
        print(_("PIN {pin} (for the page's actions)").format(pin=pin))
    sys.stdout.flush()
    station = asyncio.run(run_demo(game, seed=seed, max_turns=max_turns, speed=speed,
                                   web_port=web, pin=pin, keep=kept, vs_bot=vs_bot, lang=lang,
                                   linger=web is not None,
                                   snapshot=Path(snapshot) if snapshot else None))
    if kept is not None:
        print(_("database kept in {path} ({command})").format(
            path=kept, command=f"tikiboard export --db {kept}"))
    return 0 if station.session.game.is_over(station.session.state) or max_turns < 400 else 1
