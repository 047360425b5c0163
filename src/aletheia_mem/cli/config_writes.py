"""Writing a host's config file safely: a private backup first, the new text renamed over the
old file (its mode and owner kept), and a write that can be undone when a later one fails."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from aletheia_mem.cli.clients import Change, ConfigFileError
from aletheia_mem.storage.files import keep_owner, replace_shared_file


@dataclass(frozen=True)
class Written:
    """What :func:`write_change` did: the backup of the file it replaced (none for a new file or
    no change), and the folders it made for a new one, outermost first."""

    backup: Path | None = None
    folders: tuple[Path, ...] = ()
    mode: int | None = None  # a deleted file's, to put it back with


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
        keep_owner(out.fileno(), owner)
        out.write(source.read_bytes())


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


def write_change(change: Change) -> Written:
    """Write the new text atomically, after a backup of the old file.

    Raises:
        ConfigFileError: the file is read-only, or the folder or file cannot be written
            (permissions, a full disk); the file is then as it was, and no backup or folder
            made for it is left.
    """
    if change.action in ("unchanged", "conflict"):
        return Written()
    path = change.path
    try:
        if change.action == "delete":
            return _delete(path)
        return _replace_text(path, change.new_text)
    except OSError as error:
        raise ConfigFileError(f"Cannot write {path}: {error}") from None


def undo_change(change: Change, written: Written) -> None:
    """Put back the file :func:`write_change` wrote: its backup moved back in place (the same
    bytes and owner, the file's mode), or the new file removed when there was none before,
    with the folders made for it.

    Raises:
        OSError: it cannot be put back (the backup then stays where it is).
    """
    if change.action in ("unchanged", "conflict"):
        return
    backup = written.backup
    if change.action == "delete" and backup is not None:
        os.chmod(backup, written.mode if written.mode is not None else 0o600)
        os.replace(backup, change.path)
        return
    if backup is None:
        change.path.unlink(missing_ok=True)
        _remove_folders(written.folders)
        return
    os.chmod(backup, stat.S_IMODE(change.path.stat().st_mode))  # the write kept the mode
    os.replace(backup, change.path)


def _refuse_read_only(path: Path, info: os.stat_result) -> None:
    if not info.st_mode & stat.S_IWUSR:
        raise ConfigFileError(
            f"{path} is read-only; make it writable (chmod u+w) and run this again."
        )


def _replace_text(path: Path, text: str) -> Written:
    folders = _make_folders(path.parent)
    backup = None
    try:
        old = path.stat() if path.exists() else None
        if old is not None:
            _refuse_read_only(path, old)
            backup = backup_path(path)
            _private_copy(path, backup, old)
        replace_shared_file(path, text, old)
    except BaseException:
        if backup is not None:  # the file is as it was: no backup of it is needed
            backup.unlink(missing_ok=True)
        _remove_folders(folders)
        raise
    return Written(backup, folders)


def _delete(path: Path) -> Written:
    """Remove the file after a private backup of it."""
    old = path.stat()
    _refuse_read_only(path, old)
    backup = backup_path(path)
    _private_copy(path, backup, old)
    try:
        path.unlink()
    except BaseException:
        backup.unlink(missing_ok=True)
        raise
    return Written(backup, (), stat.S_IMODE(old.st_mode))


def _make_folders(folder: Path) -> tuple[Path, ...]:
    """Make ``folder`` and its missing parents; returns those it made, outermost first."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    if missing:
        missing[0].mkdir(parents=True, exist_ok=True)
    return tuple(reversed(missing))


def _remove_folders(folders: tuple[Path, ...]) -> None:
    """Remove the folders ``_make_folders`` made, innermost first, while they are empty."""
    for folder in reversed(folders):
        with contextlib.suppress(OSError):  # something else put a file there: it stays
            folder.rmdir()
