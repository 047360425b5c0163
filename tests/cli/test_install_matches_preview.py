"""``install --write`` makes a new config file hold what ``connect`` shows as its document, and
leaves a file already there with what it had (OpenCode's ``$schema`` included)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.cli.hosts import HOSTS
from tests.cli.conftest import Invoke, Workspace, json_of

SCHEMA = "https://opencode.ai/config.json"
CASES = [
    (host.name, scope)
    for host in HOSTS
    for scope in ("user", "project")
    if scope == "user" or host.project_file is not None
]


def _parsed(text: str, fmt: str) -> Any:
    return tomllib.loads(text) if fmt == "toml" else json.loads(text)


@pytest.mark.parametrize(("host", "scope"), CASES, ids=["-".join(case) for case in CASES])
def test_a_new_file_holds_the_document_connect_shows(
    run: Invoke, workspace: Workspace, host: str, scope: str
) -> None:
    shown = json_of(run("connect", host, "--scope", scope, "--json"))
    path = Path(shown["path"])
    assert not path.exists()
    assert run("install", host, "--scope", scope, "--write").exit_code == 0
    written = path.read_text(encoding="utf-8")
    assert _parsed(written, shown["format"]) == _parsed(shown["document"], shown["format"])


def test_a_new_opencode_file_starts_with_its_schema_and_uninstall_takes_only_the_entry(
    run: Invoke, workspace: Workspace
) -> None:
    """OpenCode's docs start every opencode.json with its $schema, as connect prints it."""
    path = workspace.home / ".config" / "opencode" / "opencode.json"
    dry = run("install", "opencode")
    assert f'+  "$schema": "{SCHEMA}",\n' in dry.stdout
    assert not path.exists()
    run("install", "opencode", "--write")
    assert list(json.loads(path.read_text(encoding="utf-8"))) == ["$schema", "mcp"]
    assert run("uninstall", "opencode", "--write").exit_code == 0
    assert not path.exists()  # it holds nothing install did not put there: it goes


@pytest.mark.parametrize("scope", ["user", "project"])
def test_an_opencode_file_already_there_keeps_what_it_has(
    run: Invoke, workspace: Workspace, scope: str
) -> None:
    """No $schema is added to a file that has none, and one there is neither doubled nor
    removed; uninstall gives back the file as it was (one holding only the $schema, as a file
    install makes does, goes as such a file does)."""
    folder = workspace.project if scope == "project" else workspace.home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    bare = folder / "opencode.json"
    for before in ('{\n  "theme": "opencode"\n}\n', f'{{\n  "$schema": "{SCHEMA}"\n}}\n'):
        bare.write_text(before, encoding="utf-8")
        assert run("install", "opencode", "--scope", scope, "--write").exit_code == 0
        after = json.loads(bare.read_text(encoding="utf-8"))
        assert [key for key in after if key != "mcp"] == list(json.loads(before))
        assert "aletheia" in after["mcp"]
        run("uninstall", "opencode", "--scope", scope, "--write")
        if "theme" in before:
            assert bare.read_text(encoding="utf-8") == before
        else:
            assert not bare.exists()
