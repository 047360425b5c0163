"""HubTokens, SessionRows, RateWindows and SyncLog: what a hub keeps besides the memory."""

from __future__ import annotations

from dataclasses import replace

from aletheia_mem.clock import system_clock
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.contracts import ClaimAudit, HubStore, SessionRow
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.hub_rows import StoreClaim
from tests.storage.contract.conftest import MakeStore
from tests.storage.contract.rows import T0, fact, memory, token

MINUTE = 60_000


def test_a_token_gets_an_id_and_its_name_is_unique(contract_store: HubStore) -> None:
    stored = contract_store.add_token(token("ci"))
    assert stored is not None and stored.id > 0 and stored.name == "ci"
    assert contract_store.add_token(token("ci")) is None
    assert contract_store.find_token("hash-of-ci") == stored
    assert contract_store.find_token("hash-of-nobody") is None
    everyone = contract_store.add_token(token("ops", projects=None))
    assert everyone is not None and everyone.projects is None
    assert [t.name for t in contract_store.list_tokens()] == ["ci", "ops"]


def test_a_refused_token_uses_up_no_id(contract_store: HubStore) -> None:
    first = contract_store.add_token(token("ci"))
    assert contract_store.add_token(token("ci")) is None  # the name is taken
    assert contract_store.add_token(replace(token("other"), token_hash="hash-of-ci")) is None
    second = contract_store.add_token(token("ops"))
    assert first is not None and second is not None
    assert second.id == first.id + 1  # ids as on SQLite: no gap for the refused ones


def test_a_token_is_revoked_by_name_or_prefix_once(contract_store: HubStore) -> None:
    contract_store.add_token(token("ci"))
    contract_store.add_token(token("deploy"))
    revoked = contract_store.revoke_token("ci", T0 + 1)
    assert revoked is not None and revoked.revoked_at == T0 + 1
    assert contract_store.revoke_token("ci", T0 + 2) is None
    found = contract_store.find_token("hash-of-ci")
    assert found is not None and found.revoked_at == T0 + 1  # still found, and revoked
    by_prefix = contract_store.revoke_token("alt_deploy", T0 + 3)
    assert by_prefix is not None and by_prefix.name == "deploy"


def test_a_store_syncs_with_the_first_token_until_that_token_is_revoked(
    contract_store: HubStore,
) -> None:
    ci = contract_store.add_token(token("ci"))
    ops = contract_store.add_token(token("ops"))
    assert ci is not None and ops is not None
    store_id = "a" * 32
    assert contract_store.claim_sync_store(store_id, ci, T0) == StoreClaim(bound=True)
    assert contract_store.claim_sync_store(store_id, ci, T0 + 1) == StoreClaim()  # still its own
    assert contract_store.claim_sync_store(store_id, ops, T0 + 2) == StoreClaim(holder="ci")
    assert contract_store.claim_sync_store("b" * 32, ops, T0 + 2).bound  # another store is free
    contract_store.revoke_token("ci", T0 + 3)
    # ops was made before the revocation (it may have learned the id from a pull): refused
    refused = StoreClaim(holder="ci", revoked=True)
    assert contract_store.claim_sync_store(store_id, ops, T0 + 4) == refused
    later = contract_store.add_token(replace(token("ci-2"), created_at=T0 + 4))
    assert later is not None
    taken = contract_store.claim_sync_store(store_id, later, T0 + 5, _claim_row(later.name))
    assert taken == StoreClaim(bound=True, previous="ci")
    assert contract_store.claim_sync_store(store_id, ops, T0 + 6) == StoreClaim(holder="ci-2")
    assert contract_store.stores_held() == {ops.id: 1, later.id: 1}
    rows = contract_store.list_audit_page(10, None, "sync-claim")
    assert [(row.actor, row.detail) for row in rows] == [("ci-2", "from ci")]


def test_a_claim_that_binds_nothing_writes_no_audit_row(contract_store: HubStore) -> None:
    ci = contract_store.add_token(token("ci"))
    ops = contract_store.add_token(token("ops"))
    assert ci is not None and ops is not None
    assert contract_store.claim_sync_store("a" * 32, ci, T0, _claim_row("ci")).bound
    assert not contract_store.claim_sync_store("a" * 32, ci, T0 + 1, _claim_row("ci")).bound
    assert contract_store.claim_sync_store("a" * 32, ops, T0 + 2, _claim_row("ops")).holder
    rows = contract_store.list_audit_page(10, None, "sync-claim")
    assert [(row.actor, row.detail) for row in rows] == [("ci", "first")]


