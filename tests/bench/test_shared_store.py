"""Benchmark variants compare on one store: seeded uids, one checkpointed file for all."""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from shared_store import prebuilt_stores, schema_digest  # noqa: E402
from store_builder import build_store  # noqa: E402

NOW = 1_780_000_000_000


def memories(store: Path) -> list[tuple[str, int, str]]:
    with closing(sqlite3.connect(store)) as conn, conn:
        rows = conn.execute(  # the notes: the 5 lists get their uids from put_work_state
            "SELECT uid, created_at, title FROM memories WHERE kind = 'note' ORDER BY id"
        ).fetchall()
    return [tuple(row) for row in rows]


def test_two_builds_with_the_same_now_are_the_same_memories_and_uids(tmp_path: Path) -> None:
    build_store(tmp_path / "one.db", "shop", 40, now=NOW)
    build_store(tmp_path / "two.db", "shop", 40, now=NOW)
    first = memories(tmp_path / "one.db")
    assert len(first) >= 40
    assert first == memories(tmp_path / "two.db")
    assert all(len(uid) == 32 and uid[12] == "7" for uid, _, _ in first)  # version 7, as made


def test_variants_on_the_same_schema_share_one_checkpointed_file(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    variants = {"this checkout": {}, "baseline": {"PYTHONPATH": str(ROOT / "src")}}
    stores = prebuilt_stores(variants, tmp_path, cwd, 30)
    assert stores["this checkout"] == stores["baseline"]
    store = stores["baseline"]
    assert not Path(f"{store}-wal").exists() or Path(f"{store}-wal").stat().st_size == 0
    assert len(memories(store)) >= 30


def test_other_schema_steps_are_told_apart(tmp_path: Path) -> None:
    steps = tmp_path / "src" / "aletheia_mem" / "storage" / "migrations"
    steps.mkdir(parents=True)
    for step in sorted((ROOT / "src" / "aletheia_mem" / "storage" / "migrations").glob("*.sql")):
        (steps / step.name).write_bytes(step.read_bytes())
    assert schema_digest(tmp_path / "src") == schema_digest(ROOT / "src")
    (steps / "999_more.sql").write_text("CREATE TABLE more (id INTEGER);\n")
    assert schema_digest(tmp_path / "src") != schema_digest(ROOT / "src")
