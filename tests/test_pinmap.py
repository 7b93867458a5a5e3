"""hardware/pinmap.json and what is generated from it or ships beside it: the loader's checks,
the wiring diagram, the overlays, the udev rule and the bill of materials."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pi_app.board.geometry import BOARDS, load_geometry
from pi_app.commands.overlay import draw_overlay, led_positions, write_overlays
from pi_app.hw.pinmap import PINMAP, PinMapError, load_pinmap, parse_pinmap
from pi_app.hw.wiring import draw_wiring

ROOT = Path(__file__).resolve().parent.parent
HARDWARE = ROOT / "hardware"
GAMES = ("topple", "manami", "tactiki")


def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PINMAP.read_text())
    return data


def test_hardware_links_to_the_shipped_data() -> None:
    """One copy: hardware/pinmap.json and hardware/boards (what the firmware is flashed with)
    are links to the package data the station reads, in the checkout and in the wheel."""
    assert (HARDWARE / "pinmap.json").resolve() == Path(str(PINMAP)).resolve()
    assert (HARDWARE / "boards").resolve() == Path(str(BOARDS)).resolve()
    assert {p.name for p in (HARDWARE / "boards").iterdir()} >= {f"{g}.json" for g in GAMES}


def test_the_shipped_pin_map_loads() -> None:
    pm = load_pinmap()
    assert pm.buttons == {"ok": 5, "back": 6, "menu": 13}
    assert pm.serial.device == "/dev/tikiboard-sensors"
    assert pm.oled.address == 0x3C and pm.neopixel.driver == "neopixel_spi"
    assert pm.pico_pins["shift_in.data"] == 12
    assert len(pm.presence_gpio) >= 9  # Tiki Topple's nine slots on the cheap build


@pytest.mark.parametrize(("path", "value", "message"), [
    (("pi", "buttons", "menu"), 5, r"pi\.buttons\.menu: GPIO 5 is already used by pi\.buttons\.ok"),
    (("pi", "buttons", "back"), 2,
     r"pi\.oled\.sda_gpio: GPIO 2 is already used by pi\.buttons\.back"),
    (("pi", "neopixel", "spi_mosi_gpio"), 17,
     r"pi\.presence_gpio\[0\]: GPIO 17 is already used by pi\.neopixel\.spi_mosi_gpio"),
    (("pico", "reader_reset"), 18, r"pico\.reader_reset: GP 18 is already used by pico\.spi\.sck"),
    (("pi", "buttons", "ok"), 40, r"pi\.buttons\.ok: must be a GPIO number 0\.\.27, not 40"),
    (("pi", "oled", "driver"), "ssd1351", r"pi\.oled\.driver: must be one of"),
    (("pi", "neopixel", "supply_ma"), -1, r"pi\.neopixel\.supply_ma: must be a positive"),
])
def test_pin_map_errors_name_the_key(tmp_path: Path, path: tuple[str, ...], value: Any,
                                     message: str) -> None:
    data = raw()
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    file = tmp_path / "pinmap.json"
    file.write_text(json.dumps(data))
    with pytest.raises(PinMapError, match=message) as info:
        load_pinmap(file)
    assert str(file) in str(info.value)


def test_a_key_given_twice_in_the_file(tmp_path: Path) -> None:
    text = PINMAP.read_text().replace('"ok": 5,', '"ok": 5, "ok": 7,')
    file = tmp_path / "pinmap.json"
    file.write_text(text)
    with pytest.raises(PinMapError, match="key 'ok' is given twice"):
        load_pinmap(file)


def test_missing_parts(tmp_path: Path) -> None:
    data = raw()
    del data["pi"]["buttons"]["menu"]
    with pytest.raises(PinMapError, match=r"pi\.buttons\.menu: missing"):
        parse_pinmap(data)
    with pytest.raises(PinMapError, match="cannot read"):
        load_pinmap(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(PinMapError, match="not JSON"):
        load_pinmap(tmp_path / "bad.json")


def test_no_pin_number_in_the_code() -> None:
    """Pins live in the pin map only: no BCM/GP number is written into the drivers."""
    root = ROOT
    pattern = re.compile(r"(machine\.Pin|(?<![.\w])(Pin|Button|DigitalInputDevice|LED))"
                         r"\(\s*\d+")
    files = [*(root / "pi_app" / "hw").glob("*.py"), root / "firmware" / "main.py",
             *(root / "firmware" / "tikifw").glob("*.py")]
    for path in files:
        assert not pattern.search(path.read_text()), path


def test_wiring_diagram_is_generated_from_the_pin_map() -> None:
    svg = draw_wiring(load_pinmap()).svg("tikiboard station wiring")
    assert (HARDWARE / "wiring.svg").read_text() == svg, \
        "hardware/wiring.svg is stale: run python -m pi_app.hw.wiring"
    for label in ("GPIO5", "GPIO13", "GP18", "GP12", "/dev/tikiboard-sensors", "0x3C"):
        assert label in svg
    assert (HARDWARE / "images" / "wiring.png").stat().st_size > 10_000


@pytest.mark.parametrize("game", GAMES)
def test_overlays_are_current_and_one_to_one(game: str, tmp_path: Path) -> None:
    write_overlays(tmp_path, None, [game])
    fresh = (tmp_path / f"{game}.svg").read_text()
    assert (HARDWARE / "overlays" / f"{game}.svg").read_text() == fresh, \
        "hardware/overlays is stale: run python -m pi_app.commands.overlay"
    geo = load_geometry(game)
    size = re.search(r'width="([\d.]+)mm" height="([\d.]+)mm"', fresh)
    assert size is not None
    assert float(size.group(1)) == geo.size_mm[0] + 12  # 6 mm margins; units are millimetres
    for cell in geo.cells:
        assert f">{cell.name}<" in fresh
        if cell.reader is not None:
            assert f">R{cell.reader}<" in fresh
    canvas = draw_overlay(geo)
    assert canvas.height > geo.size_mm[1]


def test_led_positions_sit_inside_their_cell() -> None:
    geo = load_geometry("manami")
    for cell in geo.cells:
        (cx, cy), (w, h) = cell.center_mm, cell.size_mm
        for x, y in led_positions(cell):
            assert cx - w / 2 < x < cx + w / 2 and cy - h / 2 < y < cy + h / 2


def test_udev_rule_names_the_pico() -> None:
    rule = (HARDWARE / "99-tikiboard.rules").read_text()
    line = next(x for x in rule.splitlines() if x and not x.startswith("#"))
    assert 'ATTRS{idVendor}=="2e8a"' in line and 'ATTRS{idProduct}=="0005"' in line
    assert 'SYMLINK+="tikiboard-sensors"' in line and 'SUBSYSTEM=="tty"' in line
    assert load_pinmap().serial.device == "/dev/tikiboard-sensors"


def test_bom_lists_every_game_and_the_key_parts() -> None:
    bom = (HARDWARE / "BOM.md").read_text()
    for word in ("MFRC522", "PN5180", "74HC165", "74HC154", "74HC4067", "74AHCT125",
                 "WS2812B", "SSD1306", "74LVC1G125", "Tiki Topple", "Manami", "TacTiki"):
        assert word in bom, word
