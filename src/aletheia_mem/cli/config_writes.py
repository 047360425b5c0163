"""Writing a host's config file safely: a private backup first, the new text renamed over the
old file (its mode and owner kept), and a write that can be undone when a later one fails."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from aletheia_mem.cli.clients import Change, ConfigFileError
from aletheia_mem.storage.files import sync_folder


def backup_path(path: Path, now: datetime | None = None) -> Path:
    """``settings.json.aletheia-backup-20261029T194645Z`` (numbered if that exists)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.aletheia-backup-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.aletheia-backup-{stamp}-{number}")
    return candidate


def _private_copy(source: Path, backup: Path, owner: os.stat_result) -> None:
    """A byte-for-byte copy only its owner can read (a config may hold tokens)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(backup, flags, 0o600)
    with os.fdopen(handle, "wb") as out:
        os.fchmod(out.fileno(), 0o600)
        _keep_owner(out.fileno(), owner)
        out.write(source.read_bytes())


def _keep_owner(handle: int, owner: os.stat_result) -> None:
    """Give a new file the owner of the file it replaces, where this process may (root, run
    through sudo, may; others keep their own): else the tool that reads it may no longer."""
    info = os.fstat(handle)
    if (info.st_uid, info.st_gid) == (owner.st_uid, owner.st_gid) or not hasattr(os, "fchown"):
        return
    with contextlib.suppress(PermissionError):  # not ours to give away: it stays ours
        os.fchown(handle, owner.st_uid, owner.st_gid)


def _new_file_mode() -> int:
    """The mode a new file gets from the umask (``os.umask`` can only be read by setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def check_writable(change: Change) -> None:
    """Refuse before anything is written a change whose file is read-only.

    Raises:
        ConfigFileError: the file is read-only, or cannot be looked at.
    """
    if change.action in ("unchanged", "conflict"):
        return
    try:
        _refuse_read_only(change.path, change.path.stat())
    except FileNotFoundError:
        return  # a new file
    except OSError as error:
        raise ConfigFileError(f"Cannot write {change.path}: {error}") from None


def write_change(change: Change) -> Path | None:
    """Write the new text atomically, after a backup of the old file; returns the backup.

    Raises:
        ConfigFileError: the file is read-only, or the folder or file cannot be written
            (permissions, a full disk); the file is then as it was, and no backup is left.
    """
    if change.action in ("unchanged", "conflict"):
        return None
    path = change.path
    try:
        return _replace_text(path, change.new_text)
    except OSError as error:
        raise ConfigFileError(f"Cannot write {path}: {error}") from None


def undo_change(change: Change, backup: Path | None) -> None:
    """Put back the file :func:`write_change` wrote: its backup moved back in place (the same
    bytes and owner, the file's mode), or the new file removed when there was none before.

    Raises:
        OSError: it cannot be put back (the backup then stays where it is).
    """
    if change.action in ("unchanged", "conflict"):
        return
    if backup is None:
        change.path.unlink(missing_ok=True)
        return
    os.chmod(backup, stat.S_IMODE(change.path.stat().st_mode))  # the write kept the mode
    os.replace(backup, change.path)


def _refuse_read_only(path: Path, info: os.stat_result) -> None:
    if not info.st_mode & stat.S_IWUSR:
        raise ConfigFileError(
            f"{path} is read-only; make it writable (chmod u+w) and run this again."
        )


def _replace_text(path: Path, text: str) -> Path | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.stat() if path.exists() else None
    if old is not None:
        _refuse_read_only(path, old)
    backup = backup_path(path) if old is not None else None
    try:
        if old is not None and backup is not None:
            _private_copy(path, backup, old)
        _write_over(path, text, old)
    except BaseException:
        if backup is not None:  # the file is as it was: no backup of it is needed
            backup.unlink(missing_ok=True)
        raise
    return backup


def _write_over(path: Path, text: str, old: os.stat_result | None) -> None:
    """Replace ``path`` with ``text`` at once (a file beside it, renamed over it), keeping the
    old file's mode and owner."""
    mode = stat.S_IMODE(old.st_mode) if old is not None else _new_file_mode()
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            if old is not None:
                _keep_owner(out.fileno(), old)
            out.flush()
            os.fsync(out.fileno())  # on the disk before its name is: a power cut keeps one whole
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # written: a folder that cannot be synced is no failure
        sync_folder(path.parent)
