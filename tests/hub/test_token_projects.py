"""A token's projects through a real `aletheia mcp-link` process: a project key may hold a
space (a folder named "My Project" is the project "my project"), so only commas part them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hub.test_hub_processes import cli

pytestmark = pytest.mark.e2e


def test_create_parts_projects_at_commas_only_and_keeps_a_space_in_a_key(
    hub_db: Path | str, tmp_path: Path
) -> None:
    """`--projects 'my project'` made a token of the projects "my" and "project"."""
    home, db = tmp_path / "admin", str(hub_db)
    made = cli(
        home, "mcp-link", "create", "--hub-db", db, "--projects", " My Project , billing,,",
        "--scope", "sync", "--name", "spaced", "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["projects"] == ["my project", "billing"]
    listed = json.loads(cli(home, "mcp-link", "list", "--hub-db", db, "--json").stdout)
    assert [token["projects"] for token in listed] == [["my project", "billing"]]
    every = cli(
        home, "mcp-link", "create", "--hub-db", db, "--projects", " * ", "--name", "all", "--json"
    )
    assert every.returncode == 0, every.stderr
    assert json.loads(every.stdout)["projects"] == ["*"]
