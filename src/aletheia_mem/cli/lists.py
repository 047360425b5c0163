"""``aletheia lists``: read and write named work-state lists (to-do lists and the like)."""

from __future__ import annotations

import json
from typing import Any

import click

from aletheia_mem.cli.common import echo, emit_json, handles_errors, json_option, open_cli_app
from aletheia_mem.cli.terminal import one_line_safe
from aletheia_mem.domain import worklists
from aletheia_mem.domain.limits import MAX_NAME, check_length
from aletheia_mem.errors import InvalidInputError, NotFoundError
from aletheia_mem.tools.app import target_project


@click.group()
def lists() -> None:
    """Named work-state lists, shared with the agents' work_state tools."""


@lists.command("read")
@click.argument("name")
@click.option("--project", "-p", help="Project key. Default: this directory's project.")
@json_option
@handles_errors
def read(name: str, project: str | None, as_json: bool) -> None:
    """Print a list's items."""
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
    for item in items:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
        echo(f"- {one_line_safe(text)}")


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
    if not name.strip():
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
