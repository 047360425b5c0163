"""Sync records between real stores, in process: what travels, merges and conflicts.

Every store is a SQLite file; or the hub's store is PostgreSQL; or store a's is, the one that
writes every kind of item (``postgres``: which one).
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.domain import dismissals, facts, memories, rules, worklists
from aletheia_mem.errors import ForbiddenError
from aletheia_mem.storage.sqlite import SqliteStore
from tests.conftest import FakeClock
from tests.hub.sync_helpers import counts, items, open_pg_hub

HUB_ID, TOKEN_ID = "hub", 1


@pytest.fixture(params=[None, "hub", "a"], ids=["sqlite", "postgres-hub", "postgres-a"])
def postgres(request: pytest.FixtureRequest) -> str | None:
    """The store that is on PostgreSQL, if any."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def stores(request: pytest.FixtureRequest, tmp_path: Path, postgres: str | None) -> Iterator[Any]:
    opened: dict[str, Any] = {}
    try:
        for name in ("a", "b", "c", "hub"):
            if name == postgres:
                schemas = request.getfixturevalue("pg_schemas")  # emptied, not migrated anew
                opened[name] = open_pg_hub(schemas.clean(f"sync_{name}"))
            else:
                opened[name] = SqliteStore(tmp_path / f"{name}.db")
        yield opened
    finally:
        for store in opened.values():
            store.close()


def exchange(store: SqliteStore, hub: SqliteStore, projects: tuple[str, ...] | None = None) -> None:
    """What one `aletheia sync` does, without HTTP: push own changes, pull the others'."""
    push, pull = store.sync_cursors(HUB_ID, TOKEN_ID)
    for _ in range(2):
        page = store.export_changes(
            after=push, limit=2, max_bytes=10**6, local_only=True, exclude_origin=None,
            projects=projects,
        )  # fmt: skip
        while True:
            hub.apply_changes(page.records, projects=projects, now=2_000_000_000_000)
            store.set_push_cursor(HUB_ID, TOKEN_ID, page.cursor, 0)
            push = page.cursor
            if not page.more:
                break
            page = store.export_changes(
                after=push, limit=2, max_bytes=10**6, local_only=True, exclude_origin=None,
                projects=projects,
            )  # fmt: skip
        more = True
        while more:
            page = hub.export_changes(
                after=pull, limit=3, max_bytes=10**6, local_only=False,
                exclude_origin=store.sync_store_id(), projects=projects,
            )  # fmt: skip
            store.apply_changes(
                page.records, projects=None, now=2_000_000_000_000,
                pull_cursor=(HUB_ID, TOKEN_ID, page.cursor),
            )  # fmt: skip
            pull, more = page.cursor, page.more


def settle(stores: dict[str, SqliteStore], rounds: int = 2) -> None:
    for _ in range(rounds):
        for name in ("a", "b", "c"):
            exchange(stores[name], stores["hub"])


def save(store: SqliteStore, clock: FakeClock, text: str, project: str = "shop", **extra: object):
    clock.advance(1000)
    item = memories.MemoryInput(text=text, project=project, tool="test", **extra)  # type: ignore[arg-type]
    return memories.save_memory(store, clock, item)[0]


def memory_by_uid(store: SqliteStore, uid: str):
    conn = sqlite3.connect(store.path)
    try:
        (memory_id,) = conn.execute("SELECT id FROM memories WHERE uid = ?", (uid,)).fetchone()
    finally:
        conn.close()
    return store.get_memory(memory_id)


def assert_identical(stores: dict[str, SqliteStore]) -> None:
    expected = items(stores["hub"])
    for name in ("a", "b", "c"):
        assert items(stores[name]) == expected, name
    found = {name: counts(store) for name, store in stores.items()}
    assert len({json.dumps(value, sort_keys=True) for value in found.values()}) == 1, found


