"""Commands on top of the layers: they look at the hardware through the board's description.

``tikiboard diag`` shows each cell's readings and lights its LEDs, and the overlay printer
draws each cell's antenna, sensor and LEDs; both need the hardware (``pi_app.hw``) and the
board geometry (``pi_app.board``) at once. They live here, above both, so the hardware layer
never imports the board model (the contracts in pyproject.toml hold that).
"""
