"""One prebuilt store for every variant of a comparison, when their schemas allow it.

Two builds are two stores: their uids, timestamps and so the pages of their indexes differ, and
a run of saves on one may meet a full merge of the full-text index or a WAL checkpoint that the
same saves on the other do not. So a comparison builds its store once (this checkout's code),
checkpoints it into one complete file and copies that file for each variant. Only when a
``--baseline-src`` knows other SQLite schema steps (it would migrate the store, or refuse it)
does each variant get a store of its own, said on stderr: its ratios then carry the stores'
differences too.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import aletheia_mem
from aletheia_mem.config import DB_FILE_NAME
from aletheia_mem.projects import project_for_directory
from store_builder import build_store

MIGRATIONS = Path("aletheia_mem", "storage", "migrations")


def build_with(env: dict[str, str], store: Path, cwd: Path, memories: int) -> None:
    """Build the store with the variant's own code (the same seed: the same memories), so that
    it is of that code's schema and none migrates it in its timed starts."""
    if "PYTHONPATH" not in env:
        build_store(store, project_for_directory(cwd), memories)
        return
    code = (
        "import sys; from pathlib import Path; from store_builder import build_store;"
        " from aletheia_mem.projects import project_for_directory;"
        " build_store(Path(sys.argv[1]), project_for_directory(Path(sys.argv[2])),"
        " int(sys.argv[3]))"
    )
    path = os.pathsep.join((env["PYTHONPATH"], str(Path(__file__).parent)))
    subprocess.run(
        [sys.executable, "-c", code, str(store), str(cwd), str(memories)],
        env={**os.environ, "PYTHONPATH": path},
        check=True,
    )


def schema_digest(src: Path) -> str:
    """A digest of the SQLite schema steps (names and text) a ``src`` folder ships."""
    digest = hashlib.sha256()
    for step in sorted((src / MIGRATIONS).glob("*.sql")):
        digest.update(step.name.encode() + b"\0" + step.read_bytes() + b"\0")
    return digest.hexdigest()


def variant_src(env: dict[str, str]) -> Path:
    """The ``src`` folder a variant runs (``PYTHONPATH``'s first entry, else this checkout)."""
    if env.get("PYTHONPATH"):
        return Path(env["PYTHONPATH"].split(os.pathsep)[0])
    return Path(aletheia_mem.__file__).resolve().parents[1]


def checkpointed(store: Path) -> Path:
    """``store`` with its WAL written back into the file, so that a copy of the file is whole."""
    conn = sqlite3.connect(store)
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.close()
    wal = store.with_name(store.name + "-wal")
    if busy or (wal.exists() and wal.stat().st_size):
        raise RuntimeError(f"{store}: its WAL could not be checkpointed")
    return store


def prebuilt_stores(
    variants: dict[str, dict[str, str]], folder: Path, cwd: Path, memories: int
) -> dict[str, Path]:
    """Each variant's prebuilt store: one file for all when their schema steps are the same."""
    digests = {name: schema_digest(variant_src(env)) for name, env in variants.items()}
    first = next(iter(variants))
    if len(set(digests.values())) == 1:
        store = folder / "prebuilt.db"
        build_with(variants[first], store, cwd, memories)
        return dict.fromkeys(variants, checkpointed(store))
    print(
        "the variants' schema steps differ: each builds its own store, so the figures also"
        " differ by the stores (their index merges and WAL checkpoints fall elsewhere)",
        file=sys.stderr,
    )
    stores = {}
    for name, env in variants.items():
        stores[name] = folder / f"prebuilt-{name.replace(' ', '-')}.db"
        build_with(env, stores[name], cwd, memories)
        checkpointed(stores[name])
    return stores


def copy_store(store: Path, data_dir: Path) -> Path:
    """A fresh data folder holding a copy of ``store``."""
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    shutil.copyfile(store, data_dir / DB_FILE_NAME)
    return data_dir