def test_every_kind_of_item_travels_and_every_store_ends_identical(
    stores: dict[str, SqliteStore], clock: FakeClock
) -> None:
    a, b, c = stores["a"], stores["b"], stores["c"]
    kept = save(a, clock, "Use pnpm", facts=[memories.FactInput("shop", "package manager", "pnpm")])
    facts.record_fact(
        a, project="shop", subject="shop", predicate="package manager", object="npm",
        valid_from=None, source="test", now=clock.now + 5000,
    )  # fmt: skip
    fact_id = a.facts_about("shop", "shop", None)[0].id
    rules.add_rule(
        a,
        rules.RuleInput(
            "Run tests first", "you commit", "everywhere", "", [kept.id], [fact_id], "t"
        ),
        clock.now,
    )
    worklists.write_list(a, clock, project="shop", name="todo", items=["x", {"y": 1}], tool="t")
    hidden = save(b, clock, "Old note", project="web")
    dismissals.set_dismissed(
        b, item_type="memory", item_id=hidden.id, dismiss=True, reason="dup", actor="t", now=1
    )
    episode = c.start_episode("shop", "codex", clock.now)
    c.add_request(episode, "fix the build", clock.now + 1)
    settle(stores)
    assert_identical(stores)
    hub_items = items(stores["hub"])
    kinds = sorted(kind for kind, _ in hub_items)
    assert kinds.count("memory") == 3 and kinds.count("fact") == 2
    assert kinds.count("rule") == 1 and kinds.count("episode") == 1
    rule = next(data for (kind, _), data in hub_items.items() if kind == "rule")
    assert rule["evidence_memories"] == [kept.uid]
    history = c.facts_about("shop", "shop", None)
    assert [fact.object for fact in history] == ["npm", "pnpm"]
    assert history[1].superseded_by == history[0].id and history[0].valid_to is None
    assert worklists.read_list(b, project="shop", name="todo") == '["x",{"y":1}]'
    assert c.count_memories(None) == 2  # the dismissed one is hidden, not gone


def test_applying_a_page_twice_changes_nothing(
    stores: dict[str, SqliteStore], clock: FakeClock
) -> None:
    a, hub = stores["a"], stores["hub"]
    for index in range(5):
        save(a, clock, f"note {index}")
    page = a.export_changes(
        after=0, limit=100, max_bytes=10**6, local_only=True, exclude_origin=None, projects=None
    )
    first = hub.apply_changes(page.records, projects=None, now=1)
    before = items(hub)
    second = hub.apply_changes(page.records, projects=None, now=2)
    assert (first.applied, second.applied, second.skipped) == (5, 0, 5)
    assert items(hub) == before and counts(hub)["memories"] == 5


def test_pulled_items_are_not_sent_back(stores: dict[str, SqliteStore], clock: FakeClock) -> None:
    save(stores["a"], clock, "from a")
    exchange(stores["a"], stores["hub"])
    exchange(stores["b"], stores["hub"])
    page = stores["b"].export_changes(
        after=0, limit=100, max_bytes=10**6, local_only=True, exclude_origin=None, projects=None
    )
    assert page.records == []


def test_the_same_memory_saved_on_two_stores_becomes_one(
    stores: dict[str, SqliteStore], clock: FakeClock
) -> None:
    first = save(stores["a"], clock, "Staging needs the VPN")
    clock.advance(-1000)
    second = save(stores["b"], clock, "Staging needs the VPN")
    assert first.uid != second.uid
    settle(stores)
    assert_identical(stores)
    uids = [key for kind, key in items(stores["hub"]) if kind == "memory"]
    assert uids == [min(first.uid, second.uid)]


def test_a_list_written_on_two_stores_keeps_the_later_write_everywhere(
    stores: dict[str, SqliteStore], clock: FakeClock
) -> None:
    worklists.write_list(stores["a"], clock, project="shop", name="todo", items=["a"], tool="t")
    worklists.write_list(stores["b"], clock, project="shop", name="todo", items=["b"], tool="t")
    versions = {}
    for name in ("a", "b"):
        [record] = stores[name].export_changes(
            after=0, limit=10, max_bytes=10**6, local_only=True, exclude_origin=None,
            projects=None,
        ).records  # fmt: skip
        versions[name] = record["v"]
    winner = max(versions, key=lambda name: versions[name])
    settle(stores)
    assert_identical(stores)
    for name in ("a", "b", "c"):
        assert worklists.read_list(stores[name], project="shop", name="todo") == f'["{winner}"]'
    assert counts(stores["hub"])["memories"] == 1


def test_concurrent_fact_changes_leave_one_current_fact_everywhere(
    stores: dict[str, SqliteStore], clock: FakeClock
) -> None:
    facts.record_fact(
        stores["a"], project="shop", subject="db", predicate="is", object="sqlite",
        valid_from=100, source="t", now=100,
    )  # fmt: skip
    settle(stores)
    for name, value, at in (("a", "postgres", 300), ("b", "mysql", 200)):
        facts.record_fact(
            stores[name], project="shop", subject="db", predicate="is", object=value,
            valid_from=at, source="t", now=at,
        )  # fmt: skip
    settle(stores, rounds=3)
    assert_identical(stores)
    for name in ("a", "b", "c", "hub"):
        history = stores[name].facts_about("db", "shop", None)
        current = [fact.object for fact in history if fact.valid_to is None]
        assert current == ["postgres"], name
        assert sorted(fact.object for fact in history) == ["mysql", "postgres", "sqlite"]
        by_object = {fact.object: fact for fact in history}
        assert by_object["mysql"].superseded_by == by_object["postgres"].id
        assert by_object["mysql"].valid_to == 300


