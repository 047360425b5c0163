"""aletheia-hook with Gemini CLI's payloads, as its bundle sends them: real processes, a real
store. Gemini names its events SessionStart, BeforeAgent, AfterTool and SessionEnd, its file
tools write_file and replace; the installed command sets ALETHEIA_TOOL=gemini-cli."""

from __future__ import annotations

import json

import pytest

from tests.hooks.test_hooks import hook, memories_of, project_dir, requests_of

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def gemini(env: dict[str, str]) -> dict[str, str]:
    return {**env, "ALETHEIA_TOOL": "gemini-cli"}


def _base(env: dict[str, str], event: str, session: str = "g1") -> dict[str, object]:
    return {
        "session_id": session,
        "transcript_path": "",
        "cwd": project_dir(env),
        "hook_event_name": event,
        "timestamp": "2026-12-05T10:00:00.000Z",
    }


def _after_tool(
    env: dict[str, str], tool: str, tool_input: object, error: object = None
) -> tuple[int, str, str]:
    payload = {
        **_base(env, "AfterTool"),
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": {"llmContent": "ok", "returnDisplay": "ok", "error": error},
    }
    result = hook(env, None, payload)
    return result.returncode, result.stdout, result.stderr


def test_a_replace_call_is_saved_as_the_same_observation_as_a_claude_edit(
    gemini: dict[str, str],
) -> None:
    path = f"{project_dir(gemini)}/src/cart.py"
    tool_input = {
        "file_path": path,
        "instruction": "Return zero for an empty cart.",
        "old_string": "if not cart.items:\n    raise ValueError",
        "new_string": f"if not cart.items:\n    return Total.zero()  # {SECRET}",
    }
    assert _after_tool(gemini, "replace", tool_input) == (0, "", "")
    [seen] = memories_of(gemini, "observation")
    assert (seen.type, seen.title, seen.files, seen.tool) == (
        "change",
        "Edited src/cart.py",
        ("src/cart.py",),
        "gemini-cli",
    )
    assert seen.text == (
        "Edited src/cart.py.\nReplaced:\nif not cart.items:\n    raise ValueError\n"
        "With:\nif not cart.items:\n    return Total.zero()  # [REDACTED]"
    )


def test_a_write_file_call_is_saved_as_wrote(gemini: dict[str, str]) -> None:
    tool_input = {"file_path": f"{project_dir(gemini)}/docs/notes.md", "content": "a\nb\nc"}
    assert _after_tool(gemini, "write_file", tool_input) == (0, "", "")
    [seen] = memories_of(gemini, "observation")
    assert (seen.title, seen.text, seen.files) == (
        "Wrote docs/notes.md",
        "Wrote docs/notes.md (3 lines).",
        ("docs/notes.md",),
    )


def test_a_failed_call_or_one_that_changes_no_file_saves_nothing(gemini: dict[str, str]) -> None:
    path = f"{project_dir(gemini)}/src/cart.py"
    failed = {"message": "0 occurrences found for old_string", "type": "edit_no_occurrence_found"}
    edit = {"file_path": path, "old_string": "x", "new_string": "y"}
    assert _after_tool(gemini, "replace", edit, error=failed) == (0, "", "")
    assert _after_tool(gemini, "run_shell_command", {"command": "rm -rf build"}) == (0, "", "")
    assert _after_tool(gemini, "read_file", {"file_path": path}) == (0, "", "")
    assert memories_of(gemini, "observation") == []
    assert _after_tool(gemini, "replace", edit) == (0, "", "")
    assert [memory.title for memory in memories_of(gemini, "observation")] == ["Edited src/cart.py"]


def test_before_agent_records_the_prompt_without_the_session_start_context(
    gemini: dict[str, str],
) -> None:
    """A non-interactive Gemini session puts the session-start context, wrapped in
    ``<hook_context>`` and its tags escaped, before the prompt it sends to BeforeAgent."""
    start = hook(gemini, None, {**_base(gemini, "SessionStart"), "source": "startup"})
    answer = json.loads(start.stdout)["hookSpecificOutput"]  # where Gemini CLI reads it
    assert answer["hookEventName"] == "SessionStart"
    context = answer["additionalContext"]
    assert context.startswith("<aletheia-memory>\n") and "# Memory for shop\n" in context
    escaped = context.replace("<", "&lt;").replace(">", "&gt;")
    prompt = f"<hook_context>{escaped}</hook_context>\n\nfix the cart <private>pw</private> total"
    result = hook(gemini, None, {**_base(gemini, "BeforeAgent"), "prompt": prompt})
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    later = hook(gemini, "user-prompt", {**_base(gemini, "BeforeAgent"), "prompt": "and tax"})
    assert later.returncode == 0
    assert sorted(requests_of(gemini)) == [
        ("and tax", "gemini-cli"),
        ("fix the cart  total", "gemini-cli"),
    ]


def test_a_gemini_session_ends_with_a_summary_of_its_prompts_and_files(
    gemini: dict[str, str],
) -> None:
    hook(gemini, "session-start", {**_base(gemini, "SessionStart"), "source": "startup"})
    hook(gemini, "user-prompt", {**_base(gemini, "BeforeAgent"), "prompt": "fix the cart"})
    edit = {"file_path": f"{project_dir(gemini)}/src/cart.py", "old_string": "a", "new_string": "b"}
    assert _after_tool(gemini, "replace", edit) == (0, "", "")
    end = hook(gemini, "session-end", {**_base(gemini, "SessionEnd"), "reason": "exit"})
    assert (end.returncode, end.stdout) == (0, "")
    [summary] = memories_of(gemini, "summary")
    assert (summary.title, summary.tool, summary.files) == (
        "Session: fix the cart",
        "gemini-cli",
        ("src/cart.py",),
    )
    assert summary.text.startswith("Session of gemini-cli, ")
    assert summary.text.endswith("Requests:\n- fix the cart\nFiles changed: src/cart.py.")
