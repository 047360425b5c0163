"""MemoryStore: saving, deduplication, reading, ranking and pinning."""

from __future__ import annotations

from dataclasses import replace

from aletheia_mem.search.rank import Ranking
from aletheia_mem.storage.base import MemoryQuery, Order
from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.storage.entries import AuditEntry
from tests.storage.contract.rows import T0, fact, memory


def test_a_new_memory_is_created_and_read_back_whole(contract_store: HubStore) -> None:
    saved, created = contract_store.add_memory(memory("Cache warms at boot", files=("a.py",)))
    assert created and saved.id > 0 and saved.uid
    assert contract_store.get_memory(saved.id) == saved
    assert (saved.project, saved.title, saved.files, saved.pinned) == (
        "shop",
        "Cache warms at boot",
        ("a.py",),
        False,
    )
    assert saved.created_at == saved.updated_at == T0 and saved.dismissed_at is None


def test_a_memory_with_a_known_dedupe_key_is_returned_not_saved_again(
    contract_store: HubStore,
) -> None:
    first, created = contract_store.add_memory(memory("One", key="k1"))
    again, created_again = contract_store.add_memory(memory("One, edited", key="k1", at=T0 + 5))
    assert created and not created_again and again == first
    assert contract_store.find_memory("shop", "k1") == first
    assert contract_store.find_memory("other", "k1") is None
    assert contract_store.count_memories(None) == 1


def test_the_same_dedupe_key_in_another_project_is_another_memory(
    contract_store: HubStore,
) -> None:
    a, _ = contract_store.add_memory(memory("One", key="k"))
    b, created = contract_store.add_memory(memory("One", key="k", project="billing"))
    assert created and a.id != b.id


def test_memories_read_by_id_come_newest_first_and_unknown_ids_are_skipped(
    contract_store: HubStore,
) -> None:
    old, _ = contract_store.add_memory(memory("old", at=T0))
    new, _ = contract_store.add_memory(memory("new", at=T0 + 10))
    assert [m.id for m in contract_store.get_memories([old.id, 999_999, new.id])] == [
        new.id,
        old.id,
    ]
    assert contract_store.get_memories([]) == []
    assert contract_store.get_memory(999_999) is None
    assert contract_store.existing_memory_ids([old.id, 999_999]) == {old.id}


def test_memory_heads_keep_the_order_asked_for(contract_store: HubStore) -> None:
    a, _ = contract_store.add_memory(memory("a", at=T0))
    b, _ = contract_store.add_memory(memory("b", at=T0 + 1, pinned=True))
    heads = contract_store.memory_heads([a.id, 424_242, b.id])
    assert [(h.id, h.title, h.pinned) for h in heads] == [(a.id, "a", False), (b.id, "b", True)]


def test_pinning_changes_the_memory_and_an_unknown_id_gives_none(
    contract_store: HubStore,
) -> None:
    saved, _ = contract_store.add_memory(memory("pin me"))
    pinned = contract_store.set_pinned(saved.id, True, T0 + 7)
    assert pinned is not None and pinned.pinned and pinned.updated_at == T0 + 7
    unpinned = contract_store.set_pinned(saved.id, False, T0 + 8)
    assert unpinned is not None and not unpinned.pinned
    assert contract_store.set_pinned(424_242, True, T0) is None


def test_counts_and_project_names_see_live_memories_by_project(contract_store: HubStore) -> None:
    contract_store.add_memory(memory("a"))
    contract_store.add_memory(memory("b", project="billing"))
    assert contract_store.has_memories(None) and contract_store.has_memories(("billing",))
    assert not contract_store.has_memories(("nowhere",))
    assert contract_store.count_memories(None) == 2
    assert contract_store.count_memories(("shop", "nowhere")) == 1
    assert contract_store.project_names() == ["billing", "shop"]


