"""A store a newer version of Aletheia made (its schema past the last migration known here, as
after a downgrade): every entry point says so in one line with exit code 10 and leaves the file
as it was; it never migrates down or writes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from aletheia_mem.errors import StoreTooNewError
from aletheia_mem.storage import migrate
from aletheia_mem.storage.sqlite import SqliteStore
from tests.safety.entry_points import mcp_lines, run_command

LATEST = migrate._steps()[-1][0]
EXIT_TOO_NEW = 10


def newer_store(home: Path) -> Path:
    """A store with a note, then migrated one step further than this version knows."""
    path = home / ".aletheia" / "aletheia.db"
    path.parent.mkdir(parents=True)
    SqliteStore(path).close()
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("CREATE TABLE future_things (id INTEGER PRIMARY KEY)")
        conn.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (LATEST + 1,))
    return path


def _said_once(result: subprocess.CompletedProcess[str], store: Path) -> None:
    assert result.returncode == EXIT_TOO_NEW, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"The store {store} was made by a newer version of Aletheia" in result.stderr
    assert f"(schema {LATEST + 1}; this version knows up to {LATEST})" in result.stderr


def test_every_entry_point_refuses_a_store_a_newer_version_made(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = newer_store(home)
    before = store.read_bytes()
    for args in (("search", "pnpm"), ("save", "a new note"), ("export",), ("sync",)):
        _said_once(run_command(home, "aletheia", *args), store)
    mcp = run_command(home, "aletheia-mcp", stdin=mcp_lines())
    assert mcp.stderr.startswith("aletheia-mcp: The store ")
    _said_once(mcp, store)
    server = run_command(home, "aletheia-server", "--port", "0")
    assert server.stderr.startswith("aletheia-server: The store ")
    _said_once(server, store)
    hub = run_command(home, "aletheia-sync", "--hub-db", str(store), "--port", "0")
    assert hub.stderr.startswith("aletheia-sync: The store ")
    _said_once(hub, store)
    payload = json.dumps({"session_id": "s1", "cwd": str(home), "prompt": "hello"})
    hook = run_command(home, "aletheia-hook", "user-prompt", stdin=payload)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")  # hooks stay silent
    doctor = run_command(home, "aletheia", "doctor")
    assert doctor.returncode == 1 and "was made by a newer version" in doctor.stdout
    assert store.read_bytes() == before
    assert not Path(f"{store}-wal").exists()


@pytest.mark.sqlite_only
def test_opening_a_newer_store_raises_and_changes_nothing(tmp_path: Path) -> None:
    store = newer_store(tmp_path)
    before = store.read_bytes()
    with pytest.raises(StoreTooNewError) as raised:
        SqliteStore(store)
    assert raised.value.exit_code == EXIT_TOO_NEW
    assert store.read_bytes() == before