def _claim_row(actor: str) -> ClaimAudit:
    def row(previous: str | None) -> AuditEntry:
        detail = "first" if previous is None else f"from {previous}"
        return AuditEntry(
            at=T0, actor=actor, tool="sync-claim", project=None, result="ok", detail=detail
        )

    return row


def test_a_store_remembers_the_projects_a_hub_named_for_a_token(contract_store: HubStore) -> None:
    url = "https://hub.example"
    assert contract_store.sync_scope(url, "d1") == (False, None)
    contract_store.set_sync_scope(url, "d1", ("ops", "shop"))
    contract_store.set_sync_scope(url, "d2", None)
    assert contract_store.sync_scope(url, "d1") == (True, ("ops", "shop"))
    assert contract_store.sync_scope(url, "d2") == (True, None)
    contract_store.set_sync_scope(url, "d1", ("shop",))
    assert contract_store.sync_scope(url, "d1") == (True, ("shop",))


def test_sessions_are_kept_touched_and_deleted(contract_store: HubStore) -> None:
    rows = contract_store.sessions()
    try:
        row = SessionRow("token-1", "2025-06-18", "client", T0)
        rows.insert("h1", row, expired_before=0, keep_at_most=10)
        assert rows.find("h1") == row and rows.count() == 1
        rows.touch("h1", T0 + 5)
        touched = rows.find("h1")
        assert touched is not None and touched.last_used_at == T0 + 5
        rows.touch("h1", T0)  # never backwards
        assert rows.find("h1") == touched
        assert rows.delete("h1") and not rows.delete("h1")
        assert rows.find("h1") is None and rows.count() == 0
    finally:
        rows.close()


def test_the_sessions_of_other_owners_of_a_prefix_end_and_no_others(
    contract_store: HubStore,
) -> None:
    rows = contract_store.sessions()
    try:
        owners = {"old": "web-key:old", "new": "web-key:new", "mcp": "token-1", "odd": "web_key:x"}
        for id_hash, owner in owners.items():
            rows.insert(id_hash, SessionRow(owner, "v", None, T0), expired_before=0, keep_at_most=9)
        assert rows.delete_other_owners("web-key:", "web-key:new") == 1
        assert rows.find("old") is None
        assert all(rows.find(id_hash) is not None for id_hash in ("new", "mcp", "odd"))
    finally:
        rows.close()


def test_an_owner_past_its_cap_loses_its_least_recently_used_session_only(
    contract_store: HubStore,
) -> None:
    rows = contract_store.sessions()
    try:
        rows.insert("other", SessionRow("b", "v", None, T0), expired_before=0, keep_at_most=2)
        for n in range(3):
            row = SessionRow("a", "v", None, T0 + n)
            rows.insert(f"a{n}", row, expired_before=0, keep_at_most=2)
        assert rows.find("a0") is None and rows.find("a1") is not None
        assert rows.find("other") is not None
        late = SessionRow("a", "v", None, T0 + MINUTE)
        rows.insert("a9", late, expired_before=T0 + 10, keep_at_most=5)  # the old ones expire
        assert rows.count() == 1
    finally:
        rows.close()


def test_a_rate_window_lets_the_limit_through_then_tells_the_wait(
    contract_store: HubStore,
) -> None:
    windows = contract_store.rate_windows()
    for n in range(3):
        assert windows.hit("token:1", 1, 3, MINUTE, T0 + n * 1000) is None
    assert windows.hit("token:1", 1, 3, MINUTE, T0 + 10_000) == 50_000  # the first one leaves
    assert windows.hit("token:2", 1, 3, MINUTE, T0 + 10_000) is None  # keys count apart
    assert windows.hit("token:1", 1, 3, MINUTE, T0 + MINUTE) is None  # the window slid


def test_a_batch_counts_all_or_nothing_and_one_over_the_limit_waits_a_window(
    contract_store: HubStore,
) -> None:
    windows = contract_store.rate_windows()
    assert windows.hit("k", 5, 6, MINUTE, T0) is None
    assert windows.hit("k", 2, 6, MINUTE, T0 + 1000) == MINUTE - 1000
    assert windows.hit("k", 1, 6, MINUTE, T0 + 1000) is None  # the refused batch left no trace
    assert windows.hit("j", 7, 6, MINUTE, T0) == MINUTE


