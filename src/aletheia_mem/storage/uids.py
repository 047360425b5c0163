"""The uids of memories, facts and episodes, for every store: 32 hex digits, time-ordered.

A uid is a version 7 UUID (RFC 9562) in hex: the Unix time in milliseconds (48 bits), then 74
random bits. Uids made later sort later, so the indexes keyed by them (``memories.uid``, the
sync log's key) grow at their right edge: a save writes the page it wrote last, not a random
one. 74 random bits per millisecond keep uids unique across processes and machines (two stores
making a billion uids in the same millisecond would meet with a chance of about 1 in 40,000).
"""

from __future__ import annotations

import os
import time


def new_uid() -> str:
    """A new version 7 UUID as 32 hex digits (``os.urandom``: the uuid module imports
    ``platform``, a tenth of the store's import on the server's start path)."""
    millis = time.time_ns() // 1_000_000
    raw = bytearray(millis.to_bytes(6, "big") + os.urandom(10))
    raw[6] = raw[6] & 0x0F | 0x70  # version 7
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 9562 variant
    return raw.hex()
