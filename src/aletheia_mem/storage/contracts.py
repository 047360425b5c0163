"""What the layers above ask of a store, one protocol per concern.

SQLite (``storage.sqlite``) and PostgreSQL (``storage.postgres``) implement every one of them and
pass one contract suite (``tests/storage/contract``). The tools, the CLI, the transports and the
hub depend on these protocols; only the composition root (``storage.open``) names a concrete
store. Every write method is one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from aletheia_mem.search.rank import DEFAULT_RANKING, Ranking
from aletheia_mem.storage.base import (
    DismissTable,
    Fact,
    FactPage,
    ListCheck,
    Memory,
    MemoryHead,
    MemoryQuery,
    RenameRefusal,
)
from aletheia_mem.storage.entries import (
    AuditEntry,
    AuditPage,
    AuditQuery,
    NewFact,
    NewMemory,
    Rule,
    SessionRequest,
)

# Dataclasses of base (kept off the start path with these protocols), named here too.
from aletheia_mem.storage.entries import Repository as Repository
from aletheia_mem.storage.entries import SessionRow as SessionRow
from aletheia_mem.storage.hub_rows import HubToken, StoreClaim
from aletheia_mem.storage.sync_records import ApplyStats, ExportPage, Record

# The audit row of a claim that binds a store to a token, given the name of the revoked token it
# took the store from (None: the store's first token).
ClaimAudit = Callable[[str | None], AuditEntry]


class MemoryStore(Protocol):
    """Memories: saving (with the facts a memory states), reading, ranking, pinning."""

    def add_memory(self, new: NewMemory, facts: Sequence[NewFact] = ()) -> tuple[Memory, bool]: ...
    # add_memory, and whether a fact it states changed its key's timeline (a memory saved
    # before still records its facts)
    def add_memory_noting(
        self, new: NewMemory, facts: Sequence[NewFact] = ()
    ) -> tuple[Memory, bool, bool]: ...
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
    # Indexed memory tokens longer than ``prefix`` that start with it, in order: a short hash
    # finds the full one.
    def tokens_with_prefix(self, prefix: str, limit: int) -> list[str]: ...
    def stale_memory_ids(self, ids: Sequence[int], now: int) -> set[int]: ...
    def has_memories(
        self, projects: tuple[str, ...] | None, *, dismissed: bool = False
    ) -> bool: ...
    def count_memories(self, projects: tuple[str, ...] | None) -> int: ...
    def count_pinned_memories(self, project: str) -> int: ...
    def newest_memory_id(self) -> int: ...  # the highest id so far, 0 in an empty store
    # The projects with memories, by name, from the first that starts with ``starting`` (""
    # from the first of all), only those that start with it.
    def project_names(self, limit: int = 500, starting: str = "") -> list[str]: ...
    def neighbours(
        self, anchor: Memory, projects: tuple[str, ...] | None, count: int, later: bool
    ) -> list[Memory]: ...
    def recent_memories(
        self, project: str, limit: int, *, pinned: bool, exclude_kinds: tuple[str, ...]
    ) -> list[Memory]: ...
    def existing_memory_ids(self, ids: Sequence[int]) -> set[int]: ...
    def dismissed_memory_ids(self, ids: Sequence[int], since: int = 0) -> set[int]: ...
    def set_pinned(self, memory_id: int, pinned: bool, at: int) -> Memory | None: ...


class FactStore(Protocol):
    """Facts over time: a new value for a subject and predicate supersedes the current one."""

    def add_fact(self, new: NewFact, memory_id: int | None = None) -> tuple[Fact, bool]: ...
    def get_fact(self, fact_id: int) -> Fact | None: ...
    def facts_about(
        self, subject: str, project: str | None, predicate: str | None
    ) -> list[Fact]: ...
    # A page of ``facts_about`` (in ``projects``, None: all), read in the store: a subject may
    # have tens of thousands of facts. ``upto``: only the facts with ids up to it; ``dismissed``:
    # the dismissed facts instead of the live ones.
    def fact_history_page(
        self,
        subject: str,
        projects: tuple[str, ...] | None,
        predicate: str | None,
        *,
        offset: int,
        limit: int,
        now: int,
        upto: int | None = None,
        dismissed: bool = False,
    ) -> FactPage: ...
    # Current: valid ``now`` (valid_from <= now < valid_to), so not a value written for later.
    def search_facts(
        self, terms: Sequence[str], projects: tuple[str, ...] | None, limit: int, now: int
    ) -> list[Fact]: ...
    def current_facts(self, project: str, limit: int, now: int) -> list[Fact]: ...
    def newest_current_facts(
        self, projects: tuple[str, ...] | None, limit: int, now: int
    ) -> list[Fact]: ...  # ``current_facts`` of many projects (None: all), in one statement
    def fact_project_names(
        self, limit: int = 500, starting: str = ""
    ) -> list[str]: ...  # projects with facts, as ``project_names``
    def count_current_facts(self, project: str, now: int) -> int: ...
    def existing_fact_ids(self, ids: Sequence[int]) -> set[int]: ...
    # Superseded: its successor is in force at ``now`` (one written for a later time is not
    # yet); the change happened when it took force, or was recorded if later.
    def superseded_fact_ids(self, ids: Sequence[int], *, now: int, since: int = 0) -> set[int]: ...
    def dismissed_fact_ids(self, ids: Sequence[int], since: int = 0) -> set[int]: ...


class RuleStore(Protocol):
    """Standing rules, by their content id."""

    def add_rule(self, rule: Rule) -> tuple[Rule, bool]: ...
    def get_rule(self, rule_id: str) -> Rule | None: ...
    def list_rules(self, *, enabled_only: bool = True, upto: int | None = None) -> list[Rule]:
        """Oldest first; ``upto``: only the rules this store held when ``newest_rule_seq`` said
        so (a pull may bring an older rule in later: it lists before, but after its bound)."""
        ...

    def newest_rule_seq(self) -> int:
        """The place of the rule this store took in last (its local insertion order, which a
        pull only moves forward), 0 when none."""
        ...

    def confirm_rule(self, rule_id: str, at: int) -> bool: ...
    def set_rule_enabled(self, rule_id: str, enabled: bool, at: int) -> bool: ...


class WorkStore(Protocol):
    """Work-state lists, episodes (sessions of a host) and their requests, dismissals."""

    def put_work_state(self, new: NewMemory, check: ListCheck | None = None) -> int: ...
    def rename_work_state(
        self, old_key: str, new: NewMemory, audit: AuditEntry, check: ListCheck | None = None
    ) -> int | RenameRefusal: ...
    def keyed_memories(
        self, project: str, key_prefix: str, kind: str, limit: int
    ) -> list[Memory]: ...
    def start_episode(self, project: str, tool: str, at: int) -> int: ...
    def open_episode(self, uid: str, project: str, tool: str, at: int) -> int: ...
    def episode_id_by_uid(self, uid: str) -> int | None: ...
    def episode_started_at(self, episode_id: int) -> int | None: ...
    def link_episode_memory(self, episode_id: int, memory_id: int) -> None: ...
    def episode_memory_ids(self, episode_id: int, kind: str, limit: int) -> list[int]: ...
    def retire_episode_memory(
        self, episode_id: int, memory_id: int, at: int, reason: str, audit: AuditEntry
    ) -> bool: ...
    def add_request(self, episode_id: int, text: str, at: int) -> None: ...
    def end_episode(self, episode_id: int, at: int, summary: str | None) -> bool: ...
    def episode_requests(self, episode_id: int, limit: int) -> list[SessionRequest]: ...
    def recent_requests(self, project: str, limit: int) -> list[SessionRequest]: ...
    def set_dismissed(
        self,
        table: DismissTable,
        item_id: int,
        at: int | None,
        reason: str | None,
        audit: AuditEntry,
        *,
        keep_reason: bool = True,
        unchanged_detail: str | None = None,
    ) -> str | None: ...
    def project_of(self, table: DismissTable, item_id: int) -> str | None: ...
    def is_dismissed(self, table: DismissTable, item_id: int) -> bool: ...


class AuditLog(Protocol):
    """Who did what, newest first."""

    def add_audit(self, entry: AuditEntry) -> None: ...
    def list_audit(self, limit: int) -> list[AuditEntry]: ...
    def list_audit_page(
        self,
        limit: int,
        actor: str | None,
        tool: str | None,
        project: str | None = None,
        result: str | None = None,
    ) -> list[AuditEntry]: ...
    # A page of the rows a query matches, newest first, with how many match: the hub's Audit
    # page, which pages to the older rows.
    def audit_page(self, query: AuditQuery) -> AuditPage: ...
    def last_audit_by_actor(self) -> dict[str, int]: ...


class WrittenAudit(Protocol):
    """An audit row waiting for a write to commit it: ``result`` is its id once committed."""

    @property
    def result(self) -> int | None: ...


@runtime_checkable
class AuditsWithWrites(Protocol):
    """A store that commits a call's audit row in the call's own write transaction: one commit
    where there were two (on PostgreSQL each is a round trip and a WAL flush), and no write
    left without its row by a process killed between the two (either store)."""

    def audit_with_next_write(self, entry: AuditEntry) -> AbstractContextManager[WrittenAudit]: ...
    def set_audit_result(self, audit_id: int, result: str) -> None: ...


class Store(MemoryStore, FactStore, RuleStore, WorkStore, AuditLog, Protocol):
    """Everything the 13 tools, the JSON API and the web UI need."""

    def snapshot(self) -> AbstractContextManager[None]:
        """A block of reads that may share one read transaction (a search's statements)."""
        ...

    def close(self) -> None: ...


class SessionRows(Protocol):
    """MCP sessions, shared by every process serving one store."""

    def insert(
        self, id_hash: str, row: SessionRow, *, expired_before: int, keep_at_most: int
    ) -> None: ...
    def find(self, id_hash: str) -> SessionRow | None: ...
    def touch(self, id_hash: str, at: int) -> None:
        """Record a use; it may refuse with ``StoreUnavailableError`` rather than wait for a
        busy store (the use is then recorded at a later request)."""
        ...

    def delete(self, id_hash: str, *, wait: bool = True) -> bool: ...
    def delete_other_owners(self, prefix: str, keep: str) -> int:
        """End the sessions of every owner named ``prefix...`` but ``keep``; how many."""
        ...

    def count(self) -> int: ...
    def close(self) -> None: ...


class RateWindows(Protocol):
    """Sliding one-window request counts per key, shared by every process of a hub."""

    def hit(self, key: str, count: int, limit: int, window_ms: int, now_ms: int) -> int | None:
        """Count ``count`` requests at once (all or none): None when they may go on, else the
        milliseconds until they would fit (the whole window when ``count`` exceeds ``limit``)."""
        ...


# Checks a new token's name against every stored token; raises to refuse it (``add_token``).
TokenCheck = Callable[[list[HubToken]], None]


class HubTokens(Protocol):
    """The hub's bearer tokens: only their hashes are stored.

    A token is made after every revocation before it and revoked after every token made before
    it, whatever the clocks say: ``add_token`` keeps a time past every revocation's, and
    ``revoke_token`` one at or past every token's making (a store freed by a revocation passes
    only to a token made after it). ``store_clock`` is the time both take.
    """

    def store_clock(self) -> int:
        """Milliseconds since 1970 by the store's clock: PostgreSQL's own, which every machine
        reaching the database shares; a SQLite file's machine's."""
        ...

    def add_token(self, token: HubToken, refuse: TokenCheck | None = None) -> HubToken | None:
        """Store a new token (its id is assigned, its ``created_at`` raised past every
        revocation); None when the name (or hash) is taken. ``refuse`` is called with every
        stored token in the insert's own transaction, under the store's write lock (one token
        added at a time), and raises to refuse the name."""
        ...

    def find_token(self, token_hash: str) -> HubToken | None: ...
    def list_tokens(self) -> list[HubToken]: ...
    def revoke_token(self, name: str, at: int) -> HubToken | None:
        """Revoke the live token of this name, else the one these are the first characters
        of (the first made), at ``at`` or the latest token's making if later; None when none
        matches."""
        ...

    def claim_sync_store(
        self, store_id: str, token: HubToken, now: int, audit: ClaimAudit | None = None
    ) -> StoreClaim: ...
    def stores_held(self) -> dict[int, int]: ...


class SyncLog(Protocol):
    """The change log other stores pull from and push to (see ``storage.sync_apply``)."""

    def sync_store_id(self) -> str: ...
    def sync_item_number(self, kind: str, key: str) -> int | None:
        """The number (``#N``) this store shows for the item with this global id, or None."""
        ...

    def export_changes(
        self,
        *,
        after: int,
        limit: int,
        max_bytes: int,
        local_only: bool,
        exclude_origin: str | None,
        projects: tuple[str, ...] | None,
    ) -> ExportPage: ...
    def apply_changes(
        self,
        records: list[Record],
        *,
        projects: tuple[str, ...] | None,
        now: int,
        pull_cursor: tuple[str, int, int] | None = None,
        author: str | None = None,
        shared_rules: bool = False,
        rewritten: frozenset[int] = frozenset(),
    ) -> ApplyStats: ...
    def sync_cursors(self, hub_id: str, token_id: int) -> tuple[int, int]: ...
    def set_push_cursor(self, hub_id: str, token_id: int, cursor: int, now: int) -> None: ...
    def sync_scope(
        self, hub_url: str, token_digest: str
    ) -> tuple[bool, tuple[str, ...] | None]: ...
    def set_sync_scope(
        self, hub_url: str, token_digest: str, projects: tuple[str, ...] | None
    ) -> None: ...


@runtime_checkable
class HubStore(Store, HubTokens, SyncLog, Protocol):
    """A hub's whole state: the team's memory, its tokens and change log; its MCP sessions
    and rate-limit windows come from ``sessions()`` and ``rate_windows()``."""

    def sessions(self) -> SessionRows:
        """The MCP sessions of this store; the caller closes what it gets."""
        ...

    def rate_windows(self) -> RateWindows:
        """The rate-limit windows of this store, shared by every process that opens it."""
        ...

    def health(self) -> dict[str, Any]: ...
    def check_schema(self) -> int:
        """The store's schema (one read), refusing this process's writes from now on if a newer
        version has migrated it: the hub's readiness.

        Raises:
            StoreTooNewError: a newer version migrated the store while this process ran.
        """
        ...

    def row_counts(self) -> dict[str, int]:
        """Rows in each table of ``hub_rows.COUNTED_TABLES``, read at one instant."""
        ...


class RepositoryLog(Protocol):
    """The repositories the store's hosts work in, for the Rules page's Write to tools."""

    def remember(self, path: str, project: str, at: int) -> bool: ...
    def recent(self, limit: int) -> list[Repository]: ...


@runtime_checkable
class KeepsRepositories(Protocol):
    """A local store, which records where its hosts work (a hub's store does not)."""

    def repositories(self) -> RepositoryLog: ...
