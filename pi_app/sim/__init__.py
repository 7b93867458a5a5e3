"""Simulation: hands that move pieces, the sensors that see them, and whole games played so.

Used by the tests, the accuracy and soak runs, and the demo. Nothing here is needed on a real
board.
"""
