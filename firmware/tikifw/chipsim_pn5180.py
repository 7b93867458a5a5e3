"""A PN5180 at the host-interface level, with the register semantics of NXP's data sheet.

Why this exists: the first emulator accepted any register write and faked the timeout, so a
driver that wrote TIMER1_CONFIG to the wrong address (0x0D, which is TIMER2_RELOAD) passed every
test and would have failed on the first board (issue 19). This one models what the driver
relies on, from the data sheet ("PN5180 High-performance multi-protocol full NFC frontend",
register map and bit tables) cross-checked against two public register headers: NXP's own NFC
Reader Library (phhalHw_Pn5180_Reg.h, v06.01.00, which carries the data sheet's bit
descriptions), the .NET IoT driver (dotnet/iot src/devices/Pn5180/Register.cs) and, for the
subset they use, ATrappmann/PN5180-Library and tueddy/PN5180-Library (PN5180.h). Every
constant below says where it comes from. Nothing here imports the driver: a wrong constant in
the driver must disagree with this file, not be copied into it.

Modelled:

- the host interface: one SPI frame per instruction, a second frame to read a GET answer;
  BUSY high while an instruction is processed, and a frame sent while BUSY is high is lost;
- instruction exceptions (unknown instruction, wrong length, a register that does not exist or
  is read-only): the instruction is dropped and GENERAL_ERROR_IRQ is set, as the data sheet's
  host interface section says ("If the condition is not fulfilled, an exception is raised");
- the register file: addresses, reset values (0 unless noted), read-only registers;
- the transceive state machine (SYSTEM_CONFIG.COMMAND, RF_STATUS.TRANSCEIVE_STATE);
- timer T1: TIMER1_RELOAD, TIMER1_CONFIG start/stop events, prescaler, TIMER1_IRQ on expiry;
- RF_ON/RF_OFF with ISO/IEC 18092 collision avoidance (no field when one is already there);
- ISO/IEC 15693 tags answering 16-slot and 1-slot inventories, at the standard's timings;
- start-up after a hardware reset (``hard_reset``, the RST line): the chip takes ``BOOT_US``
  before it takes instructions and sets IDLE_IRQ; until then its host interface is silent
  (frames are lost, MISO is left to the board's pull-down and reads 0x00, BUSY reads low:
  the data sheet, as read here, does not promise what BUSY shows during start-up, so the
  emulator takes the case that helps a host least). NXP's data sheet gives the start-up as
  about 2.5 ms typical (as read in issue 35's review); Arduino drivers wait "2ms to ramp up"
  and then poll IDLE_IRQ (ATrappmann/PN5180-Library PN5180::reset(), and its forks). A host
  that waits a fixed 2 ms and talks at once finds no chip;
- the RF field's ramp: TX_RFON_IRQ and RF_STATUS.TX_RF_STATUS come ``RF_RAMP_US`` after RF_ON
  (the emulator's figure, not NXP's), and the tags power up only then: a tag takes
  ``TAG_READY_US`` of field before it listens (ISO/IEC 15693-3: a VICC is ready to receive
  within 1 ms of being powered by the field, as remembered here, not re-read), so a request
  sent before that is not answered and the slot reads empty.

- READ_EEPROM of the identification area (die identifier, product, firmware and EEPROM
  versions at the data sheet's addresses), with its address/length exception.

Not modelled: the analogue front end, the EEPROM's configuration area and WRITE_EEPROM, timers
T0/T2 (their registers just store), LPCD.
"""

from tikifw.chipsim_air import (
    FC,
    SPI_BYTE,
    AirClock,
    TimedChip,
    us_to_cycles,
)

