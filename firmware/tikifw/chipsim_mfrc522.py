"""An MFRC522 at the SPI level, with the register semantics of NXP's data sheet.

Why this exists: the first emulator stored any register write and answered every transceive
at once, so a driver whose timer never started, or expired before a tag could answer, still
read tags. This one models the registers the driver relies on from the MFRC522 data sheet
(Rev. 3.9, section 9 register tables and section 10.3 commands), cross-checked against the
register list of miguelbalboa/rfid (src/MFRC522.h) and the commented register file of
hybridgroup/gobot (drivers/common/mfrc522/mfrc522_pcd_register.go, which quotes the data
sheet's tables and reset values); reset values also match a register dump of a real chip posted
on the picbasic.co.uk forum ("Rfid mfrc522" thread). Nothing here imports the driver.

Modelled: SPI address bytes (data sheet 8.1.2.3: bit 7 read, bits 6:1 address), reset values,
read-only and reserved registers, the FIFO, ComIrqReg with its Set1 bit, CommandReg (Idle,
Transceive, SoftReset, NoCmdChange; an unknown command falls back to Idle), BitFramingReg
StartSend and TxLastBits, the timer (TModeReg TAuto/TAutoRestart/TPrescaler_Hi, TPrescalerReg,
TReloadReg, DemodReg TPrescalEven, ControlReg TStartNow/TStopNow) counting in real time, and
ISO/IEC 14443-3 tags with REQA/WUPA, anticollision over three cascade levels, SELECT and HLTA,
answering after the frame delay time of ISO/IEC 14443-3. Not modelled: CRC coprocessor, MIFARE
authentication, analogue settings (stored only).
"""

from tikifw.chipsim_air import SPI_BYTE, AirClock, TimedChip, us_to_cycles
from tikifw.crc import crc_a

# --- registers (data sheet 9.2 register overview; miguelbalboa MFRC522.h; gobot register file) -
COMMAND_REG = 0x01
COM_IEN_REG = 0x02
DIV_IEN_REG = 0x03
COM_IRQ_REG = 0x04
DIV_IRQ_REG = 0x05
ERROR_REG = 0x06
STATUS1_REG = 0x07
STATUS2_REG = 0x08
FIFO_DATA_REG = 0x09
FIFO_LEVEL_REG = 0x0A
WATER_LEVEL_REG = 0x0B
CONTROL_REG = 0x0C
BIT_FRAMING_REG = 0x0D
COLL_REG = 0x0E
MODE_REG = 0x11
TX_MODE_REG = 0x12
RX_MODE_REG = 0x13
TX_CONTROL_REG = 0x14
TX_ASK_REG = 0x15
DEMOD_REG = 0x19
CRC_RESULT_H = 0x21
CRC_RESULT_L = 0x22
T_MODE_REG = 0x2A
T_PRESCALER_REG = 0x2B
T_RELOAD_H = 0x2C
T_RELOAD_L = 0x2D
T_COUNTER_H = 0x2E
T_COUNTER_L = 0x2F
VERSION_REG = 0x37
# "reserved for future use" / "reserved for production tests" (same in all three sources)
RESERVED = (0x00, 0x0F, 0x10, 0x1A, 0x1B, 0x1E, 0x20, 0x23, 0x25, 0x30, 0x3C, 0x3D, 0x3E, 0x3F)
READ_ONLY = (ERROR_REG, STATUS1_REG, CRC_RESULT_H, CRC_RESULT_L, T_COUNTER_H, T_COUNTER_L,
             VERSION_REG, 0x35, 0x3B)  # 0x35 TestBusReg, 0x3B TestADCReg: "shows"
# Reset values (data sheet register tables; gobot *_Reset constants; forum register dump).
RESET_VALUES = {
    COMMAND_REG: 0x20, COM_IEN_REG: 0x80, COM_IRQ_REG: 0x14, STATUS1_REG: 0x21,
    WATER_LEVEL_REG: 0x08, CONTROL_REG: 0x10, COLL_REG: 0xA0, MODE_REG: 0x3F,
    TX_CONTROL_REG: 0x80, 0x16: 0x10, 0x17: 0x84, 0x18: 0x84, DEMOD_REG: 0x4D, 0x1C: 0x62,
    0x1F: 0xEB, CRC_RESULT_H: 0xFF, CRC_RESULT_L: 0xFF, 0x24: 0x26, 0x26: 0x48, 0x27: 0x88,
    0x28: 0x20, 0x29: 0x20,
}

