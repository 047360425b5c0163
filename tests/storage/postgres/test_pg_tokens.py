"""Hub tokens on PostgreSQL: hashes only, names unique, revocation seen by every process."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store


def _token(name: str, projects: tuple[str, ...] | None = None) -> HubToken:
    return HubToken(
        id=0,
        name=name,
        token_hash=f"hash-of-{name}",
        prefix=f"alt_{name[:4]}",
        scope="memories:write",
        projects=projects,
        created_at=1_000,
        revoked_at=None,
    )


def test_added_token_gets_an_id_and_is_found_by_its_hash(pg_store: PostgresStore) -> None:
    added = pg_store.add_token(_token("alice", ("web", "api")))
    assert added is not None and added.id > 0
    assert pg_store.find_token("hash-of-alice") == added
    assert added.projects == ("web", "api")


def test_a_token_for_every_project_keeps_projects_none(pg_store: PostgresStore) -> None:
    pg_store.add_token(_token("ci"))
    found = pg_store.find_token("hash-of-ci")
    assert found is not None and found.projects is None


def test_a_taken_name_or_hash_is_refused_with_none(pg_store: PostgresStore) -> None:
    assert pg_store.add_token(_token("alice")) is not None
    assert pg_store.add_token(_token("alice")) is None
    same_hash = HubToken(2, "bob", "hash-of-alice", "alt_bob", "memories:read", None, 5, None)
    assert pg_store.add_token(same_hash) is None
    assert [token.name for token in pg_store.list_tokens()] == ["alice"]


def test_an_unknown_hash_finds_nothing(pg_store: PostgresStore) -> None:
    assert pg_store.find_token("nope") is None


def test_tokens_are_listed_in_the_order_they_were_added(pg_store: PostgresStore) -> None:
    for name in ("carol", "alice", "bob"):
        pg_store.add_token(_token(name))
    assert [token.name for token in pg_store.list_tokens()] == ["carol", "alice", "bob"]


def test_revoke_by_name_marks_the_token_and_returns_it(pg_store: PostgresStore) -> None:
    pg_store.add_token(_token("alice"))
    revoked = pg_store.revoke_token("alice", at=2_000)
    assert revoked is not None and revoked.revoked_at == 2_000
    found = pg_store.find_token("hash-of-alice")
    assert found is not None and found.revoked_at == 2_000


def test_revoke_by_prefix_and_a_second_revoke_finds_nothing(pg_store: PostgresStore) -> None:
    pg_store.add_token(_token("alice"))
    assert pg_store.revoke_token("alt_alic", at=2_000) is not None
    assert pg_store.revoke_token("alt_alic", at=3_000) is None
    assert pg_store.revoke_token("alice", at=3_000) is None
    found = pg_store.find_token("hash-of-alice")
    assert found is not None and found.revoked_at == 2_000


def test_revoking_an_unknown_name_returns_none(pg_store: PostgresStore) -> None:
    assert pg_store.revoke_token("ghost", at=1) is None


def test_a_revocation_is_seen_at_once_by_another_process_store(
    pg_store: PostgresStore, pg_store_url: str
) -> None:
    other = open_postgres_store(pg_store_url, pool_size=2)  # its own pool: another process's view
    try:
        pg_store.add_token(_token("alice"))
        seen = other.find_token("hash-of-alice")
        assert seen is not None and seen.revoked_at is None
        pg_store.revoke_token("alice", at=2_000)
        seen = other.find_token("hash-of-alice")
        assert seen is not None and seen.revoked_at == 2_000
    finally:
        other.close()


def test_two_stores_adding_one_name_at_once_make_one_token(
    pg_store: PostgresStore, pg_store_url: str
) -> None:
    other = open_postgres_store(pg_store_url, pool_size=4)
    try:
        stores = [pg_store, other]

        def add(n: int) -> bool:
            token = replace(_token("alice"), token_hash=f"hash-{n}")
            return stores[n % 2].add_token(token) is not None

        with ThreadPoolExecutor(max_workers=8) as pool:
            added = list(pool.map(add, range(16)))
    finally:
        other.close()
    assert added.count(True) == 1
    assert len(pg_store.list_tokens()) == 1
