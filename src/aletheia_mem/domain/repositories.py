"""Which repositories the store knows: recorded where hosts start in a git work tree, offered by
the Rules page's Write to tools.

A recorded path is hostile input (any process of the user may write the store, and a folder may
change after it was recorded): it is recorded resolved, and read back only while it still is a
directory that resolves to itself and holds ``.git``. The instruction files below it are then
held inside it by ``rule_sync`` (a link out of the repository is refused).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from aletheia_mem.projects import project_for_directory

if TYPE_CHECKING:  # a protocol: typing only, off the start path
    from aletheia_mem.storage.contracts import RepositoryLog
    from aletheia_mem.storage.entries import Repository

MAX_PATH_CHARS = 4096
SHOWN = 50


def repository_log(store: object) -> RepositoryLog | None:
    """The store's record of repositories, if it keeps one (a local store does)."""
    repositories = getattr(store, "repositories", None)  # what KeepsRepositories checks
    return repositories() if callable(repositories) else None


def work_tree_of(directory: Path) -> Path | None:
    """The resolved top folder of the git work tree holding ``directory``, else None."""
    try:
        start = Path(os.path.realpath(directory))
    except (OSError, ValueError):  # a NUL byte, a loop of links
        return None
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder if folder != Path(folder.anchor) else None
    return None


def note_repository(repositories: RepositoryLog, directory: Path, now: int) -> Path | None:
    """Record the work tree holding ``directory`` (if any) as seen now; returns it.

    A path the store cannot hold as it is (longer than ``MAX_PATH_CHARS``, or with bytes that
    are not UTF-8) is not recorded: written any other way it would not be read back.
    """
    root = work_tree_of(directory)
    if root is None or len(str(root)) > MAX_PATH_CHARS or not _is_utf8(str(root)):
        return None
    repositories.remember(str(root), project_for_directory(root), now)
    return root


def _is_utf8(text: str) -> bool:
    """Whether ``text`` holds no lone surrogate (what Python makes of bytes that are not UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def still_a_repository(path: str) -> Path | None:
    """``path`` when it is absolute, resolves to itself, is a directory and holds ``.git``."""
    if not path or len(path) > MAX_PATH_CHARS or "\x00" in path or not os.path.isabs(path):
        return None
    try:
        real = os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return None
    folder = Path(real)
    if real != path or not folder.is_dir() or not (folder / ".git").exists():
        return None
    return folder


def known_repositories(repositories: RepositoryLog) -> list[tuple[Repository, Path]]:
    """The recorded repositories that still are, most recently seen first."""
    found = []
    for repository in repositories.recent(SHOWN):
        folder = still_a_repository(repository.path)
        if folder is not None:
            found.append((repository, folder))
    return found
