"""The sensor boards' schematics (hardware/schematic/tikiboard_sch.py): SKiDL's electrical
rules check passes for every board, it catches the faults it is there for, the schematic
follows the pin map and the board files, and the checked-in netlists and BOMs are current."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pi_app.board.geometry import board_names, load_geometry
from pi_app.hw.pinmap import load_pinmap

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parent.parent / "hardware" / "schematic" / "tikiboard_sch.py"
GAMES = board_names()


@cache
def sch() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tikiboard_sch", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tikiboard_sch"] = module
    spec.loader.exec_module(module)
    return module


@cache
def board(game: str) -> Any:
    return sch().build_board(game)


def parts_named(circuit: Any, name: str) -> list[Any]:
    return [p for p in circuit.parts if p.name == name]


def net_named(circuit: Any, name: str) -> Any:
    (net,) = [n for n in circuit.nets if n.name == name]
    return net


def refs_on(net: Any) -> set[tuple[str, str]]:
    return {(p.part.ref, str(p.num)) for p in net.pins}


@pytest.mark.parametrize("game", GAMES)
def test_erc_is_clean(game: str) -> None:
    assert sch().erc(board(game)) == []


def test_erc_fails_on_an_unconnected_pin() -> None:
    circuit = sch().build_board("manami")
    hall = parts_named(circuit, "HallSwitch")[0]
    hall["OUT"].disconnect()
    problems = sch().erc(circuit)
    assert any("Unconnected pin" in p and "OUT" in p for p in problems), problems


def test_erc_fails_on_a_missing_power_flag() -> None:
    problems = sch().erc(sch().build_board("topple", power_flags=False))
    assert any("Insufficient drive" in p and "+5V" in p for p in problems), problems


def test_erc_fails_on_an_unbuffered_mfrc522_miso() -> None:
    """The fault issue 19 found: an MFRC522 drives MISO even when deselected; straight on the
    shared bus it fights the other readers. The ERC sees two outputs on one net."""
    circuit = sch().build_board("topple")
    module = parts_named(circuit, "RC522_module")[3]
    module["MISO"].disconnect()
    module["MISO"] += net_named(circuit, "MISO")
    problems = sch().erc(circuit)
    assert any("Pin conflict on net MISO" in p for p in problems), problems


@pytest.mark.parametrize("game", GAMES)
def test_counts_follow_the_board_file(game: str) -> None:
    geo, circuit = load_geometry(game), board(game)
    chip = {"MFRC522": "RC522_module", "PN5180": "PN5180_module"}[geo.reader_chip]
    assert len(parts_named(circuit, chip)) == geo.reader_count
    assert len(parts_named(circuit, "HallSwitch")) == geo.presence_count
    assert len(parts_named(circuit, "74HC165")) * 8 >= geo.presence_count + 2
    buffers = len(parts_named(circuit, "74LVC1G125"))
    assert buffers == (geo.reader_count if chip == "RC522_module" else 0)
    if chip == "PN5180_module":
        assert len(parts_named(circuit, "74HC4067")) * 16 >= geo.reader_count


@pytest.mark.parametrize("game", GAMES)
def test_pins_follow_the_pin_map(game: str) -> None:
    """The Pico's header pin on each net is the one the pin map's GP number sits on."""
    pico = load_pinmap().pico
    circuit, gp_pin = board(game), sch().PICO_GP_PIN
    (ref,) = [p.ref for p in parts_named(circuit, "Pico")]
    expect = {
        "SCK_PICO": pico["spi"]["sck"],
        "MOSI_PICO": pico["spi"]["mosi"],
        "MISO": pico["spi"]["miso"],
        "~CS_EN": pico["reader_select"]["enable"],
        "~READER_RST": pico["reader_reset"],
        "SH_~LD": pico["shift_in"]["load"],
        "SH_CLK": pico["shift_in"]["clock"],
        "SH_QH": pico["shift_in"]["data"],
    }
    expect |= {f"A{k}": gp for k, gp in enumerate(pico["reader_select"]["address"])}
    if load_geometry(game).reader_chip == "PN5180":
        expect["BUSY"] = pico["reader_busy"]
    for name, gp in expect.items():
        assert (ref, str(gp_pin[gp])) in refs_on(net_named(circuit, name)), name


def test_presence_chain_order_and_sentinels() -> None:
    """Sensor 0 is input H of the chip at the Pico (first bit out of QH); after the last
    sensor come 3.3 V and GND (firmware/tikifw/shiftin.py SENTINEL)."""
    circuit = board("topple")  # 9 sensors: chip 2 carries sensor 8, then the sentinels
    first, second = parts_named(circuit, "74HC165")
    assert (first.ref, "6") in refs_on(net_named(circuit, "~PRES0"))  # H
    assert (first.ref, "11") in refs_on(net_named(circuit, "~PRES7"))  # A
    assert (second.ref, "6") in refs_on(net_named(circuit, "~PRES8"))
    assert (second.ref, "5") in refs_on(net_named(circuit, "+3V3"))  # G: sentinel 1
    assert (second.ref, "4") in refs_on(net_named(circuit, "GND"))  # F: sentinel 0
    assert (first.ref, "9") in refs_on(net_named(circuit, "SH_QH"))


def test_one_regulator_per_rail() -> None:
    """The Pico's own 3V3 output is not tied to the board's 3.3 V rail, and every 3.3 V rail
    (logic, and one per row of readers) has exactly one LDO output on it."""
    circuit = board("tactiki")
    (pico,) = parts_named(circuit, "Pico")
    assert (pico.ref, "36") not in refs_on(net_named(circuit, "+3V3"))
    ldos = parts_named(circuit, "LDO_3V3")
    rails = ["+3V3", *[f"+3V3_R{r}" for r in range(4)]]
    assert len(ldos) == len(rails)
    for rail in rails:
        outs = [
            p
            for p in net_named(circuit, rail).pins
            if p.part.name == "LDO_3V3" and p.name == "VOUT"
        ]
        assert len(outs) == 1, rail


@pytest.mark.parametrize("game", GAMES)
def test_no_ldo_carries_more_than_a_row(game: str) -> None:
    """Issue 35: on the stock PN5180 module VBAT and PVDD both hang on its 3.3 V pin (R12 =
    0 Ω), 20 mA each; 25 of them on the one 1 A SOT-223 LDO were 1.1 A and 1.9 W. Now each
    module's 3.3 V pin (PVDD only, VBAT moved to 5 V) is on its row's rail, at most eight to
    an LDO, and the logic LDO feeds no reader."""
    circuit = board(game)
    chip = {"MFRC522": "RC522_module", "PN5180": "PN5180_module"}[load_geometry(game).reader_chip]
    supply_pin = {"RC522_module": "3V3", "PN5180_module": "+3V3"}[chip]
    per_rail: Counter[str] = Counter()
    for module in parts_named(circuit, chip):
        rail = module[supply_pin].net.name
        assert rail.startswith("+3V3_R"), (module.ref, rail)
        per_rail[rail] += 1
    assert per_rail and max(per_rail.values()) <= sch().ROW_SIZE
    if chip == "PN5180_module":  # TVDD and VBAT on +5V
        assert {m["+5V"].net.name for m in parts_named(circuit, chip)} == {"+5V"}


@pytest.mark.parametrize("game", GAMES)
def test_spi_bus_loading(game: str) -> None:
    """Issue 35: 25 PN5180 MISO pins on the Pico's MISO (and SCK/MOSI into 25 modules) are
    an order more load than one pin drives cleanly at 4 MHz. No module pin is on the Pico's
    own SCK, MOSI or MISO nets; those carry only the row buffers (at most four), and each
    row's nets reach at most ROW_SIZE modules."""
    circuit = board(game)
    chip = {"MFRC522": "RC522_module", "PN5180": "PN5180_module"}[load_geometry(game).reader_chip]
    for name in ("SCK", "MOSI", "MISO"):
        parts = {p.part.name for p in net_named(circuit, name).pins}
        assert chip not in parts and "74LVC1G125" not in parts, (name, parts)
        buffers = [p for p in net_named(circuit, name).pins if p.part.name == "74LVC125"]
        assert 1 <= len(buffers) <= 4
    for net in circuit.nets:
        if net.name.startswith(("SCK_R", "MOSI_R", "MISO_R")):
            loads = [p for p in net.pins if p.part.name in (chip, "74LVC1G125")]
            assert len(loads) <= sch().ROW_SIZE, net.name


