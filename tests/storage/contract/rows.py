"""Rows for the contract tests, built from the shared dataclasses."""

from __future__ import annotations

from aletheia_mem.storage.entries import AuditEntry, NewFact, NewMemory, Rule
from aletheia_mem.storage.hub_rows import HubToken

T0 = 1_800_000_000_000  # a fixed instant in milliseconds


def memory(
    title: str,
    *,
    project: str = "shop",
    at: int = T0,
    key: str | None = None,
    kind: str = "note",
    text: str | None = None,
    files: tuple[str, ...] = (),
    pinned: bool = False,
) -> NewMemory:
    return NewMemory(
        project=project,
        type="discovery",
        kind=kind,
        title=title,
        text=text if text is not None else f"{title} in detail",
        tool="cli",
        created_at=at,
        dedupe_key=key,
        files=files,
        pinned=pinned,
    )


def fact(
    subject: str,
    predicate: str,
    value: str,
    *,
    at: int = T0,
    project: str = "shop",
    when_written: bool = False,
) -> NewFact:
    """A fact from ``at``: as given, or (``when_written``) as the moment of its write."""
    return NewFact(
        project,
        subject,
        predicate,
        value,
        valid_from=at,
        recorded_at=at,
        source="cli",
        starts_when_written=when_written,
    )


def rule(rule_id: str, then: str, *, at: int = T0, enabled: bool = True) -> Rule:
    return Rule(
        id=rule_id,
        then=then,
        when="always",
        scope_tier="project",
        scope_name="shop",
        evidence_memory_ids=(),
        evidence_fact_ids=(),
        source="cli",
        added_at=at,
        last_confirmed_at=at,
        enabled=enabled,
    )


def audit(at: int, actor: str = "cli", tool: str = "save_memory", result: str = "ok") -> AuditEntry:
    return AuditEntry(at=at, actor=actor, tool=tool, project="shop", result=result)


def token(name: str, *, projects: tuple[str, ...] | None = ("shop",)) -> HubToken:
    return HubToken(
        id=0,
        name=name,
        token_hash=f"hash-of-{name}",
        prefix=f"alt_{name[:6]}",
        scope="mcp",
        projects=projects,
        created_at=T0,
        revoked_at=None,
    )