def test_two_handles_on_one_store_share_the_rate_windows(make_store: MakeStore) -> None:
    first, second = make_store("hub"), make_store("hub")
    assert first.rate_windows().hit("k", 2, 3, MINUTE, T0) is None
    assert second.rate_windows().hit("k", 2, 3, MINUTE, T0 + 1) is not None
    assert second.rate_windows().hit("k", 1, 3, MINUTE, T0 + 1) is None


def test_changes_exported_by_one_store_apply_to_another(make_store: MakeStore) -> None:
    source, target = make_store("laptop"), make_store("hub")
    saved, _ = source.add_memory(memory("shared note"), facts=[fact("db", "host", "alpha")])
    assert source.sync_store_id() != target.sync_store_id()
    assert source.sync_store_id() == source.sync_store_id()
    page = source.export_changes(
        after=0, limit=100, max_bytes=1_000_000, local_only=True, exclude_origin=None, projects=None
    )
    assert not page.more and page.cursor > 0 and len(page.records) == 2
    hub_id = source.sync_store_id()
    stats = target.apply_changes(
        page.records, projects=None, now=T0 + 1, pull_cursor=(hub_id, 7, page.cursor)
    )
    assert stats.applied == 2 and stats.touched_projects == {"shop"}
    (copied,) = target.search_memories(MemoryQuery(terms=("shared",)), T0)
    assert (copied.uid, copied.title) == (saved.uid, "shared note")
    assert [f.object for f in target.facts_about("db", "shop", "host")] == ["alpha"]
    assert target.sync_cursors(hub_id, 7) == (0, page.cursor)
    again = target.apply_changes(page.records, projects=None, now=T0 + 2)
    assert again.applied == 0 and again.skipped == 2  # known already


def test_a_page_leaves_out_another_project_and_the_excluded_origin(make_store: MakeStore) -> None:
    source = make_store("laptop")
    source.add_memory(memory("shop note"))
    source.add_memory(memory("billing note", project="billing"))
    own = source.sync_store_id()

    def export(projects: tuple[str, ...] | None, exclude: str | None) -> tuple[int, dict[str, int]]:
        page = source.export_changes(
            after=0, limit=100, max_bytes=1_000_000, local_only=False,
            exclude_origin=exclude, projects=projects,
        )  # fmt: skip
        return len(page.records), page.outside

    assert export(None, None) == (2, {})
    assert export(("billing",), None) == (1, {"shop": 1})  # what a sync says stays here
    assert export(("ops",), None) == (0, {"shop": 1, "billing": 1})
    assert export(None, own) == (0, {})


def test_push_cursors_only_move_forward(contract_store: HubStore) -> None:
    assert contract_store.sync_cursors("hub-a", 1) == (0, 0)
    contract_store.set_push_cursor("hub-a", 1, 40, T0)
    contract_store.set_push_cursor("hub-a", 1, 30, T0 + 1)
    assert contract_store.sync_cursors("hub-a", 1) == (40, 0)
    assert contract_store.sync_cursors("hub-a", 2) == (0, 0)


def test_a_token_is_made_after_every_revocation_and_revoked_after_every_token_made(
    contract_store: HubStore,
) -> None:
    """Whatever the times given (clocks of machines that run `mcp-link`): a revocation from a
    machine an hour ahead left the owner's new token refused its store for good; one from a
    machine behind handed it to a token made before the revocation."""
    old = contract_store.add_token(replace(token("old"), created_at=T0 + 10))
    assert old is not None
    ahead = contract_store.revoke_token("old", T0 + 3_600_000)
    assert ahead is not None and ahead.revoked_at == T0 + 3_600_000
    new = contract_store.add_token(replace(token("new"), created_at=T0 + 20))
    assert new is not None and new.created_at == T0 + 3_600_001
    assert contract_store.claim_sync_store("a" * 32, new, T0).bound
    behind = contract_store.revoke_token("new", T0)
    assert behind is not None and behind.revoked_at == T0 + 3_600_001
    assert contract_store.find_token("hash-of-new") == behind
    assert abs(contract_store.store_clock() - system_clock()) < 60_000


def test_a_name_is_revoked_before_the_token_it_is_the_first_characters_of(
    contract_store: HubStore,
) -> None:
    bob = contract_store.add_token(replace(token("bob"), prefix="alt_RxFp0I"))
    named = contract_store.add_token(replace(token("alt_RxFp0I"), prefix="alt_other0"))
    assert bob is not None and named is not None
    revoked = contract_store.revoke_token("alt_RxFp0I", T0 + 1)
    assert revoked is not None and revoked.name == "alt_RxFp0I"
    assert contract_store.list_tokens()[0].revoked_at is None  # bob, made first, is live
