"""The wiring diagram, drawn from hardware/pinmap.json so it can never disagree with the code.

``python -m pi_app.hw.wiring``, run from the checkout's root, writes ``hardware/wiring.svg`` and
``hardware/images/wiring.png``.
It shows the Pi (buttons, LED strip through a level shifter, OLED, USB to the Pico, the
optional direct reed switches) and the Pico (shared SPI bus to the readers with chip-selects
through two 74HC154 decoders, BUSY through two 74HC4067 multiplexers, one reset line, a
74LVC1G125 MISO buffer per MFRC522, the 74HC165 presence chain with its two sentinel inputs,
and the supply). Part numbers are in hardware/BOM.md; every pin and part of the sensor board
is in the schematic, hardware/schematic/tikiboard_sch.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pi_app.hw.drawing import Canvas, Style
from pi_app.hw.pinmap import PinMap, load_pinmap

#: The checkout's hardware/ folder, relative to the current directory: the drawings belong to
#: the source tree, never to an installed package.
HARDWARE_DIR = Path("hardware")

BOX = Style(stroke="#1f1f1f", width=0.5, fill="#f2f2f2")
PI_BOX = Style(stroke="#a50021", width=0.6, fill="#fde9ec")
PICO_BOX = Style(stroke="#1f4e79", width=0.6, fill="#e8f0fa")
PART = Style(stroke="#404040", width=0.4, fill="#ffffff")
COLOURS = {"button": "#2e7d32", "led": "#7030a0", "i2c": "#bf6f00", "spi": "#1f4e79",
           "sel": "#0070c0", "busy": "#8064a2", "rst": "#c00000", "shift": "#385723",
           "usb": "#404040", "power": "#c00000"}


def _wire(c: Canvas, x1: float, y1: float, x2: float, y2: float, kind: str,
          label: str = "", mid: float | None = None) -> None:
    """An orthogonal wire: across to ``mid`` (default halfway), along, across."""
    style = Style(stroke=COLOURS[kind], width=0.45)
    mid = (x1 + x2) / 2 if mid is None else mid
    c.line(x1, y1, mid, y1, style)
    c.line(mid, y1, mid, y2, style)
    c.line(mid, y2, x2, y2, style)
    if label:
        c.text(x1 + 1.5, y1 - 0.8, label, 2.3, COLOURS[kind])


def _box(c: Canvas, x: float, y: float, w: float, h: float, title: str, style: Style,
         lines: tuple[str, ...] = ()) -> None:
    c.rect(x, y, w, h, style, radius=1.5)
    c.text(x + w / 2, y + 4.5, title, 3.4, "black", "middle")
    for i, line in enumerate(lines):
        c.text(x + w / 2, y + 8.5 + 3.4 * i, line, 2.4, "#404040", "middle")


def draw_wiring(pm: PinMap) -> Canvas:
    c = Canvas(297, 210)
    c.text(6, 9, "tikiboard station wiring (generated from hardware/pinmap.json)", 5)
    c.text(6, 14, "Pi numbers are BCM GPIO, Pico numbers are GP; every part is in "
                  "hardware/BOM.md", 2.8, "#404040")

    # --- Raspberry Pi -------------------------------------------------------------------------
    px, py, pw, ph = 8, 22, 52, 120
    _box(c, px, py, pw, ph, "Raspberry Pi 4 / 5", PI_BOX)
    rows: list[tuple[str, str]] = []
    rows += [(f"GPIO{g}", f"button {n}") for n, g in pm.buttons.items()]
    rows.append((f"GPIO{pm.neopixel.spi_mosi_gpio}", "LED data (SPI MOSI)"))
    rows.append((f"GPIO{pm.neopixel.pwm_gpio}", "LED data (PWM, alt.)"))
    rows.append((f"GPIO{pm.oled.sda_gpio}", f"I2C{pm.oled.i2c_port} SDA"))
    rows.append((f"GPIO{pm.oled.scl_gpio}", f"I2C{pm.oled.i2c_port} SCL"))
    rows.append(("USB", pm.serial.device))
    pin_y = {}
    for i, (pin, what) in enumerate(rows):
        y = py + 14 + i * 8.5
        c.text(px + pw - 2, y, pin, 2.8, "#a50021", "end")
        c.text(px + 2, y, what, 2.4, "#404040")
        pin_y[what] = y
    c.text(px + 2, py + ph - 12, "direct reed switches (no Pico):", 2.3, "#385723")
    gpios = ", ".join(str(g) for g in pm.presence_gpio)
    c.text(px + 2, py + ph - 8, f"GPIO {gpios}", 2.1, "#385723")
    c.text(px + 2, py + ph - 4, "each to GND, internal pull-up", 2.1, "#385723")

    # Buttons.
    for name in pm.buttons:
        y = pin_y[f"button {name}"]
        _wire(c, px + pw, y - 1, 78, y - 1, "button")
        c.rect(78, y - 3.5, 16, 5, PART, radius=1)
        c.text(86, y - 0.2, name, 2.4, "#2e7d32", "middle")
        c.line(94, y - 1, 98, y - 1, Style(stroke="#2e7d32", width=0.45))
        c.text(99, y - 0.2, "GND", 2.2, "#404040")
    # LED strip.
    y = pin_y["LED data (SPI MOSI)"]
    _wire(c, px + pw, y - 1, 70, y - 1, "led")
    _box(c, 70, y - 6, 26, 10, "74AHCT125", PART, ("3.3 V to 5 V",))
    _wire(c, 96, y - 1, 104, y - 1, "led", "330R")
    _box(c, 104, y - 9, 40, 16, "WS2812B strip", BOX,
         (f"{pm.neopixel.pixel_order}, reset {pm.neopixel.reset_us} us",
          f"5 V {pm.neopixel.supply_ma / 1000:g} A cap + 1000 uF"))
    # OLED.
    y = pin_y[f"I2C{pm.oled.i2c_port} SDA"]
    _wire(c, px + pw, y - 1, 104, y + 2, "i2c")
    _wire(c, px + pw, y + 7.5, 104, y + 6, "i2c")
    _box(c, 104, y - 4, 40, 16, f"OLED {pm.oled.driver.upper()}", BOX,
         (f"{pm.oled.width}x{pm.oled.height}, I2C 0x{pm.oled.address:02X}", "3.3 V"))
    # USB.
    y = pin_y[pm.serial.device]
    _wire(c, px + pw, y - 1, 160, 30, "usb", "USB (power + CDC serial)", mid=150)

    # --- Pico -----------------------------------------------------------------------------------
    kx, ky, kw, kh = 160, 22, 44, 118
    _box(c, kx, ky, kw, kh, "Raspberry Pi Pico", PICO_BOX, ("MicroPython, firmware/",))
    pico = pm.pico_pins
    prow = [
        ("spi.sck", "SPI SCK", "spi"), ("spi.mosi", "SPI MOSI", "spi"),
        ("spi.miso", "SPI MISO", "spi"),
    ]
    prow += [(f"reader_select.address[{i}]", f"select A{i}", "sel") for i in range(5)
             if f"reader_select.address[{i}]" in pico]
    prow += [("reader_select.enable", "select /EN", "sel"), ("reader_reset", "reader RST", "rst"),
             ("reader_busy", "reader BUSY", "busy"), ("shift_in.load", "165 SH/LD", "shift"),
             ("shift_in.clock", "165 CLK", "shift"), ("shift_in.data", "165 QH", "shift")]
    gy = {}
    for i, (key, what, kind) in enumerate(prow):
        if key not in pico:
            continue
        y = ky + 14 + i * 7
        c.text(kx + kw - 2, y, f"GP{pico[key]}", 2.8, COLOURS[kind], "end")
        c.text(kx + 2, y, what, 2.4, "#404040")
        gy[key] = y - 1

    # Decoders and multiplexers.
    right = kx + kw
    _box(c, 224, 26, 36, 24, "2 x 74HC154", PART,
         ("A0-A3 shared, A4 picks", "the chip (74HC1G04)", "/Y0../Y31 = reader NSS"))
    for i in range(5):
        key = f"reader_select.address[{i}]"
        if key in gy:
            _wire(c, right, gy[key], 224, 30 + i * 3, "sel", mid=214 + i * 1.5)
    _wire(c, right, gy["reader_select.enable"], 224, 46, "sel", mid=221.5)
    _box(c, 224, 56, 36, 18, "2 x 74HC4067", PART, ("same A0-A4", "reader BUSY -> one pin"))
    if "reader_busy" in gy:
        _wire(c, right, gy["reader_busy"], 224, 68, "busy", mid=212)
    # Readers.
    c.rect(224, 84, 68, 40, BOX, radius=1.5)
    c.text(258, 89, "NFC readers 0..N-1, one per cell", 2.8, "black", "middle")
    for i, x in enumerate((228, 244, 260, 276)):
        c.rect(x, 93, 13, 22, PART, radius=1)
        c.text(x + 6.5, 99, ("R0", "R1", "...", "RN")[i], 2.6, "black", "middle")
        c.text(x + 6.5, 104, "NSS", 2.0, COLOURS["sel"], "middle")
        c.text(x + 6.5, 108, "MISO", 2.0, COLOURS["spi"], "middle")
        c.text(x + 6.5, 112, "RST", 2.0, COLOURS["rst"], "middle")
    c.text(258, 120, "MFRC522 (Topple), PN5180 (Manami, TacTiki)", 2.3, "#404040", "middle")
    spi_keys = ("spi.sck", "spi.mosi", "spi.miso")
    for k, key in enumerate(spi_keys):
        _wire(c, right, gy[key], 224, 96 + k * 3, "spi", mid=206 + k * 1.5)
    _wire(c, right, gy["reader_reset"], 224, 108, "rst", mid=210.5)
    for k, (line, colour) in enumerate((
            ("MISO: a PN5180 tri-states it; each MFRC522", COLOURS["spi"]),
            ("drives it through a 74LVC1G125, OE = its select", COLOURS["spi"]),
            ("only one RF field on at a time (firmware)", "#404040"),
            ("supply: 5 V in, 2 A fuse; PN5180 on 5 V;", "#404040"),
            ("1 A LDO 3.3 V: logic, hall, MFRC522, PN5180 I/O;", "#404040"),
            ("Pico VSYS from 5 V through a Schottky", "#404040"))):
        c.text(224, 129 + 4 * k, line, 2.3, colour)
    # Shift registers.
    _box(c, 160, 150, 60, 30, "74HC165 chain", PART,
         ("reed/hall switches to GND, 10k pull-ups", "sensor 0 = first bit out of QH",
          "after the last sensor: 3.3 V, GND", "(sentinel: a broken chain is seen)"))
    shift_keys = ("shift_in.load", "shift_in.clock", "shift_in.data")
    for k, key in enumerate(shift_keys):
        if key in gy:
            style = Style(stroke=COLOURS["shift"], width=0.45)
            x = kx - 3 - k * 2
            c.line(kx, gy[key], x, gy[key], style)
            c.line(x, gy[key], x, 158 + k * 4, style)
            c.line(x, 158 + k * 4, 160, 158 + k * 4, style)
    # Power.
    _box(c, 8, 150, 70, 30, "5 V supply", BOX,
         (f"LEDs: up to {pm.neopixel.supply_ma / 1000:g} A (software cap)",
          "Pi: USB-C 5 V 3 A (Pi 5: 5 A)", "Pico: from the Pi's USB",
          "readers: 3.3 V (MFRC522), 5 V + 3.3 V (PN5180)"))
    legend = [("button", "buttons"), ("led", "LED data"), ("i2c", "I2C"), ("spi", "SPI"),
              ("sel", "chip select"), ("busy", "BUSY"), ("rst", "reset"),
              ("shift", "presence"), ("usb", "USB")]
    for i, (kind, text) in enumerate(legend):
        x = 90 + i * 22 if i < 4 else 90 + (i - 4) * 22
        y = 190 if i < 4 else 197
        c.line(x, y - 1, x + 5, y - 1, Style(stroke=COLOURS[kind], width=0.8))
        c.text(x + 6.5, y, text, 2.6, COLOURS[kind])
    return c


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", type=Path, default=HARDWARE_DIR / "wiring.svg")
    parser.add_argument("--png", type=Path, default=HARDWARE_DIR / "images" / "wiring.png")
    args = parser.parse_args(argv)
    draw_wiring(load_pinmap()).save(args.svg, args.png, scale=5.0,
                                    title="tikiboard station wiring")
    print(f"wrote {args.svg} and {args.png}")


if __name__ == "__main__":
    main()
