"""PN5180 driver for ISO/IEC 15693 tags: every tag in a stack, by 1-slot then 16-slot inventory.

Chosen for Manami and TacTiki (firmware/README.md): a totem or a TacTiki stack puts up to five
tags in one reader's field, and ISO 15693 inventory with slot anticollision reads them all,
where an MFRC522 reads one. Instructions, register addresses and bits follow NXP's PN5180 data
sheet, checked against NXP's reader library and two Arduino libraries (firmware/README.md,
"Checked against the data sheets"); tikifw/chipsim_pn5180.py models the same data sheet
independently, so a wrong address or value here fails tests/test_chip_emulators.py.

Each scan: RF on (collision avoidance off, and the field checked to be on), settle, a 1-slot
inventory (every tag answers at once: none is one timeout, one tag is one answer, two or more
collide), and only on a collision the 16-slot inventory (the 4 UID bits after the mask choose
a tag's slot) with a further masked round for every slot that collided (bounded by
``max_rounds``), RF off. Most cells hold no tag or one, so the 1-slot round alone costs about
1 ms plus the SPI traffic of one slot where a 16-slot round costs 16 timeouts and 16 slots'
traffic (issue 35). A reader whose last scan found two or more tags (a stack, which rarely
shrinks to one between two scans) starts with the 16-slot round: there the 1-slot round
would only collide. A scan whose collisions could not all be resolved is reported
incomplete, never as a miss.

The receive timeout is timer T1: it starts when the request (or a slot's EOF) has been sent and
stops when the tag's answer begins, so it only has to cover the tag's response delay (ISO/IEC
15693-3 t1 = 4352/fc = 320.9 us, plus the SOF and the chip's receive delay); an empty slot
costs the timeout, a full one the answer. Every wait is bounded in time (polls with a sleep
between them), never only by a count, so a faster CPU cannot make a driver give up early.
"""

from tikifw.readers import ReaderError, no_sleep_us

# Host interface commands.
WRITE_REGISTER = 0x00
WRITE_REGISTER_OR_MASK = 0x01
WRITE_REGISTER_AND_MASK = 0x02
READ_REGISTER = 0x04
READ_EEPROM = 0x07
SEND_DATA = 0x09
READ_DATA = 0x0A
LOAD_RF_CONFIG = 0x11
RF_ON = 0x16
RF_OFF = 0x17

# EEPROM identification area: two bytes each, minor version first.
PRODUCT_VERSION = 0x10
FIRMWARE_VERSION = 0x12
# What a version reads as when no chip answers: MISO floating high, or held low.
NO_CHIP_VERSIONS = ((0xFF, 0xFF), (0x00, 0x00))

# Registers.
SYSTEM_CONFIG = 0x00
IRQ_ENABLE = 0x01
IRQ_STATUS = 0x02
IRQ_CLEAR = 0x03  # the data sheet's IRQ_SET_CLEAR: a 1 clears that IRQ_STATUS bit
TIMER1_RELOAD = 0x0C
TIMER1_CONFIG = 0x0F  # not 0x0D: that is TIMER2_RELOAD (issue 19)
RX_STATUS = 0x13
TX_CONFIG = 0x18
RF_STATUS = 0x1D

# IRQ_STATUS bits.
IRQ_RX = 1 << 0
IRQ_IDLE = 1 << 2  # set when the chip enters IDLE, which it does when start-up ends
IRQ_TX_RFON = 1 << 9
IRQ_TIMER1 = 1 << 12
IRQ_GENERAL_ERROR = 1 << 17
IRQ_ALL = 0x000FFFFF

# RF_STATUS bit 17 TX_RF_STATUS: the chip's own field is on.
RF_STATUS_TX_RF = 1 << 17
# RF_ON parameter bit 0: ISO/IEC 18092 collision avoidance off. With it on, the chip does not
# switch its field on while it senses another one (a neighbouring reader still ramping down).
RF_ON_NO_COLLISION_AVOIDANCE = 0x01

# TIMER1_CONFIG: enabled, prescaler on (MODE_SEL) at 6.78 MHz / 2^3 = 847.5 kHz, started when a
# transmission ends, stopped when a reception starts (the pair NXP's own HAL uses).
T1_ENABLE = 1 << 0
T1_MODE_SEL = 1 << 2
T1_PRESCALE_847K = 3 << 3
T1_START_ON_TX_ENDED = 1 << 11
T1_STOP_ON_RX_STARTED = 1 << 20
TIMER1_CONFIG_VALUE = (T1_ENABLE | T1_MODE_SEL | T1_PRESCALE_847K | T1_START_ON_TX_ENDED
                       | T1_STOP_ON_RX_STARTED)
TIMER1_TICK_CYCLES = 16  # 13.56 MHz carrier cycles per T1 count at 847.5 kHz (1.18 us)
FC_HZ = 13560000

# RX_STATUS fields.
RX_LEN_MASK = 0x1FF
RX_ERRORS = (1 << 16) | (1 << 17)
RX_COLLISION = 1 << 18

