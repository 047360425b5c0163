"""A server whose set-up fails after its store opened (the semantic engine, an interrupt) closes
the store: no connection to the file is left behind for the garbage collector (Python 3.13
reports such a connection as unclosed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aletheia_mem.config import load_settings
from aletheia_mem.server import wiring


def _open_files(path: Path) -> int:
    """How many of this process's file descriptors are open on ``path``."""
    folder = Path("/proc/self/fd")
    count = 0
    for fd in os.listdir(folder):
        try:
            count += Path(os.readlink(folder / fd)) == path
        except OSError:  # closed while listed
            continue
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/self/fd")
@pytest.mark.parametrize("opener", ["open_app", "open_hub_app"])
def test_a_failed_set_up_closes_the_store_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opener: str
) -> None:
    def fail(*args: object) -> None:
        raise RuntimeError("the semantic engine could not start")

    monkeypatch.setattr(wiring, "_context", fail)
    settings = load_settings({"ALETHEIA_DATA_DIR": str(tmp_path)})
    database = tmp_path / "aletheia.db"
    with pytest.raises(RuntimeError) as failure:
        if opener == "open_app":
            wiring.open_app(settings)
        else:
            wiring.open_hub_app(settings, database)
    assert failure.value.__traceback__ is not None  # the frames that held the store live on
    assert database.exists() and _open_files(database) == 0
