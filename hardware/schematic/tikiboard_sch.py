"""The sensor board of each game as a SKiDL circuit: parts, pins, nets, power, all from data.

Why code and not a drawing: the pin numbers (``pinmap.json``) and the reader and sensor counts
(``boards/GAME.json``) already live in data; a schematic generated from them cannot drift from
what the firmware drives, and SKiDL's electrical rules check (ERC) runs in the test suite
(``tests/test_schematic.py``): an unconnected pin, two outputs on one net (an MFRC522 MISO
without its buffer) or a power net nobody drives fails the build.

Every part is defined here with its real pin numbers (SKiDL's own part format), so no KiCad
symbol library is needed. Run from the checkout's root::

    .venv/bin/python hardware/schematic/tikiboard_sch.py

It writes ``hardware/schematic/GAME.net`` (a KiCad netlist, importable into Pcbnew) and
``hardware/schematic/GAME-bom.csv`` for every board, after an ERC that must be clean.

What the circuit is (hardware/README.md, "Sensor board"):

- power: 5 V in on a screw terminal, a PTC fuse, 470 µF bulk; a 1 A LDO makes +3V3 for the
  logic and the hall switches, and one more LDO per row of up to eight readers makes that
  row's +3V3_Rn (MFRC522 supply, or PN5180 PVDD: 20 mA typical each, so 25 of them on one
  SOT-223 would dissipate about 1 W); the PN5180 modules take VBAT from +5V (the module's
  0 Ω moved from R12 to R13), which also puts VBAT up before PVDD; the Pico runs from +5V
  through a Schottky diode into VSYS (its own 3V3 pin is left alone: two regulators must not
  share a rail); 100 nF at every IC and module, 10 µF at every reader;
- readers: one module per reader channel; chip selects from 74HC154 decoders on A0-A3, A4
  picking the decoder (74LVC1G04 when there are two);
- SPI rows: readers in rows of eight (channel // 8); each row has a 74LVC125 on its own rail
  that drives the row's SCK and MOSI (no more than eight inputs per driver) and puts the row's
  MISO on the bus only while a reader of that row is selected (a 74HC139 decodes A3-A4 under
  ~CS_EN into ~ROWn), so the Pico's MISO sees at most four buffer outputs, not 25 modules;
- MISO: a PN5180 tri-states MISO while deselected, so its MISO goes straight to its row's
  MISO; an MFRC522 module does not, so each one drives the row's MISO through a 74LVC1G125
  whose output enable is that reader's chip select (diodes and a pull-down cannot make 4 MHz
  edges);
- BUSY (PN5180 only): 74HC4067 multiplexers on the same address lines;
- presence: one open-drain hall switch per sensor into a 74HC165 chain with 10 kΩ pull-ups;
  after the last sensor the two sentinel inputs (3.3 V, then GND, firmware/tikifw/shiftin.py);
- LEDs: the Pi's LED data through a 74AHCT125 (3.3 V to 5 V) and 330 Ω to the strip, with its
  own fuse and 1000 µF.
"""

from __future__ import annotations

import contextlib
import csv
import io
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the checkout's package first
    sys.path.insert(0, str(ROOT))

from skidl import (  # type: ignore[import-untyped]  # noqa: E402
    POWER,
    SKIDL,
    TEMPLATE,
    Circuit,
    Net,
    Part,
    Pin,
    erc_logger,
)
from skidl.logger import (  # type: ignore[import-untyped]  # noqa: E402
    SkidlLogFileHandler,
    stop_log_file_output,
)

from pi_app.board.geometry import Geometry, board_names, load_geometry  # noqa: E402
from pi_app.hw.pinmap import load_pinmap  # noqa: E402


def _remove_log_file(handler: Any) -> None:
    """SKiDL's log-file removal, tolerating a file already gone: two processes in the same
    directory (the test suite's two workers) share ``skidl_REPL.log``, and the second removal
    raised FileNotFoundError (SKiDL's own docstring says a missing file is fine)."""
    if handler.filename:
        name = handler.filename
        handler.close()
        with contextlib.suppress(FileNotFoundError):
            os.remove(name)
    handler.filename = None


SkidlLogFileHandler.remove_log_file = _remove_log_file
stop_log_file_output()  # no skidl .log/.erc files next to whatever ran us
for _handler in logging.getLogger("skidl").handlers:  # footprint/tag chatter: not our problem
    _handler.setLevel(logging.ERROR)

OUT_DIR = Path(__file__).resolve().parent
NETLIST_DIR = ROOT / "build" / "schematic"
"""Netlists are built, not kept: about 5,000-9,000 lines each, all of them derived from this
file, the pin map and the board files. The parts lists stay beside this file: a maker reads
them, and a test keeps them current."""
T = Pin.types

