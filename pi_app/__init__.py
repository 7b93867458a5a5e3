"""tikiboard: a Raspberry Pi that referees physical tiki board games.

Data flows one way: sensors -> firmware -> serial link -> tracker -> inference -> engine ->
referee -> LEDs, display, web and MQTT. The rules engines live in :mod:`pi_app.games`.
"""

__version__ = "0.1.0"