def test_project_names_that_start_with_a_prefix(contract_store: HubStore) -> None:
    for project in ("shop", "shop-api", "shopping", "shoe", "sho", "zeta", "\u00e9t\u00e9"):
        contract_store.add_memory(memory(f"a note of {project}", project=project))
    assert contract_store.project_names(starting="shop") == ["shop", "shop-api", "shopping"]
    assert contract_store.project_names(2, starting="sho") == ["sho", "shoe"]
    assert contract_store.project_names(starting="\u00e9") == ["\u00e9t\u00e9"]
    assert contract_store.project_names(starting="shopx") == []
    assert contract_store.project_names(starting="")[-1] == "\u00e9t\u00e9"


def test_search_finds_memories_by_their_words_within_the_projects_asked(
    contract_store: HubStore,
) -> None:
    alpha, _ = contract_store.add_memory(memory("alpha release notes"))
    contract_store.add_memory(memory("beta plan"))
    contract_store.add_memory(memory("alpha elsewhere", project="billing"))
    query = MemoryQuery(terms=("alpha",), projects=("shop",))
    assert [m.id for m in contract_store.search_memories(query, T0)] == [alpha.id]
    assert contract_store.rank_memory_ids(query, T0) == [alpha.id]
    everywhere = MemoryQuery(terms=("alpha",), projects=None)
    assert len(contract_store.search_memories(everywhere, T0)) == 2


def test_search_without_terms_pages_by_date(contract_store: HubStore) -> None:
    ids = [contract_store.add_memory(memory(f"m{n}", at=T0 + n))[0].id for n in range(5)]
    newest = MemoryQuery(order="date_desc", limit=2)
    assert [m.id for m in contract_store.search_memories(newest, T0)] == ids[:-3:-1]
    oldest = MemoryQuery(order="date_asc", limit=2, offset=1)
    assert [m.id for m in contract_store.search_memories(oldest, T0)] == ids[1:3]


def test_a_search_bounded_by_an_id_leaves_out_the_memories_saved_after_it(
    contract_store: HubStore,
) -> None:
    assert contract_store.newest_memory_id() == 0
    ids = [contract_store.add_memory(memory(f"alpha m{n}", at=T0 + n))[0].id for n in range(4)]
    assert contract_store.newest_memory_id() == ids[-1]
    contract_store.add_memory(memory("alpha later", at=T0 + 10))
    bound = ids[-1]
    newest = MemoryQuery(order="date_desc", limit=2, offset=2, upto=bound)
    assert [m.id for m in contract_store.search_memories(newest, T0)] == [ids[1], ids[0]]
    orders: tuple[Order, ...] = ("relevance", "date_desc")
    for order in orders:
        matching = MemoryQuery(terms=("alpha",), order=order, upto=bound)
        assert sorted(contract_store.rank_memory_ids(matching, T0)) == ids
    contract_store.add_memory(memory("other", at=T0 + 11))
    assert contract_store.newest_memory_id() > bound


def test_a_bounded_search_past_the_score_budget_scores_the_newest_matches_up_to_its_bound(
    contract_store: HubStore,
) -> None:
    # Past the budget, the newest matches are scored: those up to the bound, so that a later
    # page scores the matches its first page did, whatever was saved since.
    small = Ranking(score_budget=3)
    ids = [contract_store.add_memory(memory(f"beta m{n}", at=T0 + n))[0].id for n in range(6)]
    bounded = MemoryQuery(terms=("beta",), limit=10, upto=ids[-1])
    assert sorted(contract_store.rank_memory_ids(bounded, T0, small)) == ids[-4:]
    for n in range(2):
        contract_store.add_memory(memory(f"beta later {n}", at=T0 + 10 + n))
    assert sorted(contract_store.rank_memory_ids(bounded, T0, small)) == ids[-4:]
    assert len(contract_store.search_memories(bounded, T0, small)) == 4
    unbounded = contract_store.rank_memory_ids(replace(bounded, upto=None), T0, small)
    assert sorted(unbounded) == [*ids[-2:], ids[-1] + 1, ids[-1] + 2]  # the newest four now