def test_the_row_decoder_gates_miso_by_row() -> None:
    """Row r's MISO buffer is enabled by ~ROWr, which the 74HC139 makes from A3-A4 while
    ~CS_EN is low: reader k sits in row k // 8, so A3-A4 (k's bits 3-4) name its row."""
    circuit = board("tactiki")
    (dec,) = parts_named(circuit, "74HC139")
    assert dec["1A0"].net.name == "A3" and dec["1A1"].net.name == "A4"
    assert dec["~1E"].net.name == "~CS_EN"
    for buf in parts_named(circuit, "74LVC125"):
        row = buf["3A"].net.name.removeprefix("MISO_R")
        assert buf["~3OE"].net.name == f"~ROW{row}"
        assert buf["3Y"].net.name == "MISO"
        assert buf["VCC"].net.name == f"+3V3_R{row}"  # powered with its modules
    for module in parts_named(circuit, "PN5180_module"):
        k = int(module.fields["Why"].split()[1].rstrip(":"))
        assert module["MISO"].net.name == f"MISO_R{k // 8}"


#: The parts with BOM alternatives (tikiboard_sch.ALTERNATIVES), spelled out: importing the
#: schematic (SKiDL) while collecting makes xdist workers race on SKiDL's log file.
ALTERNATIVE_KEYS = ("hall", "ldo", "lvc125", "lvc1g125", "schottky")


