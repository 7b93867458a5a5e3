"""MFRC522 (RC522) driver for ISO/IEC 14443-A tags: one tag per reader, read by UID only.

Chosen for Tiki Topple (firmware/README.md): each slot holds exactly one tiki, so the cheap
MFRC522 with its bit-level anticollision is enough. Tuned from docs/hardware-notes.md:

- the receive timeout is ``timeout_us`` (2 ms by default) instead of the usual 25 ms, so an
  empty slot costs about 2 ms, not 25;
- the antenna is on only while this reader scans (``TxControlReg``), after a settle time for
  the tag to power up (ISO/IEC 14443-3 asks for 5 ms of unmodulated field);
- WUPA (not REQA), so a tag that is somehow halted still answers; no HLTA after reading: a
  tag never answers HLTA (ISO/IEC 14443-3), so waiting for it always cost the full timeout
  (2 ms a read), and the field goes off right after the read anyway, which resets the tag;
- every wait is bounded in time (polls with a ``sleep_us`` between them, never a bare count that
  a faster CPU would finish before the chip's own timer runs out): a chip that never raises an
  interrupt is a ``ReaderError``, never a hang;
- a register written at init is read back after each scan, which catches a reader that
  dropped off the bus (MISO held low reads as 0x00).
"""

from tikifw.crc import crc_a
from tikifw.readers import ReaderError, no_sleep_us

# Registers.
COMMAND = 0x01
COM_IRQ = 0x04
ERROR = 0x06
FIFO_DATA = 0x09
FIFO_LEVEL = 0x0A
CONTROL = 0x0C
BIT_FRAMING = 0x0D
MODE = 0x11
TX_CONTROL = 0x14
TX_ASK = 0x15
T_MODE = 0x2A
T_PRESCALER = 0x2B
T_RELOAD_H = 0x2C
T_RELOAD_L = 0x2D
VERSION = 0x37

# Commands.
CMD_IDLE = 0x00
CMD_TRANSCEIVE = 0x0C
CMD_SOFT_RESET = 0x0F

# ComIrqReg bits.
IRQ_RX = 0x20
IRQ_IDLE = 0x10
IRQ_TIMER = 0x01

# ErrorReg bits.
ERR_COLL = 0x08
ERR_GARBLED = 0x17  # BufferOvfl | CRCErr | ParityErr | ProtocolErr

# ISO/IEC 14443-3 commands.
WUPA = 0x52
HLTA = 0x50
SEL_CL = (0x93, 0x95, 0x97)
CASCADE_TAG = 0x88

KNOWN_VERSIONS = (0x88, 0x90, 0x91, 0x92, 0x12, 0xB2)
T_MODE_AUTO = 0x80  # TModeReg TAuto: the timer starts when a transmission ends
T_PRESCALER_40K = 0xA9  # 13.56 MHz / (2 * 169 + 1) = 40 kHz (data sheet Table 106)
TICK_US = 25  # one count at 40 kHz
POLL_US = 50  # sleep between two ComIrqReg polls
ANSWER_US = 3000  # the longest answer read here (5 bytes) lasts < 1 ms; wait this past the timer