def test_search_by_file_matches_the_path_or_its_ending(contract_store: HubStore) -> None:
    hit, _ = contract_store.add_memory(memory("touches cart", files=("src/shop/cart.py",)))
    contract_store.add_memory(memory("touches api", files=("src/api.py",)))
    exact = MemoryQuery(file="src/shop/cart.py")
    assert [m.id for m in contract_store.search_memories(exact, T0)] == [hit.id]
    ending = MemoryQuery(file="cart.py", file_suffix=True)
    assert [m.id for m in contract_store.search_memories(ending, T0)] == [hit.id]


def test_neighbours_are_the_nearest_live_memories_in_time(contract_store: HubStore) -> None:
    ids = [contract_store.add_memory(memory(f"m{n}", at=T0 + n))[0].id for n in range(5)]
    anchor = contract_store.get_memory(ids[2])
    assert anchor is not None
    other, _ = contract_store.add_memory(memory("billing note", at=T0 + 3, project="billing"))

    def near(projects: tuple[str, ...] | None, count: int, later: bool) -> list[int]:
        return [m.id for m in contract_store.neighbours(anchor, projects, count, later)]

    assert near(("shop",), 2, False) == [ids[1], ids[0]]
    assert near(("shop",), 5, True) == [ids[3], ids[4]]
    assert near(None, 5, True) == [ids[3], other.id, ids[4]]
    assert near(("shop", "billing"), 2, True) == [ids[3], other.id]
    assert near(("billing",), 5, False) == []


def test_recent_memories_split_pinned_from_unpinned_and_leave_out_kinds(
    contract_store: HubStore,
) -> None:
    pinned, _ = contract_store.add_memory(memory("pinned", pinned=True))
    note, _ = contract_store.add_memory(memory("note", at=T0 + 1))
    contract_store.add_memory(memory("summary", at=T0 + 2, kind="summary"))
    got = contract_store.recent_memories("shop", 10, pinned=False, exclude_kinds=("summary",))
    assert [m.id for m in got] == [note.id]
    got = contract_store.recent_memories("shop", 10, pinned=True, exclude_kinds=())
    assert [m.id for m in got] == [pinned.id]


def test_a_memory_whose_facts_are_all_superseded_is_stale(contract_store: HubStore) -> None:
    saved, _ = contract_store.add_memory(
        memory("db host is alpha"), facts=[fact("db", "host", "alpha")]
    )
    assert contract_store.stale_memory_ids([saved.id], T0 + 1) == set()
    contract_store.add_fact(fact("db", "host", "beta", at=T0 + 1))
    assert contract_store.stale_memory_ids([saved.id], T0 + 1) == {saved.id}
    assert contract_store.stale_memory_ids([], T0 + 1) == set()


def test_a_memory_stays_current_until_its_fact_is_superseded(contract_store: HubStore) -> None:
    """A value written for a later time ends the memory's fact then, not at once."""
    saved, _ = contract_store.add_memory(
        memory("db host is alpha"), facts=[fact("db", "host", "alpha")]
    )
    contract_store.add_fact(fact("db", "host", "beta", at=T0 + 1_000))
    assert contract_store.stale_memory_ids([saved.id], T0 + 999) == set()
    assert contract_store.stale_memory_ids([saved.id], T0 + 1_000) == {saved.id}


def test_count_pinned_memories_counts_the_live_pinned_ones_of_a_project(
    contract_store: HubStore,
) -> None:
    for n in range(3):
        contract_store.add_memory(memory(f"pinned {n}", pinned=True, at=T0 + n))
    contract_store.add_memory(memory("not pinned", at=T0 + 5))
    contract_store.add_memory(memory("elsewhere", project="billing", pinned=True, at=T0 + 6))
    hidden, _ = contract_store.add_memory(memory("dismissed", pinned=True, at=T0 + 7))
    entry = AuditEntry(T0, "cli", "dismiss", None, "ok")
    contract_store.set_dismissed("memories", hidden.id, T0 + 8, None, entry)
    assert contract_store.count_pinned_memories("shop") == 3
    assert contract_store.count_pinned_memories("billing") == 1
    assert contract_store.count_pinned_memories("nowhere") == 0
