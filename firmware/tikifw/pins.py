"""The Pico's half of hardware/pinmap.json, and the counts a board needs from its geometry.

MicroPython cannot import the Pi's loader, so this is its small twin: it checks that every pin
is a GP number and that no pin is named twice, naming the key (``pico.shift_in.data: GP12 is
already pico.spi.miso``), because a doubled pin on the Pico fails silently otherwise.
"""

PIN_KEYS = (
    ("spi", "sck"), ("spi", "mosi"), ("spi", "miso"),
    ("reader_select", "address"), ("reader_select", "enable"),
    ("reader_reset",), ("reader_busy",),
    ("shift_in", "load"), ("shift_in", "clock"), ("shift_in", "data"),
    ("status_led",),
)
OPTIONAL = (("reader_busy",), ("status_led",))


class PinMapError(ValueError):
    pass


def _get(section, path):
    value = section
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def pico_pins(pinmap):
    """The ``pico`` section of a parsed pin map, checked."""
    section = pinmap.get("pico") if isinstance(pinmap, dict) else None
    if not isinstance(section, dict):
        raise PinMapError("pico: the pin map has no 'pico' section")
    owner = {}
    for path in PIN_KEYS:
        name = "pico." + ".".join(path)
        value = _get(section, path)
        if value is None:
            if path in OPTIONAL:
                continue
            raise PinMapError(name + ": missing")
        values = value if isinstance(value, list) else [value]
        for i, pin in enumerate(values):
            key = name + (f"[{i}]" if isinstance(value, list) else "")
            if isinstance(pin, bool) or not isinstance(pin, int) or not 0 <= pin <= 29:
                raise PinMapError(f"{key}: must be a GP number 0..29, not {pin!r}")
            if pin in owner:
                raise PinMapError(f"{key}: GP{pin} is already {owner[pin]}")
            owner[pin] = key
    return section


def board_info(geometry):
    """(game, reader chip, reader count, presence count) from a hardware/boards/GAME.json."""
    readers = -1
    presence = -1
    for cell in geometry.get("cells", []):
        if cell.get("reader") is not None:
            readers = max(readers, cell["reader"])
        if cell.get("presence") is not None:
            presence = max(presence, cell["presence"])
    return (geometry.get("game", ""), geometry.get("reader_chip", ""), readers + 1,
            presence + 1)


def presence_readers(geometry):
    """{presence sensor: reader} for the cells that have both, from a GAME.json."""
    out = {}
    for cell in geometry.get("cells", []):
        if cell.get("reader") is not None and cell.get("presence") is not None:
            out[cell["presence"]] = cell["reader"]
    return out
