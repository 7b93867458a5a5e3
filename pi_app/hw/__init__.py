"""The hardware layer: each part behind a small interface with a real driver and a mock.

Hardware never imports the rules: it speaks in reader channels, sensor numbers, LED indices and
button names; the board model maps those to cells (``pi_app.board``).
"""
