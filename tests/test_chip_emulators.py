"""The reader-chip emulators against data-sheet facts, and the drivers against the emulators.

Issue 19: the PN5180 driver wrote its receive timer's configuration to 0x0D (TIMER2_RELOAD; the
data sheet puts TIMER1_CONFIG at 0x0F) with a value in the wrong units and no stop-on-receive,
and the old emulator, which accepted any write and faked the timeout, let it pass. These tests
hold the emulators to the data sheets (addresses, reset values, read-only registers, timer
units, BUSY, IRQ status) and show that today's driver code, re-created by patching the module
constants back, fails on them, while the fixed drivers read single tags and 16-slot
inventories. The facts typed in here come from the NXP data sheets and public register
headers; firmware/README.md ("Checked against the data sheets") lists the sources.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pi_app.hw.simfirmware import firmware_module

air = firmware_module("chipsim_air")
emu5180 = firmware_module("chipsim_pn5180")
emu522 = firmware_module("chipsim_mfrc522")
pn = firmware_module("pn5180")
mfrc = firmware_module("mfrc522")
readers = firmware_module("readers")
scanner_mod = firmware_module("scanner")
shiftin = firmware_module("shiftin")

FC = 13_560_000


def us(cycles: int) -> float:
    return cycles * 1e6 / FC


def uid_v(last: int, second_last: int = 0x10) -> bytes:
    """An ISO 15693 UID (E0 = ISO 15693, 04 = NXP); its low nibble picks its inventory slot."""
    return bytes((0xE0, 0x04, 0x01, 0, 0, 0, second_last, last))


class Field:
    def __init__(self, *uids: bytes) -> None:
        self.uids = list(uids)

    def __call__(self) -> list[bytes]:
        return self.uids


class Port:
    """One reader straight on a chip emulator: each call is one chip-select frame."""

    def __init__(self, chip: Any) -> None:
        self.chip = chip

    def xfer(self, tx: bytes) -> bytearray:
        self.chip.begin()
        rx: bytearray = self.chip.exchange(bytes(tx))
        self.chip.end()
        return rx

    def write(self, tx: bytes) -> None:
        self.xfer(tx)

    def read(self, n: int) -> bytearray:
        return self.xfer(b"\xff" * n)

    def busy(self) -> bool:
        return bool(self.chip.busy())


def pn5180(chip: Any, **kw: Any) -> Any:
    return pn.Pn5180(Port(chip), sleep_us=chip.clock.sleep_us, **kw)


def mfrc522(chip: Any, **kw: Any) -> Any:
    return mfrc.Mfrc522(Port(chip), sleep_us=chip.clock.sleep_us, **kw)


@pytest.fixture
def patched() -> Iterator[Any]:
    """Set driver module constants for one test, and put them back after it."""
    saved: list[tuple[Any, str, Any]] = []

    def patch(module: Any, **values: Any) -> None:
        for name, value in values.items():
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)

    yield patch
    for module, name, value in reversed(saved):
        setattr(module, name, value)


# --- PN5180: a host talking raw instructions (data sheet 11.4.3) ------------------------------

class Host:
    """Raw PN5180 host-interface frames, waiting for BUSY low as the data sheet asks."""

    def __init__(self, chip: Any) -> None:
        self.chip = chip
        self.port = Port(chip)

    def wait(self) -> None:
        for _ in range(1000):
            if not self.chip.busy():
                return
        raise AssertionError("BUSY stuck")

    def frame(self, data: bytes) -> None:
        self.wait()
        self.port.write(data)

    def write(self, reg: int, value: int) -> None:
        self.frame(bytes((0x00, reg)) + value.to_bytes(4, "little"))

    def read(self, reg: int) -> int:
        self.frame(bytes((0x04, reg)))
        self.wait()
        return int.from_bytes(self.port.read(4), "little")


def test_pn5180_addresses_and_bits_the_driver_uses_are_the_data_sheets() -> None:
    # Typed in from the data sheet's register map (and NXP phhalHw_Pn5180_Reg.h, dotnet/iot
    # Register.cs); the driver and the emulator must both agree with it.
    datasheet = {"SYSTEM_CONFIG": 0x00, "IRQ_ENABLE": 0x01, "IRQ_STATUS": 0x02,
                 "TIMER1_RELOAD": 0x0C, "TIMER1_CONFIG": 0x0F, "RX_STATUS": 0x13,
                 "TX_CONFIG": 0x18, "RF_STATUS": 0x1D}
    for name, address in datasheet.items():
        assert getattr(pn, name) == address == getattr(emu5180, name), name
    assert pn.IRQ_CLEAR == emu5180.IRQ_SET_CLEAR == 0x03
    assert emu5180.TIMER2_RELOAD == 0x0D  # where the old driver put TIMER1_CONFIG
    bits = {"IRQ_RX": 1 << 0, "IRQ_TX_RFON": 1 << 9, "IRQ_TIMER1": 1 << 12,
            "IRQ_GENERAL_ERROR": 1 << 17, "T1_ENABLE": 1 << 0, "T1_MODE_SEL": 1 << 2,
            "T1_START_ON_TX_ENDED": 1 << 11, "T1_STOP_ON_RX_STARTED": 1 << 20,
            "RF_STATUS_TX_RF": 1 << 17}
    for name, bit in bits.items():
        assert getattr(pn, name) == bit, name
    assert pn.TIMER1_CONFIG_VALUE & (1 << 10) == 0  # bit 10 starts T1 on an *external* field


def test_pn5180_reset_state_read_only_and_missing_registers() -> None:
    chip = emu5180.Pn5180Chip(Field())
    host = Host(chip)
    assert host.read(0x02) == 1 << 2  # IRQ_STATUS: IDLE_IRQ after start-up
    assert host.read(0x0F) == 0  # TIMER1_CONFIG resets to 0: T1 disabled
    host.write(0x02, 0xFFFFFFFF)  # IRQ_STATUS is read-only
    assert host.read(0x02) == (1 << 2) | (1 << 17)  # unchanged, plus GENERAL_ERROR_IRQ
    host.write(0x03, 1 << 17)  # IRQ_SET_CLEAR clears it
    assert host.read(0x02) == 1 << 2
    host.write(0x44, 1)  # past the register map
    assert host.read(0x02) & (1 << 17)
    assert chip.exceptions == ["write to read-only register 0x02",
                               "write to register 0x44, which does not exist"]
    host.write(0x0D, 0xC01)  # TIMER2_RELOAD: a valid register, so no error ...
    assert host.read(0x0D) == 0xC01 and host.read(0x0F) == 0  # ... and T1 is not configured


def test_pn5180_eeprom_identification_area_and_its_address_limits() -> None:
    # Data sheet EEPROM map: DIE_IDENTIFIER 0x00 (16 bytes), PRODUCT_VERSION 0x10,
    # FIRMWARE_VERSION 0x12, EEPROM_VERSION 0x14, two bytes each, minor first; READ_EEPROM
    # (0x07) takes address 0..254 and address + length <= 255.
    assert (emu5180.READ_EEPROM, emu5180.PRODUCT_VERSION, emu5180.FIRMWARE_VERSION,
            emu5180.EEPROM_VERSION) == (0x07, 0x10, 0x12, 0x14)
    assert (pn.READ_EEPROM, pn.PRODUCT_VERSION, pn.FIRMWARE_VERSION) == (0x07, 0x10, 0x12)
    chip = emu5180.Pn5180Chip(Field(), firmware=(3, 5))
    host = Host(chip)
    host.frame(bytes((0x07, 0x12, 2)))
    host.wait()
    assert bytes(host.port.read(2)) == bytes((5, 3))
    host.frame(bytes((0x07, 0xF0, 0x10)))  # 0xF0 + 16 = 256: past the EEPROM
    assert host.read(0x02) & (1 << 17) and chip.exceptions == ["READ_EEPROM of 16 bytes at 0xF0"]


def test_pn5180_init_reads_the_versions_and_refuses_a_chip_that_does_not_answer() -> None:
    reader = pn5180(emu5180.Pn5180Chip(Field(), firmware=(4, 1)))
    reader.init()
    assert reader.firmware == (4, 1)
    dead = emu5180.Pn5180Chip(Field())
    dead.dead = True  # MISO held low: every byte reads 0x00
    with pytest.raises(readers.ReaderError, match=r"product version 0\.0"):
        pn5180(dead).init()


def test_pn5180_busy_is_high_while_an_instruction_runs_and_frames_sent_then_are_lost() -> None:
    chip = emu5180.Pn5180Chip(Field())
    host = Host(chip)
    host.write(0x0C, 1234)
    assert chip.busy()  # right after the frame
    host.port.write(bytes((0x00, 0x0C)) + (99).to_bytes(4, "little"))  # BUSY not awaited
    assert host.read(0x0C) == 1234  # that write never reached the chip
    chip.busy_stuck = True
    with pytest.raises(AssertionError, match="BUSY stuck"):
        host.wait()


@pytest.mark.parametrize(("config", "reload", "period_us"), [
    (0x001, 2000, 2000 / 13.56),  # no prescaler: 13.56 MHz counts (the old 147 us)
    (0x01D, 847, 847 * 16 / 13.56),  # prescaler 011b: 6.78 MHz / 8 = 847.5 kHz
    (0x03D, 53, 53 * 256 / 13.56),  # prescaler 111b: 53 kHz
])
def test_pn5180_timer1_counts_in_the_units_timer1_config_selects(
        config: int, reload: int, period_us: float) -> None:
    chip = emu5180.Pn5180Chip(Field())
    host = Host(chip)
    host.write(0x0C, reload)
    host.write(0x0F, config | (1 << 6))  # T1_START_NOW
    started = chip.clock.t
    assert us(chip.t1_period_cycles()) == pytest.approx(period_us)
    chip.clock.t = started + chip.t1_period_cycles() - air.us_to_cycles(100)
    status = host.read(0x09)  # TIMER1_STATUS: running, counts left (this read takes ~30 us)
    tick = chip.t1_period_cycles() / reload
    assert status & (1 << 20) and 60 < us(int((status & 0xFFFFF) * tick)) <= 100
    assert not host.read(0x02) & (1 << 12)
    chip.clock.sleep_us(100)
    assert host.read(0x02) & (1 << 12)  # TIMER1_IRQ on expiry
    assert host.read(0x09) == 0  # stopped (reload not enabled)


def test_pn5180_collision_avoidance_keeps_the_field_off_when_another_field_is_on() -> None:
    chip = emu5180.Pn5180Chip(Field())
    chip.external_field = True
    host = Host(chip)
    host.frame(bytes((0x16, 0x00)))  # RF_ON, collision avoidance on
    assert not host.read(0x1D) & (1 << 17) and not host.read(0x02) & (1 << 9)
    host.frame(bytes((0x16, 0x01)))  # RF_ON, collision avoidance off
    chip.clock.sleep_us(emu5180.RF_RAMP_US)  # the field ramps up, then TX_RFON_IRQ
    assert host.read(0x1D) & (1 << 17) and host.read(0x02) & (1 << 9)


def test_pn5180_send_data_needs_a_transceive_command_in_wait_transmit() -> None:
    chip = emu5180.Pn5180Chip(Field(uid_v(0x00)))
    host = Host(chip)
    host.frame(bytes((0x11, 0x0D, 0x8D)))  # LOAD_RF_CONFIG ISO 15693
    host.frame(bytes((0x16, 0x01)))  # RF_ON
    chip.clock.sleep_us(emu5180.RF_RAMP_US + emu5180.TAG_READY_US)  # field up, tag powered
    host.frame(bytes((0x09, 0x00, 0x26, 0x01, 0x00)))  # an inventory, but COMMAND is IDLE
    assert host.read(0x02) & (1 << 17) and chip.inventories == 0
    host.write(0x03, 0x000FFFFF)
    host.write(0x00, 0x03)  # SYSTEM_CONFIG.COMMAND = Transceive: WaitTransmit
    assert (host.read(0x1D) >> 24) & 7 == 1
    host.frame(bytes((0x09, 0x00, 0x26, 0x01, 0x00)))  # a 1-slot inventory
    assert chip.inventories == 1 and (host.read(0x1D) >> 24) & 7 == 2  # Transmitting
    chip.clock.sleep_us(6000)
    assert host.read(0x02) & 0x3 == 0x3  # TX_IRQ and RX_IRQ
    assert host.read(0x13) & 0x1FF == 10 and (host.read(0x1D) >> 24) & 7 == 1


# --- PN5180: the driver on the emulator -------------------------------------------------------

STACK = [uid_v(b) for b in (0x01, 0x11, 0x21, 0x02, 0x12)]  # slots 1, 1, 1, 2, 2


def old_driver(patch: Any) -> None:
    """Today's (pre-issue-19) timer code: 0xC01 written to 0x0D, reload in 13.56 MHz counts."""
    patch(pn, TIMER1_CONFIG=0x0D, TIMER1_CONFIG_VALUE=0xC01, TIMER1_TICK_CYCLES=1)


