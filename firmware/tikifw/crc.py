"""Checksums: CRC-32 for link frames, CRC_A for ISO/IEC 14443-3 (MFRC522 SELECT/HLTA).

CRC-32 is the ISO-HDLC one (zlib, Ethernet): MicroPython's ``binascii.crc32`` computes it in C
on the Pico, CPython's too; the pure fallback covers a MicroPython build without it.
"""

try:
    from binascii import crc32 as _native_crc32
except ImportError:  # pragma: no cover - only on a MicroPython build without binascii.crc32
    _native_crc32 = None

# Half-byte table for the reflected polynomial 0xEDB88320: 16 entries, small enough for an MCU.
_NIBBLE = (
    0x00000000, 0x1DB71064, 0x3B6E20C8, 0x26D930AC, 0x76DC4190, 0x6B6B51F4, 0x4DB26158, 0x5005713C,
    0xEDB88320, 0xF00F9344, 0xD6D6A3E8, 0xCB61B38C, 0x9B64C2B0, 0x86D3D2D4, 0xA00AE278, 0xBDBDF21C,
)


def crc32_pure(data, crc=0):
    """CRC-32/ISO-HDLC without binascii (check value of b"123456789": 0xCBF43926)."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 4) ^ _NIBBLE[(crc ^ b) & 0x0F]
        crc = (crc >> 4) ^ _NIBBLE[(crc ^ (b >> 4)) & 0x0F]
    return crc ^ 0xFFFFFFFF


def crc32(data):
    """CRC-32/ISO-HDLC of ``data`` as an unsigned 32-bit int."""
    if _native_crc32 is not None:
        return _native_crc32(data) & 0xFFFFFFFF
    return crc32_pure(data)  # pragma: no cover


def crc_a(data):
    """CRC_A of ISO/IEC 14443-3 (init 0x6363, reflected 0x1021), returned as 2 bytes, LSB first."""
    crc = 0x6363
    for byte in data:
        b = (byte ^ crc) & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    return bytes((crc & 0xFF, (crc >> 8) & 0xFF))
