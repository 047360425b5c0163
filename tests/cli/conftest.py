"""CLI fixtures: an isolated HOME with a project folder as the working directory."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from aletheia_mem.cli.main import cli


@dataclass
class Workspace:
    home: Path
    project: Path
    data_dir: Path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """HOME, XDG folders and the store in tmp_path; the cwd is a git repo named ``shop``."""
    home = tmp_path / "home"
    project = home / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    for name in list(os.environ):
        if name.startswith("ALETHEIA_") or name in (
            "CODEX_HOME",
            "XDG_CONFIG_HOME",
            "CLAUDE_CONFIG_DIR",
        ):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(project)
    return Workspace(home=home, project=project, data_dir=home / ".aletheia")


Invoke = Callable[..., Result]


@pytest.fixture
def run(workspace: Workspace) -> Invoke:
    """``run("search", "pnpm")``: the real CLI in process, exceptions not swallowed."""

    def invoke(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)

    return invoke


def json_of(result: Result) -> Any:
    return json.loads(result.stdout)


DiskEvent = tuple[str, Any]


@pytest.fixture
def disk_events(monkeypatch: pytest.MonkeyPatch) -> list[DiskEvent]:
    """Each ``os.fsync`` (the file's inode and size, None for a folder) and ``os.replace`` (its
    target) in order, both still doing their work: how a write shows it survives a power cut."""
    events: list[DiskEvent] = []
    fsync, replace = os.fsync, os.replace

    def spied_fsync(fd: int) -> None:
        info = os.fstat(fd)
        events.append(
            ("fsync", (info.st_ino, None if stat.S_ISDIR(info.st_mode) else info.st_size))
        )
        fsync(fd)

    def spied_replace(source: Any, target: Any) -> None:
        events.append(("replace", Path(target)))
        replace(source, target)

    monkeypatch.setattr(os, "fsync", spied_fsync)
    monkeypatch.setattr(os, "replace", spied_replace)
    return events


def durable_write(path: Path) -> list[DiskEvent]:
    """The events of a write that survives a power cut: the whole new file synced, renamed to
    ``path``, then the folder synced."""
    written = path.stat()
    return [
        ("fsync", (written.st_ino, written.st_size)),
        ("replace", path),
        ("fsync", (path.parent.stat().st_ino, None)),
    ]


@contextmanager
def made_immutable(path: Path) -> Iterator[bool]:
    """``path`` immutable (``chattr +i``: even root cannot replace it) while inside, where the
    file system and this user allow; yields whether it is."""
    chattr = shutil.which("chattr")
    if not chattr or subprocess.run([chattr, "+i", str(path)], check=False).returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)