# --- host interface instructions (data sheet 11.4.3.3 "Host Interface Command List";
#     ATrappmann PN5180.cpp and NXP phhalHw_Pn5180_Instr.h give the same codes) ---------------
WRITE_REGISTER = 0x00
WRITE_REGISTER_OR_MASK = 0x01
WRITE_REGISTER_AND_MASK = 0x02
READ_REGISTER = 0x04
READ_EEPROM = 0x07  # [0x07, address, length]; the answer is read with the next frame
SEND_DATA = 0x09
READ_DATA = 0x0A
LOAD_RF_CONFIG = 0x11
RF_ON = 0x16
RF_OFF = 0x17
# Instructions that exist on the chip but are not modelled (a test that needs one must add it).
UNMODELLED = (0x03, 0x05, 0x06, 0x08, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x12, 0x13,
              0x14, 0x18, 0x19)

# --- EEPROM identification area (data sheet "EEPROM" address table; ATrappmann PN5180.h and
#     fservida/pyPN5180 definitions list the same addresses). Versions are two bytes, minor
#     first: firmware 4.0 reads back as 00 04. READ_EEPROM takes addresses 0..254 and
#     address + length <= 255, else an exception (data sheet READ_EEPROM conditions).
DIE_IDENTIFIER = 0x00  # 16 bytes
PRODUCT_VERSION = 0x10
FIRMWARE_VERSION = 0x12
EEPROM_VERSION = 0x14
EEPROM_SIZE = 255

# --- registers (NXP phhalHw_Pn5180_Reg.h; dotnet/iot Register.cs; ATrappmann/tueddy PN5180.h) -
SYSTEM_CONFIG = 0x00
IRQ_ENABLE = 0x01
IRQ_STATUS = 0x02  # read-only
IRQ_SET_CLEAR = 0x03  # write-only: a 1 clears that IRQ_STATUS bit (ATrappmann: IRQ_CLEAR)
TRANSCEIVER_CONFIG = 0x04  # ATrappmann/tueddy: TRANSCEIVE_CONTROL
TIMER0_STATUS = 0x08  # read-only
TIMER1_STATUS = 0x09  # read-only
TIMER2_STATUS = 0x0A  # read-only
TIMER0_RELOAD = 0x0B
TIMER1_RELOAD = 0x0C
TIMER2_RELOAD = 0x0D
TIMER0_CONFIG = 0x0E
TIMER1_CONFIG = 0x0F
TIMER2_CONFIG = 0x10
CRC_RX_CONFIG = 0x12
RX_STATUS = 0x13  # read-only
TX_CONFIG = 0x18
CRC_TX_CONFIG = 0x19
RF_STATUS = 0x1D  # read-only
SYSTEM_STATUS = 0x24  # read-only
# NXP's HAL lists exactly these as read-only (phhalHw_Pn5180_Instr.c, RO register table).
READ_ONLY = (IRQ_STATUS, TIMER0_STATUS, TIMER1_STATUS, TIMER2_STATUS, RX_STATUS, RF_STATUS,
             SYSTEM_STATUS)
# NXP's HAL: "Regs from 0x45 to 0x7F are not implemented" and refuses 0x44..0x7F
# (PHHAL_HW_PN5180_INVALID_REG_START_ADDRESS = 0x44); dotnet/iot's map ends at 0x39.
FIRST_MISSING_REGISTER = 0x44

# SYSTEM_CONFIG bits (phhalHw_Pn5180_Reg.h SYSTEM_CONFIG_*)
COMMAND_MASK = 0x07  # bits 2:0
CMD_IDLE = 0  # "IDLE/StopCom Command; stops all ongoing communication"
CMD_TRANSCEIVE = 3  # "Transceive command; initiates a transceive cycle"
CMD_KEEP = 4  # "KeepCommand: does not change the content of the command register"
SOFT_RESET = 1 << 8

