"""Handlers of session_start_context and the work-state list tools."""

from __future__ import annotations

import json
from typing import Any

from aletheia_mem.domain import worklists
from aletheia_mem.domain.context import build_context
from aletheia_mem.domain.formatting import neutralize, one_line, wrap_recall
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.tools.app import AppContext, target_project

MAX_LIST_JSON = 100_000


def session_start_context(app: AppContext, args: dict[str, Any]) -> str:
    """The session-start block for a project."""
    project = target_project(app, args.get("project"))
    return wrap_recall(build_context(app.store, project, args["limit"]))


def work_state_write(app: AppContext, args: dict[str, Any]) -> str:
    """Replace a named list's items with the ones given."""
    name = args["list"].strip()
    items = args["items"]
    if not isinstance(items, list):
        raise InvalidInputError("items must be an array.")
    for item in items:
        if item is None or isinstance(item, list):
            raise InvalidInputError(
                "items must hold only strings, numbers, booleans or plain objects."
            )
    try:
        size = len(json.dumps(items, ensure_ascii=False, allow_nan=False))
    except ValueError:
        raise InvalidInputError("items must hold only finite numbers.") from None
    if size > MAX_LIST_JSON:
        raise InvalidInputError(f"items must be at most {MAX_LIST_JSON} characters as JSON.")
    project = target_project(app, args.get("project"))
    written = worklists.write_list(
        app.store, app.clock, project=project, name=name, items=items, tool=app.caller
    )
    stored = worklists.list_name(name)
    return f'Saved list "{one_line(stored)}" with {len(items)} item(s) as #{written}.'


def work_state_read(app: AppContext, args: dict[str, Any]) -> str:
    """The items of a list written by work_state_write, as JSON."""
    name = args["list"].strip()
    project = target_project(app, args.get("project"))
    items = worklists.read_list(app.store, project=project, name=name)
    if items is None:
        return f'No list named "{one_line(worklists.list_name(name))}".'
    return wrap_recall(neutralize(items))
