"""A file's path as agents and hooks write it: absolute (``/home/me/shop/src/auth.py``, what
agents pass) or relative to the repository's top folder (``src/auth.py``, what the capture hooks
store). Within the repository a local server works in, ``file`` search finds either from the
other; a path outside it never matches a relative one (it may be another repository's).
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from aletheia_mem.projects import DEFAULT_PROJECT, project_for_directory, project_root

_DRIVE = re.compile(r"^[A-Za-z]:/")  # C:/ once backslashes are slashes


@dataclass(frozen=True)
class RepositoryRoot:
    """The top folder of the repository a local server works in, as written and with its links
    resolved (a tool may name either), and its project."""

    folders: tuple[str, ...]
    project: str


@dataclass(frozen=True)
class PathForm:
    """A spelling of the searched path and the projects it may match in (None: any)."""

    path: str
    projects: tuple[str, ...] | None


def repository_root(cwd: Path) -> RepositoryRoot | None:
    """The folder hooks tell paths relative to (``project_root``: the git work tree's top, else
    ``cwd``) for a server started in ``cwd``; None where it names no project of its own (the
    filesystem root, the home folder: ``default`` gathers unrelated folders)."""
    root = project_root(cwd)
    project = project_for_directory(root)
    if project == DEFAULT_PROJECT:
        return None
    written = posixpath.normpath(_slashed(str(root)))
    try:
        real = posixpath.normpath(_slashed(os.path.realpath(root)))
    except (OSError, ValueError):  # a name the file system cannot take
        real = written
    return RepositoryRoot(tuple(dict.fromkeys([written, real])), project)


def resolved(repository: RepositoryRoot | Path | None) -> RepositoryRoot | None:
    """The repository a search names: itself, or the one holding a server's folder (found once
    per folder: a server's folder does not change)."""
    if isinstance(repository, Path):
        return _repository_of(repository)
    return repository


@cache
def _repository_of(cwd: Path) -> RepositoryRoot | None:
    return repository_root(cwd)


def path_forms(
    path: str, root: RepositoryRoot | None, projects: tuple[str, ...] | None
) -> list[PathForm]:
    """``path`` as given (in ``projects``), and, with a repository: an absolute path inside it
    also relative to its top (in its project only: elsewhere a relative path is another
    repository's), a relative path also under its top (an absolute path is no one else's)."""
    forms = [PathForm(path, projects)]
    if root is None:
        return forms
    text = _slashed(path)
    if _is_absolute(text):
        relative = _inside(posixpath.normpath(text), root)
        mine = projects is None or root.project in projects
        if relative is not None and mine:
            forms.append(PathForm(relative, (root.project,)))
        return forms
    relative = posixpath.normpath(text)
    if relative != ".." and not relative.startswith("../"):
        forms += [PathForm(f"{folder}/{relative}", projects) for folder in root.folders]
    return forms


def _inside(path: str, root: RepositoryRoot) -> str | None:
    """``path`` relative to the repository's top, None when it is not below it."""
    for folder in root.folders:
        if path.startswith(folder.rstrip("/") + "/") and len(path) > len(folder) + 1:
            return path[len(folder.rstrip("/")) + 1 :]
    return None


def _slashed(path: str) -> str:
    return path.replace("\\", "/")


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or bool(_DRIVE.match(path))