#: Raspberry Pi Pico: GP number -> header pin (Pico datasheet, pinout).
PICO_GP_PIN = {0: 1, 1: 2, 2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 8: 11, 9: 12, 10: 14,
               11: 15, 12: 16, 13: 17, 14: 19, 15: 20, 16: 21, 17: 22, 18: 24, 19: 25,
               20: 26, 21: 27, 22: 29, 26: 31, 27: 32, 28: 34}
PICO_GND_PINS = (3, 8, 13, 18, 23, 28, 38)

#: Readers per SPI row: one row buffer drives SCK/MOSI into at most this many module inputs
#: and gates their MISO onto the bus (hardware/README.md, "SPI loading").
ROW_SIZE = 8


class Alternative:
    """A part that may be fitted in place of a template's part: its pin-number -> pin-name map.

    ``drop_in`` is computed, not declared: the alternative fits the template's footprint only
    when every pin number carries the same function. ``source`` says where the pinout comes
    from (a data sheet's pin table; "from memory" where no copy was at hand).
    """

    def __init__(self, mpn: str, pins: dict[int, str], source: str):
        self.mpn = mpn
        self.pins = pins
        self.source = source

    def fits(self, template_pins: dict[int, str]) -> bool:
        return self.pins == template_pins


#: BOM alternatives by template key, the first one being the part the schematic carries. The
#: SOT-223 LDOs are the trap this table exists for: the 1117 family puts GND/ADJ on pin 1 and
#: VIN on pin 3, so in the MCP1826S footprint (VIN, GND, VOUT) it gets 5 V on its ground pin.
#: The DRV5033's TO-92 package swaps GND and OUT against its SOT-23 (pins 2 and 3).
ALTERNATIVES: dict[str, list[Alternative]] = {
    "ldo": [
        Alternative("MCP1826S-3302E/DB", {1: "VIN", 2: "GND", 3: "VOUT"},
                    "Microchip MCP1826/MCP1826S data sheet, SOT-223 pin table (from memory)"),
        Alternative("LM3940IMP-3.3", {1: "VIN", 2: "GND", 3: "VOUT"},
                    "TI LM3940 data sheet, SOT-223 pinout (from memory: check)"),
        Alternative("AMS1117-3.3", {1: "GND", 2: "VOUT", 3: "VIN"},
                    "AMS1117 data sheet, SOT-223: 1 GND/ADJ, 2 VOUT (tab), 3 VIN"),
        Alternative("TLV1117LV33DCYR", {1: "GND", 2: "VOUT", 3: "VIN"},
                    "TI TLV1117LV data sheet, DCY (SOT-223): 1 GND, 2 OUT (tab), 3 IN"),
    ],
    "hall": [
        Alternative("DRV5033AJQDBZR", {1: "VDD", 2: "OUT", 3: "GND"},
                    "TI DRV5033 data sheet, DBZ (SOT-23): 1 VCC, 2 OUT, 3 GND"),
        Alternative("DRV5033AJQLPG", {1: "VDD", 2: "GND", 3: "OUT"},
                    "TI DRV5033 data sheet, LPG (TO-92): 1 VCC, 2 GND, 3 OUT"),
    ],
    "schottky": [
        Alternative("SS14", {1: "K", 2: "A"}, "Vishay SS14 data sheet, SMA: cathode band"),
        Alternative("B140-13-F", {1: "K", 2: "A"}, "Diodes Inc B140 data sheet, SMA"),
    ],
    "lvc125": [
        Alternative("74LVC125AD", {1: "~1OE", 2: "1A", 3: "1Y", 4: "~2OE", 5: "2A", 6: "2Y",
                                   7: "GND", 8: "3Y", 9: "3A", 10: "~3OE", 11: "4Y",
                                   12: "4A", 13: "~4OE", 14: "VCC"},
                    "Nexperia 74LVC125A data sheet, SO14 pinning"),
        Alternative("SN74LVC125AD", {1: "~1OE", 2: "1A", 3: "1Y", 4: "~2OE", 5: "2A",
                                     6: "2Y", 7: "GND", 8: "3Y", 9: "3A", 10: "~3OE",
                                     11: "4Y", 12: "4A", 13: "~4OE", 14: "VCC"},
                    "TI SN74LVC125A data sheet, D (SOIC) pin functions"),
    ],
    "lvc1g125": [
        Alternative("74LVC1G125GW", {1: "~OE", 2: "A", 3: "GND", 4: "Y", 5: "VCC"},
                    "Nexperia 74LVC1G125 data sheet, SOT353 pinning"),
        Alternative("SN74LVC1G125DBVR", {1: "~OE", 2: "A", 3: "GND", 4: "Y", 5: "VCC"},
                    "TI SN74LVC1G125 data sheet, DBV (SOT-23-5) pin functions"),
    ],
}


def _template(name: str, prefix: str, pins: Iterable[tuple[int, str, Any]],
              footprint: str, mpn: str, description: str) -> Any:
    """A SKiDL part template with explicit pins (number, name, electrical type)."""
    tmpl = Part(tool=SKIDL, name=name, ref_prefix=prefix, dest=TEMPLATE,
                footprint=footprint, description=description,
                pins=[Pin(num=num, name=pname, func=func) for num, pname, func in pins])
    tmpl.mpn = mpn
    return tmpl


