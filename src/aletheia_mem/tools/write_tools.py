"""The tools that change memories: save, dismiss and restore.

Apart from ``memory_tools`` (search and reading), so that a session that only recalls never loads
the saving path (its checks, redaction of named values, hashing).
"""

from __future__ import annotations

from typing import Any

from aletheia_mem.domain import dismissals, memories
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.tools.app import AppContext, target_project


def save_memory(app: AppContext, args: dict[str, Any]) -> str:
    """Store one memory; the same project, title and text again returns the existing id."""
    text = args["text"]
    if not text.strip():
        raise InvalidInputError("text is required.")
    project = target_project(app, args.get("project"))
    title = args.get("title")
    item = memories.MemoryInput(
        text=text,
        project=project,
        tool=app.caller,
        title=title if title and title.strip() else None,
        type=args["type"],
        pinned=args["pinned"],
        facts=memories.parse_fact_inputs(args.get("facts", [])),
        files=[path.strip() for path in args.get("files", []) if path.strip()],
    )
    memory, created = memories.save_memory(app.store, app.clock, item)
    if not created:
        return f"Already saved as #{memory.id}."
    return f"Saved as #{memory.id} in {memory.project}."


def dismiss_memory(app: AppContext, args: dict[str, Any]) -> str:
    """Hide an item from search and context without deleting it."""
    item_type, item_id = args["type"], args["id"]
    _check_item_project(app, item_type, item_id)
    dismissals.set_dismissed(
        app.store,
        item_type=item_type,
        item_id=item_id,
        dismiss=True,
        reason=args.get("reason"),
        actor=app.caller,
        now=app.clock(),
    )
    return (
        f"Dismissed {item_type} #{item_id}. It is hidden from search and context;"
        " restore_memory undoes this."
    )


def restore_memory(app: AppContext, args: dict[str, Any]) -> str:
    """Undo dismiss_memory."""
    item_type, item_id = args["type"], args["id"]
    _check_item_project(app, item_type, item_id)
    dismissals.set_dismissed(
        app.store,
        item_type=item_type,
        item_id=item_id,
        dismiss=False,
        reason=None,
        actor=app.caller,
        now=app.clock(),
    )
    return f"Restored {item_type} #{item_id}."


def _check_item_project(app: AppContext, item_type: str, item_id: int) -> None:
    """A project-limited caller may only touch items of its projects."""
    if app.allowed_projects is None:
        return
    project = app.store.project_of(dismissals.table_for(item_type), item_id)
    if project is not None:
        target_project(app, project)
