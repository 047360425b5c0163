"""Capture hooks against what an attacker or an odd session hands them: a secret that a read
limit cuts in two, a path too long for a title, a file of an excluded project, a path through a
link or with a lone surrogate, a session resumed after its end. Real ``aletheia-hook``
processes, a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from aletheia_mem.domain.captured import READ_LIMIT
from aletheia_mem.domain.limits import MAX_TITLE
from aletheia_mem.domain.summaries import SessionRecord, summary_of
from aletheia_mem.hooks.main import PROMPT_READ_LIMIT
from tests.hooks.test_capture import _edit
from tests.hooks.test_hooks import hook, memories_of, project_dir, requests_of

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def _private(length: int) -> str:
    """A private block of ``length`` characters: removed before anything is kept."""
    return "<private>" + "x" * (length - len("<private></private>")) + "</private>"


def _straddling(limit: int, secret: str, before: str = "") -> str:
    """``before``, then private text, then ``secret``, which the read limit cuts in half: what
    is left of it is all that is kept."""
    return before + _private(limit - len(secret) // 2 - len(before)) + secret + "\nmore"


@pytest.mark.parametrize(
    ("secret", "fragment"),
    [
        (TOKEN, "ghp_"),
        ("AKIAZ7Q3MEXW4LRT2N5K", "AKIAZ7Q3ME"),
        ("sk-proj-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL0123456789", "sk-proj-"),
        ("password = 'correct horse battery staple'", "correct"),
    ],
)
@pytest.mark.parametrize("before", ["", "first line\n"])
def test_no_part_of_a_secret_cut_by_the_read_limit_of_an_edit_is_stored(
    env: dict[str, str], secret: str, fragment: str, before: str
) -> None:
    old = _straddling(READ_LIMIT, secret, before)
    _edit(env, "s1", f"{project_dir(env)}/a.py", old, old)
    [seen] = memories_of(env, "observation")
    assert fragment not in seen.text
    assert seen.text.startswith("Edited a.py.\nReplaced:\n")


@pytest.mark.parametrize(
    ("secret", "fragment"), [(TOKEN, "ghp_"), ("AKIAZ7Q3MEXW4LRT2N5K", "AKIA")]
)
def test_no_part_of_a_secret_cut_by_the_read_limit_of_a_prompt_is_stored(
    env: dict[str, str], secret: str, fragment: str
) -> None:
    prompt = _straddling(PROMPT_READ_LIMIT, secret, "fix the bug\n")
    hook(env, "user-prompt", {"session_id": "s", "cwd": project_dir(env), "prompt": prompt})
    [(text, _)] = requests_of(env)
    assert text == "fix the bug"
    assert fragment not in text


def test_a_file_of_a_long_path_is_observed_and_its_title_cut_after_redaction(
    env: dict[str, str],
) -> None:
    # "Edited " and the path run past the title's 400 characters, a token across the cut.
    folder = "d" * (MAX_TITLE - len("Edited ") - 20)
    path = f"{project_dir(env)}/{folder}/{TOKEN}/{'e' * 300}.py"
    _edit(env, "s1", path, "a", "b")
    [seen] = memories_of(env, "observation")
    assert seen.title.startswith(f"Edited {folder}/[REDACTED]")
    assert len(seen.title) <= MAX_TITLE
    assert seen.files == (f"{folder}/[REDACTED]/{'e' * 300}.py",)
    assert "ghp_" not in seen.text + seen.title


@pytest.mark.parametrize("entry", ["billing", "~/code/billing"])
def test_a_file_of_an_excluded_project_is_neither_observed_nor_summarized(
    env: dict[str, str], entry: str
) -> None:
    billing = Path(env["HOME"]) / "code" / "billing"
    (billing / ".git").mkdir(parents=True)
    env["ALETHEIA_EXCLUDE"] = entry
    base = {"session_id": "s1", "cwd": project_dir(env)}
    hook(env, "session-start", base)
    hook(env, "user-prompt", {**base, "prompt": "sync the prices"})
    _edit(env, "s1", f"{billing}/pay.py", "a", "b")
    _edit(env, "s1", f"{project_dir(env)}/../billing/refund.py", "a", "b")
    _edit(env, "s1", f"{project_dir(env)}/prices.py", "a", "b")
    hook(env, "session-end", base)
    assert [m.files for m in memories_of(env, "observation")] == [("prices.py",)]
    [summary] = memories_of(env, "summary")
    assert summary.files == ("prices.py",)
    assert "billing" not in summary.text


def test_a_summary_of_one_file_and_no_request_is_titled_in_the_singular() -> None:
    summary = summary_of(SessionRecord([], ["a.py"], 0, 60_000), "claude-code")
    assert summary is not None and summary.title == "Session: 1 file changed"


def test_a_file_is_named_alike_whether_the_session_or_the_path_goes_through_a_link(
    env: dict[str, str],
) -> None:
    # ~/work/shop -> ~/code/shop: the session runs in the link, the tool names the real path.
    link = Path(env["HOME"]) / "work" / "shop"
    link.parent.mkdir()
    link.symlink_to(project_dir(env), target_is_directory=True)
    base = {"session_id": "s1", "cwd": str(link)}
    hook(env, "session-start", base)
    for path in (f"{project_dir(env)}/src/a.py", f"{link}/src/a.py"):
        payload = {**base, "tool_name": "Edit"}
        hook(env, "post-tool-use", {**payload, "tool_input": {"file_path": path}})
    hook(env, "session-end", base)
    store_files = [m.files for m in memories_of(env, "observation")]
    assert store_files == [("src/a.py",)]
    [summary] = memories_of(env, "summary")
    assert summary.files == ("src/a.py",)


@pytest.mark.parametrize("excluded", ["", "billing"])
def test_a_file_whose_name_holds_a_lone_surrogate_is_still_observed(
    env: dict[str, str], excluded: str
) -> None:
    # Windows file names are UTF-16 and may hold one; the host's JSON escapes it as \ud800.
    env["ALETHEIA_EXCLUDE"] = excluded
    payload = {
        "session_id": "s1",
        "cwd": project_dir(env),
        "tool_name": "Write",
        "tool_input": {"file_path": f"{project_dir(env)}/d\ud800/n.md", "content": "x"},
    }
    assert hook(env, "post-tool-use", payload).returncode == 0
    [seen] = memories_of(env, "observation")
    assert (seen.title, seen.files) == ("Wrote d?/n.md", ("d?/n.md",))


def test_a_resumed_session_ends_with_one_summary_of_all_of_it(env: dict[str, str]) -> None:
    # claude --resume: the same session id starts, maybe asks more, and ends again.
    base = {"session_id": "s1", "cwd": project_dir(env)}
    hook(env, "session-start", base)
    hook(env, "user-prompt", {**base, "prompt": "fix the cart"})
    _edit(env, "s1", f"{project_dir(env)}/cart.py", "a", "b")
    hook(env, "session-end", base)
    hook(env, "session-start", base)  # looked at, then closed
    hook(env, "session-end", base)
    hook(env, "session-start", base)
    hook(env, "user-prompt", {**base, "prompt": "and its test"})
    _edit(env, "s1", f"{project_dir(env)}/test_cart.py", "a", "b")
    hook(env, "session-end", base)
    [summary] = memories_of(env, "summary")
    assert summary.files == ("cart.py", "test_cart.py")
    assert summary.text.splitlines()[1:4] == ["Requests:", "- fix the cart", "- and its test"]
    other = {"session_id": "s2", "cwd": project_dir(env)}
    hook(env, "session-start", other)
    hook(env, "user-prompt", {**other, "prompt": "fix the cart"})
    hook(env, "session-end", other)
    assert len(memories_of(env, "summary")) == 2