def _library() -> dict[str, Any]:
    """Every part the boards use, pin numbers from each datasheet / module header."""
    lib: dict[str, Any] = {}

    def add(key: str, *args: Any) -> None:
        lib[key] = _template(*args)

    pico = [(PICO_GP_PIN[gp], f"GP{gp}", T.BIDIR) for gp in PICO_GP_PIN]
    pico += [(p, "GND", T.PWRIN) for p in PICO_GND_PINS]
    pico += [(30, "RUN", T.INPUT), (33, "AGND", T.PWRIN), (35, "ADC_VREF", T.PWRIN),
             (36, "3V3_OUT", T.PWROUT), (37, "3V3_EN", T.INPUT), (39, "VSYS", T.PWRIN),
             (40, "VBUS", T.PWROUT)]
    add("pico", "Pico", "A", pico, "RPi_Pico_SMD_TH", "Raspberry Pi Pico (RP2040)",
        "sensor MCU, MicroPython firmware; USB to the Pi")
    add("pn5180", "PN5180_module", "M",
        [(1, "+5V", T.PWRIN), (2, "+3V3", T.PWRIN), (3, "RST", T.INPUT),
         (4, "NSS", T.INPUT), (5, "MOSI", T.INPUT), (6, "MISO", T.TRISTATE),
         (7, "SCK", T.INPUT), (8, "BUSY", T.OUTPUT), (9, "GND", T.PWRIN),
         (10, "GPIO", T.NOCONNECT), (11, "IRQ", T.NOCONNECT), (12, "AUX", T.NOCONNECT),
         (13, "REQ", T.NOCONNECT)],
        "PinHeader_1x13_P2.54mm", "NXP PN5180A0HN/C3 module (13-pin header), 0R moved R12->R13",
        "NFC reader, ISO 15693 + 14443; 5 V: TVDD and (0R on R13) VBAT; 3.3 V: PVDD only")
    add("rc522", "RC522_module", "M",
        [(1, "SDA_NSS", T.INPUT), (2, "SCK", T.INPUT), (3, "MOSI", T.INPUT),
         (4, "MISO", T.OUTPUT), (5, "IRQ", T.NOCONNECT), (6, "GND", T.PWRIN),
         (7, "RST", T.INPUT), (8, "3V3", T.PWRIN)],
        "PinHeader_1x08_P2.54mm", "NXP MFRC522 module (RFID-RC522)",
        "NFC reader, ISO 14443A; MISO is driven even when deselected")
    hc154 = [(n, f"Y{k}", T.OUTPUT) for k, n in enumerate((*range(1, 12), *range(13, 18)))]
    hc154 += [(12, "GND", T.PWRIN), (18, "~E0", T.INPUT), (19, "~E1", T.INPUT),
              (20, "A3", T.INPUT), (21, "A2", T.INPUT), (22, "A1", T.INPUT),
              (23, "A0", T.INPUT), (24, "VCC", T.PWRIN)]
    add("hc154", "74HC154", "U", hc154, "SOIC-24W_7.5x15.4mm_P1.27mm", "Nexperia 74HC154D",
        "4-to-16 decoder: one active-low chip select per reader")
    hc4067 = [(1, "Z", T.PASSIVE), (10, "S0", T.INPUT), (11, "S1", T.INPUT),
              (12, "GND", T.PWRIN), (13, "S3", T.INPUT), (14, "S2", T.INPUT),
              (15, "~E", T.INPUT), (24, "VCC", T.PWRIN)]
    hc4067 += [(9 - k, f"Y{k}", T.PASSIVE) for k in range(8)]
    hc4067 += [(23 - (k - 8), f"Y{k}", T.PASSIVE) for k in range(8, 16)]
    add("hc4067", "74HC4067", "U", hc4067, "SOIC-24W_7.5x15.4mm_P1.27mm",
        "Nexperia 74HC4067D", "16-to-1 analog mux: BUSY of the selected PN5180")
    add("lvc1g04", "74LVC1G04", "U",
        [(1, "NC", T.NOCONNECT), (2, "A", T.INPUT), (3, "GND", T.PWRIN), (4, "Y", T.OUTPUT),
         (5, "VCC", T.PWRIN)],
        "SOT-353", "Nexperia 74LVC1G04GW", "inverter: A4 enables the second decoder/mux")
    add("lvc125", "74LVC125", "U",
        [(1, "~1OE", T.INPUT), (2, "1A", T.INPUT), (3, "1Y", T.TRISTATE),
         (4, "~2OE", T.INPUT), (5, "2A", T.INPUT), (6, "2Y", T.TRISTATE), (7, "GND", T.PWRIN),
         (8, "3Y", T.TRISTATE), (9, "3A", T.INPUT), (10, "~3OE", T.INPUT),
         (11, "4Y", T.NOCONNECT), (12, "4A", T.INPUT), (13, "~4OE", T.INPUT),
         (14, "VCC", T.PWRIN)],
        "SOIC-14_3.9x8.7mm_P1.27mm", "Nexperia 74LVC125AD",
        "row buffer: SCK and MOSI into one row of readers, the row's MISO onto the bus")
    add("hc139", "74HC139", "U",
        [(1, "~1E", T.INPUT), (2, "1A0", T.INPUT), (3, "1A1", T.INPUT), (4, "1Y0", T.OUTPUT),
         (5, "1Y1", T.OUTPUT), (6, "1Y2", T.OUTPUT), (7, "1Y3", T.OUTPUT), (8, "GND", T.PWRIN),
         (9, "2Y3", T.NOCONNECT), (10, "2Y2", T.NOCONNECT), (11, "2Y1", T.NOCONNECT),
         (12, "2Y0", T.NOCONNECT), (13, "2A1", T.INPUT), (14, "2A0", T.INPUT),
         (15, "~2E", T.INPUT), (16, "VCC", T.PWRIN)],
        "SOIC-16_3.9x9.9mm_P1.27mm", "Nexperia 74HC139D",
        "row decoder: A3-A4 under ~CS_EN give ~ROWn, the enable of row n's MISO buffer")
    add("lvc1g125", "74LVC1G125", "U",
        [(1, "~OE", T.INPUT), (2, "A", T.INPUT), (3, "GND", T.PWRIN), (4, "Y", T.TRISTATE),
         (5, "VCC", T.PWRIN)],
        "SOT-353", "Nexperia 74LVC1G125GW",
        "tri-state buffer: an MFRC522's MISO on the bus only while it is selected")
    add("hc165", "74HC165", "U",
        [(1, "SH/~LD", T.INPUT), (2, "CLK", T.INPUT), (3, "E", T.INPUT), (4, "F", T.INPUT),
         (5, "G", T.INPUT), (6, "H", T.INPUT), (7, "~QH", T.NOCONNECT), (8, "GND", T.PWRIN),
         (9, "QH", T.OUTPUT), (10, "SER", T.INPUT), (11, "A", T.INPUT), (12, "B", T.INPUT),
         (13, "C", T.INPUT), (14, "D", T.INPUT), (15, "CLK_INH", T.INPUT),
         (16, "VCC", T.PWRIN)],
        "SOIC-16_3.9x9.9mm_P1.27mm", "Nexperia 74HC165D", "presence shift register")
    add("ahct125", "74AHCT125", "U",
        [(1, "~1OE", T.INPUT), (2, "1A", T.INPUT), (3, "1Y", T.TRISTATE),
         (4, "~2OE", T.INPUT), (5, "2A", T.INPUT), (6, "2Y", T.NOCONNECT), (7, "GND", T.PWRIN),
         (8, "3Y", T.NOCONNECT), (9, "3A", T.INPUT), (10, "~3OE", T.INPUT),
         (11, "4Y", T.NOCONNECT), (12, "4A", T.INPUT), (13, "~4OE", T.INPUT),
         (14, "VCC", T.PWRIN)],
        "SOIC-14_3.9x8.7mm_P1.27mm", "TI SN74AHCT125D", "LED data level shifter 3.3 V -> 5 V")
    add("hall", "HallSwitch", "H",
        [(1, "VDD", T.PWRIN), (2, "OUT", T.OPENCOLL), (3, "GND", T.PWRIN)],
        "SOT-23", "TI DRV5033AJQDBZR",
        "presence: omnipolar open-drain hall switch, B_OP 6.9 mT typ; depth per README")
    add("ldo", "LDO_3V3", "U",
        [(1, "VIN", T.PWRIN), (2, "GND", T.PWRIN), (3, "VOUT", T.PWROUT)],
        "SOT-223-3_TabPin2", "Microchip MCP1826S-3302E/DB",
        "1 A 3.3 V LDO: logic and hall switches, or one row of readers")
    add("schottky", "D_Schottky", "D",
        [(1, "K", T.PASSIVE), (2, "A", T.PASSIVE)],
        "D_SMA", "Vishay SS14 (1 A 40 V)", "feeds the Pico's VSYS from +5V (Pico datasheet)")
    add("ptc", "Polyfuse", "F", [(1, "1", T.PASSIVE), (2, "2", T.PASSIVE)],
        "Fuse_1812", "Bourns MF-MSMF200/16X-2 (2 A hold, 16 V)",
        "resettable fuse on a 5 V branch")
    add("r", "R", "R", [(1, "1", T.PASSIVE), (2, "2", T.PASSIVE)], "R_0805", "",
        "resistor")
    add("c", "C", "C", [(1, "1", T.PASSIVE), (2, "2", T.PASSIVE)], "C_0805", "", "capacitor")
    add("cpol", "CP", "C", [(1, "+", T.PASSIVE), (2, "-", T.PASSIVE)], "CP_Radial_D8.0mm",
        "", "electrolytic capacitor")
    add("rn", "R_Network08", "RN", [(1, "COM", T.PASSIVE)] +
        [(k + 2, f"R{k + 1}", T.PASSIVE) for k in range(8)],
        "R_Array_SIP9", "Bourns 4609X-101-103LF", "8 x 10 kOhm bussed pull-ups")
    add("term2", "Conn_01x02", "J", [(1, "1", T.PASSIVE), (2, "2", T.PASSIVE)],
        "TerminalBlock_5.08mm_1x02", "Phoenix 1935161 (or any 5.08 mm 2-way)", "connector")
    add("conn3", "Conn_01x03", "J", [(k, str(k), T.PASSIVE) for k in (1, 2, 3)],
        "JST_XH_B3B-XH-A_1x03", "JST B3B-XH-A", "connector")
    return lib


