"""`aletheia import` reads and checks its whole input before it writes: while a slow pipe is
still being read, the store's write lock is free (another process may write), and a bad line
at the end leaves the store empty. A real import process, a real SQLite file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.domain.test_import_check import memory_data

pytestmark = pytest.mark.sqlite_only
HEADER = {"type": "header", "format": "aletheia-export", "version": 1}


def _line(number: int) -> str:
    data = memory_data(id=number, uid=f"{number:032x}", title=f"note {number}", text=f"n{number}")
    return json.dumps({"type": "memory", "data": data}) + "\n"


def _importing(data_dir: Path) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    return subprocess.Popen(
        [sys.executable, "-m", "aletheia_mem", "import", "-", "--no-progress"],
        env={**env, "ALETHEIA_DATA_DIR": str(data_dir), "HOME": str(data_dir)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _writes_at_once(store: Path, wait: float = 0) -> None:
    """A write transaction begun within ``wait`` seconds: nobody holds the write lock longer
    (opening the store writes, briefly; an import holding it while it reads holds it until its
    input ends, which the test sends only after its writes)."""
    with closing(sqlite3.connect(store, timeout=wait, isolation_level=None)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")


def _rows(store: Path) -> int:
    with closing(sqlite3.connect(store)) as conn:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def _once_open(store: Path, process: subprocess.Popen[str]) -> None:
    """Wait until the import has made and opened the store (which writes, briefly)."""
    begun = time.monotonic()
    while time.monotonic() - begun < 30 and process.poll() is None:
        try:
            if store.exists():
                _writes_at_once(store)
                return
        except sqlite3.OperationalError:
            pass  # still opening it
        time.sleep(0.05)
    pytest.fail("the import never let another process write")


@pytest.mark.parametrize("last", ["good", "bad"])
def test_the_write_lock_is_free_while_the_import_reads_its_input(tmp_path: Path, last: str) -> None:
    store = tmp_path / "aletheia.db"
    with _importing(tmp_path) as process:  # on the way out: pipes closed, the process waited for
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(HEADER) + "\n" + "".join(_line(n) for n in range(1, 50)))
            process.stdin.flush()
            _once_open(store, process)
            # The import has read those lines and waits for more: every write finds the lock
            # free.
            for _ in range(20):
                _writes_at_once(store, wait=5)
                time.sleep(0.1)
            process.stdin.write(_line(50) if last == "good" else '{"type": "memory"}\n')
        finally:
            process.stdin.close()
        process.wait(timeout=60)  # its few output lines fit the pipes
        assert process.stdout is not None and process.stderr is not None
        out, err = process.stdout.read(), process.stderr.read()
    if last == "good":
        assert process.returncode == 0, err
        assert out == f"Imported 50 records into {store}.\n"
        assert _rows(store) == 50
    else:
        assert process.returncode == 2, out + err
        assert err == "Error: Line 51 has no data object. Nothing was imported.\n"
        assert not store.exists() or _rows(store) == 0