# IRQ_STATUS bits (phhalHw_Pn5180_Reg.h IRQ_STATUS_*_MASK; ATrappmann/tueddy PN5180.h *_IRQ_STAT)
RX_IRQ = 1 << 0  # "when an ongoing reception is finished"
TX_IRQ = 1 << 1  # "when an ongoing transmission is finished"
IDLE_IRQ = 1 << 2  # "when the IDLE state is entered"
TX_RFOFF_IRQ = 1 << 8
TX_RFON_IRQ = 1 << 9
TIMER1_IRQ = 1 << 12
GENERAL_ERROR_IRQ = 1 << 17
IRQ_BITS = 0x000FFFFF  # bits 19:0 exist (LPCD_IRQ is bit 19)

# TRANSCEIVER_CONFIG bit 0 INITIATOR: "the CLIF is configured for initiator mode"
INITIATOR = 1 << 0

# TIMERx_STATUS (phhalHw_Pn5180_Reg.h TIMER1_STATUS_*): bit 20 running, bits 19:0 value
T_RUNNING = 1 << 20
T_VALUE_MASK = 0x000FFFFF
# TIMER1_RELOAD bits 19:0 (TIMER1_RELOAD_T1_RELOAD_VALUE_MASK)
RELOAD_MASK = 0x000FFFFF
# TIMER1_CONFIG bits (phhalHw_Pn5180_Reg.h TIMER1_CONFIG_*; NXP's HAL starts its receive timeout
# with START_ON_TX_ENDED | STOP_ON_RX_STARTED | ENABLE, phhalHw_Pn5180_Int.c)
T1_ENABLE = 1 << 0
T1_RELOAD_ENABLE = 1 << 1  # 0: stop at zero on expiry; 1: reload and go on
T1_MODE_SEL = 1 << 2  # 0: counts at 13.56 MHz; 1: at the prescaler's rate
T1_PRESCALE_SHIFT = 3  # bits 5:3: 000b 6.78 MHz, 001b 3.39 MHz ... 111b 53 kHz
T1_START_NOW = 1 << 6
T1_START_ON_RF_OFF_INT = 1 << 7
T1_START_ON_RF_ON_INT = 1 << 8
T1_START_ON_RF_OFF_EXT = 1 << 9
T1_START_ON_RF_ON_EXT = 1 << 10  # "started when the external RF field is detected"
T1_START_ON_TX_ENDED = 1 << 11
T1_START_ON_TX_STARTED = 1 << 12
T1_START_ON_RX_ENDED = 1 << 13
T1_START_ON_RX_STARTED = 1 << 14
T1_STOP_ON_RF_OFF_INT = 1 << 15
T1_STOP_ON_RF_ON_INT = 1 << 16
T1_STOP_ON_RF_OFF_EXT = 1 << 17
T1_STOP_ON_RF_ON_EXT = 1 << 18
T1_STOP_ON_TX_STARTED = 1 << 19
T1_STOP_ON_RX_STARTED = 1 << 20  # "stopped when a data reception begins (1st bit received)"
T1_CONFIG_MASK = 0x001FFFFF

# RX_STATUS (phhalHw_Pn5180_Reg.h RX_STATUS_*): bytes received 8:0, collision bit 18
RX_NUM_BYTES_MASK = 0x1FF
RX_COLLISION_DETECTED = 1 << 18

# RF_STATUS (phhalHw_Pn5180_Reg.h RF_STATUS_*; states as in ATrappmann's PN5180TransceiveStat)
TRANSCEIVE_STATE_SHIFT = 24
ST_IDLE, ST_WAIT_TRANSMIT, ST_TRANSMITTING, ST_WAIT_RECEIVE, ST_WAIT_FOR_DATA, ST_RECEIVING = (
    0, 1, 2, 3, 4, 5)
TX_RF_STATUS = 1 << 17  # "drivers are turned on; an RF field is created by the device itself"
RF_DET_STATUS = 1 << 16  # "an external RF field is detected"

