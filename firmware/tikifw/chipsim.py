"""Chip-level emulators for host tests: an MFRC522, a PN5180, a 74HC165 chain, and the bus.

They answer SPI bytes and pin levels the way the data sheets describe, so the real drivers
(mfrc522.py, pn5180.py, shiftin.py) and the real wiring (board.py) run on a PC: under CPython
in tests/test_firmware.py and under MicroPython's unix port in host_selftest.py. They model
what the drivers rely on (registers, FIFO, interrupts, ISO 14443-3 anticollision with cascade
levels and HALT, ISO 15693 16-slot inventory with masks), not RF physics. Faults a test can set:
``dead`` (MISO held low: every read is 0x00) and, for the PN5180, ``busy_stuck``.

Tags come from ``uids()``, a function returning the UIDs (bytes, MSB first) in the field now.
"""

from tikifw import mfrc522 as m
from tikifw import pn5180 as p
from tikifw.crc import crc_a


class Mfrc522Chip:
    def __init__(self, uids):
        self.uids = uids
        self.dead = False
        self.transceives = 0
        self.reset()

    def reset(self):
        self.regs = bytearray(64)
        self.regs[m.VERSION] = 0x92
        self.fifo = bytearray()
        self.irq = 0
        self.err = 0
        self.cards = {}
        self.mode = None
        self.reg = 0

    # --- SPI ------------------------------------------------------------------------------------
    def begin(self):
        self.mode = None

    def end(self):
        self.mode = None

    def busy(self):
        return False

    def exchange(self, tx):
        rx = bytearray(len(tx))
        if self.dead:
            return rx
        for k, b in enumerate(tx):
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
    def read(self, reg):
        if reg == m.FIFO_DATA:
            if not self.fifo:
                return 0
            value = self.fifo[0]
            self.fifo = self.fifo[1:]
            return value
        if reg == m.FIFO_LEVEL:
            return len(self.fifo)
        if reg == m.COM_IRQ:
            return self.irq
        if reg == m.ERROR:
            return self.err
        return self.regs[reg]

    def write(self, reg, value):
        if reg == m.COMMAND and value & 0x0F == m.CMD_SOFT_RESET:
            self.reset()
            return
        if reg == m.COM_IRQ:
            if value & 0x80:
                self.irq |= value & 0x7F
            else:
                self.irq &= ~value & 0x7F
            return
        if reg == m.FIFO_DATA:
            self.fifo.append(value)
            return
        if reg == m.FIFO_LEVEL:
            if value & 0x80:
                self.fifo = bytearray()
            return
        self.regs[reg] = value
        if reg == m.TX_CONTROL and not value & 0x03:
            self.cards = {}  # field off: every tag loses power and forgets HALT
        if (reg == m.BIT_FRAMING and value & 0x80
                and self.regs[m.COMMAND] & 0x0F == m.CMD_TRANSCEIVE):
            self.transceive(value & 0x07)

    # --- ISO/IEC 14443-3 tags -----------------------------------------------------------------
    @staticmethod
    def levels(uid):
        return {4: 1, 7: 2, 10: 3}[len(uid)]

    @staticmethod
    def cascade(uid, level):
        """The 5 bytes a tag answers to ANTICOLLISION at ``level`` (with BCC)."""
        last = Mfrc522Chip.levels(uid) - 1
        part = uid[3 * level:3 * level + 4] if level == last else (
            bytes((m.CASCADE_TAG,)) + uid[3 * level:3 * level + 3])
        return bytes(part) + bytes((part[0] ^ part[1] ^ part[2] ^ part[3],))

    def transceive(self, last_bits):
        self.transceives += 1
        data = bytes(self.fifo)
        self.fifo = bytearray()
        self.err = 0
        in_field = list(self.uids()) if self.regs[m.TX_CONTROL] & 0x03 else []
        for uid in in_field:
            if uid not in self.cards:
                self.cards[uid] = ["IDLE", 0]
        for uid in list(self.cards):
            if uid not in in_field:
                del self.cards[uid]
        answers = []
        if last_bits == 7 and len(data) == 1 and data[0] in (0x26, m.WUPA):
            for uid, card in self.cards.items():
                if card[0] == "IDLE" or (data[0] == m.WUPA and card[0] == "HALT"):
                    card[0], card[1] = "READY", 0
                    answers.append(bytes(({4: 0x04, 7: 0x44, 10: 0x84}[len(uid)], 0)))
        elif len(data) == 2 and data[0] in m.SEL_CL and data[1] == 0x20:
            level = m.SEL_CL.index(data[0])
            for uid, card in self.cards.items():
                if card[0] == "READY" and card[1] == level:
                    answers.append(self.cascade(uid, level))
        elif len(data) == 9 and data[0] in m.SEL_CL and data[1] == 0x70:
            level = m.SEL_CL.index(data[0])
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
        elif len(data) == 4 and data[0] == m.HLTA and crc_a(data[:2]) == data[2:]:
            for card in self.cards.values():
                if card[0] == "ACTIVE":
                    card[0] = "HALT"
        if not answers:
            self.irq |= m.IRQ_TIMER
            return
        self.irq |= m.IRQ_RX | m.IRQ_IDLE
        if all(a == answers[0] for a in answers):
            self.fifo = bytearray(answers[0])
        else:  # bits where the tags differ collide: the reader flags it
            merged = bytearray(answers[0])
            for a in answers[1:]:
                for i in range(min(len(a), len(merged))):
                    merged[i] |= a[i]
            self.fifo = merged
            self.err |= m.ERR_COLL


