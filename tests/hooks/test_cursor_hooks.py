"""aletheia-hook with Cursor's payloads, as Cursor's hooks documentation gives them (not checked
against Cursor itself): real processes, a real store. Cursor sends ``conversation_id`` and
``workspace_roots`` (no ``session_id`` but at sessionStart and sessionEnd, no ``cwd``), names its
events sessionStart, beforeSubmitPrompt, afterFileEdit, stop and sessionEnd, and runs a user's
hooks in ``~/.cursor`` (here: the folder the test runs in, another git work tree); the installed
command sets ALETHEIA_TOOL=cursor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hooks.test_hooks import hook, memories_of, project_dir, requests_of

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def cursor(env: dict[str, str]) -> dict[str, str]:
    return {**env, "ALETHEIA_TOOL": "cursor"}


def _base(env: dict[str, str], event: str, conversation: str = "conv-1") -> dict[str, object]:
    return {
        "conversation_id": conversation,
        "generation_id": "gen-1",
        "model": "claude-sonnet-4",
        "hook_event_name": event,
        "cursor_version": "2.0.77",
        "workspace_roots": [project_dir(env)],
        "user_email": None,
        "transcript_path": None,
    }


def _edited(env: dict[str, str], path: str, edits: list[dict[str, str]]) -> tuple[int, str, str]:
    payload = {**_base(env, "afterFileEdit"), "file_path": path, "edits": edits}
    result = hook(env, "post-tool-use", payload)
    return result.returncode, result.stdout, result.stderr


def _prompt(env: dict[str, str], text: str, event: str | None = "user-prompt") -> str:
    attachments = [{"type": "file", "file_path": f"{project_dir(env)}/src/cart.py"}]
    payload = {**_base(env, "beforeSubmitPrompt"), "prompt": text, "attachments": attachments}
    result = hook(env, event, payload)
    assert (result.returncode, result.stderr) == (0, "")
    return result.stdout


def test_an_edit_is_saved_as_the_same_observation_as_a_claude_edit(
    cursor: dict[str, str],
) -> None:
    path = f"{project_dir(cursor)}/src/cart.py"
    edit = {
        "old_string": "if not cart.items:\n    raise ValueError",
        "new_string": f"if not cart.items:\n    return Total.zero()  # {SECRET}",
    }
    assert _edited(cursor, path, [edit]) == (0, "{}\n", "")
    [seen] = memories_of(cursor, "observation")
    assert (seen.type, seen.title, seen.files, seen.tool) == (
        "change",
        "Edited src/cart.py",
        ("src/cart.py",),
        "cursor",
    )
    assert seen.text == (
        "Edited src/cart.py.\nReplaced:\nif not cart.items:\n    raise ValueError\n"
        "With:\nif not cart.items:\n    return Total.zero()  # [REDACTED]"
    )
    second = {"old_string": "return 0", "new_string": "return 1"}
    assert _edited(cursor, f"{project_dir(cursor)}/tax.py", [second, edit]) == (0, "{}\n", "")
    assert memories_of(cursor, "observation")[1].text == (
        "Edited tax.py (2 edits).\nReplaced:\nreturn 0\nWith:\nreturn 1"
    )


def test_an_edit_without_a_file_saves_nothing(cursor: dict[str, str]) -> None:
    edits = [{"old_string": "a", "new_string": "b"}]
    assert _edited(cursor, "", edits) == (0, "{}\n", "")
    payload = {**_base(cursor, "afterFileEdit"), "edits": edits}
    assert hook(cursor, "post-tool-use", payload).returncode == 0
    assert memories_of(cursor, "observation") == []


def test_the_prompt_is_recorded_and_always_let_through(cursor: dict[str, str]) -> None:
    """beforeSubmitPrompt can block the prompt: the hook answers ``continue: true``, also in a
    project it must not touch and when its store cannot be opened."""
    said = _prompt(cursor, f"fix the cart <private>pw</private> with {SECRET}")
    assert json.loads(said) == {"continue": True}
    assert requests_of(cursor) == [("fix the cart  with [REDACTED]", "cursor")]
    assert json.loads(_prompt({**cursor, "ALETHEIA_EXCLUDE": "shop"}, "not kept")) == {
        "continue": True
    }
    blocked = Path(cursor["HOME"]) / "a-file"
    blocked.write_text("", encoding="utf-8")
    broken = {**cursor, "ALETHEIA_DATA_DIR": str(blocked / "store")}
    assert json.loads(_prompt(broken, "nowhere to keep it", event=None)) == {"continue": True}
    assert requests_of(cursor) == [("fix the cart  with [REDACTED]", "cursor")]


@pytest.mark.parametrize(
    "sent",
    ['{"hook_event_name":"beforeSubmitPrompt","conversation_id":"z","prompt":"', "not json", ""],
    ids=["cut-short", "not-json", "empty"],
)
def test_the_prompt_is_let_through_whatever_input_comes(cursor: dict[str, str], sent: str) -> None:
    """The command install writes (ALETHEIA_TOOL=cursor, user-prompt) answers before it reads
    its input: input cut short (it printed nothing) or not JSON still lets the prompt through."""
    result = hook(cursor, "user-prompt", sent)
    assert (result.returncode, result.stdout, result.stderr) == (0, '{"continue": true}\n', "")
    other = hook({**cursor, "ALETHEIA_TOOL": "claude-code"}, "user-prompt", sent)
    assert (other.returncode, other.stdout) == (0, "")  # not Cursor's: nothing to answer


def test_a_prompt_is_answered_once(cursor: dict[str, str]) -> None:
    assert _prompt(cursor, "fix the cart") == '{"continue": true}\n'
    assert _prompt(cursor, "and the tax", event=None) == '{"continue": true}\n'


def test_a_cursor_conversation_gets_the_context_and_ends_with_a_summary(
    cursor: dict[str, str],
) -> None:
    """sessionStart gets the context as Cursor reads it (``additional_context``, nothing else);
    each stop saves the summary of the conversation so far, a later one replacing it."""
    start_payload = {
        **_base(cursor, "sessionStart"),
        "session_id": "conv-1",
        "is_background_agent": False,
        "composer_mode": "agent",
    }
    start = hook(cursor, "session-start", start_payload)
    answer = json.loads(start.stdout)
    assert list(answer) == ["additional_context"]
    context = answer["additional_context"]
    assert context.startswith("<aletheia-memory>\n") and "# Memory for shop\n" in context
    assert json.loads(_prompt(cursor, "fix the cart")) == {"continue": True}
    edit = [{"old_string": "a", "new_string": "b"}]
    assert _edited(cursor, f"{project_dir(cursor)}/src/cart.py", edit)[:2] == (0, "{}\n")
    stop = {**_base(cursor, "stop"), "status": "completed", "loop_count": 0}
    ended = hook(cursor, "session-end", stop)
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, "{}\n", "")
    [first] = memories_of(cursor, "summary")
    assert (first.title, first.tool, first.files) == (
        "Session: fix the cart",
        "cursor",
        ("src/cart.py",),
    )
    assert first.text.startswith("Session of cursor, ")
    assert first.text.endswith("Requests:\n- fix the cart\nFiles changed: src/cart.py.")

    assert json.loads(_prompt(cursor, "and the tax", event=None)) == {"continue": True}
    assert hook(cursor, None, stop).stdout == "{}\n"  # the event told by the payload alone
    [summary] = memories_of(cursor, "summary")  # the first one dismissed
    assert summary.id != first.id
    assert summary.text.endswith(
        "Requests:\n- fix the cart\n- and the tax\nFiles changed: src/cart.py."
    )
    end = {
        **_base(cursor, "sessionEnd"),
        "session_id": "conv-1",
        "reason": "user_close",
        "duration_ms": 45000,
        "is_background_agent": False,
        "final_status": "completed",
    }
    assert hook(cursor, "session-end", end).returncode == 0
    [last] = memories_of(cursor, "summary")  # one summary of the conversation, whatever the clock
    assert last.text.endswith(summary.text.split(" UTC.", 1)[1])
