"""The store's rows and queries, shared by every storage dialect."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Order = Literal["relevance", "date_desc", "date_asc"]
DismissTable = Literal["memories", "facts", "episodes"]


@dataclass(frozen=True)
class Memory:
    """A stored memory with its facts, files and state."""

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


@dataclass(frozen=True)
class MemoryHead:
    """A memory as one line of a search index shows it, read without its text."""

    id: int
    project: str
    type: str
    title: str
    tool: str
    pinned: bool
    created_at: int


@dataclass(frozen=True)
class NewMemory:
    """A memory to store (its id, uid and state are assigned when it is written)."""

    project: str
    type: str
    kind: str
    title: str
    text: str
    tool: str
    created_at: int
    dedupe_key: str | None
    narrative: str | None = None
    facts: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    pinned: bool = False


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
class NewFact:
    """A fact to store (its id and uid are assigned when it is written)."""

    project: str
    subject: str
    predicate: str
    object: str
    valid_from: int
    recorded_at: int
    source: str


@dataclass(frozen=True)
class Rule:
    """A standing rule, keyed by its content id."""

    id: str
    then: str
    when: str
    scope_tier: str
    scope_name: str
    evidence_memory_ids: tuple[int, ...]
    evidence_fact_ids: tuple[int, ...]
    source: str
    added_at: int
    last_confirmed_at: int
    enabled: bool


@dataclass(frozen=True)
class SessionRequest:
    """A request a user made in an episode (a session of a host)."""

    episode_id: int
    at: int
    text: str
    tool: str


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit log: who did what, to which project, with what result."""

    at: int
    actor: str
    tool: str
    project: str | None
    result: str
    detail: str | None = None


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


@dataclass(frozen=True)
class SessionRow:
    """An MCP session of the HTTP transport, as stored (keyed by its id's SHA-256)."""

    owner: str
    protocol_version: str
    client_name: str | None
    last_used_at: int


@dataclass(frozen=True)
class Repository:
    """A git work tree a host worked in, as recorded (a path is hostile input when read)."""

    path: str
    project: str
    last_seen_at: int
