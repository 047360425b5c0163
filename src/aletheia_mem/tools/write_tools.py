"""The tools that change memories: save, dismiss and restore.

Apart from ``memory_tools`` (search and reading), so that a session that only recalls never loads
the saving path (its checks, redaction of named values, hashing). The JSON API and the CLI build
their saves and dismissals here too, so that every door checks them the same way.
"""

from __future__ import annotations

from typing import Any

from aletheia_mem.blank import is_blank
from aletheia_mem.domain import dismissals, memories
from aletheia_mem.domain.formatting import one_line
from aletheia_mem.domain.vocabulary import ItemType
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.base import Memory
from aletheia_mem.tools.app import AppContext, target_project

# After save_memory's "Already saved as #N." when that memory is dismissed.
_DISMISSED = " It is dismissed: hidden from search and context; restore_memory brings it back."


def memory_input(app: AppContext, args: dict[str, Any]) -> memories.MemoryInput:
    """A save's checked arguments, in the project the caller may write to."""
    text = args["text"]
    if is_blank(text):
        raise InvalidInputError("text is required.")
    title = args.get("title")
    return memories.MemoryInput(
        text=text,
        project=target_project(app, args.get("project")),
        tool=app.caller,
        title=title if title and not is_blank(title) else None,
        type=args["type"],
        pinned=args["pinned"],
        facts=memories.parse_fact_inputs(args.get("facts", [])),
        files=[path.strip() for path in args.get("files", []) if path.strip()],
    )


def save_memory(app: AppContext, args: dict[str, Any]) -> str:
    """Store one memory; the same project, title and text again returns the existing id."""
    item = memory_input(app, args)
    memory, created, facts_changed = memories.save_memory_noting(app.store, app.clock, item)
    if not created:  # the reference's line, then what else the call did or did not do
        hidden = memory.dismissed_at is not None
        return (
            f"Already saved as #{memory.id}."
            + (_DISMISSED if hidden else "")
            + saved_again_notes(memory, item, facts_changed)
        )
    return f"Saved as #{memory.id} in {one_line(memory.project)}."


def saved_again_notes(memory: Memory, item: memories.MemoryInput, facts_changed: bool) -> str:
    """After "Already saved as #N.": a fact it stated changed the fact timeline, or a type,
    pin or files it asked for were not applied. Empty for the same call again."""
    notes = ""
    if facts_changed:
        notes += " A fact it states is new or changed; fact_history shows it."
    kept = memories.not_applied_again(memory, item)
    if kept:
        named = " and ".join([", ".join(kept[:-1]), kept[-1]] if len(kept) > 1 else kept)
        plural = len(kept) > 1 or kept == ["files"]  # "Its files stay", "Its type stays"
        notes += f" Its {named} {'stay' if plural else 'stays'} as first saved."
    return notes


def set_dismissed(
    app: AppContext, item_type: ItemType, item_id: int, *, dismiss: bool, reason: str | None
) -> str:
    """Dismiss or restore one item the caller may touch; returns the item's project. Another
    project's item is answered as a missing one: a project-limited token cannot learn that an
    id exists, nor the name of the project holding it."""
    if app.allowed_projects is not None:
        project = app.store.project_of(dismissals.table_for(item_type), item_id)
        if project is not None and project not in app.allowed_projects:
            raise dismissals.no_such_item(item_type, item_id)
    return dismissals.set_dismissed(
        app.store,
        item_type=item_type,
        item_id=item_id,
        dismiss=dismiss,
        reason=reason,
        actor=app.caller,
        now=app.clock(),
    )


def dismiss_item(
    app: AppContext, item_type: ItemType, item_id: int, reason: str | None
) -> tuple[str, bool]:
    """Dismiss one item the caller may touch; returns its project and whether this dismissed
    it (an item already dismissed stays as it was, its first reason kept)."""
    already = dismissals.already_dismissed(app.store, item_type, item_id)
    return set_dismissed(app, item_type, item_id, dismiss=True, reason=reason), not already


def already_dismissed_text(item_type: ItemType, item_id: int) -> str:
    """The answer to a dismissal that changed nothing (as restore's ``Nothing to restore``)."""
    return f"Nothing to dismiss: {item_type} #{item_id} is already dismissed."


def dismiss_memory(app: AppContext, args: dict[str, Any]) -> str:
    """Hide an item from search and context without deleting it."""
    item_type, item_id = args["type"], args["id"]
    if not dismiss_item(app, item_type, item_id, args.get("reason"))[1]:
        return already_dismissed_text(item_type, item_id)
    return (
        f"Dismissed {item_type} #{item_id}. It is hidden from search and context;"
        " restore_memory undoes this."
    )


def restore_item(app: AppContext, item_type: ItemType, item_id: int) -> tuple[str, bool, str]:
    """Restore one item the caller may touch; returns its project, whether it was dismissed,
    and what to tell the user: ``Restored memory #2.`` (the reference's line), or that it was
    not dismissed."""
    hidden = app.store.is_dismissed(dismissals.table_for(item_type), item_id)
    project = set_dismissed(app, item_type, item_id, dismiss=False, reason=None)
    if hidden:
        return project, True, f"Restored {item_type} #{item_id}."
    return project, False, f"Nothing to restore: {item_type} #{item_id} is not dismissed."


def restore_memory(app: AppContext, args: dict[str, Any]) -> str:
    """Undo dismiss_memory."""
    return restore_item(app, args["type"], args["id"])[2]
