"""The store's file before and around SQLite: made whole or not at all, checked on open, and
SQLite's failures told as one line that says what is wrong, where, and what to do.

SQLite takes a 0-byte file for a new empty database, and only finds a cut-off or foreign file
when a query reaches the missing page; here such a file is refused before any use.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from aletheia_mem.errors import (
    AletheiaError,
    NoStoreError,
    StoreBrokenError,
    StoreBusyError,
    StoreFullError,
    StoreReadOnlyError,
    StoreTooNewError,
)
from aletheia_mem.storage.files import ensure_private_dir, new_private_file, tighten
from aletheia_mem.storage.id_cap import ids_used_up

SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100
RESTORE_STEP = "Move it away and restore your last export with `aletheia import FILE`"
DOCTOR_NOTE = " (`aletheia doctor` checks a store)"
RESTORE_HINT = f"{RESTORE_STEP}{DOCTOR_NOTE}."
# "no such table": every table is made by the migrations, so one missing is damage, not a bug;
# so is a full-text table whose own tables are gone or garbled ("vtable constructor failed").
_BROKEN_MARKS = (
    "not a database",
    "malformed",
    "file is encrypted",
    "disk image",
    "no such table",
    "vtable constructor failed",
)
_READ_ONLY_MARKS = ("readonly", "read-only", "read only")
_BUSY_MARKS = ("database is locked", "database is busy")
_FULL_MARK = "database or disk is full"
# SQLite says "disk I/O error" (SQLITE_IOERR_SHMSIZE) when it cannot grow its -shm file, as on a
# full disk: a disk with less room than this left is taken for full then. Any other I/O error
# is one, whatever the room left (SQLite says SQLITE_FULL when a write finds none).
FULL_DISK_BYTES = 1 << 20
_GROWTH_ERROR = "SQLITE_IOERR_SHMSIZE"
_IO_MARK = "disk i/o error"


def broken(path: Path, what: str, hint: str = RESTORE_HINT) -> StoreBrokenError:
    return StoreBrokenError(f"The store {path} {what}. {hint}")


def as_doctor_tells_it(message: str) -> str:
    """A store problem's message as ``aletheia doctor`` shows it: without the note that sends
    the reader to doctor."""
    return message.replace(DOCTOR_NOTE, "")


def foreign(path: Path) -> StoreBrokenError:
    return broken(
        path,
        "is another program's SQLite database, not an Aletheia store",
        "Leave it alone and point ALETHEIA_DATA_DIR at another folder.",
    )


@contextmanager
def exits_on_store_problem(program: str) -> Iterator[None]:
    """For an entry point: a broken or read-only store, or none (a PostgreSQL database that
    does not exist), or one a newer version made, ends it with one line on stderr and the exit
    code of its kind (8 broken, 9 read-only, 7 none, 10 newer), never a traceback; so does any
    other expected failure to open it (a PostgreSQL store unreachable, or without the postgres
    extra), with exit code 1."""
    try:
        yield
    except (StoreBrokenError, StoreReadOnlyError, NoStoreError, StoreTooNewError) as error:
        sys.stderr.write(f"{program}: {error.message}\n")
        sys.exit(error.exit_code)
    except AletheiaError as error:
        sys.stderr.write(f"{program}: {error.message}\n")
        sys.exit(1)


def read_only(path: Path) -> StoreReadOnlyError:
    return StoreReadOnlyError(
        f"The store {path} is read-only for this user; nothing was saved."
        " Make the file and its folder writable (or point ALETHEIA_DATA_DIR elsewhere)."
    )


def free_bytes(path: Path) -> int | None:
    """The room left for this user on the disk that holds ``path`` (or the nearest folder above
    it that exists), or None where that cannot be told."""
    for place in (path, *path.parents):
        try:
            found = os.statvfs(place)
        except FileNotFoundError:
            continue
        except (OSError, AttributeError):  # no statvfs on Windows
            return None
        return found.f_bavail * found.f_frsize
    return None


def disk_full(path: Path) -> bool:
    """Whether the disk that holds ``path`` has (almost) no room left."""
    room = free_bytes(path)
    return room is not None and room < FULL_DISK_BYTES


def full_problem(path: Path, error: OSError) -> StoreFullError | None:
    """The store's full-disk error for an ``OSError`` met writing it, if that is the cause."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreFullError(str(path))
    return None


