"""The referee: sessions that own one game on one board, the event store, feedback rendering,
configuration and the daemon that wires link -> tracker -> inference -> engine -> feedback."""
