"""The Lists page: the work-state lists of a project, read and edited one item per line."""

from __future__ import annotations

import json
import math
from typing import Any

from aletheia_mem.domain.worklists import dismissed_list, renamed_to
from aletheia_mem.errors import NotFoundError
from aletheia_mem.storage.base import Memory
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.calls import call
from aletheia_mem.web.visible import json_visible, visible


def index(app: AppContext, project: str) -> dict[str, Any]:
    query = {"project": project} if project else {}
    found: dict[str, Any] = call(app, "listWorkStates", query=query)
    return found


def read(app: AppContext, project: str, name: str) -> dict[str, Any]:
    query = {"project": project} if project else {}
    found: dict[str, Any] = call(app, "readWorkState", path={"name": name}, query=query)
    return found


def _json_line(item: Any) -> str:
    """The item as JSON on one line, each control, format or line-separator character (that
    ``str.splitlines`` would break on or the page would show escaped) as its ``\\uXXXX``."""
    return json_visible(json.dumps(item, ensure_ascii=False))


def _value_of(line: str) -> Any:
    """A stripped line as an item: a JSON object, "text", number or true/false is that value;
    anything else (an array, null, a line that is no JSON) is the text itself."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # nested past the parser: text, as any other
        return line
    if isinstance(value, float) and not math.isfinite(value):
        return line
    return value if isinstance(value, dict | str | int | float) else line


def item_line(item: Any) -> str:
    """An item as one line of the editor that ``parse_lines`` reads back as the same item: text
    as is when it reads back as itself and shows as itself, anything else (objects, numbers,
    text on several lines, looking like JSON or holding a control or format character) as
    JSON, so saving the form unchanged keeps every item as it is."""
    plain = isinstance(item, str) and item.splitlines() == [item] and item == item.strip()
    if plain and visible(item) == item and _value_of(item) == item:
        return str(item)
    return _json_line(item)


def parse_lines(text: str) -> list[Any]:
    """One item per non-blank line (see ``_value_of``), every one of them: past the tool's
    limit the write is refused with its own words, never cut short."""
    lines = (line.strip() for line in text.splitlines())
    return [_value_of(line) for line in lines if line]


def exists(app: AppContext, project: str, name: str) -> bool:
    try:
        read(app, project, name)
    except NotFoundError:
        return False
    return True


def dismissed(app: AppContext, project: str, name: str) -> Memory | None:
    """The dismissed list called ``name`` in ``project`` (a project's name as ``index`` gives
    it), or None."""
    return dismissed_list(app.store, project=project, name=name.strip())


def in_the_way(app: AppContext, project: str, name: str, renaming: str) -> Memory | None:
    """The dismissed list a save under ``name`` would bring back with the form's items, its own
    lost (``put_work_state``'s way, kept for the tool): the form refuses it. None when there is
    none, or when it is the list just renamed to ``renaming`` (the list being edited), where
    renaming back undoes the rename."""
    found = dismissed(app, project, name)
    if found is None or (renaming and renamed_to(found, renaming)):
        return None
    return found


def write(
    app: AppContext, project: str, name: str, text: str, based_on: str | None = None
) -> dict[str, Any]:
    """Save list ``name`` with the text's items; ``based_on``: the version of the list the
    form was opened on, checked in the write's transaction (``StaleListError``)."""
    body: dict[str, Any] = {"items": parse_lines(text)}
    if project:
        body["project"] = project
    if based_on is not None:
        body["based_on"] = based_on
    saved: dict[str, Any] = call(app, "writeWorkState", path={"name": name}, body=body)
    return saved


def rename(
    app: AppContext, project: str, name: str, to: str, text: str, based_on: str | None = None
) -> dict[str, Any]:
    """Rename list ``name`` to ``to`` with the text's items, in one transaction (the API's
    ``renameWorkState``): nothing is left under the old name. ``based_on``: as ``write``'s."""
    body: dict[str, Any] = {"to": to, "items": parse_lines(text)}
    if project:
        body["project"] = project
    if based_on is not None:
        body["based_on"] = based_on
    moved: dict[str, Any] = call(app, "renameWorkState", path={"name": name}, body=body)
    return moved
