"""The link decoder under a stream of random and damaged frames (the full run: a million
frames, ``python -m tools.bench.fuzz_link``): nothing corrupt gets through, nothing intact is
lost, nothing crashes."""

from __future__ import annotations

from tools.bench.fuzz_link import run


def test_damaged_frames_never_pass_and_the_next_intact_frame_always_does() -> None:
    figures = run(100_000, seed=7)
    assert figures["damaged_sent"] > 20_000
    assert figures["corrupt_accepted"] == 0
    assert figures["intact_lost"] == 0
    assert figures["accepted"] == figures["intact_sent"]
