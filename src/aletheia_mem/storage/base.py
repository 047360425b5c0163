"""The store's rows and queries, shared by every storage dialect."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from aletheia_mem.search.rank import DEFAULT_RANKING, Ranking

Order = Literal["relevance", "date_desc", "date_asc"]
DismissTable = Literal["memories", "facts", "episodes"]


@dataclass(frozen=True)
class Memory:
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
    project: str
    subject: str
    predicate: str
    object: str
    valid_from: int
    recorded_at: int
    source: str


@dataclass(frozen=True)
class Rule:
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
    episode_id: int
    at: int
    text: str
    tool: str


@dataclass(frozen=True)
class AuditEntry:
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


class Store(Protocol):
    """What the 13 tools need of a store. SQLite implements it; a PostgreSQL store will too.

    Every write method is one transaction. Admin features (export, sync, hub tokens) are
    dialect-specific for now and live on the concrete store.
    """

    def close(self) -> None: ...

    # memories
    def add_memory(self, new: NewMemory, facts: Sequence[NewFact] = ()) -> tuple[Memory, bool]: ...
    def put_work_state(self, new: NewMemory) -> int: ...
    def find_memory(self, project: str, dedupe_key: str) -> Memory | None: ...
    def get_memories(self, ids: Sequence[int]) -> list[Memory]: ...
    def get_memory(self, memory_id: int) -> Memory | None: ...
    def memory_heads(self, ids: Sequence[int]) -> list[MemoryHead]: ...
    def search_memories(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[Memory]: ...
    def rank_memory_ids(
        self, query: MemoryQuery, now: int, ranking: Ranking = DEFAULT_RANKING
    ) -> list[int]: ...
    def stale_memory_ids(self, ids: Sequence[int]) -> set[int]: ...
    def has_memories(self, projects: tuple[str, ...] | None) -> bool: ...
    def neighbours(
        self, anchor: Memory, project: str | None, count: int, later: bool
    ) -> list[Memory]: ...
    def recent_memories(
        self, project: str, limit: int, *, pinned: bool, exclude_kinds: tuple[str, ...]
    ) -> list[Memory]: ...
    def existing_memory_ids(self, ids: Sequence[int]) -> set[int]: ...
    def dismissed_memory_ids(self, ids: Sequence[int]) -> set[int]: ...
    def set_pinned(self, memory_id: int, pinned: bool, at: int) -> Memory | None: ...

    # facts
    def add_fact(self, new: NewFact, memory_id: int | None = None) -> tuple[Fact, bool]: ...
    def facts_about(
        self, subject: str, project: str | None, predicate: str | None
    ) -> list[Fact]: ...
    def search_facts(
        self, terms: Sequence[str], projects: tuple[str, ...] | None, limit: int
    ) -> list[Fact]: ...
    def current_facts(self, project: str, limit: int) -> list[Fact]: ...
    def existing_fact_ids(self, ids: Sequence[int]) -> set[int]: ...
    def superseded_fact_ids(self, ids: Sequence[int]) -> set[int]: ...

    # rules
    def add_rule(self, rule: Rule) -> tuple[Rule, bool]: ...
    def get_rule(self, rule_id: str) -> Rule | None: ...
    def list_rules(self, *, enabled_only: bool = True) -> list[Rule]: ...
    def confirm_rule(self, rule_id: str, at: int) -> bool: ...
    def set_rule_enabled(self, rule_id: str, enabled: bool, at: int) -> bool: ...

    # episodes, dismissals, audit
    def recent_requests(self, project: str, limit: int) -> list[SessionRequest]: ...
    def set_dismissed(
        self,
        table: DismissTable,
        item_id: int,
        at: int | None,
        reason: str | None,
        audit: AuditEntry,
    ) -> str | None: ...
    def project_of(self, table: DismissTable, item_id: int) -> str | None: ...
    def add_audit(self, entry: AuditEntry) -> None: ...
