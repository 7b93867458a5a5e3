"""The pictures of ``docs/feedback.md``: every OLED screen and the LED language, from the code.

``python -m tools.render_docs OUTDIR`` writes ``oled-*.png`` (each screen of
:data:`SCREENS`, scaled x3 so it reads on a web page), ``leds-legend.png`` (every signal's colour
and its pattern over time) and ``leds-*.png`` (boards drawn from their geometry, with the LED
states of :data:`BOARDS` at a few moments). ``--references DIR`` also writes the unscaled
screens the tests compare against (``tests/data/feedback``). Output depends only on the code:
run it twice, get the same pixels.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from pi_app.board.fixes import Fix
from pi_app.board.follower import GuidanceKind, Prompt, PromptKind
from pi_app.board.geometry import load_geometry
from pi_app.referee.board_picture import BG as _BG
from pi_app.referee.board_picture import CELL as _CELL
from pi_app.referee.board_picture import DARK as _DARK
from pi_app.referee.board_picture import draw_board
from pi_app.referee.board_picture import label as _label
from pi_app.referee.board_picture import visible as _visible
from pi_app.referee.feed import Phase
from pi_app.referee.feedback import (
    OFF,
    SIGNALS,
    Lamp,
    Scene,
    colour_at,
    led_frame,
    screen,
)

OLED_SCALE = 3
#: The LED pictures are drawn small, in the station's bitmap font, then enlarged.
LED_SCALE = 2

#: One example scene per OLED screen, in the order of the docs.
SCREENS: dict[str, Scene] = {
    "menu": Scene(phase=Phase.MENU, game="topple", title="Tiki Topple", board="table-7",
                  menu_game="topple", menu_players=3,
                  menu_choices=(("topple", 2), ("topple", 3), ("topple", 4))),
    "setup": Scene(phase=Phase.SETUP, game="topple", title="Tiki Topple", board="table-7",
                   guidance_kind=GuidanceKind.MISMATCH, message="new round: set up the line",
                   fixes=(Fix("place", "Nani", "s4"), Fix("place", "Huhu", "s5"),
                          Fix("place", "Wikiwiki", "s6"), Fix("place", "Hookipa", "s7"),
                          Fix("place", "Eepo", "s8"), Fix("place", "Kapu", "s9"))),
    "play": Scene(phase=Phase.PLAY, game="topple", title="Tiki Topple", board="table-7",
                  to_move=1, scores=(12, 7, 9), last_move="up2 Nani"),
    "prompt-ambiguous": Scene(phase=Phase.PROMPT, game="topple", title="Tiki Topple",
                              board="table-7", to_move=0, scores=(12, 7, 9),
                              prompt=Prompt(0.0, PromptKind.AMBIGUOUS,
                                            ("up1 Kapu", "topple Eepo"), 1),
                              prompt_cells=("s8", "s9")),
    "prompt-takeback": Scene(phase=Phase.PROMPT, game="topple", title="Tiki Topple",
                             board="table-7", to_move=0, scores=(12, 7, 9),
                             prompt=Prompt(0.0, PromptKind.TAKEBACK,
                                           ("take back 1 move(s)",), 0, 1),
                             prompt_cells=("s3", "s5")),
    "prompt-decision": Scene(phase=Phase.PROMPT, game="manami", title="Tiki (Manami island)",
                             board="table-5", to_move=0, scores=(4, 6),
                             prompt=Prompt(0.0, PromptKind.DECISION,
                                           ("resolve b1", "resolve c2"), 0),
                             prompt_cells=("b1", "c2")),
    "prompt-order": Scene(phase=Phase.SETUP, game="tactiki", title="TacTiki", board="table-3",
                          scores=(0, 0), prompt=Prompt(0.0, PromptKind.ORDER, ("b1", "d5")),
                          prompt_cells=("b1", "d5")),
    "guidance-mismatch": Scene(phase=Phase.PLAY, game="tactiki", title="TacTiki", board="table-3",
                               to_move=0, scores=(0, 0), guidance_kind=GuidanceKind.MISMATCH,
                               fixes=(Fix("move", "T3", "c2", "c3"), Fix("remove", "C2", "d4"))),
    "guidance-follow-up": Scene(phase=Phase.PLAY, game="tactiki", title="TacTiki",
                                board="table-3", to_move=1, scores=(0, 0),
                                guidance_kind=GuidanceKind.FOLLOW_UP, last_move="c2-c3",
                                fixes=(Fix("remove", "C4", "c3"), Fix("remove", "C1", "c3"))),
    "guidance-unknown": Scene(phase=Phase.PLAY, game="topple", title="Tiki Topple",
                              board="table-7", to_move=0, scores=(12, 7, 9),
                              guidance_kind=GuidanceKind.MISMATCH,
                              fixes=(Fix("unknown", "04a224e2b31c80", "s6"),)),
    "takeback": Scene(phase=Phase.PLAY, game="topple", title="Tiki Topple", board="table-7",
                      to_move=0, scores=(12, 7, 9), takeback=("s3", "s4", "s5"),
                      guidance_kind=GuidanceKind.MISMATCH,
                      fixes=(Fix("move", "Nani", "s3", "s5"), Fix("move", "Lokahi", "s4", "s3"),
                             Fix("move", "Huhu", "s5", "s4"))),
    "over": Scene(phase=Phase.OVER, game="topple", title="Tiki Topple", board="table-7",
                  players=("Ana", "Ben", "Caroline"), scores=(31, 40, 22), winners=(1,),
                  menu_players=3),
    "offline": Scene(phase=Phase.OFFLINE, game="topple", title="Tiki Topple", board="table-7",
                     link_detail="no device /dev/tikiboard-sensors"),
    "store-error": Scene(phase=Phase.ERROR, game="topple", title="Tiki Topple", board="table-7",
                         store_error="disk I/O error"),
    "error": Scene(phase=Phase.ERROR, game="topple", title="Tiki Topple", board="table-7",
                   message="cannot open hardware/boards/topple.json: no such file"),
}


@dataclass(frozen=True)
class BoardExample:
    """A board picture: a scene on a geometry, drawn at each of ``times`` (seconds)."""

    board: str
    scene: Scene
    times: tuple[float, ...] = (0.05, 0.35, 0.65, 0.95)
    size: int = 240  # pixels along the board's longer side, before enlarging


#: The board pictures of the docs.
BOARDS: dict[str, BoardExample] = {
    "topple-confirm": BoardExample(
        "topple", Scene(phase=Phase.PLAY, game="topple", to_move=1, scores=(12, 7, 9),
                        confirmed=("s2", "s3", "s4"), confirmed_at=0.0)),
    "topple-guidance": BoardExample(
        "topple", Scene(phase=Phase.PLAY, game="topple", to_move=0, scores=(12, 7, 9),
                        guidance_kind=GuidanceKind.MISMATCH,
                        fixes=(Fix("move", "Nui", "s6", "s2"), Fix("remove", "Kapu", "card"),
                               Fix("place", "Eepo", "s9")))),
    "topple-question": BoardExample(
        "topple", SCREENS["prompt-ambiguous"]),
    "topple-takeback": BoardExample(
        "topple", SCREENS["takeback"]),
    "tactiki-follow-up": BoardExample(
        "tactiki", Scene(phase=Phase.PLAY, game="tactiki", to_move=1, scores=(0, 0),
                         guidance_kind=GuidanceKind.FOLLOW_UP, confirmed=("c2", "c3"),
                         confirmed_at=0.0,
                         fixes=(Fix("remove", "C4", "c3"), Fix("remove", "C1", "d3"))),
        times=(0.05, 0.35, 0.65, 1.25), size=160),
    "topple-offline": BoardExample(
        "topple", Scene(phase=Phase.OFFLINE, game="topple", to_move=1, scores=(12, 7, 9)),
        times=(0.0, 0.6, 1.2, 1.8)),
}


# -- drawing -------------------------------------------------------------------------------------
def _enlarge(img: Image.Image, scale: int = LED_SCALE) -> Image.Image:
    return img.resize((img.width * scale, img.height * scale), Image.Resampling.NEAREST)


def board_strip(example: BoardExample) -> Image.Image:
    """The board at each of the example's times, side by side, each captioned with its time."""
    geometry = load_geometry(example.board)
    pictures = [draw_board(geometry, led_frame(example.scene, geometry, t), example.size)
                for t in example.times]
    w, h = pictures[0].size
    out = Image.new("RGB", (w * len(pictures) + 8 * (len(pictures) - 1), h + 16), _BG)
    for i, (picture, t) in enumerate(zip(pictures, example.times, strict=True)):
        x = i * (w + 8)
        out.paste(picture, (x, 0))
        _label(out, (x + 6, h + 3), f"t = {t:.2f} s")
    return out