def _put(store: Any, obj: str, valid_from: int | None, now: int) -> None:
    facts.record_fact(
        store, project="shop", subject="db", predicate="is", object=obj,
        valid_from=valid_from, source="t", now=now,
    )  # fmt: skip


def _spans(store: Any) -> dict[str, tuple[int, int | None, str | None]]:
    """Object -> (valid_from, valid_to, the object of the successor) of each fact of "db"."""
    history = store.facts_about("db", "shop", None)
    by_id = {fact.id: fact.object for fact in history}
    return {
        fact.object: (fact.valid_from, fact.valid_to, by_id.get(fact.superseded_by or 0))
        for fact in history
    }


@pytest.mark.parametrize("first", ["a", "b"])
def test_facts_backdated_on_two_stores_tile_one_timeline_everywhere(
    stores: dict[str, SqliteStore], first: str
) -> None:
    """Each store put its value inside the same interval; synced, in either order, neither
    value overlaps the other: the later valid_from splits the earlier one's interval."""
    _put(stores["a"], "sqlite", 1000, 1000)
    settle(stores)
    _put(stores["a"], "postgres", 500, 2000)
    _put(stores["b"], "mysql", 700, 2100)
    order = [first, *(name for name in ("a", "b", "c") if name != first)]
    for _ in range(3):
        for name in order:
            exchange(stores[name], stores["hub"])
    assert_identical(stores)
    for name in ("a", "b", "c", "hub"):
        assert _spans(stores[name]) == {
            "postgres": (500, 700, "mysql"),
            "mysql": (700, 1000, "sqlite"),
            "sqlite": (1000, None, None),
        }, name


def test_values_saved_in_one_millisecond_travel_with_the_instants_they_were_given(
    stores: dict[str, SqliteStore],
) -> None:
    """The second value saved in a millisecond starts one later (``fact_start``): every store
    tiles the two as the writer did, none valid at no instant, and no store re-versions them."""
    for obj in ("sqlite", "postgres"):
        _put(stores["a"], obj, None, 1000)
    settle(stores)
    assert_identical(stores)
    for name in ("a", "b", "c", "hub"):
        assert _spans(stores[name]) == {
            "sqlite": (1000, 1001, "postgres"),
            "postgres": (1001, None, None),
        }, name
    page = stores["a"].export_changes(
        after=0, limit=100, max_bytes=10**6, local_only=True, exclude_origin=None, projects=None
    )
    again = stores["b"].apply_changes(page.records, projects=None, now=5000)
    assert (again.applied, again.merged, again.skipped) == (0, 0, len(page.records))


def test_fact_records_applied_in_any_order_give_one_timeline_and_again_change_nothing(
    stores: dict[str, SqliteStore], tmp_path: Path
) -> None:
    for obj, valid_from, now in (("one", 100, 1000), ("two", 300, 1001), ("three", 200, 1002)):
        _put(stores["a"], obj, valid_from, now)
    for obj, valid_from, now in (("four", 250, 1003), ("five", 300, 1004), ("six", 50, 1005)):
        _put(stores["b"], obj, valid_from, now)
    records = []
    for name in ("a", "b"):
        page = stores[name].export_changes(
            after=0, limit=100, max_bytes=10**6, local_only=True, exclude_origin=None,
            projects=None,
        )  # fmt: skip
        records += page.records
    rng = random.Random(7)
    orders = [records, records[::-1], *(rng.sample(records, len(records)) for _ in range(4))]
    targets = [stores["hub"], stores["c"]]
    targets += [SqliteStore(tmp_path / f"order{n}.db") for n in range(len(orders) - 2)]
    try:
        for target, order in zip(targets, orders, strict=True):
            for record in order:  # a page each: the timeline is whole after every one
                target.apply_changes([record], projects=None, now=5000)
            assert _spans(target) == {
                "six": (50, 100, "one"),
                "one": (100, 200, "three"),
                "three": (200, 250, "four"),
                "four": (250, 300, "two"),
                "two": (300, 300, "five"),  # the same valid_from: the later recorded wins
                "five": (300, None, None),
            }
        expected = items(targets[0])
        assert all(items(target) == expected for target in targets[1:])
        again = targets[0].apply_changes(records, projects=None, now=6000)
        assert (again.applied, again.merged, again.skipped) == (0, 0, len(records))
        assert items(targets[0]) == expected
    finally:
        for target in targets[2:]:
            target.close()