class Mfrc522:
    name = "MFRC522"

    def __init__(self, port, sleep_us=no_sleep_us, timeout_us=2000, settle_us=5000):
        self.port = port
        self.sleep_us = sleep_us
        # The timer fires after TReload + 1 counts (data sheet 8.5).
        self.reload = max(1, min(0xFFFF, timeout_us // TICK_US))
        self.settle_us = settle_us
        self.wait_polls = (timeout_us + ANSWER_US) // POLL_US + 1

    # --- register access: address byte (reg << 1), bit 7 set to read ----------------------------
    def write(self, reg, value):
        self.port.xfer(bytes(((reg << 1) & 0x7E, value)))

    def write_fifo(self, data):
        self.port.xfer(bytes(((FIFO_DATA << 1) & 0x7E,)) + bytes(data))

    def read(self, reg):
        return self.port.xfer(bytes((0x80 | ((reg << 1) & 0x7E), 0)))[1]

    def read_fifo(self, n):
        addr = 0x80 | ((FIFO_DATA << 1) & 0x7E)
        return bytes(self.port.xfer(bytes((addr,)) * n + b"\x00")[1:])

    # --- the reader interface -------------------------------------------------------------------
    def ident(self):
        """The version register, as the SPI ramp compares it (board.py)."""
        return bytes((self.read(VERSION),))

    def init(self):
        self.write(COMMAND, CMD_SOFT_RESET)
        self.sleep_us(50000)
        version = self.read(VERSION)
        if version not in KNOWN_VERSIONS:
            raise ReaderError(f"MFRC522 does not answer (version 0x{version:02X})")
        self.write(T_MODE, T_MODE_AUTO)  # TPrescaler_Hi = 0
        self.write(T_PRESCALER, T_PRESCALER_40K)
        self.write(T_RELOAD_H, self.reload >> 8)
        self.write(T_RELOAD_L, self.reload & 0xFF)
        self.write(TX_ASK, 0x40)  # 100 % ASK
        self.write(MODE, 0x3D)
        self.antenna(False)

    def antenna(self, on):
        value = self.read(TX_CONTROL)
        self.write(TX_CONTROL, (value | 0x03) if on else (value & ~0x03 & 0xFF))

    def scan(self):
        self.antenna(True)
        try:
            self.sleep_us(self.settle_us)
            uids, complete = self._read_tag()
        finally:
            self.antenna(False)
        if self.read(T_RELOAD_L) != self.reload & 0xFF:
            raise ReaderError("MFRC522 lost its settings (register read-back failed)")
        return uids, complete

    # --- ISO/IEC 14443-3 -------------------------------------------------------------------------
    def _read_tag(self):
        answer = self.transceive(bytes((WUPA,)), 7)
        if answer is None:
            return [], True
        data, coll = answer
        if coll or len(data) != 2:
            return [], False
        uid = bytearray()
        for level in range(3):
            sel = SEL_CL[level]
            answer = self.transceive(bytes((sel, 0x20)))
            if answer is None:
                return [], False
            part, coll = answer
            if coll or len(part) != 5 or part[0] ^ part[1] ^ part[2] ^ part[3] != part[4]:
                return [], False  # two tags in one field, or a garbled answer
            frame = bytes((sel, 0x70)) + part
            answer = self.transceive(frame + crc_a(frame))
            if answer is None:
                return [], False
            sak, coll = answer
            if coll or len(sak) != 3 or crc_a(sak[:1]) != sak[1:]:
                return [], False
            if part[0] == CASCADE_TAG:
                uid += part[1:4]
            else:
                uid += part[0:4]
            if not sak[0] & 0x04:  # UID complete (no HLTA: see the module's notes)
                return [bytes(uid)], True
        return [], False

    def transceive(self, data, last_bits=0):
        """Send ``data``; None on timeout (no tag), else (answer bytes, collision flag)."""
        self.write(COMMAND, CMD_IDLE)
        self.write(COM_IRQ, 0x7F)
        self.write(FIFO_LEVEL, 0x80)
        self.write_fifo(data)
        self.write(COMMAND, CMD_TRANSCEIVE)
        self.write(BIT_FRAMING, 0x80 | last_bits)
        for _ in range(self.wait_polls):
            irq = self.read(COM_IRQ)
            if irq & (IRQ_RX | IRQ_IDLE):
                break
            if irq & IRQ_TIMER:
                self.write(BIT_FRAMING, last_bits)
                return None
            self.sleep_us(POLL_US)
        else:
            raise ReaderError("MFRC522 does not answer (no interrupt)")
        self.write(BIT_FRAMING, last_bits)
        err = self.read(ERROR)
        if err & ERR_GARBLED:
            return b"", True
        n = self.read(FIFO_LEVEL)
        return self.read_fifo(n), bool(err & ERR_COLL)