# RF configurations: ISO 15693, ASK 100 %, 26 kbit/s.
RF_TX_15693 = 0x0D
RF_RX_15693 = 0x8D

INVENTORY = 0x01
FLAGS_16_SLOTS = 0x06  # high data rate, inventory
FLAGS_1_SLOT = 0x26  # high data rate, inventory, Nb_slots (ISO/IEC 15693-3 request flag 6)
TX_EOF_ONLY_AND = 0xFFFFFB3F
SYSTEM_IDLE_AND = 0xFFFFFFF8
SYSTEM_TRANSCEIVE_OR = 0x00000003
IRQ_ENABLE_CHECK = 0x00000000
INVENTORY_ANSWER = 10  # flags, DSFID, 8 UID bytes
BUSY_SPIN = 50  # BUSY polls without a pause: most instructions take microseconds
BUSY_WAIT_US = 50000  # then poll every POLL_US, up to this long (an EEPROM load may take ms)
POLL_US = 100  # sleep between two IRQ_STATUS polls
ANSWER_US = 6000  # an inventory answer lasts ~4 ms at 26.48 kbit/s; wait this long past the timeout
RF_ON_US = 2000  # how long the field may take to come on
# Start-up after RST: about 2.5 ms typical (data sheet, as issue 35 read it; the firmware used
# to wait a fixed 2 ms). The first init() polls IDLE_IRQ for up to this long.
BOOT_WAIT_US = 20000


