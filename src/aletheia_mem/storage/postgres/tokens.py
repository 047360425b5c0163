"""The hub's bearer tokens on PostgreSQL: only their hashes are stored."""

from __future__ import annotations

from dataclasses import replace

from aletheia_mem.storage.contracts import ClaimAudit, TokenCheck
from aletheia_mem.storage.hub_rows import Holder, HubToken, StoreClaim, unbound_claim
from aletheia_mem.storage.postgres.audit import insert_audit
from aletheia_mem.storage.postgres.database import PgPart, Row

_COLUMNS = "id, name, token_hash, prefix, scope, projects, created_at, revoked_at"
# The token holding a store (see ``hub_rows.Holder``).
_HOLDER = (
    "SELECT s.token_id, t.name, t.revoked_at FROM sync_store_tokens s"
    " LEFT JOIN hub_tokens t ON t.id = s.token_id WHERE s.store_id = %s"
)
# A store no token holds yet: bound, or nothing when another process bound it first.
_FIRST_BIND = (
    "INSERT INTO sync_store_tokens (store_id, token_id, bound_at) VALUES (%s, %s, %s)"
    " ON CONFLICT (store_id) DO NOTHING RETURNING token_id"
)
# The store's row locked until the claim's transaction ends, so that two processes' claims take
# turns. Apart from ``_HOLDER``: a locking read of the join waits for the other claim's commit,
# then re-reads the store's row but joins the token row of before it (READ COMMITTED), so it
# read "no holder" (or the revoked one) and took the store from the live token just bound.
_LOCK_STORE = "SELECT 1 FROM sync_store_tokens WHERE store_id = %s FOR UPDATE"
_REBIND = "UPDATE sync_store_tokens SET token_id = %s, bound_at = %s WHERE store_id = %s"
_STORES_HELD = "SELECT token_id, count(*) FROM sync_store_tokens GROUP BY token_id"
_ALL_TOKENS = f"SELECT {_COLUMNS} FROM hub_tokens ORDER BY id"


def _holder(row: Row | None) -> Holder:
    return None if row is None else (int(row[0]), row[1], row[2])


# A taken name or hash inserts no row, so it draws no id: ids follow SQLite's, gapless (ON
# CONFLICT alone would draw one first); ON CONFLICT still covers a race between two hubs. The
# time is past every revocation's (``HubTokens``).
_ADD_ROW = (
    "INSERT INTO hub_tokens (name, token_hash, prefix, scope, projects, created_at)"
    " SELECT %s, %s, %s, %s, %s, GREATEST(%s, (SELECT coalesce(max(revoked_at), 0) + 1"
    " FROM hub_tokens)) WHERE NOT EXISTS (SELECT 1 FROM hub_tokens"
    " WHERE name = %s OR token_hash = %s) ON CONFLICT DO NOTHING RETURNING id, created_at"
)
# The live token of this name, else of these first characters; revoked at a time at or past
# every token's making (``HubTokens``).
_REVOKE = (
    "UPDATE hub_tokens SET revoked_at = GREATEST(%s, (SELECT max(created_at) FROM hub_tokens))"
    " WHERE id = (SELECT id FROM hub_tokens WHERE (name = %s OR prefix = %s)"
    " AND revoked_at IS NULL ORDER BY name = %s DESC, id LIMIT 1 FOR UPDATE)"
    f" AND revoked_at IS NULL RETURNING {_COLUMNS}"
)
_NOW = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint"


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

    def store_clock(self) -> int:
        """The database's clock, which every hub process and ``mcp-link`` run shares."""
        with self._db.read() as conn:
            row = conn.execute(_NOW).fetchone()
        assert row is not None  # noqa: S101  (a SELECT of one value has one row)
        return int(row[0])

    def add_token(self, token: HubToken, refuse: TokenCheck | None = None) -> HubToken | None:
        """Store a new token (see ``HubTokens``); None when the name (or hash) is taken.
        ``refuse`` sees every stored token in the insert's transaction, the table locked
        against other writers first, so no other name slips in between its check and the
        insert (from this process or another)."""
        projects = None if token.projects is None else list(token.projects)
        with self._db.write() as conn:
            if refuse is not None:
                conn.execute("LOCK TABLE hub_tokens IN SHARE ROW EXCLUSIVE MODE")
                refuse([_token(row) for row in conn.execute(_ALL_TOKENS).fetchall()])
            row = conn.execute(
                _ADD_ROW,
                (token.name, token.token_hash, token.prefix, token.scope, projects,
                 token.created_at, token.name, token.token_hash),
            ).fetchone()  # fmt: skip
        return None if row is None else replace(token, id=int(row[0]), created_at=int(row[1]))

    def find_token(self, token_hash: str) -> HubToken | None:
        """The token with this hash, revoked or not."""
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM hub_tokens WHERE token_hash = %s", (token_hash,)
            ).fetchone()
        return None if row is None else _token(row)

    def list_tokens(self) -> list[HubToken]:
        with self._db.read() as conn:
            rows = conn.execute(_ALL_TOKENS).fetchall()
        return [_token(row) for row in rows]

    def revoke_token(self, name: str, at: int) -> HubToken | None:
        """Revoke a live token by name, else by its shown prefix (see ``HubTokens``); None
        when none matches."""
        with self._db.write() as conn:
            row = conn.execute(_REVOKE, (at, name, name, name)).fetchone()
        return None if row is None else _token(row)

    def claim_sync_store(
        self, store_id: str, token: HubToken, now: int, audit: ClaimAudit | None = None
    ) -> StoreClaim:
        """Whether the store with this id syncs with this token: the first token to sync it
        holds it until that token is revoked, and then a token made after the revocation may
        take it (every hub process sees the same rows). A claim that binds the store writes
        ``audit``'s row (given the revoked token it took the store from) in the same
        transaction."""
        with self._db.read() as conn:
            found = unbound_claim(_holder(conn.execute(_HOLDER, (store_id,)).fetchone()), token)
        if found is not None:
            return found
        with self._db.write() as conn:
            bound = conn.execute(_FIRST_BIND, (store_id, token.id, now)).fetchone()
            holder = None
            if bound is None:  # held: lock, then read again (a statement of its own sees what
                # the claim it waited for committed), as another process may have bound it
                conn.execute(_LOCK_STORE, (store_id,))
                holder = _holder(conn.execute(_HOLDER, (store_id,)).fetchone())
                found = unbound_claim(holder, token)
                if found is not None:
                    return found
                conn.execute(_REBIND, (token.id, now, store_id))
            previous = None if holder is None else holder[1]
            if audit is not None:
                insert_audit(conn, audit(previous))
        return StoreClaim(bound=True, previous=previous)

    def stores_held(self) -> dict[int, int]:
        """How many stores each token holds (by token id; a token holding none is left out)."""
        with self._db.read() as conn:
            rows = conn.execute(_STORES_HELD).fetchall()
        return {int(row[0]): int(row[1]) for row in rows}