def test_todays_pn5180_timer_code_fails_and_the_reader_is_marked_faulty(patched: Any) -> None:
    old_driver(patched)
    chip = emu5180.Pn5180Chip(Field())
    reader = pn5180(chip, timeout_us=2000)
    reader.init()
    with pytest.raises(readers.ReaderError, match="no interrupt"):
        reader.scan()  # no tag answers: T1 never started, so nothing ever ends the wait

    class Sink:
        def __init__(self) -> None:
            self.faults: list[int] = []

        def on_tags(self, reader: int, uids: list[bytes], t: int) -> None:
            pass

        def on_presence(self, sensor: int, present: bool, t: int) -> None:
            pass

        def on_fault(self, code: int, index: int, text: str, t: int) -> None:
            self.faults.append(code)

    sink = Sink()
    sc = scanner_mod.Scanner([reader], shiftin.NoPresence(), scanner_mod.Config(), sink)
    sc.scan_reader(0, 0)
    sc.scan_reader(0, 1)
    assert sink.faults == [1]  # ERR_READER_FAULT: the board reports the reader broken


@pytest.mark.parametrize(("why", "values"), [
    ("0xC01 at the right address: 147 us, no stop on receive",
     {"TIMER1_CONFIG_VALUE": 0xC01, "TIMER1_TICK_CYCLES": 1}),
    ("right units but no stop on receive: T1 fires mid-answer",
     {"TIMER1_CONFIG_VALUE": pn.TIMER1_CONFIG_VALUE & ~pn.T1_STOP_ON_RX_STARTED}),
])
def test_a_timer_that_expires_before_the_answer_loses_every_tag(
        patched: Any, why: str, values: dict[str, int]) -> None:
    patched(pn, **values)
    reader = pn5180(emu5180.Pn5180Chip(Field(*STACK)))
    reader.init()
    assert reader.scan() == ([], True), why  # a clean "empty": the tags would be reported gone


