"""``tikiboard demo``: a whole game played by simulated hands through the real station.

Everything but the hands and the hardware is the product itself: the firmware's own scanner
runs against simulated readers behind a pty, the daemon's serial link reads it, the tracker,
inference, engine and event store referee it, and the LED frames and OLED screens are the ones
a real board would show. The terminal draws the board, the LEDs and the OLED screen live.
Embedded defaults: no hardware, no broker, a throw-away database.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from PIL import Image

from pi_app.board.follower import Prompt, takeback_plies
from pi_app.referee.config import Config
from pi_app.referee.config import Station as StationConfig
from pi_app.referee.daemon import Hardware, serve
from pi_app.referee.station import Station
from pi_app.sim.hands import Noise
from pi_app.sim.players_live import LivePlayers

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


def _rgb(colour: tuple[int, int, int], text: str, ansi: bool) -> str:
    if not ansi:
        return text
    r, g, b = colour
    return f"{ESC}[38;2;{r};{g};{b}m{text}{ESC}[0m"


def board_text(station: Station, ansi: bool) -> list[str]:
    """The board: each cell with its pieces (as the engine says) and its LEDs."""
    geometry = station.geometry
    view = station.session.game.expected_view(station.session.state)
    frame = station.last_frame or []
    cells = [c for c in geometry.cells if c.kind != "edge"]
    xs = sorted({round(c.center_mm[0]) for c in cells})
    ys = sorted({round(c.center_mm[1]) for c in cells})
    grid: dict[tuple[int, int], str] = {}
    for cell in cells:
        pieces = ",".join(view.get(cell.name, ())) or "·"
        leds = "".join(_rgb(frame[i] if i < len(frame) else (0, 0, 0), "●", ansi)
                       for i in cell.leds[:2])
        grid[xs.index(round(cell.center_mm[0])), ys.index(round(cell.center_mm[1]))] = \
            f"{cell.name:>4} {leds} {pieces:<14}"
    lines = []
    for row in range(len(ys)):
        lines.append(" ".join(grid.get((col, row), " " * 22) for col in range(len(xs))))
    return lines


def draw(station: Station, players: LivePlayers, out: TextIO, ansi: bool) -> None:
    status = station.scene(station.clock())
    title = station.session.game.title
    lines = [f"tikiboard demo — {title} — board {station.config.station.board}", ""]
    lines += board_text(station, ansi)
    lines.append("")
    frame = "─" * 64
    lines += ["  ┌" + frame + "┐"]
    lines += ["  │" + row + "│" for row in oled_ascii(station.last_screen)]
    lines += ["  └" + frame + "┘"]
    lines.append("")
    moves = [t for _, t in station.session.history][-8:]
    lines.append("moves: " + "  ".join(moves))
    lines.append(f"phase: {status.phase}   scores: {list(status.scores)}   "
                 f"made by hand: {players.stats.moves}   illegal tries: {players.stats.illegal}")
    if ansi:
        out.write(f"{ESC}[H{ESC}[2J" + "\n".join(lines) + "\n")
    out.flush()


class DemoPlayers:
    """The players of the demo and the end-to-end tests: they play random legal moves, now
    and then an illegal one or a takeback, and answer the station's questions."""

    def __init__(self, station: Station, hardware: Hardware, rng: random.Random, *,
                 illegal: float = 0.0, takeback: float = 0.0, noise: Noise | None = None,
                 pace: tuple[float, float] = (0.1, 0.25),
                 script: dict[int, str] | None = None) -> None:
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
                                           self.station.session.state == intended, 3.0):
                    return
                continue
            if prompt.kind == "takeback":
                await self.players.press("back")
                continue
            before = self.station.session.state
            wanted = next((i for i, text in enumerate(prompt.options)
                           if game.apply_text(before, text) == intended), 0)
            for _ in range((wanted - prompt.selected) % max(len(prompt.options), 1)):
                await self.players.press("menu")
            await self.players.press("ok")
            self.players.stats.answers += 1
            await self.wait_for(lambda: self._prompt() is None, 2.0)

    async def settle_board(self) -> None:
        """Fix the board as the station guides, until it matches the position."""
        game = self.station.session.game
        await self.players.change(game.expected_view(self.station.session.state))
        self.players.stats.fixes += 1

    async def turn(self) -> None:
        station, game = self.station, self.station.session.game
        state = station.session.state
        self.turns += 1
        planned = self.script.pop(self.turns, "")
        if planned == "illegal" or self.rng.random() < self.illegal:
            await self.illegal_move()
            return
        if (planned == "takeback" or self.rng.random() < self.takeback) and \
                station.session.history:
            await self.take_back()
            return
        move = game.random_move(state, self.rng)
        intended = game.apply(state, move)
        text = game.move_text(state, move)
        placement = game.placement_view(state, move)
        if placement == game.expected_view(state):  # a decision the sensors cannot see
            if self._prompt() is None:
                await self.players.press("ok")
        else:
            await self.players.change(placement)
        await self.wait_for(lambda: station.session.state != state or
                            self._prompt() is not None, 4.0)
        await self.answer(intended)
        final = game.expected_view(intended)
        if final != placement:
            await asyncio.sleep(self.rng.uniform(0.3, 0.6))
            await self.players.change(final)
        self.players.stats.moves += 1
        self.players.stats.made.append(text)
        await self.wait_for(lambda: self._holds(intended), 3.0)
        if self._holds(intended):
            self.players.stats.followed += 1
        else:
            self.players.stats.lost += 1
            await self.settle_board()  # the players put the board right, as guided

    def _holds(self, intended: Any) -> bool:
        """The station holds ``intended``, or a position it reached by itself from there (a
        forced pass, the next Topple round dealt)."""
        station, game = self.station, self.station.session.game
        if station.session.state == intended:
            return True
        history = station.session.history
        return any(before == intended for before, _ in history[-2:]) or (
            game.name == "topple" and game.to_move(intended) is None
            and station.session.state.table.round > intended.table.round)

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
        await self.wait_for(lambda: self.station.status.guidance is not None, 4.0)
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
            await self.wait_for(lambda: station.session.state == earlier, 3.0)
            await self.players.change(view)
            return
        await self.players.change(view)
        await self.wait_for(lambda: self._prompt() is not None, 3.0)
        if self._prompt() is not None and self._prompt().kind == "takeback":  # type: ignore[union-attr]
            await self.players.press("ok")
        await self.wait_for(lambda: station.session.state == earlier, 3.0)

    async def tap_cards(self) -> None:
        """Tiki Topple: each player draws a Secret Tiki card and taps it on the card pad."""
        from pi_app.games.topple_deck import deck
        from pi_app.sim.players import card_name

        station = self.station
        drawn = self.rng.sample(list(deck()), 4)
        for card in drawn:
            if station.status.cards is None:
                return
            await self.players.change({"card": (card_name(card),)})
            await asyncio.sleep(0.3)
            await self.players.change({"card": ()})
            await asyncio.sleep(0.2)

    async def play(self, max_turns: int, on_turn: Any = None) -> None:
        station = self.station
        game = station.session.game
        self.players.lay_out(game.expected_view(station.session.state))
        await self.wait_for(lambda: station.status.phase == "play" and not station.blocked(),
                            6.0)
        for _ in range(max_turns):
            state = station.session.state
            if game.is_over(state):
                break
            if station.status.cards is not None:
                await self.tap_cards()
                continue
            if game.to_move(state) is None:  # a round is over: the station deals the next
                await self.wait_for(lambda ended=state: station.session.state is not ended, 5.0)
                continue
            if station.status.phase == "setup":  # a new round: lay out the new line by hand
                await self.settle_board()
                await self.wait_for(lambda: station.status.phase == "play", 6.0)
                continue
            await self.turn()
            if on_turn is not None:
                on_turn()


