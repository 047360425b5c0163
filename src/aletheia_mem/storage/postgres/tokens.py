"""The hub's bearer tokens on PostgreSQL: only their hashes are stored."""

from __future__ import annotations

from dataclasses import replace

from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.storage.postgres.database import PgPart, Row

_COLUMNS = "id, name, token_hash, prefix, scope, projects, created_at, revoked_at"
# As SQLite's: a store held by a revoked (or deleted) token passes to the token that syncs it next.
_CLAIM_STORE = (
    "INSERT INTO sync_store_tokens (store_id, token_id, bound_at) VALUES (%s, %s, %s)"
    " ON CONFLICT (store_id) DO UPDATE SET token_id = excluded.token_id,"
    " bound_at = excluded.bound_at WHERE NOT EXISTS (SELECT 1 FROM hub_tokens t"
    " WHERE t.id = sync_store_tokens.token_id AND t.revoked_at IS NULL)"
)

# A taken name or hash inserts no row, so it draws no id: ids follow SQLite's, gapless (ON
# CONFLICT alone would draw one first); ON CONFLICT still covers a race between two hubs.
_ADD_ROW = (
    "INSERT INTO hub_tokens (name, token_hash, prefix, scope, projects, created_at)"
    " SELECT %s, %s, %s, %s, %s, %s WHERE NOT EXISTS (SELECT 1 FROM hub_tokens"
    " WHERE name = %s OR token_hash = %s) ON CONFLICT DO NOTHING RETURNING id"
)


def _token(row: Row) -> HubToken:
    projects = row["projects"]
    return HubToken(
        id=int(row["id"]),
        name=row["name"],
        token_hash=row["token_hash"],
        prefix=row["prefix"],
        scope=row["scope"],
        projects=None if projects is None else tuple(projects),
        created_at=int(row["created_at"]),
        revoked_at=row["revoked_at"],
    )


class PgTokens(PgPart):
    """``HubTokens``: every hub process reads the same rows, so a revocation holds at once."""

    def add_token(self, token: HubToken) -> HubToken | None:
        """Store a new token (its id is assigned); None when the name (or hash) is taken."""
        projects = None if token.projects is None else list(token.projects)
        with self._db.write() as conn:
            row = conn.execute(
                _ADD_ROW,
                (token.name, token.token_hash, token.prefix, token.scope, projects,
                 token.created_at, token.name, token.token_hash),
            ).fetchone()  # fmt: skip
        return None if row is None else replace(token, id=int(row[0]))

    def find_token(self, token_hash: str) -> HubToken | None:
        """The token with this hash, revoked or not."""
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM hub_tokens WHERE token_hash = %s", (token_hash,)
            ).fetchone()
        return None if row is None else _token(row)

    def list_tokens(self) -> list[HubToken]:
        with self._db.read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM hub_tokens ORDER BY id").fetchall()
        return [_token(row) for row in rows]

    def revoke_token(self, name: str, at: int) -> HubToken | None:
        """Revoke a live token by name (or by its shown prefix); None when none matches."""
        with self._db.write() as conn:
            row = conn.execute(
                f"UPDATE hub_tokens SET revoked_at = %s WHERE id = (SELECT id FROM hub_tokens"
                " WHERE (name = %s OR prefix = %s) AND revoked_at IS NULL ORDER BY id LIMIT 1"
                f" FOR UPDATE) AND revoked_at IS NULL RETURNING {_COLUMNS}",
                (at, name, name),
            ).fetchone()
        return None if row is None else _token(row)

    def claim_sync_store(self, store_id: str, token_id: int, now: int) -> bool:
        """Whether the store with this id syncs with this token: the first token to sync it
        holds it until that token is revoked (every hub process sees the same rows)."""
        held = "SELECT token_id FROM sync_store_tokens WHERE store_id = %s"
        with self._db.read() as conn:
            row = conn.execute(held, (store_id,)).fetchone()
        if row is not None and int(row[0]) == token_id:
            return True
        with self._db.write() as conn:
            conn.execute(_CLAIM_STORE, (store_id, token_id, now))
            row = conn.execute(held, (store_id,)).fetchone()
        return row is not None and int(row[0]) == token_id
