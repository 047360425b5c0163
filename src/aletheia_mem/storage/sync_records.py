"""The records stores exchange when they sync, whatever their dialect.

A record is ``{"kind", "key", "v": [changed_at, origin], "data": {...}}``. ``key`` is the item's
global id (a memory's, fact's or episode's ``uid``, a rule's ``r_`` id); every reference inside
``data`` is a global id too, never a local ``#N``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Record = dict[str, Any]
KINDS = ("memory", "fact", "rule", "episode")


@dataclass(frozen=True)
class ExportPage:
    """One page of changes and where the next page starts."""

    records: list[Record]
    cursor: int
    more: bool


@dataclass
class ApplyStats:
    """What a page of records did: applied, skipped as known, merged into another item."""

    applied: int = 0
    skipped: int = 0
    merged: int = 0
    touched_projects: set[str] = field(default_factory=set)


def record_project(record: Record) -> str | None:
    """The project a record belongs to; None for a rule that is not tied to one project."""
    data = record["data"]
    if record["kind"] == "rule":
        return str(data["scope_name"]) if data.get("scope_tier") == "project" else None
    return str(data["project"])
