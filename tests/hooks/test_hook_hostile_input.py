"""aletheia-hook against what a host or its platform may hand it: a non-UTF-8 console
encoding, a store another process is writing to, a prompt of megabytes, an excluded project
reached through a link."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from aletheia_mem.domain.episodes import MAX_REQUEST_LENGTH
from tests.hooks.test_hooks import HOOK, project_dir, requests_of


def hook_bytes(
    env: dict[str, str], event: str, payload: object
) -> subprocess.CompletedProcess[bytes]:
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return subprocess.run([HOOK, event], input=data, capture_output=True, env=env, timeout=20)


def save_memory(env: dict[str, str], text: str) -> None:
    aletheia = str(Path(HOOK).parent / "aletheia")
    saved = subprocess.run(
        [aletheia, "save", "--project", "shop", text], env=env, capture_output=True, timeout=20
    )
    assert saved.returncode == 0, saved.stderr


def test_a_prompt_is_read_as_utf8_whatever_the_console_encoding(env: dict[str, str]) -> None:
    # Windows pipes a hook's stdin in the ANSI code page (cp1252); hosts send UTF-8 JSON.
    env["PYTHONIOENCODING"] = "cp1252"
    prompt = "résumé ✓ naïve 😀 done"
    result = hook_bytes(
        env, "user-prompt", {"session_id": "s", "cwd": project_dir(env), "prompt": prompt}
    )
    assert (result.returncode, result.stdout) == (0, b"")
    assert requests_of(env) == [(prompt, "claude-code")]


def test_the_context_is_printed_as_utf8_whatever_the_console_encoding(
    env: dict[str, str],
) -> None:
    save_memory(env, "Deploy with pnpm ☕ ✓ never npm 😀")
    env["PYTHONIOENCODING"] = "cp1252"
    result = hook_bytes(env, "session-start", {"session_id": "s", "cwd": project_dir(env)})
    assert result.returncode == 0
    context = json.loads(result.stdout.decode("utf-8"))["hookSpecificOutput"]["additionalContext"]
    assert "Deploy with pnpm ☕ ✓ never npm 😀" in context


def test_session_start_injects_the_context_while_another_process_writes(
    env: dict[str, str],
) -> None:
    save_memory(env, "Use pnpm, not npm")
    writer = sqlite3.connect(Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another agent's write transaction, held
        result = hook_bytes(env, "session-start", {"session_id": "s2", "cwd": project_dir(env)})
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert result.returncode == 0
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Use pnpm, not npm" in context


def test_a_prompt_of_megabytes_is_stored_cut_and_redacted_not_lost(env: dict[str, str]) -> None:
    # Redacting megabytes of key=value lines takes seconds, past the hook's deadline.
    prompt = "token=ghp_16C7e42F292c6912E7710c838347Ae178B4a see log:\n" + (
        "key=a1B2c3D4e5F6g7H8 " * 250_000
    )
    result = hook_bytes(
        env, "user-prompt", {"session_id": "s", "cwd": project_dir(env), "prompt": prompt}
    )
    assert (result.returncode, result.stdout) == (0, b"")
    [(text, _)] = requests_of(env)
    assert text.startswith("token=[REDACTED] see log:")
    assert "ghp_" not in text
    assert len(text) <= MAX_REQUEST_LENGTH


def test_a_project_excluded_by_key_is_excluded_through_a_link_of_another_name(
    env: dict[str, str],
) -> None:
    # ~/work/current -> ~/code/shop: the folder's own name there is "current", not "shop".
    link = Path(env["HOME"]) / "work" / "current"
    link.parent.mkdir()
    link.symlink_to(project_dir(env), target_is_directory=True)
    (Path(project_dir(env)) / "src").mkdir()
    env["ALETHEIA_EXCLUDE"] = "shop"
    base = {"session_id": "s", "cwd": str(link / "src")}
    start = hook_bytes(env, "session-start", base)
    assert (start.returncode, start.stdout) == (0, b"")
    hook_bytes(env, "user-prompt", {**base, "prompt": "work on the excluded repository"})
    assert not (Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db").exists()