async def run_demo(game: str = "topple", *, seed: int = 7, max_turns: int = 400,
                   out: TextIO = sys.stdout, data_dir: Path | None = None,
                   illegal: float = 0.04, takeback: float = 0.03,
                   snapshot: Path | None = None) -> Station:
    """Play one game on the simulated board and draw it; returns the station at the end."""
    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="tikiboard-demo-")
        data_dir = Path(tmp)
    config = Config(station=replace(StationConfig(), game=game, seed=seed,
                                    data_dir=str(data_dir)), source="demo")
    ansi = out.isatty()
    stop = asyncio.Event()
    result: dict[str, Station] = {}

    def ready(station: Station, hardware: Hardware) -> None:
        result["station"] = station

        async def players() -> None:
            demo = DemoPlayers(station, hardware, random.Random(seed), illegal=illegal,
                               takeback=takeback)

            async def screen() -> None:
                while not stop.is_set():
                    draw(station, demo.players, out, ansi)
                    await asyncio.sleep(0.25)

            drawer = asyncio.ensure_future(screen()) if ansi else None
            def turn_done() -> None:
                if not ansi:
                    _log_turn(station, out)
                if snapshot is not None:
                    picture(station).save(snapshot)

            try:
                await demo.play(max_turns, on_turn=turn_done)
                await asyncio.sleep(1.0)
            finally:
                if drawer is not None:
                    drawer.cancel()
                draw(station, demo.players, out, ansi)
                _summary(station, demo, out)
                stop.set()

        tasks.append(asyncio.ensure_future(players()))

    tasks: list[asyncio.Future[None]] = []
    try:
        await serve(config, stop=stop, on_ready=ready)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return result["station"]


def picture(station: Station) -> Image.Image:
    """The board with its LEDs and the OLED screen as one picture (for the README)."""
    from PIL import ImageDraw, ImageFont

    from pi_app.referee.render_docs import draw_board

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
    history = station.session.history
    if history:
        out.write(f"{len(history):3d}. {history[-1][1]:<20} phase={station.status.phase}\n")
        out.flush()


def _summary(station: Station, demo: DemoPlayers, out: TextIO) -> None:
    game, state = station.session.game, station.session.state
    winners = game.winners(state)
    out.write("\n" + game.describe(state) + "\n")
    people = station.player_names()  # names, or "Player 1"...: people count from 1
    said = ("not finished" if winners is None else "a draw" if not winners
            else " and ".join(people[w] for w in winners) + " won")
    scores = ", ".join(f"{people[p]} {s}" for p, s in enumerate(game.scores(state)))
    out.write(f"result: {said}; scores {scores}; moves accepted {len(station.accepted_log)}, "
              f"made by hand {demo.players.stats.moves}, illegal tries "
              f"{demo.players.stats.illegal}, takebacks {demo.players.stats.takebacks}\n")
    out.flush()


def main(game: str, seed: int, max_turns: int, snapshot: str | None = None) -> int:
    station = asyncio.run(run_demo(game, seed=seed, max_turns=max_turns,
                                   snapshot=Path(snapshot) if snapshot else None))
    return 0 if station.session.game.is_over(station.session.state) or max_turns < 400 else 1
