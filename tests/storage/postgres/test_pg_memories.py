"""PgMemories: every MemoryStore method, with the SQLite store's semantics."""

from __future__ import annotations

from dataclasses import replace

from aletheia_mem.storage.base import Memory, MemoryQuery
from aletheia_mem.storage.entries import NewFact, NewMemory
from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from aletheia_mem.storage.postgres.memories import PgMemories
from tests.storage.postgres.racing import race

NOW = 1_790_000_000_000


def _new(title: str, at: int = NOW, **changes: object) -> NewMemory:
    memory = NewMemory(
        project="shop",
        type="decision",
        kind="memory",
        title=title,
        text=f"{title}: the details",
        tool="cli",
        created_at=at,
        dedupe_key=None,
    )
    return replace(memory, **changes)  # type: ignore[arg-type]


def _fact(obj: str, at: int = NOW) -> NewFact:
    return NewFact("shop", "Checkout Service", "Runs On", obj, at, at, "test")


def test_a_saved_memory_reads_back_with_the_same_values(pg_memories: PgMemories) -> None:
    new = _new(
        "Use pnpm",
        narrative="we tried npm",
        facts=("pnpm is the package manager",),
        files=("package.json", "src/app.ts"),
        pinned=True,
    )
    memory, created = pg_memories.add_memory(new)
    assert created
    assert isinstance(memory.id, int)
    assert memory == Memory(
        id=memory.id,
        uid=memory.uid,
        project="shop",
        type="decision",
        kind="memory",
        title="Use pnpm",
        text="Use pnpm: the details",
        narrative="we tried npm",
        facts=("pnpm is the package manager",),
        files=("package.json", "src/app.ts"),
        tool="cli",
        pinned=True,
        created_at=NOW,
        updated_at=NOW,
        dismissed_at=None,
        dismiss_reason=None,
    )
    assert pg_memories.get_memory(memory.id) == memory
    assert pg_memories.get_memory(memory.id + 1000) is None


def test_a_dedupe_key_returns_the_first_memory_and_still_applies_the_facts(
    pg_memories: PgMemories, pg_facts: PgFacts
) -> None:
    first, created = pg_memories.add_memory(_new("Deploy", dedupe_key="k"), [_fact("k8s")])
    again, created_again = pg_memories.add_memory(
        _new("Deploy again", dedupe_key="k"), [_fact("nomad", NOW + 1)]
    )
    assert created and not created_again
    assert again == first
    assert pg_memories.find_memory("shop", "k") == first
    assert pg_memories.find_memory("other", "k") is None
    versions = pg_facts.facts_about("checkout service", "shop", None)
    assert [(f.object, f.memory_id) for f in versions] == [("nomad", first.id), ("k8s", first.id)]


def test_a_memory_whose_facts_are_all_superseded_is_stale(
    pg_memories: PgMemories, pg_facts: PgFacts
) -> None:
    old, _ = pg_memories.add_memory(_new("Runs on k8s"), [_fact("k8s")])
    assert pg_memories.stale_memory_ids([old.id], NOW + 5) == set()
    pg_facts.add_fact(_fact("nomad", NOW + 5))
    assert pg_memories.stale_memory_ids([old.id], NOW + 4) == set()
    assert pg_memories.stale_memory_ids([old.id], NOW + 5) == {old.id}
    assert pg_memories.stale_memory_ids([], NOW + 5) == set()


def test_work_state_is_replaced_in_place_and_listed_by_key_prefix(
    pg_memories: PgMemories,
) -> None:
    todo = _new("todo", kind="work_state", dedupe_key="work:todo")
    first = pg_memories.put_work_state(todo)
    again = pg_memories.put_work_state(replace(todo, text="rewritten list", created_at=NOW + 9))
    other = pg_memories.put_work_state(replace(todo, title="plan", dedupe_key="work:plan"))
    pg_memories.add_memory(_new("unrelated", dedupe_key="note:x"))
    assert again == first
    listed = pg_memories.keyed_memories("shop", "work:", "work_state", 10)
    assert [m.id for m in listed] == [first, other]
    assert listed[0].text == "rewritten list" and listed[0].updated_at == NOW + 9
    assert listed[0].created_at == NOW + 9  # replaced whole: dated at its last write
    query = MemoryQuery(terms=("rewritten",))
    assert pg_memories.rank_memory_ids(query, NOW) == [first]
    assert first not in pg_memories.rank_memory_ids(MemoryQuery(terms=("details",)), NOW)


