"""Benchmark scripts: each prints its figures as one JSON object (speed is a feature)."""