# CommandReg (data sheet 10.3 command overview; miguelbalboa PCD_Command; gobot Command_*)
CMD_MASK = 0x0F
CMD_IDLE = 0x00
CMD_MEM = 0x01
CMD_RANDOM_ID = 0x02
CMD_CALC_CRC = 0x03
CMD_TRANSMIT = 0x04
CMD_NO_CHANGE = 0x07
CMD_RECEIVE = 0x08
CMD_TRANSCEIVE = 0x0C
CMD_MF_AUTHENT = 0x0E
CMD_SOFT_RESET = 0x0F
KNOWN_COMMANDS = (CMD_IDLE, CMD_MEM, CMD_RANDOM_ID, CMD_CALC_CRC, CMD_TRANSMIT, CMD_NO_CHANGE,
                  CMD_RECEIVE, CMD_TRANSCEIVE, CMD_MF_AUTHENT, CMD_SOFT_RESET)

# ComIrqReg bits (gobot ComIrq_*; data sheet ComIrqReg table)
SET1 = 0x80
TX_IRQ = 0x40
RX_IRQ = 0x20
IDLE_IRQ = 0x10
TIMER_IRQ = 0x01
# ErrorReg bits (gobot Error_*)
ERR_COLL = 0x08
ERR_BUFFER_OVFL = 0x10
# FIFOLevelReg bit 7 FlushBuffer; BitFramingReg bit 7 StartSend, bits 2:0 TxLastBits
FLUSH_BUFFER = 0x80
START_SEND = 0x80
TX_LAST_BITS = 0x07
# ControlReg: bit 7 TStopNow, bit 6 TStartNow (write-only), bits 2:0 RxLastBits (read-only)
T_STOP_NOW = 0x80
T_START_NOW = 0x40
# Status1Reg bit 3 TRunning
T_RUNNING = 0x08
# TModeReg (data sheet Table 106): bit 7 TAuto, bit 4 TAutoRestart, bits 3:0 TPrescaler_Hi
T_AUTO = 0x80
T_AUTO_RESTART = 0x10
# DemodReg bit 4 TPrescalEven: f_timer = 13.56 MHz / (2*TPreScaler+2) instead of (2*TPreScaler+1)
T_PRESCAL_EVEN = 0x10
# ModeReg bit 5 TxWaitRF: "transmitter can only be started if an RF field is generated"
TX_WAIT_RF = 0x20
# RxModeReg bit 2 RxMultiple: with it set, TAuto's timer does not stop on reception
RX_MULTIPLE = 0x04
# TxControlReg bits 1:0 Tx2RFEn, Tx1RFEn: the antenna drivers, i.e. the field
TX_RF_EN = 0x03
FIFO_SIZE = 64

# --- ISO/IEC 14443-2/-3 Type A at 106 kbit/s, in carrier cycles -------------------------------
BIT = 128  # one bit, 9.44 us
FDT = 1236  # PCD frame end to PICC answer for REQA/WUPA/ANTICOLLISION/SELECT (last bit 1)
TIMER_STOP_BITS = 5  # TAuto stops the timer "after receiving the 5th bit (1 start, 4 data)"

# --- ISO/IEC 14443-3 commands the tags understand -----------------------------------------------
REQA, WUPA, HLTA, CASCADE_TAG = 0x26, 0x52, 0x50, 0x88
SEL = (0x93, 0x95, 0x97)


# A tag powered by a field that has just come on answers only after this long (issue 35: the
# emulators modelled no tag power-up). ISO/IEC 14443-3 has the reader wait 5 ms of unmodulated
# field before its first request (as remembered, not re-read here); the emulator makes a tag
# deaf for the first TAG_READY_US, so a driver that skips the settle reads an empty slot.
TAG_READY_US = 2500