def test_pinning_changes_the_memory_and_an_unknown_id_gives_none(
    pg_memories: PgMemories,
) -> None:
    memory, _ = pg_memories.add_memory(_new("Pin me"))
    pinned = pg_memories.set_pinned(memory.id, True, NOW + 1)
    assert pinned is not None and pinned.pinned and pinned.updated_at == NOW + 1
    unchanged = pg_memories.set_pinned(memory.id, True, NOW + 2)
    assert unchanged == pinned
    assert pg_memories.set_pinned(memory.id + 99, True, NOW) is None


def test_reads_by_id_heads_and_id_sets(pg_memories: PgMemories, pg_db: PgDatabase) -> None:
    a, _ = pg_memories.add_memory(_new("alpha", NOW))
    b, _ = pg_memories.add_memory(_new("beta", NOW + 10))
    with pg_db.write() as conn:
        conn.execute("UPDATE memories SET dismissed_at = %s WHERE id = %s", (NOW, a.id))
    assert [m.id for m in pg_memories.get_memories([a.id, b.id, 999])] == [b.id, a.id]
    assert pg_memories.get_memories([]) == []
    heads = pg_memories.memory_heads([b.id, 999, a.id])
    assert [(h.id, h.title, h.pinned) for h in heads] == [
        (b.id, "beta", False),
        (a.id, "alpha", False),
    ]
    assert pg_memories.memory_heads([]) == []
    assert pg_memories.existing_memory_ids([a.id, b.id, 999]) == {a.id, b.id}
    assert pg_memories.dismissed_memory_ids([a.id, b.id]) == {a.id}
    assert pg_memories.existing_memory_ids([]) == set()
    assert pg_memories.dismissed_memory_ids([]) == set()


def test_counts_projects_and_presence_see_only_live_memories(pg_memories: PgMemories) -> None:
    assert not pg_memories.has_memories(None)
    assert pg_memories.project_names() == []
    for project in ("zeta", "alpha", "Beta", "alpha"):
        pg_memories.add_memory(_new(project, project=project))
    assert pg_memories.project_names() == ["Beta", "alpha", "zeta"]  # byte order, as SQLite
    assert pg_memories.project_names(limit=2) == ["Beta", "alpha"]
    assert pg_memories.has_memories(("alpha",)) and not pg_memories.has_memories(("none",))
    assert pg_memories.count_memories(None) == 4
    assert pg_memories.count_memories(("alpha", "zeta")) == 3


def test_neighbours_and_recent_memories_go_by_time(pg_memories: PgMemories) -> None:
    ids = [pg_memories.add_memory(_new(f"m{i}", NOW + i * 10))[0].id for i in range(5)]
    pinned, _ = pg_memories.add_memory(_new("pinned", NOW + 100, pinned=True))
    note, _ = pg_memories.add_memory(_new("note", NOW + 200, kind="note"))
    anchor = pg_memories.get_memory(ids[2])
    assert anchor is not None
    earlier = pg_memories.neighbours(anchor, ("shop",), 2, later=False)
    later = pg_memories.neighbours(anchor, None, 2, later=True)
    assert [m.id for m in earlier] == [ids[1], ids[0]]
    assert [m.id for m in later] == [ids[3], ids[4]]
    recent = pg_memories.recent_memories("shop", 3, pinned=False, exclude_kinds=("note",))
    assert [m.id for m in recent] == [ids[4], ids[3], ids[2]]
    everything = pg_memories.recent_memories("shop", 1, pinned=False, exclude_kinds=())
    assert [m.id for m in everything] == [note.id]
    assert [
        m.id for m in pg_memories.recent_memories("shop", 5, pinned=True, exclude_kinds=())
    ] == [pinned.id]


