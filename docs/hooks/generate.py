"""mkdocs hook: the Tools and CLI pages are generated from the code, never written by hand.

``docs/tools.md`` and ``docs/cli.md`` each hold a marker line; at build time the marker is
replaced by the reference generated from ``aletheia_mem.tools.registry`` (the 13 tools and their
input schemas) or from the click application ``aletheia_mem.cli.main:cli`` (walked through
click's public ``list_commands``/``get_command``, so a lazy group works too).
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import click

TOOLS_MARKER = "<!-- generated: tools -->"
CLI_MARKER = "<!-- generated: cli -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """mkdocs event: expand the markers in a page's markdown."""
    if TOOLS_MARKER in markdown:
        markdown = markdown.replace(TOOLS_MARKER, tools_reference())
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    return markdown


def tools_reference() -> str:
    """One section per tool: its description, hints and a table of its arguments."""
    from aletheia_mem.tools.registry import TOOLS

    sections = [f"Aletheia serves {len(TOOLS)} tools.\n"]
    sections.append("| tool | title | read-only |\n|---|---|---|")
    sections.extend(f"| [`{t.name}`](#{t.name}) | {t.title} | {_yes(t.read_only)} |" for t in TOOLS)
    for tool in TOOLS:
        sections.append(
            f"\n## `{tool.name}` {{#{tool.name}}}\n\n**{tool.title}**. {tool.description}\n"
        )
        sections.append(_arguments_table(tool.input_schema))
    return "\n".join(sections) + "\n"


def _arguments_table(schema: dict[str, Any]) -> str:
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        return "No arguments.\n"
    required = set(schema.get("required", []))
    rows = ["| argument | type | required | default | description |", "|---|---|---|---|---|"]
    for name, spec in properties.items():
        default = f"`{json.dumps(spec['default'])}`" if "default" in spec else ""
        rows.append(
            f"| `{name}` | {_type_text(spec)} | {_yes(name in required)} | {default} |"
            f" {_cell(spec.get('description', ''))} |"
        )
    return "\n".join(rows) + "\n"


def _type_text(spec: dict[str, Any]) -> str:
    """A schema's type in a few words: `string` one of a, b; `integer` 1 to 100; array of ..."""
    kind = spec.get("type", "any")
    if isinstance(kind, list):
        text = " or ".join(f"`{k}`" for k in kind)
    elif kind == "number" and spec.get("multipleOf") == 1:
        text = "`integer`"
    else:
        text = f"`{kind}`"
    if "enum" in spec:
        text += ", one of " + ", ".join(f"`{v}`" for v in spec["enum"])
    if "minimum" in spec and "maximum" in spec:
        text += f", {spec['minimum']:,} to {spec['maximum']:,}"
    elif "minimum" in spec:
        text += f", at least {spec['minimum']:,}"
    if "maxLength" in spec:
        text += f", at most {spec['maxLength']:,} characters"
    if kind == "array":
        text += " of " + _type_text(spec.get("items", {}))
        if "maxItems" in spec:
            text += f", at most {spec['maxItems']:,} items"
    return text


def cli_reference() -> str:
    """Every command of ``aletheia``, depth first, with its usage, help and options."""
    from aletheia_mem.cli.main import cli

    return "\n".join(_command_sections(None, cli, ["aletheia"]))


def _command_sections(
    parent: click.Context | None, command: click.Command, path: list[str]
) -> list[str]:
    name = " ".join(path)
    ctx = command.make_context(path[-1], [], parent=parent, resilient_parsing=True)
    level = "#" * min(len(path) + 1, 6)
    help_text = inspect.cleandoc(command.help or "")
    sections = [
        f"{level} `{name}`\n",
        f"```text\n{name} {' '.join(command.collect_usage_pieces(ctx))}\n```\n",
        f"{_escape_help(help_text)}\n" if help_text else "",
        _options_table(command, ctx),
    ]
    if isinstance(command, click.Group):
        for sub_name in command.list_commands(ctx):
            sub = command.get_command(ctx, sub_name)
            if sub is not None and not sub.hidden:
                sections.extend(_command_sections(ctx, sub, [*path, sub_name]))
    return sections


def _options_table(command: click.Command, ctx: click.Context) -> str:
    """Its arguments and options; a command that runs a script with its own parser (``aletheia
    hub``) shows that parser's options, as its ``--help`` does (``help_params``)."""
    rows = []
    shown = getattr(command, "help_params", command.get_params)
    for param in shown(ctx):
        if isinstance(param, click.Argument):
            rows.append(f"| `{param.human_readable_name}` | argument{_required(param)} |")
            continue
        record = param.get_help_record(ctx)
        if record is not None:
            rows.append(f"| `{record[0]}` | {_cell(record[1])} |")
    if not rows:
        return ""
    return "| option | meaning |\n|---|---|\n" + "\n".join(rows) + "\n"


def _required(param: click.Parameter) -> str:
    return ", required" if param.required else ", optional"


def _escape_help(text: str) -> str:
    """Click help as markdown: the \\b no-rewrap marker dropped, its paragraph kept verbatim."""
    out = []
    for paragraph in text.split("\n\n"):
        if paragraph.startswith("\b"):
            out.append("```text\n" + paragraph.lstrip("\b\n") + "\n```")
        else:
            out.append(paragraph)
    return "\n\n".join(out)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