# TX_CONFIG bits (phhalHw_Pn5180_Reg.h TX_CONFIG_*)
TX_DATA_ENABLE = 1 << 10  # "transmission of data is enabled otherwise only symbols"
TX_STOP_SYMBOL_SHIFT = 8  # bits 9:8, 00b: no stop symbol
TX_START_SYMBOL_SHIFT = 6  # bits 7:6, 00b: no start symbol
# After LOAD_RF_CONFIG(0x0D, 0x8D) the chip sends SOF, data and EOF. Which symbol numbers the
# EEPROM configuration picks is not public; this value sets data, a start and a stop symbol.
TX_CONFIG_15693 = TX_DATA_ENABLE | (3 << TX_STOP_SYMBOL_SHIFT) | (1 << TX_START_SYMBOL_SHIFT)
CRC_ENABLE = 1 << 0  # CRC_TX_CONFIG / CRC_RX_CONFIG bit 0

# LOAD_RF_CONFIG: 0x0D / 0x8D = ISO 15693 ASK100 26 kbit/s (data sheet table quoted in
# ATrappmann PN5180.cpp); tx 0x00..0x1C, rx 0x80..0x9C, 0xFF = unchanged, else an exception.
RF_TX_15693, RF_RX_15693 = 0x0D, 0x8D
RF_ON_NO_COLLISION_AVOIDANCE = 0x01  # RF_ON parameter bit 0 (dotnet/iot RadioFrequencyCollision,
# "disable collision avoidance according to ISO/IEC 18092"; NXP NCx3321 HAL: "Bit 0: 1 Disable
# collision avoidance")

# --- ISO/IEC 15693 air timings, in carrier cycles (ISO/IEC 15693-2 and -3) -------------------
VCD_SOF = 1024  # 1-out-of-4 start of frame, 75.52 us
VCD_BYTE = 4096  # four 1-out-of-4 symbols of 75.52 us
VCD_EOF = 512  # 37.76 us
T1 = 4352  # VICC response delay t1, 320.9 us (ISO/IEC 15693-3; NXP's HAL adds 321 us
# digital delay at this rate, phhalHw_Pn5180_Int.c gkphhalHw_Pn5180_DigiDelays_Us)
VICC_SOF = 2048  # 56.64 + 56.64 + 37.76 us, high data rate, one subcarrier
VICC_BIT = 512  # 37.76 us
VICC_EOF = 2048
INVENTORY = 0x01
FLAG_INVENTORY = 0x04
FLAG_ONE_SLOT = 0x20
INVENTORY_ANSWER_BYTES = 10  # flags, DSFID, UID (the CRC is checked and dropped)

BUSY_CYCLES = us_to_cycles(5)  # BUSY after each frame: the emulator's figure, not NXP's
BOOT_US = 2500  # start-up after RST rises: the data sheet's typical figure (issue 35's review)
RF_RAMP_US = 50  # RF_ON to a full field: the emulator's figure, not NXP's
TAG_READY_US = 1000  # field on to an ISO 15693 tag that listens (ISO/IEC 15693-3, from memory)