def check_header(path: Path) -> bool:
    """Whether ``path`` exists; raises when it does but is no whole SQLite file.

    Raises:
        StoreBrokenError: an empty file, another kind of file, one cut short, or no file at all
            (see :func:`check_place`).
    """
    if not check_place(path):
        return False
    try:
        with path.open("rb") as handle:
            header = handle.read(_HEADER_SIZE)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        return False
    except PermissionError:
        raise read_only(path) from None
    if not header:
        raise broken(path, "is an empty file (0 bytes), not an Aletheia store")
    if not header.startswith(SQLITE_MAGIC) or len(header) < _HEADER_SIZE:
        raise broken(path, "is not a SQLite database (damaged, or another program's file)")
    if size < _declared_size(header) and not has_wal(path):
        raise broken(path, f"is cut short ({size} of {_declared_size(header)} bytes)")
    return True


def check_place(path: Path) -> bool:
    """Whether something is at ``path``; raises when it, or a folder above it, can never be a
    store (a folder or a FIFO there, or a file where the data folder should be).

    Raises:
        StoreBrokenError: ``path`` is no regular file, or a symbolic link that leads to none
            (to nothing, or back to itself).
        NoStoreError: a part of its folder is a file.
        StoreReadOnlyError: its folder cannot be entered by this user.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not os.path.islink(path):
            return False
        raise _bad_link(path, f"points to {os.readlink(path)}, which does not exist") from None
    except PermissionError:
        raise read_only(path) from None
    except NotADirectoryError:
        raise not_in_folder(path) from None
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
        raise _bad_link(path, "leads back to itself (a loop of symbolic links)") from None
    if not stat.S_ISREG(mode):
        raise broken(
            path,
            "is not a regular file (a folder or a special file), not an Aletheia store",
            "Move it away, or point ALETHEIA_DATA_DIR at another folder.",
        )
    return True


def _bad_link(path: Path, what: str) -> StoreBrokenError:
    """A symbolic link where the store should be that leads to no file."""
    return broken(
        path,
        f"is a symbolic link that {what}",
        "Remove the link or point it at the store, or point ALETHEIA_DATA_DIR at another folder.",
    )


def not_in_folder(path: Path, chosen_by: str = "ALETHEIA_DATA_DIR") -> NoStoreError:
    """No store can be at ``path``: a file stands where its folder (or one above it) should be
    (a mistyped path, as a missing store is: exit code 7). ``chosen_by``: the variable or option
    that gave the path, named as what to fix."""
    # The data folder names a folder; ALETHEIA_HUB_DB and --hub-db name the store file itself.
    place = "a folder" if chosen_by == "ALETHEIA_DATA_DIR" else "a file in a folder"
    return NoStoreError(
        f"No store at {path}: a file stands where the folder {path.parent} (or one above it)"
        f" should be; point {chosen_by} at {place}."
    )


def misplaced(target: Path | str, chosen_by: str) -> NoStoreError | None:
    """The error when a file stands where the folder of the store at ``target`` should be (see
    :func:`not_in_folder`), else None (a ``postgresql://`` URL has no folder)."""
    if not isinstance(target, Path):
        return None
    try:
        os.stat(target)
    except NotADirectoryError:
        return not_in_folder(target, chosen_by)
    except OSError:
        return None
    return None


def _declared_size(header: bytes) -> int:
    """The size the header records, when its page count is valid (else 0)."""
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if header[24:28] != header[92:96]:  # the page count is stale: SQLite ignores it too
        return 0
    return page_size * int.from_bytes(header[28:32], "big")


def readable_only(path: Path) -> bool:
    """Whether the store at ``path`` can only be read, and safely so as the file stands: its
    folder cannot be written by anyone (no write permission at all, or a read-only mount), so
    no -wal, -shm or journal can be made there and no one writes the store while SQLite reads
    it ``immutable`` (without locks, never looking for changes), and no WAL holds changes the
    file lacks. A folder only another user may write is not: that user's saves would go unseen.
    """
    if not path.is_file() or os.access(path.parent, os.W_OK) or has_wal(path):
        return False
    try:
        folder = path.parent.stat()
        mount = os.statvfs(path.parent)
    except OSError:
        return False
    unwritable = not folder.st_mode & 0o222 or bool(mount.f_flag & os.ST_RDONLY)
    return unwritable or _immutable(path.parent)


_FS_IOC_GETFLAGS = 0x80086601  # Linux: a file's attributes (lsattr)
_FS_IMMUTABLE_FL = 0x10  # chattr +i: no one writes it, root included


def _immutable(folder: Path) -> bool:
    """Whether ``folder`` is marked immutable (Linux's ``chattr +i``); False where unknown."""
    try:
        import fcntl  # POSIX only

        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except (ImportError, OSError, AttributeError):
        return False
    try:
        flags = bytearray(8)
        fcntl.ioctl(descriptor, _FS_IOC_GETFLAGS, flags)
        return bool(int.from_bytes(flags[:4], sys.byteorder) & _FS_IMMUTABLE_FL)
    except OSError:
        return False
    finally:
        os.close(descriptor)


def has_wal(path: Path) -> bool:
    """A WAL may hold pages a checkpoint is copying into the file right now."""
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


def create_store(path: Path, build: Callable[[sqlite3.Connection], None]) -> None:
    """Make a new store at ``path``, whole: built in a 0600 file beside it, then linked in
    place (a store another process linked first wins)."""
    try:
        ensure_private_dir(path.parent)
        temp = new_private_file(path, ".new")
    except OSError as error:
        full = full_problem(path, error)
        if full is not None:
            raise full from None
        raise StoreReadOnlyError(
            f"The store {path} cannot be created ({error.strerror or error}). Make its folder"
            " writable, or point ALETHEIA_DATA_DIR elsewhere."
        ) from None
    try:
        conn = sqlite3.connect(temp, isolation_level=None)
        try:
            build(conn)
        except sqlite3.Error as error:
            raise store_problem(path, error) or error from None
        finally:
            conn.close()
        _link_in_place(temp, path)
    finally:
        for name in (temp.name, temp.name + "-wal", temp.name + "-shm"):
            temp.with_name(name).unlink(missing_ok=True)


def _link_in_place(temp: Path, path: Path) -> None:
    """``temp`` becomes ``path`` unless a store is there already."""
    try:
        os.link(temp, path)
    except FileExistsError:
        pass  # another process made the store first: use that one
    except OSError:  # no hard links on this file system (some network or FUSE mounts)
        if not path.exists():
            os.replace(temp, path)


def tighten_store(path: Path) -> None:
    """The store 0600, and its WAL and shared-memory file when it was not: SQLite gives new
    ones the store's mode, so only those of an older version's store can be wider."""
    if tighten(path):
        for suffix in ("-wal", "-shm"):
            tighten(path.with_name(path.name + suffix))


def is_foreign(conn: sqlite3.Connection) -> bool:
    """Whether the database holds tables but was never an Aletheia store."""
    tables, ours = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE name = 'schema_migrations')"
        " FROM sqlite_master WHERE type = 'table'"
    ).fetchone()
    return bool(tables) and not ours


