"""A hook's watchdog counts its own work, not time spent waiting: a hook that waits for its input
or for another process's write still saves, and one whose input never comes still ends. Real
``aletheia-hook`` processes, a real store."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import IO

from tests.hooks.test_hooks import HOOK, hook, memories_of, project_dir


def _edit_payload(env: dict[str, str], name: str) -> str:
    path = f"{project_dir(env)}/src/{name}"
    return json.dumps(
        {
            "session_id": "s1",
            "cwd": project_dir(env),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"},
        }
    )


def _start(env: dict[str, str], stdin: IO[str] | int = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [HOOK, "post-tool-use"],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _open_store(env: dict[str, str]) -> None:
    result = hook(env, "session-start", {"session_id": "s1", "cwd": project_dir(env)})
    assert result.returncode == 0


def test_a_hook_whose_input_comes_late_still_saves(env: dict[str, str]) -> None:
    # A machine busy with other work (or dozens of hooks at once) stretches a hook's clock time;
    # a watchdog of one second by the clock dropped observations it had nearly saved.
    _open_store(env)
    process = _start(env)
    time.sleep(1.5)
    assert process.communicate(_edit_payload(env, "late.py"), timeout=10) == ("", "")
    assert [m.title for m in memories_of(env, "observation")] == ["Edited src/late.py"]


def test_a_hook_waits_for_another_process_writing_to_the_store(
    env: dict[str, str], tmp_path: Path
) -> None:
    _open_store(env)
    payload = tmp_path / "payload.json"
    payload.write_text(_edit_payload(env, "waited.py"))
    writer = sqlite3.connect(Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db", isolation_level=None)
    with payload.open() as stdin:
        try:
            writer.execute("BEGIN IMMEDIATE")
            process = _start(env, stdin)
            time.sleep(0.5)  # the hook has started and waits for the write lock
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        assert process.communicate(timeout=10) == ("", "")
    assert process.returncode == 0
    assert [m.title for m in memories_of(env, "observation")] == ["Edited src/waited.py"]


def test_a_hook_whose_input_never_ends_stops_by_itself(env: dict[str, str]) -> None:
    _open_store(env)
    process = _start(env)
    assert process.stdin is not None
    process.stdin.write(_edit_payload(env, "never.py")[:20])
    process.stdin.flush()
    try:
        assert process.wait(timeout=15) == 0
    finally:
        process.kill()
        process.communicate()
    assert memories_of(env, "observation") == []
