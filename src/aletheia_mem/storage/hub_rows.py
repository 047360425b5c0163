"""Rows of the hub's own tables: its bearer tokens; what ``aletheia doctor`` counts."""

from __future__ import annotations

from dataclasses import dataclass

# The tables whose rows ``aletheia doctor --hub-db`` counts, the same on every database.
COUNTED_TABLES = (
    "memories",
    "facts",
    "rules",
    "episodes",
    "episode_requests",
    "audit",
    "hub_tokens",
    "mcp_sessions",
)
# One statement, one round trip, valid SQL on SQLite and PostgreSQL alike.
COUNT_ROWS_SQL = "SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in COUNTED_TABLES)


@dataclass(frozen=True)
class HubToken:
    """A stored token: never the token itself, only its SHA-256 hash and first characters.

    ``projects`` None means every project.
    """

    id: int
    name: str
    token_hash: str
    prefix: str
    scope: str
    projects: tuple[str, ...] | None
    created_at: int
    revoked_at: int | None


@dataclass(frozen=True)
class StoreClaim:
    """What a token's claim of a store id found (``claim_sync_store``).

    ``holder``: the token that keeps the store from the claiming one, which may not sync it;
    None when the store syncs with the claiming token. ``revoked``: that holder is revoked, but
    the claiming token was made before the revocation: only a token made after it may take the
    store (the owner's new one), never one that may have learned the store's id while it was
    held (every pull names other stores' ids). ``bound``: this claim bound the store to the
    claiming token, its first token or in place of the revoked token ``previous``.
    """

    holder: str | None = None
    revoked: bool = False
    bound: bool = False
    previous: str | None = None


# A store's holder as a claim reads it: the token's id, name and revocation time (the name None
# when the token is gone); None when no token holds the store.
Holder = tuple[int, str | None, int | None] | None


def unbound_claim(holder: Holder, token: HubToken) -> StoreClaim | None:
    """``token``'s claim of a store, decided by the store's ``holder`` without a write: held by
    ``token`` already, or refused (a live holder, or a revoked one revoked after ``token`` was
    made). None when ``token`` may bind the store: no token holds it, or a token revoked before
    ``token`` was made (or one no longer there)."""
    if holder is None or holder[1] is None:
        return None
    holder_id, name, revoked_at = holder
    if holder_id == token.id:
        return StoreClaim()
    if revoked_at is None:
        return StoreClaim(holder=name)
    if token.created_at <= revoked_at:
        return StoreClaim(holder=name, revoked=True)
    return None
