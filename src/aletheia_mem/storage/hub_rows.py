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