def legend(seconds: float = 2.8, step: float = 0.05) -> Image.Image:
    """Every signal: a dot in its colour, its name, where it shows, and its pattern as a strip
    of samples over ``seconds`` (one square per ``step``)."""
    samples = round(seconds / step)
    cell = 6
    name_w, where_w = 16 * 6, 7 * 6
    strip_x = 8 + 14 + name_w + where_w
    row_h = 16
    signals = list(SIGNALS.values())
    width = strip_x + samples * cell + 8
    img = Image.new("RGB", (width, 22 + row_h * len(signals)), _BG)
    draw = ImageDraw.Draw(img)
    _label(img, (8 + 14, 6), "signal")
    _label(img, (8 + 14 + name_w, 6), "where")
    for s in range(0, samples + 1, round(0.5 / step)):
        _label(img, (strip_x + s * cell, 6), f"{s * step:g}s", _CELL)
    for row, signal in enumerate(signals):
        y = 20 + row * row_h
        lamp = Lamp(signal, 0.0)
        r, g, b = (round(c * signal.strength) for c in signal.colour)
        draw.ellipse((8, y + 2, 18, y + 12), fill=_visible((r, g, b), OFF))
        _label(img, (8 + 14, y + 3), signal.label)
        _label(img, (8 + 14 + name_w, y + 3), signal.where)
        for s in range(samples):
            colour = colour_at(lamp, s * step)
            x = strip_x + s * cell
            draw.rectangle((x, y + 2, x + cell - 2, y + 12), fill=_visible(colour, _DARK))
    return img


