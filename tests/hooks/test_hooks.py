"""aletheia-hook, run as Claude Code runs it: a real process, JSON on stdin, fail open."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aletheia_mem.domain.episodes import clean_request, strip_private
from aletheia_mem.storage.base import Memory, MemoryQuery
from aletheia_mem.storage.sqlite import SqliteStore

HOOK = str(Path(sys.executable).parent / "aletheia-hook")


def hook(
    env: dict[str, str], event: str | None, payload: object
) -> subprocess.CompletedProcess[str]:
    args = [HOOK] if event is None else [HOOK, event]
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(args, input=data, capture_output=True, text=True, env=env, timeout=10)


def project_dir(env: dict[str, str]) -> str:
    return str(Path(env["HOME"]) / "code" / "shop")


def memories_of(env: dict[str, str], kind: str) -> list[Memory]:
    """The memories of ``kind`` the hooks saved in project shop, oldest first."""
    path = Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db"
    if not path.exists():
        return []
    store = SqliteStore(path)
    try:
        query = MemoryQuery(projects=("shop",), kind=kind, order="date_asc", limit=100)
        return sorted(store.search_memories(query, now=0), key=lambda memory: memory.id)
    finally:
        store.close()


def requests_of(env: dict[str, str]) -> list[tuple[str, str]]:
    store = SqliteStore(Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db")
    try:
        return [(r.text, r.tool) for r in store.recent_requests("shop", 50)]
    finally:
        store.close()


def test_session_start_injects_the_context_as_additional_context(env: dict[str, str]) -> None:
    payload = {"session_id": "s1", "cwd": project_dir(env), "hook_event_name": "SessionStart"}
    result = hook(env, "session-start", payload)
    assert result.returncode == 0
    answer = json.loads(result.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<aletheia-memory>\n")
    assert "# Memory for shop\n" in context


def test_prompts_show_under_requests_without_private_text_or_secrets(env: dict[str, str]) -> None:
    base = {"session_id": "s1", "cwd": project_dir(env)}
    hook(env, "session-start", base)
    prompt = (
        "fix the login bug <private>my password is hunter2</private> and use "
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789 <PRIVATE>unclosed secret to the end"
    )
    assert hook(env, "user-prompt", {**base, "prompt": prompt}).stdout == ""
    [(text, tool)] = requests_of(env)
    assert tool == "claude-code"
    assert text == "fix the login bug  and use [REDACTED]"
    later = hook(env, "session-start", {"session_id": "s2", "cwd": project_dir(env)})
    context = json.loads(later.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "## Requests\n" in context
    assert "(claude-code) fix the login bug and use [REDACTED]" in context


def test_one_session_is_one_episode_that_the_end_closes(env: dict[str, str]) -> None:
    base = {"session_id": "abc", "cwd": project_dir(env)}
    hook(env, None, {**base, "hook_event_name": "SessionStart"})
    hook(env, None, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "one"})
    hook(env, None, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "two"})
    assert hook(env, None, {**base, "hook_event_name": "SessionEnd"}).returncode == 0
    store = SqliteStore(Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db")
    try:
        episodes = list(store.export_rows("episodes"))
        requests = list(store.export_rows("episode_requests"))
    finally:
        store.close()
    assert len(episodes) == 1
    assert episodes[0]["ended_at"] is not None
    assert episodes[0]["project"] == "shop" and episodes[0]["tool"] == "claude-code"
    assert [r["text"] for r in requests] == ["one", "two"]
    assert {r["episode_id"] for r in requests} == {episodes[0]["id"]}


@pytest.mark.parametrize("how", ["config", "config-misspelt", "env-key", "env-path"])
def test_excluded_projects_capture_nothing(env: dict[str, str], how: str) -> None:
    if how.startswith("config"):
        # A misspelt key makes the file invalid, which stops capture: it never turns off the
        # exclusion unseen.
        key = "exclude_project" if how == "config-misspelt" else "exclude_projects"
        data_dir = Path(env["ALETHEIA_DATA_DIR"])
        data_dir.mkdir(parents=True)
        (data_dir / "config.json").write_text(json.dumps({key: ["Shop"]}))
    elif how == "env-key":
        env["ALETHEIA_EXCLUDE"] = "other, shop"
    else:
        env["ALETHEIA_EXCLUDE"] = project_dir(env)
    base = {"session_id": "s1", "cwd": str(Path(project_dir(env)) / "src")}
    start = hook(env, "session-start", base)
    assert (start.returncode, start.stdout) == (0, "")
    hook(env, "user-prompt", {**base, "prompt": "secret project work"})
    assert not (Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db").exists()


@pytest.mark.parametrize(
    "payload", ["", "not json", "[1, 2]", '{"prompt": 5}', '{"cwd": 7, "prompt": "x"}']
)
def test_bad_input_exits_zero_silently(env: dict[str, str], payload: str) -> None:
    result = hook(env, "user-prompt", payload)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_an_unusable_store_fails_open(env: dict[str, str], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    env["ALETHEIA_DATA_DIR"] = str(blocker / "sub")  # a folder below a file: cannot be made
    result = hook(env, "session-start", {"session_id": "s", "cwd": project_dir(env)})
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_unknown_event_does_nothing(env: dict[str, str]) -> None:
    result = hook(env, "pre-tool-use", {"cwd": project_dir(env)})
    assert (result.returncode, result.stdout) == (0, "")


def test_a_hook_process_loads_no_cli_http_or_model_code(env: dict[str, str]) -> None:
    # Its time budget (~100 ms a call) is measured by bench/startup_bench.py, not here.
    payload = json.dumps({"session_id": "t", "cwd": project_dir(env), "prompt": "hello"})
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "aletheia_mem.hooks", "user-prompt"],
        input=payload, capture_output=True, text=True, env=env, timeout=10,
    )  # fmt: skip
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    assert "aletheia_mem.hooks.main" in imported
    heavy = {"click", "tomlkit", "starlette", "uvicorn", "numpy", "aletheia_mem.cli.main"}
    assert heavy & imported == set()
    assert requests_of(env) == [("hello", "claude-code")]  # it did its work


def test_private_blocks_are_removed_in_any_case_and_across_lines() -> None:
    assert strip_private("a <private>b\nc</private> d") == "a  d"
    assert strip_private("a <Private attr='x'>b</PRIVATE > d") == "a  d"
    assert strip_private("keep <private>drop everything after") == "keep "
    assert clean_request("  <private>all</private>  ") == ""


def test_a_prompt_keeps_no_nul_or_lone_surrogate_so_its_store_exports_and_imports() -> None:
    assert clean_request("fix\x00 the \ud800build") == "fix the ?build"


def test_session_start_records_the_repository_for_write_to_tools(env: dict[str, str]) -> None:
    (Path(project_dir(env)) / "src").mkdir()
    hook(env, "session-start", {"session_id": "s1", "cwd": project_dir(env) + "/src"})
    store = SqliteStore(Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db")
    try:
        seen = [(r.path, r.project) for r in store.repositories().recent(5)]
    finally:
        store.close()
    assert seen == [(str(Path(project_dir(env)).resolve()), "shop")]
