"""aletheia-hook with Codex's payloads, as Codex 0.171.0 sends them: real processes, a real
store. Codex names its events as Claude Code does (SessionStart, UserPromptSubmit, PostToolUse,
SessionEnd); its file tool is apply_patch, whose ``tool_input.command`` is the patch text and
whose ``tool_response`` is the tool's output; the installed command sets ALETHEIA_TOOL=codex."""

from __future__ import annotations

import json

import pytest

from tests.hooks.test_hooks import hook, memories_of, project_dir, requests_of

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
DONE = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\n"


@pytest.fixture
def codex(env: dict[str, str]) -> dict[str, str]:
    return {**env, "ALETHEIA_TOOL": "codex"}


def _base(env: dict[str, str], event: str, session: str = "c1") -> dict[str, object]:
    return {
        "session_id": session,
        "transcript_path": "",
        "cwd": project_dir(env),
        "hook_event_name": event,
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
    }


def _patched(
    env: dict[str, str], patch: str, response: str = DONE, cwd: str | None = None
) -> tuple[int, str, str]:
    payload = {
        **_base(env, "PostToolUse"),
        "turn_id": "t1",
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
        "tool_response": response,
        "tool_use_id": "call_1",
    }
    if cwd is not None:
        payload["cwd"] = cwd
    result = hook(env, None, payload)
    return result.returncode, result.stdout, result.stderr


def test_an_apply_patch_call_makes_one_observation_per_file(codex: dict[str, str]) -> None:
    project = project_dir(codex)
    patch = (
        "*** Begin Patch\n"
        "*** Add File: docs/notes.md\n+a\n+b\n+c\n"
        f"*** Update File: {project}/src/cart.py\n"
        "@@ def total(cart):\n"
        "     if not cart.items:\n"
        "-        raise ValueError\n"
        f"+        return Total.zero()  # {SECRET} <private>pw</private>\n"
        "@@ def tax(cart):\n"
        "-    return 0\n"
        "+    return 1\n"
        "*** Delete File: old.txt\n"
        "*** End Patch\n"
    )
    assert _patched(codex, patch, DONE + "A docs/notes.md\nM src/cart.py\nD old.txt\n") == (
        0,
        "",
        "",
    )
    wrote, edited, deleted = memories_of(codex, "observation")
    assert [(m.type, m.title, m.files, m.tool) for m in (wrote, edited, deleted)] == [
        ("change", "Wrote docs/notes.md", ("docs/notes.md",), "codex"),
        ("change", "Edited src/cart.py", ("src/cart.py",), "codex"),
        ("change", "Deleted old.txt", ("old.txt",), "codex"),
    ]
    assert wrote.text == "Wrote docs/notes.md (3 lines)."
    assert edited.text == (
        "Edited src/cart.py (2 edits).\nReplaced:\nif not cart.items:\n"
        "        raise ValueError\nWith:\nif not cart.items:\n"
        "        return Total.zero()  # [REDACTED]"
    )
    assert deleted.text == "Deleted old.txt."


def test_paths_are_of_the_sessions_folder_and_a_move_names_both(codex: dict[str, str]) -> None:
    """A relative path is of the folder Codex runs in (``cwd``), shown relative to the project."""
    sub = f"{project_dir(codex)}/src"
    patch = (
        "*** Begin Patch\n*** Update File: cart.py\n*** Move to: basket.py\n@@\n-a\n+b\n"
        "*** End Patch"
    )
    assert _patched(codex, patch, cwd=sub) == (0, "", "")
    [moved] = memories_of(codex, "observation")
    assert (moved.title, moved.files, moved.text) == (
        "Moved src/cart.py to src/basket.py",
        ("src/cart.py", "src/basket.py"),
        "Moved src/cart.py to src/basket.py.\nReplaced:\na\nWith:\nb",
    )


def test_a_failed_call_or_another_tool_saves_nothing(codex: dict[str, str]) -> None:
    patch = "*** Begin Patch\n*** Update File: cart.py\n@@\n-a\n+b\n*** End Patch\n"
    failed = "Exit code: 1\nWall time: 0 seconds\nOutput:\nFailed to find expected lines in cart.py"
    assert _patched(codex, patch, failed) == (0, "", "")
    shell = {
        **_base(codex, "PostToolUse"),
        "tool_name": "Bash",
        "tool_input": {"command": "*** Begin Patch\n*** Delete File: x\n*** End Patch"},
        "tool_response": DONE,
    }
    assert hook(codex, None, shell).returncode == 0
    assert _patched(codex, "not a patch") == (0, "", "")
    assert memories_of(codex, "observation") == []
    assert _patched(codex, patch) == (0, "", "")
    assert [memory.title for memory in memories_of(codex, "observation")] == ["Edited cart.py"]


def test_a_codex_session_ends_with_a_summary_of_its_prompts_and_files(
    codex: dict[str, str],
) -> None:
    """The context is printed where Codex reads it (in ``hookSpecificOutput``, nothing else at
    the top: Codex refuses other fields), the prompt is recorded without its private part."""
    start = hook(codex, None, {**_base(codex, "SessionStart"), "source": "startup"})
    answer = json.loads(start.stdout)
    assert list(answer) == ["hookSpecificOutput"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<aletheia-memory>\n") and "# Memory for shop\n" in context
    prompt = {**_base(codex, "UserPromptSubmit"), "turn_id": "t1"}
    said = hook(codex, None, {**prompt, "prompt": "fix the cart <private>pw</private>"})
    assert (said.returncode, said.stdout, said.stderr) == (0, "", "")
    assert requests_of(codex) == [("fix the cart", "codex")]
    patch = (
        "*** Begin Patch\n*** Add File: cart.py\n+total = 1\n*** Delete File: x.py\n*** End Patch"
    )
    assert _patched(codex, patch) == (0, "", "")
    end = hook(codex, None, {**_base(codex, "SessionEnd"), "reason": "other"})
    assert (end.returncode, end.stdout) == (0, "")
    [summary] = memories_of(codex, "summary")
    assert (summary.title, summary.tool, summary.files) == (
        "Session: fix the cart",
        "codex",
        ("cart.py", "x.py"),
    )
    assert summary.text.startswith("Session of codex, ")
    assert summary.text.endswith("Requests:\n- fix the cart\nFiles changed: cart.py, x.py.")
