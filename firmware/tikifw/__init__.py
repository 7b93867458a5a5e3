"""tikifw: the sensor-board firmware's logic, free of anything board-specific.

Every module here runs unchanged under MicroPython (on the Pico and the unix port) and CPython
(the Pi's simulator and the tests). Hardware arrives by injection: ``main.py`` hands in real
``machine.Pin``/``machine.SPI`` objects, the tests hand in fakes. So nothing in this package
imports ``machine``, uses f-string ``=`` specifiers, dataclasses or runtime typing.
"""

VERSION = "0.1.0"
