"""The store's rows besides what a search reads (``base.py``): what a write takes, rules, the
requests of episodes, the audit log, MCP sessions of the HTTP transport, repositories.

Apart from ``base.py`` so that a server's start and its first search do not build these
dataclasses (each costs as much as importing a module).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, init=False)
class NewMemory:
    """A memory to store (its id, uid and state are assigned when it is written).

    Its ``__init__`` is written out: a frozen dataclass's own sets each field through
    ``object.__setattr__``, twice the instructions (a save builds one).
    """

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

    def __init__(
        self,
        project: str,
        type: str,
        kind: str,
        title: str,
        text: str,
        tool: str,
        created_at: int,
        dedupe_key: str | None,
        narrative: str | None = None,
        facts: tuple[str, ...] = (),
        files: tuple[str, ...] = (),
        pinned: bool = False,
    ) -> None:
        fill = self.__dict__  # frozen: set past ``__setattr__``, as dataclasses do
        fill["project"] = project
        fill["type"] = type
        fill["kind"] = kind
        fill["title"] = title
        fill["text"] = text
        fill["tool"] = tool
        fill["created_at"] = created_at
        fill["dedupe_key"] = dedupe_key
        fill["narrative"] = narrative
        fill["facts"] = facts
        fill["files"] = files
        fill["pinned"] = pinned


@dataclass(frozen=True)
class NewFact:
    """A fact to store (its id and uid are assigned when it is written).

    ``starts_when_written``: the caller gave no valid_from, so ``valid_from`` is the moment of
    the write (``recorded_at``). A store writes such a fact after every fact of its key that
    starts at that millisecond (one saved by another writer at the same moment): it starts at
    the first millisecond no other fact of its key starts at, and the earlier value keeps an
    instant of its own. A valid_from the caller gave is kept as given.
    """

    project: str
    subject: str
    predicate: str
    object: str
    valid_from: int
    recorded_at: int
    source: str
    starts_when_written: bool = False


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
class AuditQuery:
    """A page of the audit trail, newest first: ``limit`` rows from ``offset``, of the rows
    matching every filter given (``projects``: any of them; None, every row), with ids up to
    ``upto`` when given."""

    limit: int
    offset: int = 0
    actor: str | None = None
    tool: str | None = None
    projects: tuple[str, ...] | None = None
    result: str | None = None
    upto: int | None = None


@dataclass(frozen=True)
class AuditPage:
    """A page of the audit trail and how many rows match in all."""

    total: int
    offset: int  # where the page starts: at most the last matching row
    rows: list[AuditEntry]
    # The highest id of the matching rows (0: none): the bound (``upto``) its later pages are
    # read with, so that rows written meanwhile push none onto the next page a second time.
    newest_id: int = 0


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
