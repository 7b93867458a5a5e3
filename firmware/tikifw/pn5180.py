"""PN5180 driver for ISO/IEC 15693 tags: every tag in a stack, by 16-slot inventory.

Chosen for Manami and TacTiki (firmware/README.md): a totem or a TacTiki stack puts up to five
tags in one reader's field, and ISO 15693 inventory with slot anticollision reads them all,
where an MFRC522 reads one. The host command set (write/read register, SEND_DATA, READ_DATA,
LOAD_RF_CONFIG, RF_ON/OFF) follows the PN5180 data sheet; the register addresses and bits below
must be checked against it at first bring-up (firmware/README.md, "Bring-up").

Each scan: RF on, settle, inventory with 16 slots (the 4 UID bits after the mask choose a tag's
slot), a further masked round for every slot that collided (bounded by ``max_rounds``), RF off.
A scan whose collisions could not all be resolved is reported incomplete, never as a miss.
"""

from tikifw.readers import ReaderError, no_sleep_us

# Host interface commands.
WRITE_REGISTER = 0x00
WRITE_REGISTER_OR_MASK = 0x01
WRITE_REGISTER_AND_MASK = 0x02
READ_REGISTER = 0x04
SEND_DATA = 0x09
READ_DATA = 0x0A
LOAD_RF_CONFIG = 0x11
RF_ON = 0x16
RF_OFF = 0x17

# Registers.
SYSTEM_CONFIG = 0x00
IRQ_ENABLE = 0x01
IRQ_STATUS = 0x02
IRQ_CLEAR = 0x03
TIMER1_RELOAD = 0x0C
TIMER1_CONFIG = 0x0D
RX_STATUS = 0x13
TX_CONFIG = 0x18

# IRQ_STATUS bits.
IRQ_RX = 1 << 0
IRQ_TIMER1 = 1 << 12
IRQ_GENERAL_ERROR = 1 << 17

# RX_STATUS fields.
RX_LEN_MASK = 0x1FF
RX_ERRORS = (1 << 16) | (1 << 17)
RX_COLLISION = 1 << 18

# RF configurations: ISO 15693, ASK 100 %, 26 kbit/s.
RF_TX_15693 = 0x0D
RF_RX_15693 = 0x8D

INVENTORY = 0x01
FLAGS_16_SLOTS = 0x06  # high data rate, inventory
TX_EOF_ONLY_AND = 0xFFFFFB3F
SYSTEM_IDLE_AND = 0xFFFFFFF8
SYSTEM_TRANSCEIVE_OR = 0x00000003
IRQ_ENABLE_CHECK = 0x00000000
# TIMER1: start at the end of transmission, stop at the start of reception, 1 us ticks.
TIMER1_CONFIG_US = 0x00000C01
INVENTORY_ANSWER = 10  # flags, DSFID, 8 UID bytes
MAX_BUSY_POLLS = 2000
MAX_IRQ_POLLS = 200