def oled_picture(scene: Scene, scale: int = OLED_SCALE) -> Image.Image:
    """A screen as the docs show it: white on black pixels, scaled up, with a thin bezel."""
    image = screen(scene).convert("L")
    big = image.resize((image.width * scale, image.height * scale), Image.Resampling.NEAREST)
    out = Image.new("L", (big.width + 8, big.height + 8), 60)
    out.paste(big, (4, 4))
    return out


def render(outdir: Path, references: Path | None = None) -> list[Path]:
    """Write every picture; returns the paths written."""
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, scene in SCREENS.items():
        path = outdir / f"oled-{name}.png"
        oled_picture(scene).save(path, optimize=True)
        written.append(path)
        if references is not None:
            references.mkdir(parents=True, exist_ok=True)
            ref = references / f"oled-{name}.png"
            screen(scene).save(ref)
            written.append(ref)
    path = outdir / "leds-legend.png"
    _enlarge(legend()).save(path, optimize=True)
    written.append(path)
    for name, example in BOARDS.items():
        path = outdir / f"leds-{name}.png"
        _enlarge(board_strip(example)).save(path, optimize=True)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.render_docs",
        description="Render the feedback pictures (OLED screens, LED legend, boards).")
    parser.add_argument("outdir", type=Path, help="where the pictures go (docs/images)")
    parser.add_argument("--references", type=Path,
                        help="also write the unscaled reference screens here (tests/data/feedback)")
    args = parser.parse_args(argv)
    for path in render(args.outdir, args.references):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