class Pn5180Chip(TimedChip):
    """One PN5180; ``uids()`` returns the ISO 15693 UIDs (MSB first) in its field now."""

    def __init__(self, uids, clock=None, firmware=(4, 0), product=(4, 0)):
        self.uids = uids
        # The EEPROM's identification area; the rest reads as erased (0xFF) here.
        eeprom = bytearray(b"\xff" * EEPROM_SIZE)
        eeprom[DIE_IDENTIFIER:DIE_IDENTIFIER + 16] = bytes(range(0x10, 0x20))
        for address, (major, minor) in ((PRODUCT_VERSION, product),
                                         (FIRMWARE_VERSION, firmware),
                                         (EEPROM_VERSION, (0x99, 0x00))):
            eeprom[address:address + 2] = bytes((minor, major))
        self.eeprom = eeprom
        self.clock = clock if clock is not None else AirClock()
        self.dead = False  # MISO held low, instructions lost
        self.busy_stuck = False
        self.external_field = False  # another field (a neighbour's antenna, a phone) is on
        self.inventories = 0
        self.exceptions = []  # why each GENERAL_ERROR_IRQ was raised, for tests
        self.booted_at = 0  # carrier cycle at which start-up ends (hard_reset sets it)
        self.field_at = None  # carrier cycle at which the field is full (after the ramp)
        self.reset()

    def hard_reset(self):
        """The RST line pulsed: registers to reset values, and the chip silent for BOOT_US."""
        self.reset()
        self.irq = 0  # IDLE_IRQ is set when start-up ends, not before
        self.booted_at = self.now() + us_to_cycles(BOOT_US)

    def booting(self):
        if self.booted_at and self.now() >= self.booted_at:
            self.booted_at = 0
            self.irq |= IDLE_IRQ
        return bool(self.booted_at)

    def reset(self):
        self.regs = {}
        self.irq = IDLE_IRQ  # the chip enters IDLE after start-up (ATrappmann reset() waits on it)
        self.state = ST_IDLE
        self.rf_on = False
        self.rf_config = None
        self.rx_status = 0
        self.rx_data = b""
        self.events = []  # [time, kind, payload], processed in time order by _update
        self.timer_expiry = None  # timer T1's (T0 and T2 are not modelled)
        self.slots = None
        self.slot = 0
        self.pending = None
        self.frame = None
        self.reading = False
        self.busy_until = 0
        self.field_at = None
        self.silent = False

    # --- SPI ----------------------------------------------------------------------------------
    def begin(self):
        self.clock.advance(self.clock.frame_overhead // 2)
        self._update()
        if self.dead or self.booting():
            self.frame = None
            self.silent = True
            return
        self.silent = False
        # A frame that starts while BUSY is high is not taken (data sheet: BUSY "cannot receive
        # any data from a host").
        self.frame = bytearray() if self.now() >= self.busy_until else None
        self.reading = self.frame is not None and self.pending is not None

    def exchange(self, tx):
        self.clock.advance(SPI_BYTE * len(tx))
        if self.dead or self.silent:
            return bytearray(len(tx))  # nobody drives MISO: the pull-down reads 0x00
        if self.frame is None:
            return bytearray(b"\xff" * len(tx))
        if self.reading:
            out = bytearray(self.pending[:len(tx)])
            self.pending = self.pending[len(tx):]
            return out + bytearray(len(tx) - len(out))
        self.frame += tx
        return bytearray(b"\xff" * len(tx))

    def end(self):
        self.clock.advance(self.clock.frame_overhead // 2)
        self._update()
        if self.dead or self.frame is None:
            return
        frame, self.frame = bytes(self.frame), None
        if self.reading:
            self.pending = None
        elif frame:
            self.pending = None
            self._instruction(frame)
        self.busy_until = self.now() + BUSY_CYCLES

    def busy(self):
        self.clock.advance(self.clock.pin_read)
        self._update()
        if self.booting():
            return False  # not driven yet: the multiplexer's pull-down
        return self.busy_stuck or self.now() < self.busy_until

    # --- instructions ---------------------------------------------------------------------------
    def _exception(self, why):
        self.exceptions.append(why)
        self.irq |= GENERAL_ERROR_IRQ

    def _instruction(self, frame):
        cmd = frame[0]
        if cmd in (WRITE_REGISTER, WRITE_REGISTER_OR_MASK, WRITE_REGISTER_AND_MASK):
            if len(frame) != 6:
                self._exception("register write needs 6 bytes")
                return
            self._write(cmd, frame[1], int.from_bytes(frame[2:6], "little"))
        elif cmd == READ_REGISTER:
            if len(frame) != 2:
                self._exception("READ_REGISTER needs 2 bytes")
                return
            value = self._read(frame[1])
            if value is not None:
                self.pending = value.to_bytes(4, "little")
        elif cmd == READ_EEPROM:
            if len(frame) != 3:
                self._exception("READ_EEPROM needs 3 bytes")
                return
            address, length = frame[1], frame[2]
            if address > EEPROM_SIZE - 1 or length == 0 or address + length > EEPROM_SIZE:
                self._exception(f"READ_EEPROM of {length} bytes at 0x{address:02X}")
                return
            self.pending = bytes(self.eeprom[address:address + length])
        elif cmd == READ_DATA:
            self.pending = self.rx_data
        elif cmd == SEND_DATA:
            self._send(frame[2:] if len(frame) > 1 else b"")
        elif cmd == LOAD_RF_CONFIG:
            self._load_rf_config(frame)
        elif cmd == RF_ON:
            self._rf_on(frame[1] if len(frame) > 1 else 0)
        elif cmd == RF_OFF:
            self._rf_off()
        elif cmd in UNMODELLED:
            raise NotImplementedError(f"PN5180 emulator: instruction 0x{cmd:02X} not modelled")
        else:
            self._exception(f"unknown instruction 0x{cmd:02X}")

    def _read(self, reg):
        if reg >= FIRST_MISSING_REGISTER:
            self._exception(f"read of register 0x{reg:02X}, which does not exist")
            return None
        if reg == IRQ_STATUS:
            return self.irq
        if reg == IRQ_SET_CLEAR:
            return 0
        if reg == RX_STATUS:
            return self.rx_status
        if reg == TIMER1_STATUS:
            if self.timer_expiry is None:
                return 0
            left = (self.timer_expiry - self.now()) // self._t1_tick()
            return T_RUNNING | (min(left, T_VALUE_MASK) & T_VALUE_MASK)
        if reg == RF_STATUS:
            value = self.state << TRANSCEIVE_STATE_SHIFT
            if self.rf_on:
                value |= TX_RF_STATUS
            if self.external_field:
                value |= RF_DET_STATUS
            return value
        if reg in READ_ONLY:
            return 0
        return self.regs.get(reg, 0)

    def _write(self, cmd, reg, value):
        if reg >= FIRST_MISSING_REGISTER:
            self._exception(f"write to register 0x{reg:02X}, which does not exist")
            return
        if reg in READ_ONLY:
            self._exception(f"write to read-only register 0x{reg:02X}")
            return
        if reg == IRQ_SET_CLEAR:
            if cmd == WRITE_REGISTER:
                self.irq &= ~value & IRQ_BITS
            return
        old = self.regs.get(reg, 0)
        if cmd == WRITE_REGISTER_OR_MASK:
            value |= old
        elif cmd == WRITE_REGISTER_AND_MASK:
            value &= old
        value &= 0xFFFFFFFF
        if reg == TIMER1_RELOAD:
            value &= RELOAD_MASK
        elif reg == TIMER1_CONFIG:
            value &= T1_CONFIG_MASK
        elif reg == SYSTEM_CONFIG:
            if value & SOFT_RESET:
                self.reset()
                return
            self._command(old & COMMAND_MASK, value & COMMAND_MASK)
            if value & COMMAND_MASK == CMD_KEEP:
                value = (value & ~COMMAND_MASK) | (old & COMMAND_MASK)
        self.regs[reg] = value
        if reg == TIMER1_CONFIG and (
                value & T1_START_NOW or (value & T1_START_ON_RF_ON_EXT and self.external_field)):
            self._t1_start()

    def _command(self, old, new):
        if new in (old, CMD_KEEP):
            return
        if new == CMD_IDLE:
            self.events = []  # "stops all ongoing communication"
            self.state = ST_IDLE
            self.irq |= IDLE_IRQ
        elif new == CMD_TRANSCEIVE:
            if self.regs.get(TRANSCEIVER_CONFIG, 0) & INITIATOR:
                self.state = ST_WAIT_TRANSMIT
            else:
                self.state = ST_WAIT_RECEIVE  # target mode: listen first (not used by readers)
        else:
            self.state = ST_IDLE  # Transmit, Receive, LoopBack: not modelled, nothing happens

    def _load_rf_config(self, frame):
        if len(frame) != 3:
            self._exception("LOAD_RF_CONFIG needs 3 bytes")
            return
        tx, rx = frame[1], frame[2]
        if not (tx <= 0x1C or tx == 0xFF) or not (0x80 <= rx <= 0x9C or rx == 0xFF):
            self._exception("LOAD_RF_CONFIG out of range")
            return
        self.rf_config = (tx, rx)
        self.regs[TRANSCEIVER_CONFIG] = self.regs.get(TRANSCEIVER_CONFIG, 0) | INITIATOR
        if (tx, rx) == (RF_TX_15693, RF_RX_15693):
            self.regs[TX_CONFIG] = TX_CONFIG_15693
            self.regs[CRC_TX_CONFIG] = CRC_ENABLE
            self.regs[CRC_RX_CONFIG] = CRC_ENABLE

    def _rf_on(self, param):
        if self.external_field and not param & RF_ON_NO_COLLISION_AVOIDANCE:
            return  # ISO/IEC 18092 initial collision avoidance: another field is on, stay off
        if not self.rf_on and not self.field_at:
            at = self.now() + us_to_cycles(RF_RAMP_US)
            self.field_at = at
            self.events.append([at, "rf_on", None])

    def _rf_off(self):
        self.field_at = None
        self.events = [ev for ev in self.events if ev[1] != "rf_on"]
        if self.rf_on:
            self.rf_on = False
            self.irq |= TX_RFOFF_IRQ
            self._t1_event(T1_START_ON_RF_OFF_INT, T1_STOP_ON_RF_OFF_INT)
        self.slots = None  # the tags lose power and forget the inventory

    # --- timer T1 --------------------------------------------------------------------------------
    def _t1_tick(self):
        """Carrier cycles per T1 count: 1 at 13.56 MHz, else 6.78 MHz / 2^PRESCALE_SEL."""
        config = self.regs.get(TIMER1_CONFIG, 0)
        if not config & T1_MODE_SEL:
            return 1
        return 2 << ((config >> T1_PRESCALE_SHIFT) & 0x07)

    def t1_period_cycles(self):
        """How long T1 runs from a start event to its expiry, in carrier cycles."""
        return self.regs.get(TIMER1_RELOAD, 0) * self._t1_tick()

    def _t1_start(self, at=None):
        if self.regs.get(TIMER1_CONFIG, 0) & T1_ENABLE:
            self.timer_expiry = (self.now() if at is None else at) + self.t1_period_cycles()

    def _t1_event(self, start_bit, stop_bit, at=None):
        config = self.regs.get(TIMER1_CONFIG, 0)
        if config & stop_bit:
            self.timer_expiry = None
        if config & start_bit:
            self._t1_start(at)

    def _timer_expired(self):  # timer T1, the one modelled
        at = self.timer_expiry
        self.irq |= TIMER1_IRQ
        if self.regs.get(TIMER1_CONFIG, 0) & T1_RELOAD_ENABLE and self.t1_period_cycles():
            self.timer_expiry = at + self.t1_period_cycles()
        else:
            self.timer_expiry = None

    # --- transmission and the tags' answers ---------------------------------------------------
    def _send(self, data):
        if self.regs.get(SYSTEM_CONFIG, 0) & COMMAND_MASK != CMD_TRANSCEIVE or (
                self.state != ST_WAIT_TRANSMIT):
            self._exception("SEND_DATA outside the WaitTransmit state of a Transceive command")
            return
        config = self.regs.get(TX_CONFIG, 0)
        with_data = bool(config & TX_DATA_ENABLE)
        sof = (config >> TX_START_SYMBOL_SHIFT) & 0x03
        eof = (config >> TX_STOP_SYMBOL_SHIFT) & 0x03
        if with_data and not data:
            self._exception("TX_DATA_ENABLE set but no data to send (NO_DATA_ERROR)")
            return
        crc = bool(self.regs.get(CRC_TX_CONFIG, 0) & CRC_ENABLE)
        length = (VCD_SOF if sof else 0) + (VCD_EOF if eof else 0)
        if with_data:
            length += VCD_BYTE * (len(data) + (2 if crc else 0))
        start = self.now()
        end = start + length
        self.state = ST_TRANSMITTING
        self._t1_event(T1_START_ON_TX_STARTED, T1_STOP_ON_TX_STARTED, start)
        if with_data and sof and eof and crc:
            answer = self._request(bytes(data))
        elif not with_data and not sof and eof and not data:
            answer = self._next_slot()
        else:
            answer = None  # a frame no ISO 15693 tag would take
        self.events.append([end, "tx_end", answer])

    def _tags_listening(self):
        """Tags are powered and ready: the field has been full for TAG_READY_US."""
        return (self.rf_on and self.rf_config == (RF_TX_15693, RF_RX_15693)
                and self.now() >= self.field_at + us_to_cycles(TAG_READY_US))

    def _request(self, data):
        self.slots = None
        if not self._tags_listening() or len(data) < 3 or data[1] != INVENTORY or not (
                data[0] & FLAG_INVENTORY):
            return None
        self.inventories += 1
        mask_len = data[2]
        mask = int.from_bytes(data[3:3 + (mask_len + 7) // 8], "little") if mask_len else 0
        matching = []
        for uid in self.uids():
            value = int.from_bytes(uid, "big")  # a tag sends its UID LSB first
            if value & ((1 << mask_len) - 1) == mask:
                matching.append((uid, (value >> mask_len) & 0x0F))
        if data[0] & FLAG_ONE_SLOT:
            return [uid for uid, _ in matching]
        self.slots = [[uid for uid, s in matching if s == slot] for slot in range(16)]
        self.slot = 0
        return self.slots[0]

    def _next_slot(self):
        if self.slots is None or self.slot >= 15 or not self._tags_listening():
            return None
        self.slot += 1
        return self.slots[self.slot]

    def _event(self, at, kind, payload):
        if kind == "rf_on":
            self.rf_on = True
            self.irq |= TX_RFON_IRQ
            self._t1_event(T1_START_ON_RF_ON_INT, T1_STOP_ON_RF_ON_INT, at)
        elif kind == "tx_end":
            self.irq |= TX_IRQ
            self.state = ST_WAIT_RECEIVE
            self._t1_event(T1_START_ON_TX_ENDED, 0, at)
            if payload:
                bits = 8 * (INVENTORY_ANSWER_BYTES + 2)  # with the CRC
                rx_start = at + T1 + VICC_SOF + VICC_BIT  # the first data bit is in
                rx_end = at + T1 + VICC_SOF + bits * VICC_BIT + VICC_EOF
                self.events.append([rx_start, "rx_start", None])
                self.events.append([rx_end, "rx_end", payload])
        elif kind == "rx_start":
            self.state = ST_RECEIVING
            self._t1_event(T1_START_ON_RX_STARTED, T1_STOP_ON_RX_STARTED, at)
        elif kind == "rx_end":
            tags = payload
            self.rx_status = INVENTORY_ANSWER_BYTES
            if len(tags) > 1:
                self.rx_status |= RX_COLLISION_DETECTED
            self.rx_data = bytes((0, 0)) + bytes(reversed(tags[0]))
            self.irq |= RX_IRQ
            self.state = ST_WAIT_TRANSMIT  # a Transceive command loops until IDLE
            self._t1_event(T1_START_ON_RX_ENDED, 0, at)


def t1_timeout_us(chip):
    """T1's programmed period in microseconds (for tests and the bring-up notes)."""
    return chip.t1_period_cycles() * 1000000 // FC
