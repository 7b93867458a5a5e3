"""Bring-up aids in the firmware (issue 35): the SPI speed ramp, the pad drive and the
decoder walk, on the emulated board."""

from __future__ import annotations

from test_scan_cost import PINMAP, _board, selftest

from pi_app.hw.simfirmware import firmware_module

board_mod = firmware_module("board")
walk_mod = firmware_module("walk")


def test_the_spi_ramp_runs_at_the_pin_maps_rate_on_a_clean_bus() -> None:
    device, *_, bus = selftest.rig(_board("tactiki"), PINMAP)
    assert device.spi_hz == 4_000_000 == bus.spi_hz
    assert device.boot_notes == []


def test_the_spi_ramp_settles_below_a_bus_too_slow_for_4_mhz() -> None:
    """A loaded bus garbles reads above 2 MHz: the ramp finds a reader whose answers differ
    at 4 MHz, runs at 2 MHz and says so after HELLO; every reader still answers."""
    device, _, _, transport, _, bus = selftest.rig(_board("manami"), PINMAP, max_spi_hz=2_000_000)
    assert device.spi_hz == 2_000_000 == bus.spi_hz
    ((code, _arg, text),) = device.boot_notes
    assert code == selftest.proto.ERR_INTERNAL
    assert text.startswith("SPI at 2000000 Hz: reader R") and "at 4000000 Hz" in text
    device.start()
    kinds = [selftest.proto.unframe(f[:-1])[0] for f in transport.frames if len(f) > 2]
    assert selftest.proto.ERROR in kinds


def test_pads_get_8_ma_drive_and_fast_slew() -> None:
    """PADS_BANK0 GPIOn = base + 4 + 4n; DRIVE (bits 5:4) from 4 mA (reset) to 8 mA, SLEWFAST
    on, the other bits kept."""

    class Mem(dict[int, int]):
        def __missing__(self, key: int) -> int:
            return 0x56  # reset value: IE, DRIVE 4 mA, PDE, SCHMITT

    class FakeMachine:
        mem32 = Mem()

    board_mod.set_drive(FakeMachine, [18, 19])
    for gp in (18, 19):
        value = FakeMachine.mem32[0x4001C000 + 4 + 4 * gp]
        assert (value >> 4) & 3 == 2 and value & 1 and value & 0x46 == 0x46
    board_mod.set_drive(object(), [18])  # a PC's machine has no mem32: nothing happens


def test_the_decoder_walk_selects_each_reader_once_in_order() -> None:
    *_, bus = selftest.rig(_board("tactiki"), PINMAP)
    seen: list[int] = []
    write_pin = bus.write_pin

    def watching(pin: int, value: int) -> None:
        write_pin(pin, value)
        if pin == bus.enable_pin and value == 0:
            seen.append(bus.address())

    bus.write_pin = watching
    lines: list[str] = []
    pins = selftest.pico_pins(selftest.load(PINMAP))
    order = walk_mod.walk(selftest.machine, pins, 25, report=lines.append)
    assert order == seen == list(range(25))
    assert lines[24] == "reader 24 selected: Y8 of decoder 1 low, ~ROW3 low"
