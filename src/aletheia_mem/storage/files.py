"""Files only their owner can read: the data folder (0700) and everything in it (0600).

Whatever the umask: modes are set on the open descriptor, and new files are made with
``O_EXCL`` under a random name beside their target, then renamed over it, so a symlink planted
at a guessable temporary path is never followed.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from aletheia_mem.errors import ForbiddenError

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def ensure_private_dir(folder: Path) -> None:
    """Create ``folder`` 0700 (its missing parents as usual); an existing one is left alone."""
    if folder.is_dir():
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
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