def test_dismissals_and_restores_travel(stores: dict[str, SqliteStore], clock: FakeClock) -> None:
    memory = save(stores["a"], clock, "Flaky test in checkout")
    settle(stores)
    dismissals.set_dismissed(
        stores["a"], item_type="memory", item_id=memory.id, dismiss=True, reason="wrong",
        actor="t", now=clock.now,
    )  # fmt: skip
    settle(stores)
    on_b = memory_by_uid(stores["b"], memory.uid)
    assert on_b.dismissed_at is not None and on_b.dismiss_reason == "wrong"
    dismissals.set_dismissed(
        stores["b"], item_type="memory", item_id=on_b.id, dismiss=False, reason=None,
        actor="t", now=clock.now,
    )  # fmt: skip
    settle(stores)
    assert stores["a"].get_memory(memory.id).dismissed_at is None
    assert_identical(stores)


def test_a_fact_that_arrives_before_its_memory_is_linked_once_the_memory_comes(
    stores: dict[str, SqliteStore], clock: FakeClock
) -> None:
    memory = save(
        stores["a"], clock, "Pinned versions", facts=[memories.FactInput("node", "version", "22")]
    )
    page = stores["a"].export_changes(
        after=0, limit=100, max_bytes=10**6, local_only=True, exclude_origin=None, projects=None
    )
    fact_records = [record for record in page.records if record["kind"] == "fact"]
    memory_records = [record for record in page.records if record["kind"] == "memory"]
    hub = stores["hub"]
    hub.apply_changes(fact_records, projects=None, now=1)
    assert hub.facts_about("node", "shop", None)[0].memory_id is None
    assert items(hub)[("fact", fact_records[0]["key"])]["memory"] == memory.uid
    hub.apply_changes(memory_records, projects=None, now=2)
    linked = hub.facts_about("node", "shop", None)[0].memory_id
    assert linked is not None and hub.get_memory(linked).uid == memory.uid


def test_a_limited_sender_cannot_write_or_take_over_another_project(
    stores: dict[str, SqliteStore], clock: FakeClock
) -> None:
    billing = save(stores["a"], clock, "Billing secret plan", project="billing")
    exchange(stores["a"], stores["hub"])
    page = stores["a"].export_changes(
        after=0, limit=100, max_bytes=10**6, local_only=False, exclude_origin=None, projects=None
    )
    record = page.records[0]
    with pytest.raises(ForbiddenError) as refused:
        stores["hub"].apply_changes([record], projects=("shop",), now=1)
    assert refused.value.message == 'Project "billing" is not allowed for this token.'
    takeover = {
        **record,
        "v": [record["v"][0] + 10, "x"],
        "data": {**record["data"], "project": "shop"},
    }
    with pytest.raises(ForbiddenError):
        stores["hub"].apply_changes([takeover], projects=("shop",), now=1)
    assert items(stores["hub"])[("memory", billing.uid)]["project"] == "billing"


def test_a_limited_token_exports_only_its_projects(
    stores: dict[str, SqliteStore], clock: FakeClock
) -> None:
    save(stores["a"], clock, "shop note")
    save(stores["a"], clock, "billing note", project="billing")
    rules.add_rule(
        stores["a"], rules.RuleInput("Be kind", "always", "everywhere", "", [], [], "t"), 1
    )
    page = stores["a"].export_changes(
        after=0, limit=100, max_bytes=10**6, local_only=True, exclude_origin=None,
        projects=("shop",),
    )  # fmt: skip
    assert sorted(record["data"].get("project", "(rule)") for record in page.records) == [
        "(rule)",
        "shop",
    ]


def test_items_written_before_sync_existed_are_carried_by_the_first_sync(tmp_path: Path) -> None:
    from aletheia_mem.storage import migrate

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)"
        )
        (first,) = [script for version, script in migrate._steps() if version == 1]
        for statement in migrate._statements(first):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (1, datetime('now'))")
        conn.execute(
            "INSERT INTO memories (uid, project, type, kind, title, text, tool, created_at,"
            " updated_at) VALUES ('old-uid', 'shop', 'note', 'note', 'Old', 'Old text', 't', 5, 7)"
        )
    finally:
        conn.close()
    store = SqliteStore(path)
    try:
        exported = items(store)
        page = store.export_changes(
            after=0, limit=10, max_bytes=10**6, local_only=True, exclude_origin=None,
            projects=None,
        )  # fmt: skip
    finally:
        store.close()
    assert list(exported) == [("memory", "old-uid")]
    assert page.records[0]["v"][0] == 7
