"""aletheia-hook with the payloads OpenCode's plugin (``aletheia.js``) sends: real processes, a
real store. The plugin names each payload after OpenCode's hook (chat.message,
tool.execute.after, session.created, session.idle) and passes the tool's own arguments: write
and edit with filePath, content, oldString and newString, apply_patch with patchText; the
installed plugin sets ALETHEIA_TOOL=opencode."""

from __future__ import annotations

import json

import pytest

from tests.hooks.test_hooks import hook, memories_of, project_dir, requests_of

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def opencode(env: dict[str, str]) -> dict[str, str]:
    return {**env, "ALETHEIA_TOOL": "opencode"}


def _base(env: dict[str, str], event: str, session: str = "ses_1") -> dict[str, object]:
    return {"session_id": session, "cwd": project_dir(env), "hook_event_name": event}


def _after(env: dict[str, str], tool: str, args: object) -> tuple[int, str, str]:
    payload = {**_base(env, "tool.execute.after"), "tool_name": tool, "tool_input": args}
    result = hook(env, "post-tool-use", payload)
    return result.returncode, result.stdout, result.stderr


def test_an_edit_call_is_saved_as_the_same_observation_as_a_claude_edit(
    opencode: dict[str, str],
) -> None:
    args = {
        "filePath": f"{project_dir(opencode)}/src/cart.py",
        "oldString": "if not cart.items:\n    raise ValueError",
        "newString": f"if not cart.items:\n    return Total.zero()  # {SECRET}",
        "replaceAll": False,
    }
    assert _after(opencode, "edit", args) == (0, "", "")
    [seen] = memories_of(opencode, "observation")
    assert (seen.type, seen.title, seen.files, seen.tool) == (
        "change",
        "Edited src/cart.py",
        ("src/cart.py",),
        "opencode",
    )
    assert seen.text == (
        "Edited src/cart.py.\nReplaced:\nif not cart.items:\n    raise ValueError\n"
        "With:\nif not cart.items:\n    return Total.zero()  # [REDACTED]"
    )


def test_a_write_call_is_saved_as_wrote(opencode: dict[str, str]) -> None:
    args = {"filePath": f"{project_dir(opencode)}/docs/notes.md", "content": "a\nb\nc"}
    assert _after(opencode, "write", args) == (0, "", "")
    [seen] = memories_of(opencode, "observation")
    assert (seen.title, seen.text, seen.files, seen.tool) == (
        "Wrote docs/notes.md",
        "Wrote docs/notes.md (3 lines).",
        ("docs/notes.md",),
        "opencode",
    )


def test_an_apply_patch_call_saves_one_observation_per_file(opencode: dict[str, str]) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: cart.py\n@@\n-total = 0\n+total = 1\n"
        "*** Add File: tax.py\n+rate = 0\n*** Delete File: old.py\n*** End Patch\n"
    )
    assert _after(opencode, "apply_patch", {"patchText": patch}) == (0, "", "")
    titles = sorted(memory.title for memory in memories_of(opencode, "observation"))
    assert titles == ["Deleted old.py", "Edited cart.py", "Wrote tax.py"]


def test_other_tools_and_claude_shaped_input_save_nothing(opencode: dict[str, str]) -> None:
    """OpenCode's names only: a call named as Claude Code's, or given Claude Code's fields, is
    not OpenCode's and changes nothing here."""
    path = f"{project_dir(opencode)}/src/cart.py"
    assert _after(opencode, "read", {"filePath": path}) == (0, "", "")
    assert _after(opencode, "bash", {"command": "rm -rf build"}) == (0, "", "")
    assert (
        _after(opencode, "Edit", {"file_path": path, "old_string": "a", "new_string": "b"})[0] == 0
    )
    assert (
        _after(opencode, "edit", {"file_path": path, "old_string": "a", "new_string": "b"})[0] == 0
    )
    assert _after(opencode, "apply_patch", {"command": "*** Begin Patch"})[0] == 0
    assert memories_of(opencode, "observation") == []


def test_an_opencode_session_is_recorded_from_start_to_summary(opencode: dict[str, str]) -> None:
    start = hook(opencode, "session-start", _base(opencode, "session.created"))
    answer = json.loads(start.stdout)["hookSpecificOutput"]  # what the plugin reads
    assert answer["additionalContext"].startswith("<aletheia-memory>\n")
    prompt = {**_base(opencode, "chat.message"), "prompt": "fix the cart <private>pw</private>"}
    assert hook(opencode, "user-prompt", prompt).returncode == 0
    args = {"filePath": f"{project_dir(opencode)}/src/cart.py", "oldString": "a", "newString": "b"}
    assert _after(opencode, "edit", args) == (0, "", "")
    end = hook(opencode, "session-end", _base(opencode, "session.idle"))
    assert (end.returncode, end.stdout, end.stderr) == (0, "", "")
    assert requests_of(opencode) == [("fix the cart", "opencode")]
    [summary] = memories_of(opencode, "summary")
    assert (summary.title, summary.tool, summary.files) == (
        "Session: fix the cart",
        "opencode",
        ("src/cart.py",),
    )
    assert summary.text.endswith("Requests:\n- fix the cart\nFiles changed: src/cart.py.")


def test_the_plugin_s_event_names_alone_name_the_hook_event(opencode: dict[str, str]) -> None:
    start = hook(opencode, None, _base(opencode, "session.created"))
    assert "additionalContext" in json.loads(start.stdout)["hookSpecificOutput"]
    assert (
        hook(opencode, None, {**_base(opencode, "chat.message"), "prompt": "and tax"}).stdout == ""
    )
    args = {"filePath": f"{project_dir(opencode)}/tax.py", "content": "rate = 0\n"}
    payload = {**_base(opencode, "tool.execute.after"), "tool_name": "write", "tool_input": args}
    assert hook(opencode, None, payload).returncode == 0
    assert hook(opencode, None, _base(opencode, "session.idle")).returncode == 0
    assert requests_of(opencode) == [("and tax", "opencode")]
    assert [m.title for m in memories_of(opencode, "observation")] == ["Wrote tax.py"]
    assert [m.title for m in memories_of(opencode, "summary")] == ["Session: and tax"]
