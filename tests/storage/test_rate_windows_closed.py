"""A SQLite hub store's rate windows (their own ``-rate`` file beside it) are closed with the
store: the hub closes its store at shutdown, and the windows' connections were left to the
garbage collector (Python 3.13 reports each as an unclosed database). Real SQLite files."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.rate_windows import rate_file

pytestmark = pytest.mark.sqlite_only


def _open_on(path: Path) -> int:
    """How many of this process's file descriptors are open on ``path``."""
    target = str(path.resolve())
    folder = Path("/proc/self/fd")
    count = 0
    for entry in os.listdir(folder):
        try:
            count += os.readlink(folder / entry) == target
        except OSError:  # closed since it was listed
            continue
    return count


def test_the_rate_windows_file_is_closed_with_the_store(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "hub.db")
    windows = store.rate_windows()
    assert store.rate_windows() is windows  # opened once: every caller takes turns on it
    assert windows.hit("token:1", 1, 60, 60_000, 1) is None
    other = threading.Thread(target=windows.hit, args=("token:1", 1, 60, 60_000, 2))
    other.start()
    other.join()  # a connection of a thread that ended
    assert _open_on(rate_file(store.path)) >= 1
    store.close()
    assert _open_on(rate_file(store.path)) == 0
