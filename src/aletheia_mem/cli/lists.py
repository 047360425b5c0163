"""``aletheia lists``: see, read and write named work-state lists (to-do lists and the like)."""

from __future__ import annotations

import json
from typing import Any

import click

from aletheia_mem.blank import is_blank
from aletheia_mem.cli.common import (
    Count,
    echo,
    emit_json,
    handles_errors,
    instant_json,
    json_option,
    open_cli_app,
    table,
)
from aletheia_mem.cli.terminal import one_line_safe
from aletheia_mem.domain import worklists
from aletheia_mem.domain.limits import MAX_NAME, check_length
from aletheia_mem.errors import InvalidInputError, NotFoundError
from aletheia_mem.timefmt import format_instant
from aletheia_mem.tools.app import ALL_PROJECTS, readable_projects, target_project

MAX_SHOWN = 1000


@click.group()
def lists() -> None:
    """Named work-state lists, shared with the agents' work_state tools."""


@lists.command("list")
@click.option(
    "--project",
    "-p",
    help='Project key. Default: this directory\'s project; "*" for every project.',
)
@click.option(
    "--limit",
    "-n",
    type=Count(1, MAX_SHOWN),
    default=100,
    show_default=True,
    help="Show at most this many lists, the most recently written.",
)
@json_option
@handles_errors
def list_lists(project: str | None, limit: int, as_json: bool) -> None:
    """Show the lists there are: name, item count and last write, the latest first."""
    with open_cli_app(create=False) as app:
        projects = readable_projects(app, project) or tuple(app.store.project_names())
        found = worklists.list_index(app.store, projects, limit + 1)
    shown = found[:limit]
    if as_json:
        emit_json([_summary_json(summary) for summary in shown])
        return
    if not shown:
        where = "any project" if project and project.strip() == ALL_PROJECTS else projects[0]
        echo(one_line_safe(f"No lists in {where}."))
        return
    rows = [
        [f"#{s.id}", format_instant(s.updated_at), str(s.items), s.project, s.name] for s in shown
    ]
    echo(table(["id", "updated", "items", "project", "list"], rows))
    if len(found) > limit:
        echo(f"There are more: these are the {limit} latest (--limit takes up to {MAX_SHOWN}).")


def _summary_json(summary: worklists.ListSummary) -> dict[str, Any]:
    return {
        "id": summary.id,
        "list": summary.name,
        "items": summary.items,
        "project": summary.project,
        "updated_at": instant_json(summary.updated_at),
    }


@lists.command("read")
@click.argument("name")
@click.option("--project", "-p", help="Project key. Default: this directory's project.")
@json_option
@handles_errors
def read(name: str, project: str | None, as_json: bool) -> None:
    """Print a list's items."""
    if is_blank(name):  # as write and work_state_read: spaces or zero-width characters alone
        raise InvalidInputError("list is required.")
    check_length("list", name.strip(), MAX_NAME)  # as work_state_read: never a huge echo
    with open_cli_app(create=False) as app:
        text = worklists.read_list(
            app.store, project=target_project(app, project), name=name.strip()
        )
    if text is None:
        raise NotFoundError(worklists.no_such_list(name.strip()))
    items = json.loads(text)
    if as_json:
        emit_json(items)
        return
    for item in items:  # each as JSON, as work_state_read shows them: "3" is not 3
        echo(f"- {one_line_safe(json.dumps(item, ensure_ascii=False, separators=(',', ':')))}")


def _items(values: tuple[str, ...], items_json: str | None) -> list[Any]:
    if items_json is not None:
        if values:
            raise InvalidInputError("Give the items as arguments or with --items-json, not both.")
        try:
            parsed = json.loads(items_json)
        except ValueError:
            raise InvalidInputError("--items-json is not valid JSON.") from None
        except RecursionError:  # past Python's recursion limit, the items check's limit too
            raise InvalidInputError(
                f"items must not nest more than {worklists.MAX_ITEM_DEPTH} levels deep."
            ) from None
        if not isinstance(parsed, list):
            raise InvalidInputError("items must be an array.")
        return parsed  # the items themselves are checked by worklists.write_list
    return list(values)


@lists.command("write")
@click.argument("name")
@click.argument("values", metavar="[ITEM]...", nargs=-1)
@click.option("--items-json", help='All items as a JSON array, e.g. \'["a", {"task": "b"}]\'.')
@click.option("--project", "-p", help="Project key. Default: this directory's project.")
@json_option
@handles_errors
def write(
    name: str, values: tuple[str, ...], items_json: str | None, project: str | None, as_json: bool
) -> None:
    """Replace a list with these items (send the whole list, at most 1000 items)."""
    if is_blank(name):
        raise InvalidInputError("list is required.")
    items = _items(values, items_json)
    with open_cli_app() as app:
        written = worklists.write_list(
            app.store,
            app.clock,
            project=target_project(app, project),
            name=name.strip(),
            items=items,
            tool=app.caller,
        )
    stored = worklists.list_name(name.strip())
    if as_json:
        emit_json({"id": written, "list": stored, "items": len(items)})
    else:
        echo(f'Saved list "{one_line_safe(stored)}" with {len(items)} item(s) as #{written}.')