class Mfrc522Chip(TimedChip):
    """One MFRC522; ``uids()`` returns the ISO 14443-A UIDs (4, 7 or 10 bytes) in its field."""

    def __init__(self, uids, clock=None, version=0x92):
        self.uids = uids
        self.clock = clock if clock is not None else AirClock()
        self.version = version
        self.dead = False  # MISO held low: every read is 0x00
        self.transceives = 0
        self.ignored_writes = []  # (register, value) the chip dropped: reserved or read-only
        self.mode = None
        self.reg = 0
        self.reset()

    def reset(self):
        self.regs = bytearray(64)
        for reg, value in RESET_VALUES.items():
            self.regs[reg] = value
        self.regs[VERSION_REG] = self.version
        self.fifo = bytearray()
        self.events = []
        self.timer_expiry = None
        self.cards = {}
        self.field_since = None  # when the antenna drivers came on

    # --- SPI (data sheet 8.1.2.3: address byte = read bit 7, address bits 6:1, bit 0 zero) -------
    def begin(self):
        self.clock.advance(self.clock.frame_overhead // 2)
        self.mode = None

    def end(self):
        self.clock.advance(self.clock.frame_overhead // 2)
        self._update()
        self.mode = None

    def busy(self):
        return False  # the MFRC522 has no BUSY line

    def exchange(self, tx):
        rx = bytearray(len(tx))
        for k, b in enumerate(tx):
            self.clock.advance(SPI_BYTE)
            self._update()
            if self.dead:
                continue
            if self.mode is None:
                self.mode = "r" if b & 0x80 else "w"
                self.reg = (b >> 1) & 0x3F
            elif self.mode == "r":
                rx[k] = self.read(self.reg)
                self.reg = (b >> 1) & 0x3F
            else:
                self.write(self.reg, b)
        return rx

    # --- registers ------------------------------------------------------------------------------
    def timer_divider(self):
        """Carrier cycles per timer count: 2*TPreScaler+1, or +2 with TPrescalEven."""
        prescaler = ((self.regs[T_MODE_REG] & 0x0F) << 8) | self.regs[T_PRESCALER_REG]
        return 2 * prescaler + (2 if self.regs[DEMOD_REG] & T_PRESCAL_EVEN else 1)

    def timer_period_cycles(self):
        """Start event to TimerIRq: (TReload + 1) counts (data sheet 8.5 timer unit)."""
        reload = (self.regs[T_RELOAD_H] << 8) | self.regs[T_RELOAD_L]
        return (reload + 1) * self.timer_divider()

    def read(self, reg):
        self._update()
        if reg in RESERVED:
            return 0
        if reg == FIFO_DATA_REG:
            if not self.fifo:
                return 0
            value = self.fifo[0]
            self.fifo = self.fifo[1:]
            return value
        if reg == FIFO_LEVEL_REG:
            return len(self.fifo)
        if reg == STATUS1_REG:
            running = T_RUNNING if self.timer_expiry is not None else 0
            return (self.regs[STATUS1_REG] & ~T_RUNNING) | running
        if reg in (T_COUNTER_H, T_COUNTER_L):
            left = 0
            if self.timer_expiry is not None:
                left = (self.timer_expiry - self.now()) // self.timer_divider()
            return (left >> 8) & 0xFF if reg == T_COUNTER_H else left & 0xFF
        return self.regs[reg]

    def write(self, reg, value):
        self._update()
        if reg in RESERVED or reg in READ_ONLY:
            self.ignored_writes.append((reg, value))
            return
        if reg == COMMAND_REG:
            self._command(value)
        elif reg == COM_IRQ_REG:
            if value & SET1:
                self.regs[reg] |= value & 0x7F
            else:
                self.regs[reg] &= ~value & 0x7F
        elif reg == DIV_IRQ_REG:
            if value & SET1:
                self.regs[reg] |= value & 0x14
            else:
                self.regs[reg] &= ~value & 0x14
        elif reg == FIFO_DATA_REG:
            if len(self.fifo) >= FIFO_SIZE:
                self.regs[ERROR_REG] |= ERR_BUFFER_OVFL
            else:
                self.fifo.append(value)
        elif reg == FIFO_LEVEL_REG:
            if value & FLUSH_BUFFER:
                self.fifo = bytearray()
                self.regs[ERROR_REG] &= ~ERR_BUFFER_OVFL & 0xFF
        elif reg == CONTROL_REG:
            if value & T_STOP_NOW:
                self.timer_expiry = None  # stopped by the host: no TimerIRq
            if value & T_START_NOW:
                self._timer_start(self.now())
        elif reg == COLL_REG:
            self.regs[reg] = (value & 0x80) | (self.regs[reg] & 0x7F)
        elif reg == BIT_FRAMING_REG:
            self.regs[reg] = value
            if value & START_SEND and self.regs[COMMAND_REG] & CMD_MASK == CMD_TRANSCEIVE:
                self._transmit(value & TX_LAST_BITS)
        else:
            was_on = self.regs[TX_CONTROL_REG] & TX_RF_EN if reg == TX_CONTROL_REG else 0
            self.regs[reg] = value
            if reg == TX_CONTROL_REG and not value & TX_RF_EN:
                self.cards = {}  # field off: every tag loses power and forgets HALT
                self.field_since = None
            elif reg == TX_CONTROL_REG and not was_on:
                self.field_since = self.now()

    def _command(self, value):
        cmd = value & CMD_MASK
        keep = self.regs[COMMAND_REG] & CMD_MASK
        if cmd == CMD_SOFT_RESET:
            self.reset()
            return
        if cmd == CMD_NO_CHANGE:
            cmd = keep
        elif cmd not in KNOWN_COMMANDS:
            cmd = CMD_IDLE  # "If an unknown command is started ... changes to the idle state"
            self.regs[COM_IRQ_REG] |= IDLE_IRQ  # "... and the IdleIRq bit is set"
        elif cmd not in (CMD_IDLE, CMD_TRANSCEIVE):
            raise NotImplementedError(f"MFRC522 emulator: command 0x{cmd:X} not modelled")
        if cmd == CMD_IDLE:
            self.events = []  # "cancels current command execution"
        self.regs[COMMAND_REG] = (value & 0x30) | cmd

    # --- timer ------------------------------------------------------------------------------------
    def _timer_start(self, at):
        self.timer_expiry = at + self.timer_period_cycles()

    def _timer_expired(self):
        at = self.timer_expiry
        self.regs[COM_IRQ_REG] |= TIMER_IRQ
        self.timer_expiry = None
        if self.regs[T_MODE_REG] & T_AUTO_RESTART:
            self._timer_start(at)

    # --- transmission, the tags' answers --------------------------------------------------------
    def _transmit(self, last_bits):
        if self.regs[MODE_REG] & TX_WAIT_RF and not self.regs[TX_CONTROL_REG] & TX_RF_EN:
            return  # TxWaitRF: no field, no transmission (and so no timer, no interrupt)
        self.transceives += 1
        data = bytes(self.fifo)
        self.fifo = bytearray()
        self.regs[ERROR_REG] = 0
        bits = 2 + (len(data) - 1) * 9 + (last_bits if last_bits else 9) if data else 2
        end = self.now() + bits * BIT
        self.events.append([end, "tx_end", self._answers(data, last_bits)])

    def _event(self, at, kind, payload):
        if kind == "tx_end":
            self.regs[COM_IRQ_REG] |= TX_IRQ
            if self.regs[T_MODE_REG] & T_AUTO:
                self._timer_start(at)
            if payload:
                begin = at + FDT
                self.events.append([begin + TIMER_STOP_BITS * BIT, "rx_started", None])
                self.events.append([begin + (1 + 9 * len(payload[0])) * BIT, "rx_end", payload])
        elif kind == "rx_started":
            if self.regs[T_MODE_REG] & T_AUTO and not self.regs[RX_MODE_REG] & RX_MULTIPLE:
                self.timer_expiry = None
        elif kind == "rx_end":
            answers = payload
            merged = bytearray(answers[0])
            for other in answers[1:]:
                for i in range(min(len(other), len(merged))):
                    if merged[i] != other[i]:
                        self.regs[ERROR_REG] |= ERR_COLL  # bits where the tags differ collide
                    merged[i] |= other[i]
            self.fifo = merged
            self.regs[COM_IRQ_REG] |= RX_IRQ

    @staticmethod
    def levels(uid):
        return {4: 1, 7: 2, 10: 3}[len(uid)]

    @staticmethod
    def cascade(uid, level):
        """The 5 bytes a tag answers to ANTICOLLISION at ``level`` (with BCC)."""
        last = Mfrc522Chip.levels(uid) - 1
        part = uid[3 * level:3 * level + 4] if level == last else (
            bytes((CASCADE_TAG,)) + uid[3 * level:3 * level + 3])
        return bytes(part) + bytes((part[0] ^ part[1] ^ part[2] ^ part[3],))

    def _answers(self, data, last_bits):
        """What the tags in the field answer to ``data`` (and how their states change)."""
        powered = (self.regs[TX_CONTROL_REG] & TX_RF_EN and self.field_since is not None
                   and self.now() - self.field_since >= us_to_cycles(TAG_READY_US))
        in_field = list(self.uids()) if powered else []
        for uid in in_field:
            if uid not in self.cards:
                self.cards[uid] = ["IDLE", 0]
        for uid in list(self.cards):
            if uid not in in_field:
                del self.cards[uid]
        answers = []
        if last_bits == 7 and len(data) == 1 and data[0] in (REQA, WUPA):
            for uid, card in self.cards.items():
                if card[0] == "IDLE" or (data[0] == WUPA and card[0] == "HALT"):
                    card[0], card[1] = "READY", 0
                    answers.append(bytes(({4: 0x04, 7: 0x44, 10: 0x84}[len(uid)], 0)))
        elif last_bits == 0 and len(data) == 2 and data[0] in SEL and data[1] == 0x20:
            level = SEL.index(data[0])
            for uid, card in self.cards.items():
                if card[0] == "READY" and card[1] == level:
                    answers.append(self.cascade(uid, level))
        elif last_bits == 0 and len(data) == 9 and data[0] in SEL and data[1] == 0x70:
            level = SEL.index(data[0])
            if crc_a(data[:7]) == data[7:]:
                for uid, card in self.cards.items():
                    if (card[0] == "READY" and card[1] == level
                            and self.cascade(uid, level) == data[2:7]):
                        if level == self.levels(uid) - 1:
                            card[0] = "ACTIVE"
                            sak = bytes((0x00,))
                        else:
                            card[1] = level + 1
                            sak = bytes((0x04,))
                        answers.append(sak + crc_a(sak))
        elif len(data) == 4 and data[0] == HLTA and crc_a(data[:2]) == data[2:]:
            for card in self.cards.values():
                if card[0] == "ACTIVE":
                    card[0] = "HALT"
        return answers
