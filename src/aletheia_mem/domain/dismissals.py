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
    """Dismiss or restore one item, with an audit row; returns the item's project.

    Raises:
        NotFoundError: no item of that type has that id.
    """
    reason = redact_secrets(reason)[:MAX_REASON_LENGTH] if reason and dismiss else None
    tool = "dismiss_memory" if dismiss else "restore_memory"
    # The reason is the caller's text: kept with the item, never in the audit trail.
    audit = AuditEntry(at=now, actor=actor, tool=tool, project=None, result="ok", detail=None)
    project = store.set_dismissed(
        _TABLES[item_type], item_id, now if dismiss else None, reason, audit
    )
    if project is None:
        raise no_such_item(item_type, item_id)
    return project


def no_such_item(item_type: ItemType, item_id: int) -> NotFoundError:
    """The answer for an id that names nothing the caller may see."""
    return NotFoundError(f"No {item_type} #{item_id}.")
