"""The hub's bearer tokens in the SQLite store."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from aletheia_mem.storage.sqlite.audit import insert_audit
from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.rows import json_list

if TYPE_CHECKING:  # a hub's rows: off the start path of a local server
    from aletheia_mem.storage.contracts import ClaimAudit, TokenCheck
    from aletheia_mem.storage.hub_rows import Holder, HubToken, StoreClaim


# The token holding a store: its id, name and revocation time (see ``hub_rows.Holder``).
_HOLDER = (
    "SELECT s.token_id, t.name, t.revoked_at FROM sync_store_tokens s"
    " LEFT JOIN hub_tokens t ON t.id = s.token_id WHERE s.store_id = ?"
)
_BIND_STORE = (
    "INSERT INTO sync_store_tokens (store_id, token_id, bound_at) VALUES (?, ?, ?)"
    " ON CONFLICT (store_id) DO UPDATE SET token_id = excluded.token_id,"
    " bound_at = excluded.bound_at"
)
# SQLite's own clock, in milliseconds (julianday('now') holds whole milliseconds).
_NOW = "SELECT CAST(round((julianday('now') - 2440587.5) * 86400000) AS INTEGER)"
_STORES_HELD = "SELECT token_id, count(*) FROM sync_store_tokens GROUP BY token_id"
_ALL_TOKENS = "SELECT * FROM hub_tokens ORDER BY id"


def _holder(conn: sqlite3.Connection, store_id: str) -> Holder:
    row = conn.execute(_HOLDER, (store_id,)).fetchone()
    return None if row is None else (int(row[0]), row[1], row[2])


def token_from_row(row: sqlite3.Row) -> HubToken:
    from aletheia_mem.storage.hub_rows import HubToken

    projects = None if row["projects"] is None else tuple(json.loads(row["projects"]))
    return HubToken(
        id=row["id"],
        name=row["name"],
        token_hash=row["token_hash"],
        prefix=row["prefix"],
        scope=row["scope"],
        projects=projects,
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
    )


class SqliteTokens(SqliteDatabase):
    """The hub's bearer tokens (their hashes only)."""

    def store_clock(self) -> int:
        """The file's machine's clock, as SQLite reads it."""
        return int(self._conn.execute(_NOW).fetchone()[0])

    def add_token(self, token: HubToken, refuse: TokenCheck | None = None) -> HubToken | None:
        """Store a new token (see ``HubTokens``); None when the name is taken. ``refuse`` sees
        every stored token in the insert's transaction (``BEGIN IMMEDIATE``: one writer at a
        time), so no other name slips in between its check and the insert."""
        projects = None if token.projects is None else json_list(token.projects)
        with self._write() as conn:
            if refuse is not None:
                refuse([token_from_row(row) for row in conn.execute(_ALL_TOKENS).fetchall()])
            try:
                cursor = conn.execute(
                    "INSERT INTO hub_tokens (name, token_hash, prefix, scope, projects, created_at)"
                    " VALUES (?, ?, ?, ?, ?, max(?, (SELECT coalesce(max(revoked_at), 0) + 1"
                    " FROM hub_tokens)))",
                    (token.name, token.token_hash, token.prefix, token.scope, projects,
                     token.created_at),
                )  # fmt: skip
            except sqlite3.IntegrityError:
                return None
            row = conn.execute(
                "SELECT * FROM hub_tokens WHERE id = ?", (cursor.lastrowid,)
            ).fetchone()
            return token_from_row(row)

    def find_token(self, token_hash: str) -> HubToken | None:
        """The token with this hash, revoked or not."""
        row = self._conn.execute(
            "SELECT * FROM hub_tokens WHERE token_hash = ?", (token_hash,)
        ).fetchone()
        return None if row is None else token_from_row(row)

    def list_tokens(self) -> list[HubToken]:
        rows = self._conn.execute(_ALL_TOKENS).fetchall()
        return [token_from_row(row) for row in rows]

    def revoke_token(self, name: str, at: int) -> HubToken | None:
        """Revoke a live token by name, else by its shown prefix (see ``HubTokens``); None
        when none matches."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT * FROM hub_tokens WHERE (name = ? OR prefix = ?) AND revoked_at IS NULL"
                " ORDER BY name = ? DESC, id LIMIT 1",
                (name, name, name),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE hub_tokens SET revoked_at = max(?, (SELECT max(created_at)"
                " FROM hub_tokens)) WHERE id = ?",
                (at, row["id"]),
            )
            found = conn.execute("SELECT * FROM hub_tokens WHERE id = ?", (row["id"],))
            return token_from_row(found.fetchone())

    def claim_sync_store(
        self, store_id: str, token: HubToken, now: int, audit: ClaimAudit | None = None
    ) -> StoreClaim:
        """Whether the store with this id syncs with this token: the first token to sync it
        holds it until that token is revoked, and then a token made after the revocation may
        take it. A claim that binds the store writes ``audit``'s row (given the revoked token
        it took the store from) in the same transaction."""
        from aletheia_mem.storage.hub_rows import StoreClaim, unbound_claim

        found = unbound_claim(_holder(self._conn, store_id), token)
        if found is not None:
            return found
        with self._write() as conn:  # read again under the write lock: another may have bound it
            holder = _holder(conn, store_id)
            found = unbound_claim(holder, token)
            if found is not None:
                return found
            conn.execute(_BIND_STORE, (store_id, token.id, now))
            previous = None if holder is None else holder[1]
            if audit is not None:
                insert_audit(conn, audit(previous))
        return StoreClaim(bound=True, previous=previous)

    def stores_held(self) -> dict[int, int]:
        """How many stores each token holds (by token id; a token holding none is left out)."""
        rows = self._conn.execute(_STORES_HELD).fetchall()
        return {int(row[0]): int(row[1]) for row in rows}
