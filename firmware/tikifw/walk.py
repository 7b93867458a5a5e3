"""The decoder walk (hardware/BRINGUP.md, step 2): select each reader in turn, slowly.

For a board whose readers do not answer: with the reader modules unplugged, plug the Pico
in and within 2 s run (firmware/walk.py does the reading of the pin map and board file)::

    mpremote run firmware/walk.py

Each reader's chip select (74HC154 output Yn) is held low for ``HOLD_MS`` while the others
stay high, and the 74HC139's ~ROW output of its row (n // 8) goes low with it; a multimeter
on the decoder outputs shows the walk. ``walk(machine, pins, n, hold_ms, sleep_ms, report)``
is the same with everything passed in, for the host tests.
"""

HOLD_MS = 2000


def walk(machine, pins, n, hold_ms=HOLD_MS, sleep_ms=None, report=print):
    """Select readers 0..n-1 one after another through the decoder; returns the order."""
    from tikifw.readers import DecoderSelect

    pin = machine.Pin
    sel = pins["reader_select"]
    select = DecoderSelect([pin(a, pin.OUT, value=0) for a in sel["address"]],
                           pin(sel["enable"], pin.OUT, value=1))
    order = []
    for i in range(n):
        select.select(i)
        report(f"reader {i} selected: Y{i % 16} of decoder {i // 16} low, ~ROW{i // 8} low")
        if sleep_ms is not None:
            sleep_ms(hold_ms)
        select.deselect()
        order.append(i)
    return order