def test_search_matches_phrases_in_order_and_code_identifiers_by_their_parts(
    pg_memories: PgMemories,
) -> None:
    snake, _ = pg_memories.add_memory(_new("Raise max_retries to 5", NOW))
    camel, _ = pg_memories.add_memory(_new("parseHTTPRequest drops headers", NOW + 1))
    apart, _ = pg_memories.add_memory(_new("retries cap: the max is five", NOW + 2))
    phrase = MemoryQuery(terms=("max_retries",))
    assert pg_memories.rank_memory_ids(phrase, NOW) == [snake.id]
    assert pg_memories.rank_memory_ids(MemoryQuery(terms=("maxretries",)), NOW) == [snake.id]
    assert pg_memories.rank_memory_ids(MemoryQuery(terms=("request",)), NOW) == [camel.id]
    words = MemoryQuery(terms=("max", "retries"), order="date_asc")
    assert pg_memories.rank_memory_ids(words, NOW) == [snake.id, apart.id]
    found = pg_memories.search_memories(MemoryQuery(terms=("headers",)), NOW)
    assert [m.id for m in found] == [camel.id]
    assert pg_memories.rank_memory_ids(MemoryQuery(terms=()), NOW) == []
    assert pg_memories.rank_memory_ids(MemoryQuery(terms=("absent",)), NOW) == []


def test_search_by_file_finds_exact_paths_and_suffixes(pg_memories: PgMemories) -> None:
    app, _ = pg_memories.add_memory(_new("app", NOW, files=("src/app.py", "src/util.py")))
    lib, _ = pg_memories.add_memory(_new("lib", NOW + 1, files=("lib/util.py",)))
    by_suffix = MemoryQuery(file="util.py", file_suffix=True)
    assert [m.id for m in pg_memories.search_memories(by_suffix, NOW)] == [lib.id, app.id]
    exact = MemoryQuery(file="src/app.py")
    assert [m.id for m in pg_memories.search_memories(exact, NOW)] == [app.id]
    assert pg_memories.search_memories(MemoryQuery(file="app.py"), NOW) == []


def test_dismissed_memories_are_searched_only_on_request(
    pg_memories: PgMemories, pg_db: PgDatabase
) -> None:
    live, _ = pg_memories.add_memory(_new("cache layer", NOW))
    gone, _ = pg_memories.add_memory(_new("cache removed", NOW + 1))
    with pg_db.write() as conn:
        conn.execute("UPDATE memories SET dismissed_at = %s WHERE id = %s", (NOW, gone.id))
    assert pg_memories.rank_memory_ids(MemoryQuery(terms=("cache",)), NOW) == [live.id]
    dismissed = MemoryQuery(terms=("cache",), dismissed=True)
    assert pg_memories.rank_memory_ids(dismissed, NOW) == [gone.id]
    assert [m.id for m in pg_memories.search_memories(MemoryQuery(dismissed=True), NOW)] == [
        gone.id
    ]


def test_writers_racing_on_one_dedupe_key_share_one_memory(pg_store_url: str) -> None:
    databases = [PgDatabase(pg_store_url) for _ in range(2)]
    parts = [PgMemories(db) for db in databases]
    results: list[tuple[int, bool]] = []
    lists: list[int] = []

    def save(n: int) -> None:
        for i in range(5):
            memory, created = parts[n % 2].add_memory(_new(f"w{n}", dedupe_key=f"k{i}"))
            results.append((memory.id, created))
            work = _new(f"list {n}", kind="work_state", dedupe_key=f"work:{i}")
            lists.append(parts[n % 2].put_work_state(work))

    errors = race(save, 6)
    try:
        assert errors == []
        assert len({memory_id for memory_id, _ in results}) == 5
        assert sum(created for _, created in results) == 5
        assert len(set(lists)) == 5
        assert parts[0].count_memories(None) == 10
    finally:
        for db in databases:
            db.close()