class Pn5180:
    name = "PN5180"

    def __init__(self, port, sleep_us=no_sleep_us, timeout_us=2000, settle_us=1000,
                 max_rounds=8):
        self.port = port
        self.sleep_us = sleep_us
        # TIMER1 counts microseconds with the prescaler set in TIMER1_CONFIG_US (bring-up check).
        self.timer_reload = max(1, min(0xFFFFF, timeout_us))
        self.tx_config = 0
        self.settle_us = settle_us
        self.max_rounds = max_rounds

    # --- host interface ---------------------------------------------------------------------------
    def _wait_ready(self):
        for _ in range(MAX_BUSY_POLLS):
            if not self.port.busy():
                return
        raise ReaderError("PN5180 does not answer (BUSY stuck)")

    def command(self, frame):
        self._wait_ready()
        self.port.write(frame)
        self._wait_ready()

    def query(self, frame, n):
        self.command(frame)
        data = self.port.read(n)
        self._wait_ready()
        return bytes(data)

    def write_reg(self, reg, value):
        self.command(bytes((WRITE_REGISTER, reg)) + value.to_bytes(4, "little"))

    def or_reg(self, reg, mask):
        self.command(bytes((WRITE_REGISTER_OR_MASK, reg)) + mask.to_bytes(4, "little"))

    def and_reg(self, reg, mask):
        self.command(bytes((WRITE_REGISTER_AND_MASK, reg)) + mask.to_bytes(4, "little"))

    def read_reg(self, reg):
        return int.from_bytes(self.query(bytes((READ_REGISTER, reg)), 4), "little")

    def send(self, data):
        self.command(bytes((SEND_DATA, 0)) + bytes(data))

    # --- the reader interface ---------------------------------------------------------------------
    def init(self):
        self.command(bytes((RF_OFF, 0)))
        self.command(bytes((LOAD_RF_CONFIG, RF_TX_15693, RF_RX_15693)))
        self.write_reg(IRQ_ENABLE, IRQ_ENABLE_CHECK)
        self.write_reg(TIMER1_RELOAD, self.timer_reload)
        self.write_reg(TIMER1_CONFIG, TIMER1_CONFIG_US)
        self.tx_config = self.read_reg(TX_CONFIG)
        self._check()

    def _check(self):
        if self.read_reg(TIMER1_RELOAD) != self.timer_reload:
            raise ReaderError("PN5180 does not answer (register read-back failed)")

    def scan(self):
        self.command(bytes((RF_ON, 0)))
        try:
            self.sleep_us(self.settle_us)
            uids, complete = self._inventory_all()
        finally:
            self.command(bytes((RF_OFF, 0)))
        self._check()
        return uids, complete

    # --- ISO/IEC 15693 inventory ----------------------------------------------------------------
    def _inventory_all(self):
        found = []
        pending = [(0, 0)]  # (mask value, mask length in bits)
        rounds = 0
        complete = True
        while pending:
            if rounds >= self.max_rounds:
                complete = False
                break
            mask, mask_len = pending.pop(0)
            rounds += 1
            for uid, collided_slot in self._inventory(mask, mask_len):
                if uid is not None:
                    if uid not in found:
                        found.append(uid)
                elif mask_len + 4 <= 60:
                    pending.append((mask | (collided_slot << mask_len), mask_len + 4))
                else:
                    complete = False
        found.sort()
        return found, complete

    def _start(self):
        self.and_reg(SYSTEM_CONFIG, SYSTEM_IDLE_AND)
        self.or_reg(SYSTEM_CONFIG, SYSTEM_TRANSCEIVE_OR)
        self.write_reg(IRQ_CLEAR, 0x000FFFFF)

    def _wait_answer(self):
        for _ in range(MAX_IRQ_POLLS):
            irq = self.read_reg(IRQ_STATUS)
            if irq & IRQ_GENERAL_ERROR:
                raise ReaderError("PN5180 reports a general error")
            if irq & IRQ_RX:
                return True
            if irq & IRQ_TIMER1:
                return False
        raise ReaderError("PN5180 does not answer (no interrupt)")

    def _inventory(self, mask, mask_len):
        """One 16-slot round; yields (uid, None) per tag read and (None, slot) per collision."""
        results = []
        self.write_reg(TX_CONFIG, self.tx_config)  # undo the EOF-only setting of the last round
        self._start()
        request = bytes((FLAGS_16_SLOTS, INVENTORY, mask_len))
        request += mask.to_bytes((mask_len + 7) // 8, "little") if mask_len else b""
        self.send(request)
        for slot in range(16):
            if self._wait_answer():
                status = self.read_reg(RX_STATUS)
                n = status & RX_LEN_MASK
                if status & (RX_COLLISION | RX_ERRORS) or n != INVENTORY_ANSWER:
                    results.append((None, slot))
                else:
                    answer = self.query(bytes((READ_DATA, 0)), n)
                    if answer[0] & 0x01:  # error flag in the tag's answer
                        results.append((None, slot))
                    else:
                        results.append((bytes(reversed(answer[2:10])), None))
            if slot < 15:  # next slot: send only an EOF
                self.and_reg(TX_CONFIG, TX_EOF_ONLY_AND)
                self._start()
                self.send(b"")
        return results