def test_every_part_with_alternatives_is_checked() -> None:
    assert tuple(sorted(sch().ALTERNATIVES)) == ALTERNATIVE_KEYS


def _template_pins(key: str) -> dict[int, str]:
    return {int(p.num): p.name for p in sch()._library()[key].pins}


@pytest.mark.parametrize("key", ALTERNATIVE_KEYS)
def test_the_fitted_part_matches_its_footprint(key: str) -> None:
    """The first alternative is the part the schematic carries: its data-sheet pinout is the
    template's, pin for pin."""
    first = sch().ALTERNATIVES[key][0]
    assert first.fits(_template_pins(key)), (key, first.pins, _template_pins(key))
    assert first.mpn in sch()._library()[key].mpn


def _bom_row(primary: str) -> str:
    text = (SCRIPT.parent.parent / "BOM.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and primary in line]
    assert rows, f"no BOM.md row names {primary}"
    return rows[0]


@pytest.mark.parametrize("key", ALTERNATIVE_KEYS)
def test_bom_alternatives_fit_the_footprint(key: str) -> None:
    """Issue 35: the BOM offered TLV1117LV and AMS1117 for the MCP1826S footprint (5 V on
    their ground pin) and a TO-92 DRV5033 whose pins 2 and 3 are swapped. In BOM.md's row
    for a part, every alternative named before "not drop-in:" must fit the footprint pin for
    pin, and every one that does not fit is named only after it."""
    alts = sch().ALTERNATIVES[key]
    row = _bom_row(alts[0].mpn)
    drop_in, _, not_drop_in = row.partition("not drop-in:")
    pins = _template_pins(key)
    for alt in alts[1:]:
        if alt.fits(pins):
            assert alt.mpn in drop_in, f"{alt.mpn} fits {key}: list it in BOM.md"
        else:
            assert alt.mpn not in drop_in, f"{alt.mpn} does not fit {key}'s footprint"
            assert alt.mpn in not_drop_in, f"say in BOM.md that {alt.mpn} is not drop-in"


def test_the_ldo_trap_is_caught() -> None:
    """The check can fail: an AMS1117 in the MCP1826S footprint puts 5 V on its GND pin."""
    ams = next(a for a in sch().ALTERNATIVES["ldo"] if a.mpn.startswith("AMS1117"))
    pins = _template_pins("ldo")
    assert not ams.fits(pins)
    assert ams.pins[1] == "GND" and pins[1] == "VIN"
    to92 = next(a for a in sch().ALTERNATIVES["hall"] if a.mpn.endswith("LPG"))
    assert not to92.fits(_template_pins("hall"))


@pytest.mark.parametrize("game", GAMES)
def test_generated_files_are_current(game: str) -> None:
    """The parts list kept in git is what the circuit builds; the netlist (built, not kept)
    is reproducible and names every part."""
    files = sch().outputs(game)
    net, csv_path = (next(p for p in files if p.suffix == suffix) for suffix in (".net", ".csv"))
    assert csv_path.read_text(encoding="utf-8") == files[csv_path], (
        f"{csv_path.name} is stale: run .venv/bin/python hardware/schematic/tikiboard_sch.py")
    assert sch().outputs(game)[net] == files[net]
    assert not (sch().OUT_DIR / net.name).exists(), "netlists are built into build/schematic"
    for part in board(game).parts:
        assert f'(ref "{part.ref}")' in files[net]


@pytest.mark.parametrize("game", GAMES)
def test_bom_md_quantities_match_the_schematic(game: str) -> None:
    """hardware/BOM.md's per-game table states what the schematic builds."""
    text = (SCRIPT.parent.parent / "BOM.md").read_text(encoding="utf-8")
    section = text.split(f"(`{game}.json`", 1)[1].split("\n## ", 1)[0]
    rows = {
        cells[1].strip(): cells[3].strip()
        for line in section.splitlines()
        if line.startswith("| ") and len(cells := line.split("|")) > 4
    }
    circuit, geo = board(game), load_geometry(game)
    chip = {"MFRC522": "RC522_module", "PN5180": "PN5180_module"}[geo.reader_chip]
    assert rows["NFC reader"] == str(len(parts_named(circuit, chip)))
    assert rows["presence switch"] == str(len(parts_named(circuit, "HallSwitch")))
    assert rows["shift registers"] == str(len(parts_named(circuit, "74HC165")))
    caps = Counter(str(p.value) for p in parts_named(circuit, "C"))
    assert f"100 nF: {caps['100nF']}; 10 µF: {caps['10uF']}" in section
