"""The decoder walk on the Pico (hardware/BRINGUP.md, step 2): ``mpremote run firmware/walk.py``
within 2 s of plugging the Pico in (main.py turns Ctrl-C off after that).

Reads pinmap.json and board.json as main.py does and selects each reader in turn for two
seconds (tikifw/walk.py), so a multimeter on the decoder outputs can follow it.
"""

import json
import time

import machine
from tikifw.pins import board_info, pico_pins
from tikifw.walk import HOLD_MS, walk

with open("pinmap.json") as f:
    _pins = pico_pins(json.load(f))
with open("board.json") as f:
    _info = board_info(json.load(f))
walk(machine, _pins, _info[2], HOLD_MS, time.sleep_ms)
