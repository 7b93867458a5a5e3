"""Consistent Overhead Byte Stuffing: a frame body without any 0x00 byte, so 0x00 ends frames.

Why COBS: a receiver that starts listening mid-stream, or after garbage, only has to wait for
the next 0x00 to be back in step, and the cost is at most one byte per 254. The encoding is the
canonical one (a final run of exactly 254 non-zero bytes gets no extra code byte), so the
firmware and the Pi produce identical bytes (firmware/test_vectors.json).
"""


def encode(data):
    """Encode ``data`` (bytes-like); the result holds no 0x00. The 0x00 delimiter is not added."""
    out = bytearray()
    n = len(data)
    i = 0
    while True:
        # One block: up to 254 non-zero bytes, then either a zero in the data or the end.
        j = i
        while j < n and data[j] != 0 and j - i < 254:
            j += 1
        out.append(j - i + 1)
        out += data[i:j]
        if j - i == 254:
            if j == n:
                break
            i = j  # a full block carries no implied zero
            continue
        if j >= n:
            break
        i = j + 1  # skip the zero this block stands for
    return bytes(out)


def decode(data):
    """Decode one COBS block sequence (no delimiter); ValueError when it cannot be COBS."""
    out = bytearray()
    n = len(data)
    i = 0
    while i < n:
        code = data[i]
        if code == 0:
            raise ValueError("cobs: zero byte inside a frame")
        end = i + code
        if end > n:
            raise ValueError("cobs: block runs past the end of the frame")
        out += data[i + 1:end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)