class BoardCircuit:
    """Builds one game's sensor board into a fresh SKiDL circuit."""

    def __init__(self, geo: Geometry, pico_pins: dict[str, Any], power_flags: bool = True):
        self.geo = geo
        self.pico_cfg = pico_pins
        self.power_flags = power_flags
        self.lib = _library()
        self.circuit = Circuit()
        self.circuit.no_files = True

    # -- helpers ------------------------------------------------------------------------
    def part(self, key: str, value: str = "", **fields: str) -> Any:
        tmpl = self.lib[key]
        part = tmpl(value=value or tmpl.name, circuit=self.circuit)
        part.fields["MPN"] = fields.get("mpn", getattr(tmpl, "mpn", "")) or value
        part.fields["Why"] = fields.get("why", "")
        return part

    def net(self, name: str) -> Any:
        return Net(name, circuit=self.circuit)

    def cap(self, a: Any, b: Any, value: str, why: str, polar: bool = False) -> Any:
        c = self.part("cpol" if polar else "c", value, why=why,
                      mpn="Panasonic EEU-FR1A471 class" if polar and "470" in value
                      else "Panasonic EEU-FR1A101 class" if polar and value == "100uF"
                      else "Panasonic EEU-FR1A102 class" if polar
                      else "X7R MLCC" if value == "100nF" else "X5R MLCC 10 V")
        c[1] += a
        c[2] += b
        return c

    def res(self, a: Any, b: Any, value: str, why: str) -> Any:
        r = self.part("r", value, why=why, mpn="thick film 1 %")
        r[1] += a
        r[2] += b
        return r

    # -- the board ----------------------------------------------------------------------
    def build(self) -> Any:
        readers = self.geo.reader_count
        mfrc = self.geo.reader_chip.upper() == "MFRC522"
        with self.circuit:
            self.power()
            self.pico_and_bus()
            self.decoders(readers)
            if not mfrc and readers:
                self.busy_mux(readers)
            self.rows(readers)
            for k in range(readers):
                self.reader(k, mfrc)
            self.presence(self.geo.presence_count)
            self.leds()
        for part in self.circuit.parts:  # stable tags: the netlist is the same on every run
            part.tag = part.ref
        return self.circuit

    def power(self) -> None:
        self.gnd, self.v5, self.v3 = self.net("GND"), self.net("+5V"), self.net("+3V3")
        self.v5_in, self.vsys, self.v5_led = (self.net("+5V_IN"), self.net("VSYS"),
                                              self.net("+5V_LED"))
        j = self.part("term2", "5V 4A in", why="from the 5 V supply (BOM: LED supply)")
        j[1] += self.v5_in
        j[2] += self.gnd
        f = self.part("ptc", "2A", why="board branch")
        f[1] += self.v5_in
        f[2] += self.v5
        f_led = self.part("ptc", "3A", mpn="Bourns MF-MSMF300/16-2 (3 A hold, 16 V)",
                          why="LED branch: a shorted strip cannot take the readers down")
        f_led[1] += self.v5_in
        f_led[2] += self.v5_led
        self.cap(self.v5, self.gnd, "470uF", "bulk: reader RF switch-on steps", polar=True)
        ldo = self.part("ldo", "3.3V 1A")
        ldo["VIN"] += self.v5
        ldo["GND"] += self.gnd
        ldo["VOUT"] += self.v3
        self.cap(self.v5, self.gnd, "10uF", "LDO input")
        self.cap(self.v3, self.gnd, "10uF", "LDO output (stable with ceramic)")
        d = self.part("schottky", "SS14")
        d["A"] += self.v5
        d["K"] += self.vsys
        if self.power_flags:  # KiCad's PWR_FLAG: these nets are fed from off the board
            for net in (self.v5_in, self.gnd, self.vsys, self.v5, self.v5_led):
                net.drive = POWER

    def row_rail(self, row: int) -> Any:
        """Row ``row``'s own 3.3 V: an LDO per row of readers, so no regulator carries more
        than eight PN5180 PVDDs (160 mA) or one transmitting MFRC522 and seven idle ones."""
        rail = self.net(f"+3V3_R{row}")
        ldo = self.part("ldo", "3.3V 1A", why=f"row {row}: readers {row * ROW_SIZE}-"
                        f"{min(self.geo.reader_count, (row + 1) * ROW_SIZE) - 1}")
        ldo["VIN"] += self.v5
        ldo["GND"] += self.gnd
        ldo["VOUT"] += rail
        self.cap(self.v5, self.gnd, "10uF", f"row {row} LDO input")
        self.cap(rail, self.gnd, "10uF", f"row {row} LDO output (stable with ceramic)")
        self.cap(rail, self.gnd, "100uF", f"row {row} bulk (RF switch-on steps)", polar=True)
        return rail

    def pico_and_bus(self) -> None:
        cfg = self.pico_cfg
        pico = self.pico = self.part("pico", "Pico")
        pico["GND"] += self.gnd  # all seven GND pins
        pico["AGND"] += self.gnd
        pico["VSYS"] += self.vsys
        self.cap(self.vsys, self.gnd, "10uF", "VSYS")
        for name in ("VBUS", "3V3_OUT", "3V3_EN", "RUN", "ADC_VREF"):
            pico[name] += self.circuit.NC  # Pico's own regulator stays on its own rail
        used: set[int] = set()

        def gp(num: int, net: Any) -> None:
            used.add(num)
            pico[f"GP{num}"] += net

        spi = cfg["spi"]
        self.sck, self.mosi, self.miso = self.net("SCK"), self.net("MOSI"), self.net("MISO")
        for pin, bus, name in ((spi["sck"], self.sck, "SCK"), (spi["mosi"], self.mosi, "MOSI")):
            local = self.net(f"{name}_PICO")
            gp(pin, local)
            self.res(local, bus, "33", f"{name} series termination at the Pico")
        gp(spi["miso"], self.miso)
        self.res(self.miso, self.gnd, "100k", "MISO held low while no reader drives it")
        sel = cfg["reader_select"]
        self.addr = [self.net(f"A{k}") for k in range(len(sel["address"]))]
        for pin, net in zip(sel["address"], self.addr, strict=True):
            gp(pin, net)
        self.cs_en = self.net("~CS_EN")
        gp(sel["enable"], self.cs_en)
        self.res(self.cs_en, self.v3, "10k", "no reader selected while the Pico boots")
        self.rst = self.net("~READER_RST")
        gp(cfg["reader_reset"], self.rst)
        if self.geo.reader_chip.upper() == "PN5180":  # only a PN5180 has a BUSY line
            self.busy = self.net("BUSY")
            gp(cfg["reader_busy"], self.busy)
        shift = cfg["shift_in"]
        self.sh_ld, self.sh_clk, self.sh_q = (self.net("SH_~LD"), self.net("SH_CLK"),
                                              self.net("SH_QH"))
        gp(shift["load"], self.sh_ld)
        gp(shift["clock"], self.sh_clk)
        gp(shift["data"], self.sh_q)
        for num in PICO_GP_PIN:
            if num not in used:
                pico[f"GP{num}"] += self.circuit.NC

    def decoupled(self, part: Any, supply: Any, pin: str = "VCC") -> None:
        part[pin] += supply
        part["GND"] += self.gnd
        self.cap(supply, self.gnd, "100nF", f"at {part.ref}")

    def a4_inverted(self) -> Any:
        if not hasattr(self, "_a4n"):
            inv = self.part("lvc1g04")
            self.decoupled(inv, self.v3)
            inv["A"] += self.addr[4]
            self._a4n = self.net("~A4")
            inv["Y"] += self._a4n
            inv["NC"] += self.circuit.NC
        return self._a4n

    def decoders(self, readers: int) -> None:
        self.cs: list[Any] = []
        chips = max(1, math.ceil(readers / 16))
        for d in range(chips):
            dec = self.part("hc154")
            self.decoupled(dec, self.v3)
            for k in range(4):
                dec[f"A{k}"] += self.addr[k]
            dec["~E0"] += self.cs_en
            dec["~E1"] += self.addr[4] if d == 0 else self.a4_inverted()
            for y in range(16):
                ch = d * 16 + y
                if ch < readers:
                    net = self.net(f"~CS{ch}")
                    dec[f"Y{y}"] += net
                    self.cs.append(net)
                else:
                    dec[f"Y{y}"] += self.circuit.NC

    def rows(self, readers: int) -> None:
        """The SPI rows: a rail, a row buffer and a row enable for each ``ROW_SIZE`` readers."""
        n = math.ceil(readers / ROW_SIZE)
        self.row_v3: list[Any] = []
        self.row_sck: list[Any] = []
        self.row_mosi: list[Any] = []
        self.row_miso: list[Any] = []
        if not n:
            return
        if n > 4:
            raise ValueError("a 74HC139 half decodes four rows (32 readers)")
        dec = self.part("hc139")
        self.decoupled(dec, self.v3)
        dec["~1E"] += self.cs_en
        dec["1A0"] += self.addr[3]
        dec["1A1"] += self.addr[4]
        dec["~2E"] += self.v3  # second half unused: disabled, inputs tied
        dec["2A0"] += self.gnd
        dec["2A1"] += self.gnd
        for r in range(4):
            if r >= n:
                dec[f"1Y{r}"] += self.circuit.NC
        for r in range(n):
            rail = self.row_rail(r)
            row_en = self.net(f"~ROW{r}")
            dec[f"1Y{r}"] += row_en
            sck, mosi, miso = (self.net(f"SCK_R{r}"), self.net(f"MOSI_R{r}"),
                               self.net(f"MISO_R{r}"))
            buf = self.part("lvc125", why=f"row {r}: SCK/MOSI fan-out, MISO gate")
            self.decoupled(buf, rail)
            buf["~1OE"] += self.gnd
            buf["1A"] += self.sck
            buf["1Y"] += sck
            buf["~2OE"] += self.gnd
            buf["2A"] += self.mosi
            buf["2Y"] += mosi
            buf["~3OE"] += row_en
            buf["3A"] += miso
            buf["3Y"] += self.miso
            buf["~4OE"] += rail
            buf["4A"] += self.gnd
            self.res(miso, self.gnd, "100k", f"row {r} MISO defined while no reader drives it")
            self.row_v3.append(rail)
            self.row_sck.append(sck)
            self.row_mosi.append(mosi)
            self.row_miso.append(miso)

    def busy_mux(self, readers: int) -> None:
        self.busy_ch: list[Any] = []
        chips = math.ceil(readers / 16)
        self.res(self.busy, self.gnd, "100k", "BUSY defined while no mux is enabled")
        for m in range(chips):
            mux = self.part("hc4067")
            self.decoupled(mux, self.v3)
            for k, s in enumerate(("S0", "S1", "S2", "S3")):
                mux[s] += self.addr[k]
            mux["~E"] += self.addr[4] if m == 0 else self.a4_inverted()
            mux["Z"] += self.busy
            for y in range(16):
                ch = m * 16 + y
                if ch < readers:
                    net = self.net(f"BUSY{ch}")
                    mux[f"Y{y}"] += net
                    self.busy_ch.append(net)
                else:
                    mux[f"Y{y}"] += self.gnd  # unused switch inputs tied, not floating

    def reader(self, k: int, mfrc: bool) -> None:
        row = k // ROW_SIZE
        v3, sck, mosi, miso = (self.row_v3[row], self.row_sck[row], self.row_mosi[row],
                               self.row_miso[row])
        if mfrc:
            m = self.part("rc522", "RC522")
            m["3V3"] += v3
            m["GND"] += self.gnd
            m["SDA_NSS"] += self.cs[k]
            m["SCK"] += sck
            m["MOSI"] += mosi
            m["RST"] += self.rst
            m["IRQ"] += self.circuit.NC
            self.cap(v3, self.gnd, "10uF", f"at reader {k} (RF switch-on)")
            self.cap(v3, self.gnd, "100nF", f"at reader {k}")
            buf = self.part("lvc1g125")
            self.decoupled(buf, v3)
            local = self.net(f"MISO{k}")
            m["MISO"] += local
            buf["A"] += local
            buf["~OE"] += self.cs[k]
            buf["Y"] += miso
        else:
            m = self.part("pn5180", "PN5180")
            m["+5V"] += self.v5  # TVDD, and VBAT with the module's 0R on R13
            m["+3V3"] += v3  # PVDD only (R12 removed)
            m["GND"] += self.gnd
            m["NSS"] += self.cs[k]
            m["SCK"] += sck
            m["MOSI"] += mosi
            m["MISO"] += miso
            m["RST"] += self.rst
            m["BUSY"] += self.busy_ch[k]
            for name in ("GPIO", "IRQ", "AUX", "REQ"):
                m[name] += self.circuit.NC
            self.cap(self.v5, self.gnd, "10uF", f"at reader {k} (RF on: up to 0.25 A)")
            self.cap(self.v5, self.gnd, "100nF", f"at reader {k}")
        m.fields["Why"] = f"reader {k}: {self._cell_of_reader(k)}"

    def _cell_of_reader(self, k: int) -> str:
        cell = self.geo.cell_of_reader(k)
        return cell.name if cell is not None else "-"

    def presence(self, sensors: int) -> None:
        inputs = [*[self.net(f"~PRES{k}") for k in range(sensors)], self.v3, self.gnd]
        chips = math.ceil(len(inputs) / 8)
        order = ("H", "G", "F", "E", "D", "C", "B", "A")  # H leaves QH first
        ser: Any = self.sh_q
        for c in range(chips):
            sr = self.part("hc165")
            self.decoupled(sr, self.v3)
            sr["SH/~LD"] += self.sh_ld
            sr["CLK"] += self.sh_clk
            sr["CLK_INH"] += self.gnd
            sr["~QH"] += self.circuit.NC
            sr["QH"] += ser
            nxt = self.net(f"SH_CHAIN{c}") if c < chips - 1 else self.gnd
            sr["SER"] += nxt
            ser = nxt
            for j, name in enumerate(order):
                idx = c * 8 + j
                sr[name] += inputs[idx] if idx < len(inputs) else self.gnd
        for r in range(math.ceil(sensors / 8)):
            rn = self.part("rn", "10k x8")
            rn["COM"] += self.v3
            for j in range(8):
                k = r * 8 + j
                rn[f"R{j + 1}"] += inputs[k] if k < sensors else self.v3
        for k in range(sensors):
            hall = self.part("hall", "hall switch")
            hall["VDD"] += self.v3
            hall["GND"] += self.gnd
            hall["OUT"] += inputs[k]
            cell = self.geo.cell_of_presence(k)
            hall.fields["Why"] = f"presence {k}: {cell.name if cell else '-'}"
            self.cap(self.v3, self.gnd, "100nF", f"at presence sensor {k}")

    def leds(self) -> None:
        j_pi = self.part("conn3", "from Pi", why="Pi GPIO10 (SPI0 MOSI, LED data), GND")
        data_in, data_5v, din = self.net("LED_DATA_3V3"), self.net("LED_DATA_5V"), self.net(
            "LED_DIN")
        j_pi[1] += data_in
        j_pi[2] += self.gnd
        j_pi[3] += self.circuit.NC
        buf = self.part("ahct125")
        self.decoupled(buf, self.v5_led)
        buf["~1OE"] += self.gnd
        buf["1A"] += data_in
        buf["1Y"] += data_5v
        for g in (2, 3, 4):  # unused gates: disabled, inputs tied
            buf[f"~{g}OE"] += self.v5_led
            buf[f"{g}A"] += self.gnd
        self.res(data_in, self.gnd, "100k", "strip stays dark while the Pi boots")
        self.res(data_5v, din, "330", "series resistor at the first LED's DIN")
        j_led = self.part("conn3", "LED strip", why="+5V, DIN, GND of the WS2812B strip")
        j_led[1] += self.v5_led
        j_led[2] += din
        j_led[3] += self.gnd
        self.cap(self.v5_led, self.gnd, "1000uF", "across the strip's supply", polar=True)