class Pn5180Chip:
    def __init__(self, uids):
        self.uids = uids
        self.dead = False
        self.busy_stuck = False
        self.regs = {p.TX_CONFIG: 0x00000F78}
        self.irq = 0
        self.rx_status = 0
        self.rx_data = b""
        self.rf_on = False
        self.slots = [[] for _ in range(16)]
        self.slot = 16
        self.pending = None
        self.reading = False
        self.buf = bytearray()
        self.inventories = 0

    # --- SPI: a command frame, or the read frame that follows a query ---------------------------
    def begin(self):
        self.reading = self.pending is not None
        self.buf = bytearray()

    def exchange(self, tx):
        if self.dead:
            return bytearray(len(tx))
        if self.reading:
            out = bytearray(self.pending[:len(tx)])
            self.pending = self.pending[len(tx):]
            return out + bytearray(len(tx) - len(out))
        self.buf += tx
        return bytearray(len(tx))

    def end(self):
        if self.dead:
            return
        if self.reading:
            self.pending = None
            self.reading = False
        elif self.buf:
            self.execute(bytes(self.buf))

    def busy(self):
        return self.busy_stuck

    # --- commands -------------------------------------------------------------------------------
    def _reg(self, reg):
        if reg == p.IRQ_STATUS:
            return self.irq
        if reg == p.RX_STATUS:
            return self.rx_status
        return self.regs.get(reg, 0)

    def execute(self, frame):
        cmd = frame[0]
        if cmd in (p.WRITE_REGISTER, p.WRITE_REGISTER_OR_MASK, p.WRITE_REGISTER_AND_MASK):
            reg = frame[1]
            value = int.from_bytes(frame[2:6], "little")
            if reg == p.IRQ_CLEAR:
                self.irq &= ~value
                return
            old = self.regs.get(reg, 0)
            if cmd == p.WRITE_REGISTER_OR_MASK:
                value |= old
            elif cmd == p.WRITE_REGISTER_AND_MASK:
                value &= old
            self.regs[reg] = value
        elif cmd == p.READ_REGISTER:
            self.pending = self._reg(frame[1]).to_bytes(4, "little")
        elif cmd == p.READ_DATA:
            self.pending = self.rx_data
        elif cmd == p.LOAD_RF_CONFIG:
            self.regs[p.TX_CONFIG] = 0x00000F78
        elif cmd == p.RF_ON:
            self.rf_on = True
        elif cmd == p.RF_OFF:
            self.rf_on = False
            self.slot = 16
        elif cmd == p.SEND_DATA:
            self.send(frame[2:])

    def send(self, data):
        if data:
            self.slot = 16
            if (not self.rf_on or len(data) < 3 or data[1] != p.INVENTORY
                    or data[0] != p.FLAGS_16_SLOTS):
                self.irq |= p.IRQ_TIMER1
                return
            self.inventories += 1
            mask_len = data[2]
            mask = int.from_bytes(data[3:3 + (mask_len + 7) // 8], "little") if mask_len else 0
            self.slots = [[] for _ in range(16)]
            for uid in self.uids():
                value = int.from_bytes(uid, "big")  # the tag sends its UID LSB first
                if value & ((1 << mask_len) - 1) == mask:
                    self.slots[(value >> mask_len) & 0x0F].append(uid)
            self.slot = 0
        elif self.slot < 15:
            self.slot += 1  # an EOF: next slot
        else:
            self.irq |= p.IRQ_TIMER1
            return
        tags = self.slots[self.slot]
        if not tags:
            self.rx_status = 0
            self.irq |= p.IRQ_TIMER1
            return
        self.irq |= p.IRQ_RX
        self.rx_status = p.INVENTORY_ANSWER
        if len(tags) > 1:
            self.rx_status |= p.RX_COLLISION
        self.rx_data = bytes((0, 0)) + bytes(reversed(tags[0]))


class Hc165Chain:
    """A 74HC165 chain: SH/LD low latches ``bits()``, each rising CLK shifts one bit out."""

    def __init__(self, bits):
        self.bits = bits
        self.reg = []

    def latch(self):
        self.reg = list(self.bits())

    def shift(self):
        if self.reg:
            self.reg.pop(0)
            self.reg.append(0)  # the far chip's serial input is tied low

    def q(self):
        return self.reg[0] if self.reg else 0


class SimBus:
    """The Pico's pins and SPI bus as the fake ``machine`` module sees them (hostsim/machine.py).

    Chip-selects come through the decoder (address pins plus active-low enable), BUSY through
    the multiplexer on the same address lines, presence through the 74HC165 pins.
    """

    def __init__(self, pins):
        self.address_pins = pins["reader_select"]["address"]
        self.enable_pin = pins["reader_select"]["enable"]
        self.busy_pin = pins.get("reader_busy")
        shift = pins["shift_in"]
        self.load_pin = shift["load"]
        self.clock_pin = shift["clock"]
        self.data_pin = shift["data"]
        self.levels = {}
        self.chips = {}
        self.chain = None
        self.selected = None
        self.spi_bytes = 0

    def address(self):
        value = 0
        for bit, pin in enumerate(self.address_pins):
            value |= (self.levels.get(pin, 0) & 1) << bit
        return value

    def write_pin(self, pin, value):
        old = self.levels.get(pin, 0)
        self.levels[pin] = value
        if pin == self.enable_pin:
            if value == 0 and self.selected is None:
                self.selected = self.chips.get(self.address())
                if self.selected is not None:
                    self.selected.begin()
            elif value == 1 and self.selected is not None:
                self.selected.end()
                self.selected = None
        elif self.chain is not None:
            if pin == self.load_pin and value == 0:
                self.chain.latch()
            elif pin == self.clock_pin and value == 1 and old == 0:
                self.chain.shift()

    def read_pin(self, pin):
        if pin == self.busy_pin:
            chip = self.chips.get(self.address())
            return 1 if chip is not None and chip.busy() else 0
        if pin == self.data_pin and self.chain is not None:
            return self.chain.q()
        return None

    def spi(self, tx):
        self.spi_bytes += len(tx)
        if self.selected is None:
            return bytearray(len(tx))  # MISO pulled low
        return self.selected.exchange(tx)