def test_a_timeout_shorter_than_the_tags_response_time_loses_every_tag() -> None:
    reader = pn5180(emu5180.Pn5180Chip(Field(*STACK)), timeout_us=400)  # t1 + SOF > 470 us
    reader.init()
    assert reader.scan() == ([], True)


def test_a_timer_that_never_starts_is_a_reader_fault(patched: Any) -> None:
    patched(pn, TIMER1_CONFIG_VALUE=pn.TIMER1_CONFIG_VALUE & ~pn.T1_START_ON_TX_ENDED)
    reader = pn5180(emu5180.Pn5180Chip(Field(*STACK)))
    reader.init()
    with pytest.raises(readers.ReaderError, match="no interrupt"):
        reader.scan()


def test_fixed_pn5180_reads_one_tag_a_full_16_slot_round_and_a_colliding_stack() -> None:
    """One tag: the 1-slot round alone. Several: the 1-slot round collides, then 16 slots."""
    chip = emu5180.Pn5180Chip(Field(uid_v(0x07)))
    reader = pn5180(chip)
    reader.init()
    assert chip.regs[0x0F] == pn.TIMER1_CONFIG_VALUE == 0x10081D
    assert us(chip.t1_period_cycles()) == pytest.approx(1000, abs=1.2)  # 847 counts of 1.18 us
    assert reader.scan() == ([uid_v(0x07)], True)
    assert chip.inventories == 1 and chip.exceptions == [] and not chip.rf_on

    sixteen = [uid_v(slot, 0x20) for slot in range(16)]  # one tag in every slot
    chip = emu5180.Pn5180Chip(Field(*sixteen))
    reader = pn5180(chip)
    reader.init()
    start = chip.clock.t
    assert reader.scan() == (sorted(sixteen), True)
    assert chip.inventories == 2
    # A colliding 1-slot answer, 16 answers of ~4.3 ms each, the requests and the settling.
    assert 75_000 < us(chip.clock.t - start) < 100_000

    chip = emu5180.Pn5180Chip(Field(*STACK))
    reader = pn5180(chip)
    reader.init()
    assert reader.scan() == (sorted(STACK), True)
    # the 1-slot round collides, one 16-slot round, then a masked round per collided slot
    assert chip.inventories == 4