def timer1_reload(timeout_us):
    """TIMER1_RELOAD for ``timeout_us``, in counts of TIMER1_TICK_CYCLES, rounded up."""
    unit = TIMER1_TICK_CYCLES * 1000000
    return max(1, min(0xFFFFF, (timeout_us * FC_HZ + unit - 1) // unit))


class Pn5180:
    name = "PN5180"

    def __init__(self, port, sleep_us=no_sleep_us, timeout_us=1000, settle_us=1000,
                 max_rounds=8):
        self.port = port
        self.sleep_us = sleep_us
        # 1 ms covers t1 (321 us) + the SOF (151 us) + NXP's receive delay at this rate (321 us).
        self.timeout_us = timeout_us
        self.timer_reload = timer1_reload(timeout_us)
        self.timer_config = TIMER1_CONFIG_VALUE
        self.tx_config = 0
        self.settle_us = settle_us
        self.max_rounds = max_rounds
        self.firmware = None  # (major, minor) from the EEPROM, after init()
        self.last_count = 0  # tags the last scan found: a stack starts with 16 slots
        self.booted = False  # the first init() waits for the chip's start-up

    # --- host interface ---------------------------------------------------------------------------
    def _wait_ready(self):
        for i in range(BUSY_SPIN + BUSY_WAIT_US // POLL_US):
            if not self.port.busy():
                return
            if i >= BUSY_SPIN:
                self.sleep_us(POLL_US)
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

    def version(self, address):
        """A version from the EEPROM's identification area as (major, minor)."""
        minor, major = self.query(bytes((READ_EEPROM, address, 2)), 2)
        return major, minor

    def send(self, data):
        self.command(bytes((SEND_DATA, 0)) + bytes(data))

    # --- the reader interface ---------------------------------------------------------------------
    def _wait_boot(self):
        """Poll IRQ_STATUS until IDLE_IRQ says start-up is over (bounded by BOOT_WAIT_US).

        A chip still starting does not drive MISO, which the board's pull-down reads as 0, so
        no status bit shows before the chip is up. A chip that never shows IDLE_IRQ is left
        to the version check below, which names what it reads.
        """
        for _ in range(BOOT_WAIT_US // POLL_US + 1):
            if self.read_reg(IRQ_STATUS) & IRQ_IDLE:
                self.write_reg(IRQ_CLEAR, IRQ_ALL)
                self.booted = True
                return
            self.sleep_us(POLL_US)

    def ident(self):
        """Product and firmware versions as 4 bytes: what the SPI ramp compares (board.py)."""
        if not self.booted and BOOT_WAIT_US:
            self._wait_boot()
        return bytes(self.version(PRODUCT_VERSION) + self.version(FIRMWARE_VERSION))

    def init(self):
        if not self.booted and BOOT_WAIT_US:
            self._wait_boot()
        # The bring-up check (hardware/BRINGUP.md): a chip that answers has a product version;
        # 0xFFFF or 0x0000 is a floating or stuck MISO, or no chip at all.
        product = self.version(PRODUCT_VERSION)
        if product in NO_CHIP_VERSIONS:
            raise ReaderError(f"PN5180 does not answer (product version {product[0]}.{product[1]})")
        self.firmware = self.version(FIRMWARE_VERSION)
        self.command(bytes((RF_OFF, 0)))
        self.command(bytes((LOAD_RF_CONFIG, RF_TX_15693, RF_RX_15693)))
        self.write_reg(IRQ_ENABLE, IRQ_ENABLE_CHECK)
        self.write_reg(TIMER1_RELOAD, self.timer_reload)
        self.write_reg(TIMER1_CONFIG, self.timer_config)
        self.tx_config = self.read_reg(TX_CONFIG)
        self._check()
        self.booted = True  # a later init() (after a fault) finds IDLE_IRQ cleared: no wait

    def _check(self):
        if (self.read_reg(TIMER1_RELOAD) != self.timer_reload
                or self.read_reg(TIMER1_CONFIG) != self.timer_config):
            raise ReaderError("PN5180 does not answer (register read-back failed)")

    def _wait_irq(self, mask, budget_us):
        """Poll IRQ_STATUS until a bit of ``mask`` is set; the status, or None after budget_us."""
        for _ in range(budget_us // POLL_US + 1):
            irq = self.read_reg(IRQ_STATUS)
            if irq & IRQ_GENERAL_ERROR:
                raise ReaderError("PN5180 reports a general error")
            if irq & mask:
                return irq
            self.sleep_us(POLL_US)
        return None

    def _field_on(self):
        self.write_reg(IRQ_CLEAR, IRQ_TX_RFON)
        self.command(bytes((RF_ON, RF_ON_NO_COLLISION_AVOIDANCE)))
        if (self._wait_irq(IRQ_TX_RFON, RF_ON_US) is None
                or not self.read_reg(RF_STATUS) & RF_STATUS_TX_RF):
            raise ReaderError("PN5180 RF field did not come on (chip silent, or another field on)")

    def scan(self):
        self._field_on()
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
        rounds = 0  # 16-slot rounds (``max_rounds``); the 1-slot round is not one of them
        complete = True
        if self.last_count < 2:
            one = self._inventory_one()
            if one is None:
                self.last_count = 0
                return found, complete  # no tag answered
            if one is not True:
                self.last_count = 1
                return [one], complete  # exactly one tag, read cleanly
        pending = [(0, 0)]  # a collision: (mask value, mask length in bits) for 16-slot rounds
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
        self.last_count = len(found) if complete else max(len(found), 2)
        return found, complete

    def _start(self):
        self.and_reg(SYSTEM_CONFIG, SYSTEM_IDLE_AND)
        self.or_reg(SYSTEM_CONFIG, SYSTEM_TRANSCEIVE_OR)
        self.write_reg(IRQ_CLEAR, IRQ_ALL)

    def _wait_answer(self):
        """True when a tag answered, False when T1 ran out first (an empty slot).

        Neither can happen before T1's timeout has passed (an answer takes ~4 ms), so the
        driver sleeps that long first and polls only after it: one poll for an empty slot.
        """
        self.sleep_us(self.timeout_us)
        irq = self._wait_irq(IRQ_RX | IRQ_TIMER1, ANSWER_US)
        if irq is None:
            raise ReaderError("PN5180 does not answer (no interrupt)")
        return bool(irq & IRQ_RX)

    def _answer(self):
        """The UID in a slot that answered, or None for a collision or a garbled answer."""
        status = self.read_reg(RX_STATUS)
        n = status & RX_LEN_MASK
        if status & (RX_COLLISION | RX_ERRORS) or n != INVENTORY_ANSWER:
            return None
        answer = self.query(bytes((READ_DATA, 0)), n)
        if answer[0] & 0x01:  # error flag in the tag's answer
            return None
        return bytes(reversed(answer[2:10]))

    def _inventory_one(self):
        """A 1-slot round: None when no tag answered, the UID of a lone tag, True on a
        collision (or a garbled answer: the 16-slot round then sorts it out)."""
        self.write_reg(TX_CONFIG, self.tx_config)  # undo the EOF-only setting of a last round
        self._start()
        self.send(bytes((FLAGS_1_SLOT, INVENTORY, 0)))
        if not self._wait_answer():
            return None
        uid = self._answer()
        return True if uid is None else uid

    def _inventory(self, mask, mask_len):
        """One 16-slot round; yields (uid, None) per tag read and (None, slot) per collision.

        Between slots only what must change is sent: the EOF-only transmit setting once, after
        the request (it stays until the next round restores TX_CONFIG), then per slot the
        Idle -> Transceive restart, the IRQ clear and the EOF.
        """
        results = []
        self.write_reg(TX_CONFIG, self.tx_config)  # undo the EOF-only setting of the last round
        self._start()
        request = bytes((FLAGS_16_SLOTS, INVENTORY, mask_len))
        request += mask.to_bytes((mask_len + 7) // 8, "little") if mask_len else b""
        self.send(request)
        for slot in range(16):
            if self._wait_answer():
                uid = self._answer()
                results.append((None, slot) if uid is None else (uid, None))
            if slot < 15:  # next slot: send only an EOF
                if slot == 0:
                    self.and_reg(TX_CONFIG, TX_EOF_ONLY_AND)
                self._start()
                self.send(b"")
        return results
