"""What a search reads of the store: memories, their heads, facts and the query, shared by every
storage dialect (the other rows are in ``entries.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

Order = Literal["relevance", "date_desc", "date_asc"]
DismissTable = Literal["memories", "facts", "episodes"]
# Why ``rename_work_state`` moved nothing: no live list under the old key, or another memory
# of the project holds the new one.
RenameRefusal = Literal["missing", "taken"]
# A list write's own check of the list it replaces (its live items as stored JSON, None when
# there is no live list), run inside the write's transaction: it raises to refuse the write,
# and no other writer can change the list between that check and the write.
ListCheck = Callable[[str | None], None]


def renamed_reason(new_title: str) -> str:
    """The dismissal reason of a list renamed to the list titled ``new_title``."""
    return f"renamed to {new_title.removesuffix(' list')}"


@dataclass(frozen=True, init=False)
class Memory:
    """A stored memory with its facts, files and state.

    Its ``__init__`` is written out: a frozen dataclass's own sets each field through
    ``object.__setattr__``, twice the instructions (a save builds one).
    """

    id: int
    uid: str
    project: str
    type: str
    kind: str
    title: str
    text: str
    narrative: str | None
    facts: tuple[str, ...]
    files: tuple[str, ...]
    tool: str
    pinned: bool
    created_at: int
    updated_at: int
    dismissed_at: int | None
    dismiss_reason: str | None

    def __init__(
        self,
        id: int,
        uid: str,
        project: str,
        type: str,
        kind: str,
        title: str,
        text: str,
        narrative: str | None,
        facts: tuple[str, ...],
        files: tuple[str, ...],
        tool: str,
        pinned: bool,
        created_at: int,
        updated_at: int,
        dismissed_at: int | None,
        dismiss_reason: str | None,
    ) -> None:
        fill = self.__dict__  # frozen: set past ``__setattr__``, as dataclasses do
        fill["id"] = id
        fill["uid"] = uid
        fill["project"] = project
        fill["type"] = type
        fill["kind"] = kind
        fill["title"] = title
        fill["text"] = text
        fill["narrative"] = narrative
        fill["facts"] = facts
        fill["files"] = files
        fill["tool"] = tool
        fill["pinned"] = pinned
        fill["created_at"] = created_at
        fill["updated_at"] = updated_at
        fill["dismissed_at"] = dismissed_at
        fill["dismiss_reason"] = dismiss_reason


class MemoryHead(NamedTuple):
    """A memory as one line of a search index shows it, read without its text.

    A named tuple, not a frozen dataclass: as immutable, and a page of results builds twenty,
    each a third of the instructions (a frozen dataclass sets each field through
    ``object.__setattr__``).
    """

    id: int
    project: str
    type: str
    title: str
    tool: str
    pinned: bool
    created_at: int


@dataclass(frozen=True)
class Fact:
    """A stored fact: a subject's predicate holding an object from ``valid_from``."""

    id: int
    uid: str
    project: str
    subject: str
    predicate: str
    object: str
    valid_from: int
    valid_to: int | None
    recorded_at: int
    superseded_by: int | None
    source: str
    memory_id: int | None
    dismissed_at: int | None


@dataclass(frozen=True)
class FactPage:
    """A page of a subject's history, newest validity first, and its whole history's size."""

    total: int
    offset: int  # where the page starts: at most the last fact
    facts: list[Fact]
    current: list[Fact]  # every fact of the history valid now, on the page or not
    # The history's highest fact id (0: none): the bound (``upto``) its later pages are read
    # with, so that a fact recorded meanwhile pushes none onto the next page a second time.
    newest_id: int = 0


@dataclass(frozen=True)
class MemoryQuery:
    """One page of memories. ``projects`` None means every project."""

    terms: tuple[str, ...] = ()
    projects: tuple[str, ...] | None = None
    type: str | None = None
    kind: str | None = None
    since: int | None = None
    until: int | None = None
    order: Order = "relevance"
    limit: int = 20
    offset: int = 0
    file: str | None = None
    file_suffix: bool = False
    exclude_kinds: tuple[str, ...] = field(default_factory=tuple)
    dismissed: bool = False  # True: only the dismissed ones (the web UI shows them on request)
    # Only ids up to this: a listing's later pages leave out the memories saved since its first
    # (ids only grow), so that those do not push a memory onto the next page a second time.
    upto: int | None = None