def test_an_empty_field_costs_one_timeout_and_a_16_slot_round_sixteen() -> None:
    """Issue 35: most cells hold no tag, and the 16-slot round a scan used to start with cost
    16 timeouts there; the 1-slot round costs one."""
    chip = emu5180.Pn5180Chip(Field())
    reader = pn5180(chip)
    reader.init()
    start = chip.clock.t
    assert reader.scan() == ([], True)
    assert chip.inventories == 1
    # settle 1 ms + request + 1 ms timeout + register traffic
    one_slot = us(chip.clock.t - start)
    assert 2_500 < one_slot < 5_000
    reader._field_on()
    start = chip.clock.t
    assert reader._inventory(0, 0) == []
    reader.command(bytes((pn.RF_OFF, 0)))
    # request + 16 x (1 ms timeout + register traffic)
    sixteen = us(chip.clock.t - start)
    assert 16_000 < sixteen < 22_000 and sixteen > 4 * one_slot


def test_a_lone_tag_is_read_by_the_1_slot_round_alone() -> None:
    chip = emu5180.Pn5180Chip(Field(uid_v(0x05)))
    reader = pn5180(chip)
    reader.init()
    start = chip.clock.t
    assert reader.scan() == ([uid_v(0x05)], True)
    assert chip.inventories == 1
    assert us(chip.clock.t - start) < 9_000  # one ~4.3 ms answer, not 16 slots


