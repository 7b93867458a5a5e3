"""Fuzz the link decoder: a million frames, random and mutated, as JSON figures.

Run ``python -m tools.bench.fuzz_link [--frames N] [--seed S]``. The stream mixes good frames
with three kinds of damage: random bytes between frames, frames with bytes flipped, and frames
cut short. Checked for every frame:

* no crash (any exception ends the run and is reported);
* no corrupt frame accepted: every frame the decoder returns is byte for byte one that was
  sent intact (a damaged frame that decoded would be a "corrupt accepted");
* resynchronisation within one frame: the first intact frame after any damage decodes.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from pi_app.hw.frames import Frame, FrameDecoder, FrameError, encode_frame


def run(frames: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    decoder = FrameDecoder()
    sent_intact = accepted = corrupt = damaged = lost_after_damage = rejected = 0
    started = time.process_time()
    batch: list[tuple[bytes, Frame | None]] = []

    def flush() -> None:
        nonlocal accepted, corrupt, lost_after_damage, rejected
        stream = b"".join(chunk for chunk, _ in batch)
        expected = [frame for _, frame in batch if frame is not None]
        got = decoder.feed(stream)
        good = [item for item in got if isinstance(item, Frame)]
        rejected += sum(1 for item in got if isinstance(item, FrameError))
        accepted += len(good)
        wanted = iter(expected)
        for frame in good:  # every decoded frame must be the next intact one sent, in order
            for candidate in wanted:
                if candidate == frame:
                    break
                lost_after_damage += 1
            else:
                corrupt += 1
        lost_after_damage += sum(1 for _ in wanted)
        batch.clear()

    for index in range(frames):
        payload = rng.randbytes(rng.randrange(0, 120))
        frame = Frame(rng.randrange(256), index % 256, payload)
        encoded = encode_frame(frame.type, frame.seq, frame.payload)
        roll = rng.random()
        if roll < 0.1:  # garbage before an intact frame (ends in a delimiter to flush it)
            batch.append((rng.randbytes(rng.randrange(1, 60)) + b"\x00", None))
            damaged += 1
        if roll < 0.85:
            batch.append((encoded, frame))
            sent_intact += 1
        elif roll < 0.95:  # bytes flipped
            broken = bytearray(encoded)
            spots = rng.sample(range(len(broken) - 1), min(len(broken) - 1, rng.randrange(1, 4)))
            for spot in spots:  # distinct bytes: two flips never cancel out
                broken[spot] ^= 1 << rng.randrange(8)
            batch.append((bytes(broken), None))
            damaged += 1
        else:  # cut short: the rest never came, the next delimiter ends it
            batch.append((encoded[:rng.randrange(1, len(encoded) - 1)] + b"\x00", None))
            damaged += 1
        if len(batch) >= 256:
            flush()
    flush()
    seconds = time.process_time() - started
    return {"frames": frames, "intact_sent": sent_intact, "damaged_sent": damaged,
            "accepted": accepted, "rejected": rejected, "corrupt_accepted": corrupt,
            "intact_lost": lost_after_damage, "cpu_s": round(seconds, 1),
            "frames_per_s": round(frames / seconds)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        figures: dict[str, Any] = run(args.frames, args.seed)
    except Exception as exc:  # a crash is a finding, reported as such
        figures = {"crash": f"{type(exc).__name__}: {exc}"}
    print(json.dumps({"benchmark": "fuzz_link", "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
