"""The board model: geometry, tag registry, tracker and move inference (pure Python, no I/O)."""