def test_pn5180_rf_on_disables_collision_avoidance_and_checks_the_field(patched: Any) -> None:
    chip = emu5180.Pn5180Chip(Field(uid_v(0x03)))
    chip.external_field = True  # a neighbour's field still decaying, a phone on the board
    reader = pn5180(chip)
    reader.init()
    assert reader.scan() == ([uid_v(0x03)], True)
    patched(pn, RF_ON_NO_COLLISION_AVOIDANCE=0x00)
    with pytest.raises(readers.ReaderError, match="field did not come on"):
        reader.scan()  # not a silent "no tags": the field never came on


# --- MFRC522 ------------------------------------------------------------------------------

class Rc522Host:
    """Raw MFRC522 SPI: address byte (reg << 1), bit 7 set to read (data sheet 8.1.2.3)."""

    def __init__(self, chip: Any) -> None:
        self.port = Port(chip)

    def write(self, reg: int, value: int) -> None:
        self.port.xfer(bytes((reg << 1, value)))

    def read(self, reg: int) -> int:
        return self.port.xfer(bytes((0x80 | (reg << 1), 0)))[1]


def test_mfrc522_reset_values_read_only_and_reserved_registers() -> None:
    chip = emu522.Mfrc522Chip(Field())
    host = Rc522Host(chip)
    datasheet_reset = {0x01: 0x20, 0x02: 0x80, 0x04: 0x14, 0x07: 0x21, 0x0B: 0x08,
                       0x0C: 0x10, 0x0E: 0xA0, 0x11: 0x3F, 0x14: 0x80, 0x15: 0x00,
                       0x19: 0x4D, 0x26: 0x48, 0x2A: 0x00, 0x2B: 0x00, 0x2C: 0x00, 0x2D: 0x00,
                       0x37: 0x92}
    assert {reg: host.read(reg) for reg in datasheet_reset} == datasheet_reset
    host.write(0x37, 0x00)  # VersionReg is read-only
    host.write(0x0F, 0x55)  # reserved
    assert host.read(0x37) == 0x92 and host.read(0x0F) == 0x00
    host.write(0x04, 0x7F)  # ComIrqReg, Set1 = 0: clear the marked bits
    assert host.read(0x04) == 0x00
    host.write(0x04, 0x80 | 0x01)  # Set1 = 1: set TimerIRq
    assert host.read(0x04) == 0x01
    host.write(0x01, 0x0F)  # SoftReset: back to the reset values
    assert host.read(0x04) == 0x14 and host.read(0x01) == 0x20


