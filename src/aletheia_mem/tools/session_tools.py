"""Handlers of session_start_context and the work-state list tools."""

from __future__ import annotations

import json
from typing import Any

from aletheia_mem.domain import worklists
from aletheia_mem.domain.context import build_context_parts
from aletheia_mem.domain.controls import escape_json_controls
from aletheia_mem.domain.formatting import applied_rule_text, wrap_recall
from aletheia_mem.domain.recall_tag import neutralize
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.tools import structured
from aletheia_mem.tools.app import AppContext, target_project
from aletheia_mem.tools.structured import Output


def session_start_context(app: AppContext, args: dict[str, Any]) -> Output:
    """The session-start block for a project."""
    project = target_project(app, args.get("project"))
    now = app.clock()
    text, parts = build_context_parts(app.store, project, args["limit"], now=now)
    data = structured.recall(
        project=project,
        pinned=[structured.memory_head(memory) for memory in parts.pinned],
        recent=[structured.memory_head(memory) for memory in parts.recent],
        requests=[structured.request(item) for item in parts.requests],  # stored text, whole
        facts=[structured.fact(fact, now) for fact in parts.facts],
        rules=[{"id": rule.id, "text": applied_rule_text(rule)} for rule in parts.rules],
        items_cut=parts.cut,
        facts_left_out=parts.facts_left_out,
    )
    return Output(wrap_recall(text), data)


def work_state_write(app: AppContext, args: dict[str, Any]) -> str:
    """Replace a named list's items with the ones given."""
    name = args["list"].strip()
    items = args["items"]
    if not isinstance(items, list):
        raise InvalidInputError("items must be an array.")
    project = target_project(app, args.get("project"))
    written = worklists.write_list(
        app.store, app.clock, project=project, name=name, items=items, tool=app.caller
    )
    stored = worklists.list_name(name)
    return f"Saved list {worklists.quoted_name(stored)} with {len(items)} item(s) as #{written}."


def work_state_read(app: AppContext, args: dict[str, Any]) -> Output:
    """The items of a list written by work_state_write, as JSON."""
    name = args["list"].strip()
    project = target_project(app, args.get("project"))
    items = worklists.read_list(app.store, project=project, name=name)
    stored = worklists.list_name(name)
    data = structured.recall(project=project, list=stored, found=items is not None, items=[])
    if items is None:
        return Output(worklists.no_such_list(name), data)
    data["items"] = json.loads(items)
    return Output(wrap_recall(neutralize(escape_json_controls(items))), data)
