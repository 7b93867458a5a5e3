"""Pico entry point: read pinmap.json and board.json, wire the real pins, run the loop forever.

Flash (firmware/README.md): the tikifw package, this file, hardware/pinmap.json as pinmap.json
and the game's hardware/boards/GAME.json as board.json. The link is the USB CDC serial port.
"""

import json
import select
import sys
import time

import machine
import micropython
from tikifw import proto
from tikifw.board import build_device
from tikifw.clock import Uptime
from tikifw.pins import board_info, pico_pins, presence_readers

# After power-up the USB port is MicroPython's REPL for this long, so `mpremote` can stop the
# program before it takes the port over (firmware/README.md, "Updating").
BOOT_GRACE_MS = 2000


class UsbTransport:
    """Frames over the USB CDC port that MicroPython's REPL normally owns."""

    def __init__(self):
        micropython.kbd_intr(-1)  # a 0x03 byte inside a frame must not stop the program
        self.inp = sys.stdin.buffer
        self.out = sys.stdout.buffer
        self.poller = select.poll()
        self.poller.register(sys.stdin, select.POLLIN)

    def read(self):
        data = bytearray()
        while len(data) < 512 and self.poller.poll(0):
            data += self.inp.read(1)
        return bytes(data)

    def write(self, data):
        self.out.write(data)


def load(name):
    with open(name) as f:
        return json.load(f)


def main():
    time.sleep_ms(BOOT_GRACE_MS)  # mpremote can still interrupt here to update the files
    pins = pico_pins(load("pinmap.json"))
    geometry = load("board.json")
    info = board_info(geometry)
    led = machine.Pin(pins["status_led"], machine.Pin.OUT) if "status_led" in pins else None
    device = build_device(machine, pins, info, UsbTransport(),
                          Uptime(time.ticks_ms, time.ticks_diff), sleep_us=time.sleep_us,
                          presence_readers=presence_readers(geometry))
    device.start()
    blink = 0
    while True:
        try:
            idle = not device.poll()
        except Exception as exc:  # keep scanning; tell the host what went wrong
            device.on_fault(proto.ERR_INTERNAL, 0, f"firmware: {exc!r}", device.now_ms())
            idle = True
        if idle:
            time.sleep_ms(1)
        blink += 1
        if led is not None and blink % 512 == 0:
            led.toggle()


if __name__ == "__main__":
    main()
