"""The Lists page: the work-state lists of a project, read and edited one item per line."""

from __future__ import annotations

import json
from typing import Any

from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.calls import call

MAX_LINES = 1000


def index(app: AppContext, project: str) -> dict[str, Any]:
    query = {"project": project} if project else {}
    found: dict[str, Any] = call(app, "listWorkStates", query=query)
    return found


def read(app: AppContext, project: str, name: str) -> dict[str, Any]:
    query = {"project": project} if project else {}
    found: dict[str, Any] = call(app, "readWorkState", path={"name": name}, query=query)
    return found


def item_line(item: Any) -> str:
    """An item as one line of the editor: text as is, anything else as JSON."""
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)


def parse_lines(text: str) -> list[Any]:
    """One item per non-blank line; a line holding a JSON object stays an object."""
    items: list[Any] = []
    for line in text.splitlines()[:MAX_LINES]:
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("{"):
            try:
                value = json.loads(stripped)
            except (ValueError, RecursionError):  # nested past the parser: text, as any other
                value = stripped
            items.append(value if isinstance(value, dict) else stripped)
        else:
            items.append(stripped)
    return items


def write(app: AppContext, project: str, name: str, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"items": parse_lines(text)}
    if project:
        body["project"] = project
    saved: dict[str, Any] = call(app, "writeWorkState", path={"name": name}, body=body)
    return saved