def test_mfrc522_timer_with_the_common_library_values_runs_25_ms() -> None:
    # Arduino rfid init (hardware-notes.md §1.1): TModeReg 0x80, TPrescalerReg 0xA9, TReload 0x03E8;
    # f_timer = 13.56 MHz / (2 * 0xA9 + 1) = 40 kHz (data sheet Table 106), 1000 + 1 counts.
    chip = emu522.Mfrc522Chip(Field())
    host = Rc522Host(chip)
    for reg, value in ((0x2A, 0x80), (0x2B, 0xA9), (0x2C, 0x03), (0x2D, 0xE8)):
        host.write(reg, value)
    assert chip.timer_divider() == 339
    assert us(chip.timer_period_cycles()) == pytest.approx(25_025, abs=1)
    host.write(0x04, 0x7F)
    host.write(0x0C, 0x40)  # ControlReg TStartNow
    chip.clock.sleep_us(24_990)
    assert not host.read(0x04) & 0x01 and host.read(0x07) & 0x08  # not yet; TRunning
    chip.clock.sleep_us(40)
    assert host.read(0x04) & 0x01 and not host.read(0x07) & 0x08  # TimerIRq, stopped


UID7 = bytes.fromhex("04A1B2C3D4E5F6")


def test_mfrc522_timer_shorter_than_the_tags_frame_delay_loses_the_tag(patched: Any) -> None:
    chip = emu522.Mfrc522Chip(Field(UID7))
    reader = mfrc522(chip)
    reader.init()
    assert reader.scan() == ([UID7], True)
    patched(mfrc, TICK_US=2000)  # a reload of 1: two 25 us counts, less than FDT + 5 bits
    reader = mfrc522(chip, timeout_us=2000)
    reader.init()
    assert reader.scan() == ([], True)


def test_mfrc522_timer_that_never_starts_is_a_reader_fault(patched: Any) -> None:
    patched(mfrc, T_MODE_AUTO=0x00)  # TAuto off: nothing starts the timer
    reader = mfrc522(emu522.Mfrc522Chip(Field()))
    reader.init()
    with pytest.raises(readers.ReaderError, match="no interrupt"):
        reader.scan()


