"""Capture hooks make memories (DESIGN 4: hooks create ``observation`` and ``summary``): an
observation for each file a tool changed, a summary when the session ends. Real ``aletheia-hook``
processes with Claude Code's payloads, a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aletheia_mem.domain.observations import observation_of
from aletheia_mem.domain.summaries import SessionRecord, summary_of
from tests.hooks.test_hooks import hook, memories_of, project_dir

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def _edit(env: dict[str, str], session: str, path: str, old: str, new: str) -> None:
    payload = {
        "session_id": session,
        "cwd": project_dir(env),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": path, "old_string": old, "new_string": new},
        "tool_response": {"filePath": path, "success": True},
    }
    result = hook(env, None, payload)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_an_edit_is_saved_as_an_observation_of_its_file(env: dict[str, str]) -> None:
    path = f"{project_dir(env)}/src/cart.py"
    old = "if not cart.items:\n    raise ValueError"
    new = f"if not cart.items:\n    return Total.zero()  # token {SECRET} <private>x</private>"
    _edit(env, "s1", path, old, new)
    [seen] = memories_of(env, "observation")
    assert (seen.type, seen.title, seen.files, seen.tool) == (
        "change",
        "Edited src/cart.py",
        ("src/cart.py",),
        "claude-code",
    )
    assert seen.text == (
        "Edited src/cart.py.\nReplaced:\nif not cart.items:\n    raise ValueError\n"
        "With:\nif not cart.items:\n    return Total.zero()  # token [REDACTED]"
    )


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Read", {"file_path": "/x/a.py"}),
        ("Bash", {"command": "rm -rf build"}),
        ("Edit", "not an object"),
        ("Edit", {"file_path": 7}),
        ("Edit", {"file_path": ""}),
        ("Edit", {"file_path": "a\x00b"}),
        ("Edit", {"file_path": "x" * 5000}),
        ("MultiEdit", {"file_path": "a.py", "edits": "nope"}),
        (["Edit"], {"file_path": "a.py"}),
    ],
)
def test_calls_that_change_no_file_or_make_no_sense_save_nothing(
    env: dict[str, str], tool: object, tool_input: object
) -> None:
    payload = {"session_id": "s", "cwd": project_dir(env), "tool_name": tool}
    result = hook(env, "post-tool-use", {**payload, "tool_input": tool_input})
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert memories_of(env, "observation") == []


def test_a_session_ends_with_a_summary_that_context_lists_instead_of_its_observations(
    env: dict[str, str],
) -> None:
    base = {"session_id": "s1", "cwd": project_dir(env)}
    hook(env, "session-start", base)
    hook(env, "user-prompt", {**base, "prompt": f"fix the empty cart crash, key {SECRET}"})
    _edit(env, "s1", f"{project_dir(env)}/src/cart.py", "raise ValueError", "return 0")
    _edit(env, "s1", f"{project_dir(env)}/tests/test_cart.py", "pass", "assert total() == 0")
    _edit(env, "s1", f"{project_dir(env)}/src/cart.py", "return 0", "return Total.zero()")
    hook(env, "user-prompt", {**base, "prompt": "now add a test"})
    assert hook(env, "session-end", base).returncode == 0
    [summary] = memories_of(env, "summary")
    assert summary.title == "Session: fix the empty cart crash, key [REDACTED]"
    assert summary.files == ("src/cart.py", "tests/test_cart.py")
    lines = summary.text.splitlines()
    assert lines[0].startswith("Session of claude-code, ") and lines[0].endswith(" UTC.")
    assert lines[1:] == [
        "Requests:",
        "- fix the empty cart crash, key [REDACTED]",
        "- now add a test",
        "Files changed: src/cart.py, tests/test_cart.py.",
    ]
    later = hook(env, "session-start", {"session_id": "s2", "cwd": project_dir(env)})
    context = json.loads(later.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Session: fix the empty cart crash" in context
    assert "Edited src/cart.py" not in context


def test_a_session_that_asked_and_changed_nothing_leaves_no_summary(env: dict[str, str]) -> None:
    base = {"session_id": "s1", "cwd": project_dir(env)}
    hook(env, "session-start", base)
    hook(env, "session-end", base)
    hook(env, "session-end", {"session_id": "never-started", "cwd": project_dir(env)})
    assert memories_of(env, "summary") == []


def test_stop_ends_a_turn_not_the_session_so_it_writes_no_summary(env: dict[str, str]) -> None:
    base = {"session_id": "s1", "cwd": project_dir(env)}
    hook(env, "session-start", base)
    hook(env, "user-prompt", {**base, "prompt": "one"})
    hook(env, None, {**base, "hook_event_name": "Stop"})
    assert memories_of(env, "summary") == []


def test_the_summary_lists_only_this_sessions_files(env: dict[str, str]) -> None:
    for session in ("a", "b"):
        base = {"session_id": session, "cwd": project_dir(env)}
        hook(env, "session-start", base)
        _edit(env, session, f"{project_dir(env)}/{session}.py", "x", "y")
        hook(env, "session-end", base)
    assert [m.files for m in memories_of(env, "summary")] == [("a.py",), ("b.py",)]


def test_sessions_at_the_same_time_in_one_project_each_list_their_own_files(
    env: dict[str, str],
) -> None:
    # Two Claude Code sessions open in one folder, their edits interleaved.
    for session in ("a", "b"):
        hook(env, "session-start", {"session_id": session, "cwd": project_dir(env)})
    _edit(env, "a", f"{project_dir(env)}/src/cart.py", "x", "y")
    _edit(env, "b", f"{project_dir(env)}/src/billing.py", "x", "y")
    _edit(env, "a", f"{project_dir(env)}/src/checkout.py", "x", "y")
    for session in ("b", "a"):
        hook(env, "session-end", {"session_id": session, "cwd": project_dir(env)})
    assert [m.files for m in memories_of(env, "summary")] == [
        ("src/billing.py",),
        ("src/cart.py", "src/checkout.py"),
    ]


def test_a_change_made_again_by_a_later_session_is_in_its_summary(env: dict[str, str]) -> None:
    # The same edit is the same observation (saved once), yet both sessions made it.
    for session in ("s1", "s2"):
        base = {"session_id": session, "cwd": project_dir(env)}
        hook(env, "session-start", base)
        hook(env, "user-prompt", {**base, "prompt": f"the cart, session {session}"})
        _edit(env, session, f"{project_dir(env)}/src/cart.py", "return 0", "return Total.zero()")
        hook(env, "session-end", base)
    assert len(memories_of(env, "observation")) == 1
    assert [m.files for m in memories_of(env, "summary")] == [("src/cart.py",), ("src/cart.py",)]


def test_observations_of_each_file_tool(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    write = observation_of("Write", {"file_path": str(root / "a.md"), "content": "1\n2\n3"}, root)
    assert write is not None and (write.title, write.text) == (
        "Wrote a.md",
        "Wrote a.md (3 lines).",
    )
    for content, told in (("1\n2\n3\n", "3 lines"), ("one\n", "1 line"), ("", "0 lines")):
        written = observation_of("Write", {"file_path": "a.md", "content": content}, root)
        assert written is not None and written.text == f"Wrote a.md ({told})."
    edits = [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]
    multi = observation_of("MultiEdit", {"file_path": "/elsewhere/b.py", "edits": edits}, root)
    assert multi is not None
    assert multi.text == "Edited /elsewhere/b.py (2 edits).\nReplaced:\na\nWith:\nb"
    book = {"notebook_path": str(root / "n.ipynb"), "edit_mode": "insert", "new_source": "x"}
    notebook = observation_of("NotebookEdit", book, root)
    assert notebook is not None and notebook.text == "Edited n.ipynb (insert a cell)."
    long = observation_of(
        "Edit", {"file_path": "c.py", "old_string": "o" * 999, "new_string": ""}, root
    )
    assert long is not None and "o" * 300 + " ..." in long.text and "o" * 301 not in long.text


def test_a_summary_of_many_requests_and_files_stays_short() -> None:
    record = SessionRecord(
        [f"request {i}" for i in range(30)], [f"f{i}.py" for i in range(25)], 0, 60_000
    )
    summary = summary_of(record, "codex")
    assert summary is not None
    assert "- ... and 10 more" in summary.text
    assert summary.text.endswith(", f19.py and 5 more.")
    assert len(summary.files) == 20


SECRETS_FILES = [
    ".env", ".env.production", "keys/deploy.pem", "credentials.json", "tls.key", ".netrc",
    ".pgpass", ".ssh/id_rsa", ".ssh/id_dsa", ".ssh/id_ecdsa", ".ssh/id_ed25519",
    ".ssh/id_ed25519_sk", ".ssh/deploy_rsa", ".ssh/github_ed25519", ".ssh/id_rsa.old", ".npmrc",
    ".pypirc", "prod.tfvars", "prod.auto.tfvars", "prod.tfvars.json", ".git-credentials",
    ".dockercfg", ".docker/config.json", "client.p12", "client.PFX", "release.keystore",
    "trust.jks",
]  # fmt: skip
# Their neighbours, which hold no secret: their edits keep an excerpt.
KEPT_FILES = [
    ".ssh/id_rsa.pub", ".ssh/id_ed25519.pub", ".ssh/deploy_rsa.pub", ".ssh/known_hosts",
    "env.py", "src/crypto_rsa.py", "config.json", "docker/config.json", ".npmrc.md",
    "variables.tf",
]  # fmt: skip


# The body of an OpenSSH private key without its BEGIN line: no rule can tell it from text.
KEY_BODY = (
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBq7Yk1c3Wq9Pz0vXnTfGJm8Rr4h2dLs5aKcVw0eU3iTgAAAJgQxZ2tEMWd\n"
)


@pytest.mark.parametrize("name", ["id_ed25519", "id_rsa"])
def test_an_edit_of_a_private_ssh_key_leaves_none_of_it_in_the_store(
    env: dict[str, str], name: str
) -> None:
    path = f"{env['HOME']}/.ssh/{name}"
    _edit(env, "s1", path, KEY_BODY, KEY_BODY.replace("QyNTUxOQ", "QyNTUxOR"))
    [seen] = memories_of(env, "observation")
    assert seen.text == f"Edited {path}."
    stored = b"".join(p.read_bytes() for p in Path(env["ALETHEIA_DATA_DIR"]).glob("aletheia.db*"))
    assert b"b3BlbnNzaC1rZXktdjE" not in stored
    assert b"QyNTUxOQAAACBq7Yk1" not in stored


@pytest.mark.parametrize(
    ("name", "kept"), [(name, False) for name in SECRETS_FILES] + [(n, True) for n in KEPT_FILES]
)
def test_an_edit_of_a_secrets_file_keeps_no_excerpt(tmp_path: Path, name: str, kept: bool) -> None:
    edit = {"file_path": str(tmp_path / name), "old_string": "hunter2old", "new_string": "S3"}
    seen = observation_of("Edit", edit, tmp_path)
    assert seen is not None
    excerpt = "\nReplaced:\nhunter2old\nWith:\nS3" if kept else ""
    assert seen.text == f"Edited {name}.{excerpt}"
