"""Hiding items from recall without deleting them, and bringing them back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.domain.vocabulary import ItemType
from aletheia_mem.errors import NotFoundError
from aletheia_mem.storage.base import DismissTable
from aletheia_mem.storage.entries import AuditEntry

if TYPE_CHECKING:  # protocols: typing only, off the start path
    from aletheia_mem.storage.contracts import Store

MAX_REASON_LENGTH = 300
# How a summary's session marks one it replaced by a later one (``summaries``): not the user's
# dismissal, so a user's dismissal of it owns the item even with no reason of its own.
REPLACED_REASON = "the session went on: "

_TABLES: dict[str, DismissTable] = {
    "memory": "memories",
    "observation": "memories",
    "fact": "facts",
    "episode": "episodes",
}


def table_for(item_type: str) -> DismissTable:
    return _TABLES[item_type]


def set_dismissed(
    store: Store,
    *,
    item_type: ItemType,
    item_id: int,
    dismiss: bool,
    reason: str | None,
    actor: str,
    now: int,
) -> str:
    """Dismiss or restore one item, with an audit row (which says so when nothing changed: the
    item was not dismissed, or already was); returns the item's project.

    Raises:
        NotFoundError: no item of that type has that id.
    """
    reason = redact_secrets(reason)[:MAX_REASON_LENGTH] if reason and dismiss else None
    tool = "dismiss_memory" if dismiss else "restore_memory"
    # The reason given goes in the audit trail too (the reference: "kept in the audit trail"),
    # as the item keeps it: redacted and cut to its length.
    audit = AuditEntry(at=now, actor=actor, tool=tool, project=None, result="ok", detail=reason)
    table = _TABLES[item_type]
    # A summary its session replaced is not dismissed by the user: their dismissal takes it over.
    keep_reason = not (dismiss and table == "memories" and _replaced(store, item_id))
    project = store.set_dismissed(
        table,
        item_id,
        now if dismiss else None,
        reason,
        audit,
        keep_reason=keep_reason,
        unchanged_detail=unchanged_detail(dismiss, reason),
    )
    if project is None:
        raise no_such_item(item_type, item_id)
    return project


def already_dismissed(store: Store, item_type: ItemType, item_id: int) -> bool:
    """Whether dismissing the item would change nothing: it is dismissed already (by the user,
    not a summary its session replaced)."""
    table = _TABLES[item_type]
    if not store.is_dismissed(table, item_id):
        return False
    return table != "memories" or not _replaced(store, item_id)


def unchanged_detail(dismiss: bool, reason: str | None) -> str:
    """The audit row's detail of a dismissal or restore that changed nothing: the item was
    already dismissed (with that reason), or was not dismissed."""
    if not dismiss:
        return "nothing changed: it was not dismissed"
    unchanged = "nothing changed: it was already dismissed"
    return unchanged if reason is None else f"{reason} ({unchanged})"


def is_replaced(reason: str | None) -> bool:
    """Whether a dismissal's reason is a session's, which replaced the summary by a later one."""
    return (reason or "").startswith(REPLACED_REASON)


def _replaced(store: Store, memory_id: int) -> bool:
    memory = store.get_memory(memory_id)
    return (
        memory is not None
        and memory.dismissed_at is not None
        and is_replaced(memory.dismiss_reason)
    )


def no_such_item(item_type: ItemType, item_id: int) -> NotFoundError:
    """The answer for an id that names nothing the caller may see."""
    return NotFoundError(f"No {item_type} #{item_id}.")
