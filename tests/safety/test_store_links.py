"""A symbolic link where the store should be that leads to no file (a dangling link, a loop):
a broken store (exit code 8) told in one line by every command, never a traceback, never taken
for a store not made yet."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.safety.entry_points import mcp_lines, run_command

EXIT_BROKEN = 8
TARGETS = {
    "dangling": ("/nonexistent/x.db", "points to /nonexistent/x.db, which does not exist"),
    "loop": ("aletheia.db", "leads back to itself (a loop of symbolic links)"),
}


@pytest.mark.parametrize("kind", sorted(TARGETS))
def test_a_link_that_leads_nowhere_is_a_broken_store_everywhere(tmp_path: Path, kind: str) -> None:
    home = tmp_path / "home"
    store = home / ".aletheia" / "aletheia.db"
    store.parent.mkdir(parents=True)
    target, told = TARGETS[kind]
    os.symlink(target, store)
    for command in (["save", "a note"], ["search", "note"]):
        result = run_command(home, "aletheia", *command)
        assert result.returncode == EXIT_BROKEN, (command, result.stderr)
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith(f"Error: The store {store} is a symbolic link that {told}")
    doctor = run_command(home, "aletheia", "doctor")
    assert doctor.returncode == 1
    assert "not created yet" not in doctor.stdout
    assert f"is a symbolic link that {told}" in doctor.stdout
    mcp = run_command(home, "aletheia-mcp", stdin=mcp_lines())
    assert mcp.returncode == EXIT_BROKEN
    lines = mcp.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"is a symbolic link that {told}" in lines[0]
    assert os.path.islink(store)  # left as it was


def test_an_io_error_is_told_in_one_line(tmp_path: Path) -> None:
    """SQLite's "disk I/O error" (here: the -shm file is a FIFO, which cannot be truncated) is
    told in one line that names it and what to check, never a traceback."""
    home = tmp_path / "home"
    assert run_command(home, "aletheia", "save", "a note").returncode == 0
    store = home / ".aletheia" / "aletheia.db"
    os.mkfifo(store.with_name("aletheia.db-shm"))
    for command in (["save", "another note"], ["search", "note"]):
        result = run_command(home, "aletheia", *command)
        assert result.returncode == EXIT_BROKEN, (command, result.stderr)
        assert result.stderr == (
            f"Error: The store {store} cannot be read or written: the system reported an I/O"
            " error (SQLITE_IOERR_SHMOPEN). Check the disk, and that aletheia.db-wal and"
            " aletheia.db-shm beside it are plain files (`aletheia doctor` checks a store).\n"
        )
