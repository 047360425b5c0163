"""Files only their owner can read: the data folder (0700) and everything in it (0600).

Whatever the umask: modes are set on the open descriptor, and new files are made with
``O_EXCL`` under a random name beside their target, then renamed over it, so a symlink planted
at a guessable temporary path is never followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from aletheia_mem.errors import ForbiddenError

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def ensure_private_dir(folder: Path) -> None:
    """Create ``folder`` 0700, and its missing parents too (the data folder above the hub's,
    say, as XDG asks); an existing folder is left alone."""
    if folder.is_dir():
        return
    if folder.parent != folder:
        ensure_private_dir(folder.parent)
    try:
        folder.mkdir(mode=PRIVATE_DIR_MODE)
    except FileExistsError:
        return  # another process made it first
    os.chmod(folder, PRIVATE_DIR_MODE)


def tighten(path: Path) -> bool:
    """Make an existing file of ours 0600 if others may read it (a store from an older
    version, a WAL left by one); returns whether it had to."""
    try:
        info = path.stat()
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(path, PRIVATE_FILE_MODE)
            return True
    except OSError:
        pass  # gone, or not ours to change: the store still opens
    return False


_EXCLUSIVE = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC


def _open_new(target: Path, suffix: str) -> tuple[int, Path]:
    """A new 0600 file named ``.<target>.<random><suffix>`` beside ``target``, open.

    ``O_EXCL`` never opens a file (or follows a link) already there. Not ``tempfile``: it
    imports ``shutil`` and costs every store-opening process ~15 ms.
    """
    for _ in range(100):
        path = target.with_name(f".{target.name}.{os.urandom(6).hex()}{suffix}")
        try:
            handle = os.open(path, _EXCLUSIVE, PRIVATE_FILE_MODE)
        except FileExistsError:
            continue
        os.fchmod(handle, PRIVATE_FILE_MODE)  # whatever the umask
        return handle, path
    raise FileExistsError(f"no free temporary name beside {target}")


def new_private_file(target: Path, suffix: str) -> Path:
    """An empty 0600 file with a random name in ``target``'s folder, made with ``O_EXCL``."""
    handle, path = _open_new(target, suffix)
    os.close(handle)
    return path


@contextmanager
def private_writer(target: Path) -> Iterator[IO[str]]:
    """Text written to a new 0600 file beside ``target``, renamed over it once complete.

    The file's data reaches the disk before the rename, and the rename before this returns: a
    power cut never leaves ``target`` empty or cut short, nor the old file back after it was
    said to be written. On any error the partial file is removed and ``target`` is untouched.
    A symlink at ``target`` is replaced, never followed.
    """
    handle, temp = _open_new(target, ".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
        sync_folder(target.parent)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def replace_shared_file(target: Path, text: str, old: os.stat_result | None) -> None:
    """``target`` replaced by ``text`` (UTF-8) at once: a new file beside it, on the disk before
    it is renamed over ``target``, the folder synced after (where it can be).

    For a file another program reads (a tool's config, its instruction file), not a private
    one: the new file keeps ``old``'s mode and owner (the owner where this process may give it
    away: root may, others keep their own), and a file new to ``target`` gets the umask's mode.
    A write cut short (a full disk) leaves the old file whole; a hard link to a file elsewhere
    keeps that file as it was.
    """
    handle, temp = _open_new(target, ".partial")
    try:
        with os.fdopen(handle, "wb") as out:
            os.fchmod(out.fileno(), stat.S_IMODE(old.st_mode) if old else _umask_file_mode())
            if old is not None:
                keep_owner(out.fileno(), old)
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())  # on the disk before its name is: a power cut keeps one whole
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # written: a folder that cannot be synced is no failure
        sync_folder(target.parent)


def keep_owner(handle: int, owner: os.stat_result) -> None:
    """Give the open file ``handle`` the owner of ``owner``'s file, where this process may (root,
    run through sudo, may; others keep their own): else the tool that reads it may no longer."""
    info = os.fstat(handle)
    if (info.st_uid, info.st_gid) == (owner.st_uid, owner.st_gid) or not hasattr(os, "fchown"):
        return
    with contextlib.suppress(PermissionError):  # not ours to give away: it stays ours
        os.fchown(handle, owner.st_uid, owner.st_gid)


def _umask_file_mode() -> int:
    """The mode a new file gets from the umask (``os.umask`` can only be read by setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def sync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries (a file renamed or made in it) to the disk. A file system
    that cannot sync a folder (EINVAL: some network and FUSE mounts) is left as it is."""
    handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        os.fsync(handle)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(handle)


def write_private_text(target: Path, text: str) -> None:
    """Replace ``target`` with ``text`` in a 0600 file, atomically."""
    with private_writer(target) as out:
        out.write(text)


def real_target_inside(path: Path, root: Path) -> Path:
    """The file that writing ``path`` changes (links followed), when it lies inside ``root``.

    Raises:
        ForbiddenError: ``path``, or a folder on its way, is a link that leads out of ``root``
            (or round in a loop).
    """
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        raise ForbiddenError(f"{path} is a link that leads round in a loop.") from None
    real_root = root.resolve()
    if real != real_root and real_root not in real.parents:
        raise ForbiddenError(
            f"{path} is a link to {real}, outside {root}; nothing was written through it."
            " Remove the link, or change that file yourself."
        )
    return real
