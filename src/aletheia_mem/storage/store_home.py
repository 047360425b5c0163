"""Where a store's sync id was made: its file (device, inode, absolute path) and the machine.

A store's sync id lives in its file, so a copy of the file (a data folder copied to another
laptop, a backup restored) carries it too. A hub leaves a store's own versions out of its pulls,
so two files under one id never get each other's changes: before a sync, a store found in
another place than its id was made for takes a new id (``sync.home``).
"""

from __future__ import annotations

import os
import sys
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# Where systemd and D-Bus keep the machine's id; a host name stands in where neither does.
MACHINE_ID_FILES = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))
_AT_FDCWD = -100
_STATX_BTIME = 0x800
_STATX_SIZE = 256  # struct statx; stx_mask at 0, stx_btime (s64 seconds, u32 ns) at 80


@dataclass(frozen=True)
class StoreHome:
    """A store file's place: ``machine`` is a hash, never the machine's id itself."""

    device: int
    inode: int
    born: int  # the file's birth time in ns; 0 where the file system does not tell it
    path: str
    machine: str


def machine_hash() -> str:
    """This machine, as a hash of its id (``/etc/machine-id``), else of its host name: the id
    is meant to stay on the machine, so only this hash is kept (``_hashed``)."""
    import socket  # only a sync looks: off the start path of every other command

    for source in MACHINE_ID_FILES:
        try:
            found = source.read_text(encoding="ascii", errors="replace").strip()
        except OSError:
            continue
        if found:
            return _hashed("machine-id:" + found)
    return _hashed("host:" + socket.gethostname())


def _hashed(text: str) -> str:
    """64 bits of ``text`` (two CRC-32s): enough to tell two machines apart, too few to give
    back a 128-bit machine id. Not hashlib: a store records its place when it is made, on the
    start path of a server's first call, where loading OpenSSL would cost milliseconds."""
    data = ("aletheia store home\0" + text).encode()
    return f"{zlib.crc32(data):08x}{zlib.crc32(data, 0x9E3779B9):08x}"


def home_of(path: Path) -> StoreHome:
    """The place of the store file at ``path`` now.

    Raises:
        OSError: the file cannot be looked at.
    """
    absolute = Path(os.path.abspath(path)).resolve()
    found = absolute.stat()
    born = birth_ns(absolute, found)
    return StoreHome(found.st_dev, found.st_ino, born, str(absolute), machine_hash())


def birth_ns(path: Path, found: os.stat_result) -> int:
    """When the file was made, in ns (0: unknown). A file deleted and restored from a copy
    may get the inode number it had; never its birth time, which no copy tool sets."""
    birth = getattr(found, "st_birthtime", None)  # macOS, the BSDs, Windows
    if birth is not None:
        return int(birth * 1_000_000_000)
    statx = _statx()
    if statx is None:
        return 0
    import ctypes  # off the start path

    buffer = ctypes.create_string_buffer(_STATX_SIZE)
    if statx(_AT_FDCWD, os.fsencode(path), 0, _STATX_BTIME, buffer) != 0:
        return 0
    if not int.from_bytes(buffer.raw[0:4], sys.byteorder) & _STATX_BTIME:
        return 0
    seconds = int.from_bytes(buffer.raw[80:88], sys.byteorder, signed=True)
    return seconds * 1_000_000_000 + int.from_bytes(buffer.raw[88:92], sys.byteorder)


@cache
def _statx() -> Any:
    """glibc's ``statx`` (Linux), or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return getattr(ctypes.CDLL(None, use_errno=True), "statx", None)
    except OSError:
        return None


def why_elsewhere(made: StoreHome, now: StoreHome) -> str | None:
    """Why the store at ``now`` is not the file its id was made for (None: it is that file)."""
    if made.machine != now.machine:
        return "it is on another machine than the one its sync id was made on"
    reborn = made.born != now.born and 0 not in (made.born, now.born)
    if (made.device, made.inode) != (now.device, now.inode) or reborn:
        return (
            "it is another file than the one its sync id was made for"
            " (a copy, or a restored backup)"
        )
    if made.path != now.path:
        return "it was moved or copied from " + made.path
    return None
