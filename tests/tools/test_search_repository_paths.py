"""search with file: a path given absolute finds what the capture hooks saved relative to the
repository's top folder, and the other way round, within the repository the server works in."""

from __future__ import annotations

from pathlib import Path

import pytest

from aletheia_mem.domain.file_paths import RepositoryRoot
from aletheia_mem.domain.observations import save_observation
from tests.tools.helpers import body_lines, saved_id

SHOP = RepositoryRoot(folders=("/home/me/shop",), project="shop")


@pytest.fixture
def local(as_caller):
    """A local server started in /home/me/shop."""
    return as_caller(repository=SHOP)


def _ids(result) -> list[int]:
    if result.text.startswith("No matches."):
        return []
    return [int(line.split()[0][1:]) for line in body_lines(result)]


def test_an_absolute_path_finds_what_hooks_saved_relative_to_the_repository(call, local):
    hooked = saved_id(call("save_memory", text="Edited auth", files=["src/auth.py"]))

    found = call("search", local, file="/home/me/shop/src/auth.py")

    assert _ids(found) == [hooked]


def test_a_relative_path_finds_what_an_agent_saved_with_the_absolute_path(call, local):
    agent = saved_id(call("save_memory", text="Auth gotcha", files=["/home/me/shop/src/auth.py"]))
    hooked = saved_id(call("save_memory", text="Edited auth", files=["src/auth.py"]))

    assert _ids(call("search", local, file="src/auth.py")) == [hooked, agent]
    assert _ids(call("search", local, file="./src/auth.py")) == [hooked, agent]
    assert _ids(call("search", local, file="/home/me/shop/src/auth.py")) == [hooked, agent]


def test_a_path_outside_the_repository_does_not_match_a_relative_path(call, local):
    call("save_memory", text="Edited auth", files=["src/auth.py"])

    elsewhere = call("search", local, file="/home/me/billing/src/auth.py")
    prefix_alike = call("search", local, file="/home/me/shop-old/src/auth.py")

    assert elsewhere.text.startswith("No matches.")
    assert prefix_alike.text.startswith("No matches.")


def test_an_absolute_path_matches_relative_paths_of_the_repositorys_project_only(
    call, local, as_caller
):
    ours = saved_id(call("save_memory", text="Edited auth", files=["src/auth.py"]))
    billing = as_caller(default_project="billing")
    call("save_memory", billing, text="Billing auth", files=["src/auth.py"])

    found = call("search", local, file="/home/me/shop/src/auth.py", project="*")
    from_billing = call("search", local, file="/home/me/shop/src/auth.py", project="billing")

    assert _ids(found) == [ours]
    assert from_billing.text.startswith("No matches.")


def test_an_absolute_path_finds_the_observation_the_capture_hook_saved(call, app, local):
    edit = {"file_path": "/home/me/shop/src/auth.py", "old_string": "a", "new_string": "b"}
    payload = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": edit}
    save_observation(
        app.store,
        project="shop",
        tool="claude-code",
        session_id="s1",
        payload=payload,
        root=Path("/home/me/shop"),
        now=app.clock(),
    )

    found = body_lines(call("search", local, file="/home/me/shop/src/auth.py"))

    assert len(found) == 1
    assert "Edited src/auth.py" in found[0]


def test_a_hub_without_a_working_directory_matches_the_path_as_given_only(call):
    call("save_memory", text="Edited auth", files=["src/auth.py"])
    call("save_memory", text="Auth gotcha", files=["/srv/shop/src/lib.py"])

    absolute = call("search", file="/home/me/shop/src/auth.py")
    relative = call("search", file="src/lib.py")

    assert absolute.text.startswith("No matches.")
    assert relative.text.startswith("No matches.")
