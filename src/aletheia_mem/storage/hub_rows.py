"""Rows of the hub's own tables: its bearer tokens."""

from __future__ import annotations

from dataclasses import dataclass


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