def test_mfrc522_waits_are_bounded_in_time_not_by_a_poll_count() -> None:
    # A fast host (here: sleeps that pass no time) would give up long before the chip's timer.
    chip = emu522.Mfrc522Chip(Field())
    reader = mfrc.Mfrc522(Port(chip))
    reader.init()
    with pytest.raises(readers.ReaderError, match="no interrupt"):
        reader.scan()
    reader = mfrc522(chip)
    reader.init()
    assert reader.scan() == ([], True)  # with time passing while it sleeps, it waits it out


# --- PN5180: start-up, the field's ramp and the tags' power-up (issue 35) ------------------------

def _booting_chip(*uids: bytes) -> Any:
    chip = emu5180.Pn5180Chip(Field(*uids))
    chip.hard_reset()
    return chip


def test_a_pn5180_is_silent_until_its_start_up_ends() -> None:
    """BOOT_US (2.5 ms typical) after RST: frames are lost and MISO reads the pull-down's 0, so
    no IDLE_IRQ is seen before start-up ends; then IDLE_IRQ is set."""
    chip = _booting_chip()
    host = Host(chip)
    assert host.read(0x02) == 0
    chip.clock.sleep_us(emu5180.BOOT_US)
    assert host.read(0x02) & (1 << 2)  # IDLE_IRQ


def test_the_old_fixed_2_ms_reset_wait_finds_no_chip(patched: Any) -> None:
    """The firmware waited 2 ms after RST and talked at once: under the 2.5 ms start-up the
    version reads 0.0 and the reader is refused. Polling IDLE_IRQ (the first init) works."""
    patched(pn, BOOT_WAIT_US=0)
    chip = _booting_chip(uid_v(0x03))
    chip.clock.sleep_us(2000)
    with pytest.raises(readers.ReaderError, match=r"product version 0\.0"):
        pn5180(chip).init()


def test_init_polls_idle_irq_after_a_reset() -> None:
    chip = _booting_chip(uid_v(0x03))
    reader = pn5180(chip)
    reader.init()
    assert us(chip.clock.t) >= emu5180.BOOT_US and reader.booted
    assert reader.scan() == ([uid_v(0x03)], True)
    reader.init()  # after a fault: no start-up to wait for, IDLE_IRQ long cleared
    assert reader.scan() == ([uid_v(0x03)], True)


def test_a_request_sent_before_the_tags_power_up_is_not_answered() -> None:
    """The field ramps for RF_RAMP_US and a tag listens TAG_READY_US later: a driver that does
    not let the field settle reads a lone tag as an empty cell."""
    chip = emu5180.Pn5180Chip(Field(uid_v(0x03)))
    hasty = pn5180(chip, settle_us=0)
    hasty.init()
    assert hasty.scan() == ([], True)
    reader = pn5180(emu5180.Pn5180Chip(Field(uid_v(0x03))))
    reader.init()
    assert reader.scan() == ([uid_v(0x03)], True)


def test_tx_rfon_irq_comes_after_the_ramp() -> None:
    chip = emu5180.Pn5180Chip(Field())
    host = Host(chip)
    host.frame(bytes((0x16, 0x01)))
    assert not host.read(0x1D) & (1 << 17)  # still ramping
    chip.clock.sleep_us(emu5180.RF_RAMP_US)
    assert host.read(0x1D) & (1 << 17) and host.read(0x02) & (1 << 9)


def test_an_mfrc522_tag_needs_the_field_a_while_before_it_answers() -> None:
    """Issue 35: a tag powers up in the field; the driver's 5 ms settle covers it, a driver
    that asks at once reads an empty slot."""
    uid = bytes((0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66))
    hasty = mfrc522(emu522.Mfrc522Chip(Field(uid)), settle_us=0)
    hasty.init()
    assert hasty.scan() == ([], True)
    reader = mfrc522(emu522.Mfrc522Chip(Field(uid)))
    reader.init()
    assert reader.scan() == ([uid], True)
