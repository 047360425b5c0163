"""The closed sets of names the domain accepts (memory types and kinds, dismissable items, rule
scopes), apart from the modules that use them: the tools' schemas need them to answer
``initialize`` and ``tools/list``, and importing ``memories`` for them would load redaction
(a tenth of the stdio server's start) before any tool is called."""

from __future__ import annotations

from typing import Literal

MEMORY_TYPES = (
    "decision",
    "gotcha",
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "note",
)
# save_memory makes notes, work_state_write work_state lists, hooks observations and summaries.
MEMORY_KINDS = ("note", "observation", "summary", "work_state")
ItemType = Literal["memory", "observation", "fact", "episode"]
ITEM_TYPES: tuple[ItemType, ...] = ("memory", "observation", "fact", "episode")
SCOPE_TIERS = ("everywhere", "project", "situation")