def build_board(game: str, power_flags: bool = True) -> Any:
    """The SKiDL circuit of one game's sensor board (``power_flags=False`` for the test that a
    missing power flag fails the ERC)."""
    pm = load_pinmap()
    return BoardCircuit(load_geometry(game), pm.pico, power_flags).build()


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def erc(circuit: Any) -> list[str]:
    """SKiDL's ERC on ``circuit``: every warning and error it reports (empty when clean)."""
    handler = _Collect()
    erc_logger.addHandler(handler)
    try:
        circuit.ERC()
    finally:
        erc_logger.removeHandler(handler)
    return handler.messages


def netlist(circuit: Any, game: str) -> str:
    """The KiCad netlist, with the run's date and source path taken out so it is reproducible."""
    text = str(circuit.generate_netlist(tool="kicad8", do_backup=False, track_src=False))
    text = re.sub(r'\(date "[^"]*"\)', '(date "")', text)
    return re.sub(r'\(source "[^"]*"\)', f'(source "hardware/schematic/tikiboard_sch.py {game}")',
                  text)


def bom(circuit: Any) -> str:
    """One CSV row per distinct part (value, footprint, part number): quantity and references."""
    rows: dict[tuple[str, str, str, str], list[str]] = {}
    for part in circuit.parts:
        key = (part.name, str(part.value), part.footprint, part.fields.get("MPN", ""))
        rows.setdefault(key, []).append(part.ref)

    def refkey(ref: str) -> tuple[str, int]:
        m = re.match(r"([A-Z]+)(\d+)", ref)
        return (m.group(1), int(m.group(2))) if m else (ref, 0)

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["qty", "part", "value", "footprint", "manufacturer part", "references"])
    for (name, value, fp, mpn), refs in sorted(rows.items(),
                                               key=lambda kv: refkey(min(kv[1], key=refkey))):
        refs.sort(key=refkey)
        w.writerow([len(refs), name, value, fp, mpn, " ".join(refs)])
    return out.getvalue()


def outputs(game: str) -> dict[Path, str]:
    """The files generated for one board, by path."""
    circuit = build_board(game)
    return {NETLIST_DIR / f"{game}.net": netlist(circuit, game),
            OUT_DIR / f"{game}-bom.csv": bom(circuit)}


def main(argv: list[str] | None = None,
         report: Callable[[str], None] = print) -> int:
    games = argv or list(board_names())
    status = 0
    for game in games:
        problems = erc(build_board(game))
        if problems:
            status = 1
            report(f"{game}: ERC failed:\n  " + "\n  ".join(problems))
            continue
        for path, text in outputs(game).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            report(f"wrote {path.relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
