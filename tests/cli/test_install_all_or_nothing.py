"""``aletheia install claude-code --hooks --write`` changes two files: both, or neither. A hooks
file it cannot write leaves the MCP entry unwritten too, with one error line."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from aletheia_mem.cli import config_writes
from tests.cli.conftest import Invoke, Workspace, made_immutable

CLAUDE_JSON = '{\n  "numStartups": 3,\n  "mcpServers": {}\n}\n'
SETTINGS = '{\n  "model": "opus"\n}\n'


def _files(workspace: Workspace, *, claude_json: bool) -> tuple[Path, Path]:
    """``~/.claude.json`` (when asked for, mode 640) and ``~/.claude/settings.json``."""
    entry_file = workspace.home / ".claude.json"
    settings = workspace.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(SETTINGS, encoding="utf-8")
    if claude_json:
        entry_file.write_text(CLAUDE_JSON, encoding="utf-8")
        entry_file.chmod(0o640)
    return entry_file, settings


def _snapshot(workspace: Workspace) -> dict[str, tuple[bytes, int]]:
    """Every file under HOME outside the project: its bytes and mode."""
    found = {}
    for path in sorted(workspace.home.rglob("*")):
        if path.is_file() and workspace.project not in path.parents:
            found[str(path)] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return found


@contextmanager
def _unwritable(path: Path) -> Iterator[None]:
    """A file whose mode says writable but that cannot be replaced: immutable as root, else
    inside a folder this user may not write (its backup cannot be made)."""
    with made_immutable(path) as immutable:
        if immutable:
            yield
            return
    if os.geteuid() == 0:
        pytest.skip("needs chattr as root: root writes any folder")
    path.parent.chmod(0o555)
    try:
        yield
    finally:
        path.parent.chmod(0o755)


@pytest.mark.parametrize("claude_json", [True, False], ids=["entry-file-exists", "no-entry-file"])
def test_a_read_only_hooks_file_leaves_the_mcp_entry_unwritten_too(
    run: Invoke, workspace: Workspace, claude_json: bool
) -> None:
    entry_file, settings = _files(workspace, claude_json=claude_json)
    settings.chmod(0o444)
    before = _snapshot(workspace)
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {settings} is read-only; make it writable (chmod u+w) and run this again.\n"
    )
    assert result.stdout == ""
    assert _snapshot(workspace) == before  # no entry, no backup
    assert entry_file.exists() is claude_json


@pytest.mark.parametrize("claude_json", [True, False], ids=["entry-file-exists", "no-entry-file"])
def test_a_hooks_file_that_fails_to_write_puts_the_mcp_entry_file_back(
    run: Invoke, workspace: Workspace, claude_json: bool
) -> None:
    entry_file, settings = _files(workspace, claude_json=claude_json)
    before = _snapshot(workspace)
    with _unwritable(settings):
        result = run("install", "claude-code", "--hooks", "--write")
        after = _snapshot(workspace)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: Cannot write {settings}: ")
    assert result.stderr.endswith(f"; nothing was changed ({entry_file} put back as it was).\n")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert after == before  # the same bytes and modes, and no backup left beside them
    assert entry_file.exists() is claude_json


def test_the_json_report_of_a_refused_hooks_file_is_one_error(
    run: Invoke, workspace: Workspace
) -> None:
    _, settings = _files(workspace, claude_json=True)
    settings.chmod(0o444)
    before = _snapshot(workspace)
    result = run("install", "claude-code", "--hooks", "--write", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "error": {
            "code": "config_file",
            "message": f"{settings} is read-only; make it writable (chmod u+w) and run this again.",
        }
    }
    assert _snapshot(workspace) == before


def test_both_files_are_written_when_both_can_be(run: Invoke, workspace: Workspace) -> None:
    entry_file, settings = _files(workspace, claude_json=True)
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert "aletheia" in json.loads(entry_file.read_text(encoding="utf-8"))["mcpServers"]
    assert "SessionStart" in json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    assert stat.S_IMODE(entry_file.stat().st_mode) == 0o640


def _full_disk_at(monkeypatch: pytest.MonkeyPatch, failing: Path) -> None:
    """Writing ``failing`` fails as on a full disk; every other file is written."""
    write = config_writes.replace_shared_file

    def replace(path: Path, text: str, old: os.stat_result | None) -> None:
        if path == failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        write(path, text, old)

    monkeypatch.setattr(config_writes, "replace_shared_file", replace)


def test_a_failed_write_leaves_no_folder_it_made(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = workspace.home / ".cursor" / "mcp.json"
    _full_disk_at(monkeypatch, target)
    result = run("install", "cursor", "--write")
    assert result.exit_code == 1
    assert result.stderr == f"Error: Cannot write {target}: [Errno 28] No space left on device\n"
    assert not target.parent.exists()


def test_a_failed_write_keeps_an_empty_folder_that_was_there(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir()
    _full_disk_at(monkeypatch, target)
    assert run("install", "cursor", "--write").exit_code == 1
    assert target.parent.is_dir() and not any(target.parent.iterdir())


def test_an_undone_install_removes_the_folder_it_made_for_the_hooks_file(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry_file = workspace.home / ".claude.json"
    entry_file.write_text(CLAUDE_JSON, encoding="utf-8")
    settings = workspace.home / ".claude" / "settings.json"
    before = _snapshot(workspace)
    _full_disk_at(monkeypatch, settings)
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 1
    assert result.stderr.endswith(f"; nothing was changed ({entry_file} put back as it was).\n")
    assert _snapshot(workspace) == before
    assert not settings.parent.exists()
