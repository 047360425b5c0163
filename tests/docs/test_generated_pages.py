"""The docs site's Tools and CLI pages come from the code (docs/hooks/generate.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import click

from aletheia_mem.cli.main import cli
from aletheia_mem.tools.registry import TOOLS

HOOK = Path(__file__).parents[2] / "docs" / "hooks" / "generate.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _command_paths(group: click.Group, ctx: click.Context, prefix: str) -> list[str]:
    paths = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        paths.append(f"{prefix} {name}")
        if isinstance(command, click.Group):
            sub_ctx = click.Context(command, info_name=name, parent=ctx)
            paths.extend(_command_paths(command, sub_ctx, f"{prefix} {name}"))
    return paths


def test_the_tools_page_has_every_tool_and_every_argument() -> None:
    page = _generator().tools_reference()
    assert len(TOOLS) == 13
    for tool in TOOLS:
        assert f"## `{tool.name}` {{#{tool.name}}}" in page
        assert tool.description in page
        for argument in tool.input_schema.get("properties", {}):
            assert f"| `{argument}` |" in page


def test_the_cli_page_has_every_command_of_the_click_app() -> None:
    page = _generator().cli_reference()
    for path in _command_paths(cli, click.Context(cli, info_name="aletheia"), "aletheia"):
        assert f"# `{path}`" in page


def test_the_markers_in_the_pages_are_replaced_by_the_reference() -> None:
    generator = _generator()
    tools_md = (HOOK.parents[1] / "tools.md").read_text(encoding="utf-8")
    page = generator.on_page_markdown(tools_md)
    assert generator.TOOLS_MARKER not in page and "## `search` {#search}" in page
    cli_md = (HOOK.parents[1] / "cli.md").read_text(encoding="utf-8")
    assert "## `aletheia`" in generator.on_page_markdown(cli_md)


def test_the_cli_page_lists_the_options_aletheia_hub_hands_to_aletheia_sync() -> None:
    """aletheia hub takes aletheia-sync's options: its section lists them as its --help does."""
    page = _generator().cli_reference()
    section = page.split("## `aletheia hub`", 1)[1].split("\n## ", 1)[0]
    for option in ("--hub-db TEXT", "--port TEXT", "--rate-limit N", "--allow-origin ORIGIN"):
        assert f"| `{option}` |" in section
    assert "| `ARGS` |" not in section
