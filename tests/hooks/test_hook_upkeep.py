"""A hook does no upkeep on opening the store: a reindex an upgrade owes (migration 0019) would
spend the second a hook has, so the hook saves what it came for and leaves the reindex to the
next server or CLI command. Real ``aletheia-hook`` processes on a store an older release made."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from aletheia_mem.storage.sqlite import SqliteStore
from tests.hooks.test_hooks import hook, memories_of, project_dir
from tests.storage.test_cjk_reindex import found, old_store


def _owed(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as conn:
        return {str(row[0]) for row in conn.execute("SELECT step FROM full_text_reindex")}


def test_a_hook_leaves_an_owed_reindex_to_the_next_process(env: dict[str, str]) -> None:
    data = Path(env["ALETHEIA_DATA_DIR"])
    data.mkdir(mode=0o700, parents=True)
    path = data / "aletheia.db"
    old_store(path)
    edit = {
        "session_id": "s1",
        "cwd": project_dir(env),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {
            "file_path": f"{project_dir(env)}/src/pool.py",
            "old_string": "a",
            "new_string": "b",
        },
    }
    assert hook(env, "post-tool-use", edit).returncode == 0
    assert [m.title for m in memories_of(env, "observation")] == ["Edited src/pool.py"]
    assert _owed(path) == set()  # memories_of opened it as a server would: reindexed then
    store = SqliteStore(path)
    try:
        assert found(store, "连接池") == [1]
    finally:
        store.close()


def test_the_hook_itself_does_not_reindex(env: dict[str, str]) -> None:
    data = Path(env["ALETHEIA_DATA_DIR"])
    data.mkdir(mode=0o700, parents=True)
    path = data / "aletheia.db"
    old_store(path)
    result = hook(env, "session-start", {"session_id": "s1", "cwd": project_dir(env)})
    assert result.returncode == 0
    assert _owed(path) == {"cjk_bigrams", "id_parts", "name_parts"}  # migrations 0020 to 0022
    with closing(sqlite3.connect(path)) as conn:
        [(text,)] = conn.execute("SELECT text FROM memory_fts WHERE rowid = 1").fetchall()
    assert text == "使用数据库连接池来提高性能"  # as the older release indexed it
