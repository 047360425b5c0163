"""``aletheia export -o FILE`` stopped by SIGTERM or SIGHUP while it writes: the process ends by
the signal as before, FILE keeps its old content, and no partial file is left beside it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import transfer
from aletheia_mem.storage.open import open_local_store
from tests.cli.test_transfer_large import _records

pytestmark = pytest.mark.sqlite_only

ALETHEIA = Path(sys.executable).parent / "aletheia"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose export takes a while (~40 MB of memories)."""
    folder = tmp_path_factory.mktemp("data")
    store = open_local_store(folder / "aletheia.db")
    try:
        transfer.import_lines(store, iter(_records(1000)), now=system_clock())
    finally:
        store.close()
    return folder


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_export_leaves_no_partial_file(
    data_dir: Path, tmp_path: Path, signum: int
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "backup.jsonl"
    target.write_text("old backup\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env["ALETHEIA_DATA_DIR"] = str(data_dir)
    process = subprocess.Popen(
        [str(ALETHEIA), "export", "-o", str(target), "--no-progress"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the partial file is there and growing: mid-export
        partial = [p for p in out.iterdir() if p.name.endswith(".partial")]
        if partial and partial[0].stat().st_size > 0:
            break
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        time.sleep(0.005)
    else:
        pytest.fail("the export never began writing")
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == -signum, stderr  # ended by the signal: exit 128+N in a shell
    assert sorted(p.name for p in out.iterdir()) == ["backup.jsonl"]
    assert target.read_text() == "old backup\n"