def store_problem(path: Path, error: sqlite3.Error) -> AletheiaError | None:
    """The one-line error a user should see for SQLite's ``error`` on ``path``, if it is a
    store problem (a damaged or read-only store, one on a full disk, one another process kept
    busy for longer than this one waits, or one with no ids left) rather than a bug."""
    used_up = ids_used_up(path, error)
    if used_up is not None:
        return used_up
    text = str(error).lower()
    if any(mark in text for mark in _BUSY_MARKS):
        return StoreBusyError(str(path))
    if _FULL_MARK in text or (_grows(error) and disk_full(path)):
        return StoreFullError(str(path))
    if any(mark in text for mark in _READ_ONLY_MARKS):
        return read_only(path)
    if any(mark in text for mark in _BROKEN_MARKS):
        return broken(path, f"is damaged ({error})")
    if _IO_MARK in text:
        name = getattr(error, "sqlite_errorname", None) or "disk I/O error"
        return broken(
            path,
            f"cannot be read or written: the system reported an I/O error ({name})",
            f"Check the disk, and that {path.name}-wal and {path.name}-shm beside it are plain"
            f" files{DOCTOR_NOTE}.",
        )
    if "unable to open" in text:
        if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            return read_only(path)
        return broken(path, f"cannot be opened ({error})")
    return None


def _grows(error: sqlite3.Error) -> bool:
    """Whether SQLite failed to grow its -shm file (an I/O error, not SQLITE_FULL)."""
    return getattr(error, "sqlite_errorname", None) == _GROWTH_ERROR


def open_to_others(path: Path) -> list[str]:
    """The store's folder and files that others than the owner may read or enter, with their
    modes (``/home/u/.aletheia is 0755``)."""
    found = []
    for item in (path.parent, path, path.with_name(path.name + "-wal")):
        try:
            mode = item.stat().st_mode & 0o777
        except OSError:
            continue
        if mode & 0o077:
            found.append(f"{item} is {mode:04o}")
    return found
