"""The one name for a decoded JSON object, shared by every layer that passes one on.

Records, feeds, MQTT payloads, configuration tables and the engines' states in their stored
form are all ``dict[str, Any]`` once read; naming it once keeps the layers from importing the
rules engines' base module just for a type. It imports nothing of the station.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
