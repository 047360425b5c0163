"""WorkStore and AuditLog: work-state lists, episodes, dismissals and the audit trail."""

from __future__ import annotations

from dataclasses import replace

from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.storage.entries import AuditEntry, AuditQuery
from tests.storage.contract.rows import T0, audit, fact, memory


def test_a_work_state_list_is_replaced_in_place(contract_store: HubStore) -> None:
    first = contract_store.put_work_state(memory("todo", key="work:todo", kind="work_state"))
    second = contract_store.put_work_state(
        memory("todo v2", key="work:todo", kind="work_state", at=T0 + 5)
    )
    done = contract_store.put_work_state(
        memory("done", key="work:done", kind="work_state", at=T0 + 1)
    )
    assert first == second != done
    lists = contract_store.keyed_memories("shop", "work:", "work_state", 10)
    assert [(m.id, m.title) for m in lists] == [(first, "todo v2"), (done, "done")]
    assert contract_store.keyed_memories("shop", "other:", "work_state", 10) == []


def test_a_rewritten_list_is_dated_at_its_last_write_for_filters_and_the_timeline(
    contract_store: HubStore,
) -> None:
    todo = memory("todo", key="work:todo", kind="work_state", text='["a"]')
    first = contract_store.put_work_state(todo)
    middle, _ = contract_store.add_memory(memory("a note between", at=T0 + 5))
    rewritten = replace(todo, text='["a","b"]', created_at=T0 + 10)
    assert contract_store.put_work_state(rewritten) == first
    found = contract_store.get_memory(first)
    assert found is not None and (found.created_at, found.updated_at) == (T0 + 10, T0 + 10)
    since = MemoryQuery(projects=("shop",), since=T0 + 8, order="date_desc")
    assert [m.id for m in contract_store.search_memories(since, T0 + 10)] == [first]
    words = MemoryQuery(terms=("todo",), since=T0 + 8)  # the ranked path, on its own rows
    assert contract_store.rank_memory_ids(words, T0 + 10) == [first]
    until = MemoryQuery(projects=("shop",), until=T0 + 8, order="date_desc")
    assert [m.id for m in contract_store.search_memories(until, T0 + 10)] == [middle.id]
    anchor = contract_store.get_memory(middle.id)
    assert anchor is not None
    assert [m.id for m in contract_store.neighbours(anchor, None, 5, later=True)] == [first]
    assert contract_store.neighbours(anchor, None, 5, later=False) == []


def test_a_renamed_list_is_saved_anew_with_its_pin_and_the_old_one_dismissed(
    contract_store: HubStore,
) -> None:
    old = memory("todo list", key="work:todo", kind="work_state", text='["a"]')
    first = contract_store.put_work_state(old)
    assert contract_store.set_pinned(first, True, T0 + 1) is not None
    renamed = replace(
        old, title="zebra list", text='["a","b"]', dedupe_key="work:plan", created_at=T0 + 5
    )
    moved = contract_store.rename_work_state("work:todo", renamed, audit(T0 + 5, tool="rename"))
    assert isinstance(moved, int) and moved != first
    new, gone = contract_store.get_memory(moved), contract_store.get_memory(first)
    assert new is not None and gone is not None
    assert (new.title, new.text, new.pinned, new.created_at) == (
        "zebra list",
        '["a","b"]',
        True,
        T0 + 5,
    )
    assert (gone.dismissed_at, gone.dismiss_reason) == (T0 + 5, "renamed to zebra")
    found = contract_store.find_memory("shop", "work:plan")
    assert found is not None and found.id == moved
    lists = contract_store.keyed_memories("shop", "work:", "work_state", 10)
    assert [m.id for m in lists] == [moved]
    hits = contract_store.search_memories(MemoryQuery(terms=("zebra",), projects=("shop",)), T0)
    assert [m.id for m in hits] == [moved]  # indexed under its new title
    (row,) = contract_store.list_audit(10)
    assert (row.tool, row.project, row.at) == ("rename", "shop", T0 + 5)


def test_a_rename_onto_a_taken_name_or_of_no_live_list_changes_nothing(
    contract_store: HubStore,
) -> None:
    todo = memory("todo", key="work:todo", kind="work_state", text='["a"]')
    first = contract_store.put_work_state(todo)
    other = contract_store.put_work_state(
        memory("later", key="work:later", kind="work_state", text='["x"]')
    )
    onto = replace(todo, title="later", text='["b"]', dedupe_key="work:later", created_at=T0 + 5)
    assert contract_store.rename_work_state("work:todo", onto, audit(T0 + 5)) == "taken"
    gone = replace(onto, dedupe_key="work:new")
    assert contract_store.rename_work_state("work:none", gone, audit(T0 + 8)) == "missing"
    contract_store.set_dismissed("memories", first, T0 + 9, None, audit(T0 + 9, tool="dismiss"))
    assert contract_store.rename_work_state("work:todo", gone, audit(T0 + 10)) == "missing"
    kept, held = contract_store.get_memory(first), contract_store.get_memory(other)
    assert kept is not None and (kept.title, kept.text) == ("todo", '["a"]')
    assert held is not None and (held.title, held.text) == ("later", '["x"]')
    assert contract_store.find_memory("shop", "work:new") is None
    assert [row.tool for row in contract_store.list_audit(10)] == ["dismiss"]


def test_a_rename_onto_a_dismissed_list_brings_it_back_with_the_new_items(
    contract_store: HubStore,
) -> None:
    alpha = memory("alpha list", key="work:alpha", kind="work_state", text='["x"]')
    first = contract_store.put_work_state(alpha)
    assert contract_store.set_pinned(first, True, T0 + 1) is not None
    beta = replace(alpha, title="beta list", dedupe_key="work:beta", created_at=T0 + 2)
    second = contract_store.rename_work_state("work:alpha", beta, audit(T0 + 2))
    back = replace(alpha, text='["x","y"]', created_at=T0 + 3)
    again = contract_store.rename_work_state("work:beta", back, audit(T0 + 3))  # a rename back
    assert again == first and isinstance(second, int)
    restored, gone = contract_store.get_memory(first), contract_store.get_memory(second)
    assert restored is not None and gone is not None
    assert (restored.text, restored.pinned, restored.dismissed_at) == ('["x","y"]', True, None)
    assert (gone.dismissed_at, gone.dismiss_reason) == (T0 + 3, "renamed to alpha")
    lists = contract_store.keyed_memories("shop", "work:", "work_state", 10)
    assert [m.id for m in lists] == [first]


def test_an_episode_collects_requests_until_it_ends(contract_store: HubStore) -> None:
    episode = contract_store.open_episode("uid-1", "shop", "claude-code", T0)
    assert contract_store.open_episode("uid-1", "shop", "claude-code", T0 + 1) == episode
    assert contract_store.episode_id_by_uid("uid-1") == episode
    assert contract_store.episode_id_by_uid("uid-none") is None
    assert contract_store.episode_started_at(episode) == T0  # reopening keeps the start
    assert contract_store.episode_started_at(424_242) is None
    contract_store.add_request(episode, "first ask", T0 + 2)
    contract_store.add_request(episode, "second ask", T0 + 3)
    other = contract_store.start_episode("billing", "codex", T0)
    contract_store.add_request(other, "elsewhere", T0 + 4)
    requests = contract_store.recent_requests("shop", 10)
    assert [(r.text, r.tool) for r in requests] == [
        ("second ask", "claude-code"),
        ("first ask", "claude-code"),
    ]
    assert contract_store.end_episode(episode, T0 + 9, "did things")
    assert not contract_store.end_episode(424_242, T0, None)


def test_an_episode_knows_the_memories_its_session_saved(contract_store: HubStore) -> None:
    episode = contract_store.open_episode("uid-1", "shop", "claude-code", T0)
    other = contract_store.open_episode("uid-2", "shop", "claude-code", T0)
    first, _ = contract_store.add_memory(memory("edited a.py", kind="observation"))
    second, _ = contract_store.add_memory(memory("edited b.py", kind="observation", at=T0 + 1))
    summary, _ = contract_store.add_memory(memory("Session: a and b", kind="summary", at=T0 + 2))
    for memory_id in (summary.id, second.id, first.id, first.id):  # saved again: no change
        contract_store.link_episode_memory(episode, memory_id)
    contract_store.link_episode_memory(other, first.id)
    assert contract_store.episode_memory_ids(episode, "observation", 10) == [first.id, second.id]
    assert contract_store.episode_memory_ids(episode, "observation", 1) == [first.id]
    assert contract_store.episode_memory_ids(episode, "summary", 10) == [summary.id]
    assert contract_store.episode_memory_ids(other, "observation", 10) == [first.id]
    assert contract_store.episode_memory_ids(other, "summary", 10) == []
    assert contract_store.episode_memory_ids(424_242, "observation", 10) == []


def test_an_episode_s_requests_are_its_own_oldest_first(contract_store: HubStore) -> None:
    episode = contract_store.open_episode("uid-1", "shop", "claude-code", T0)
    other = contract_store.open_episode("uid-2", "shop", "codex", T0)
    contract_store.add_request(episode, "first ask", T0 + 1)
    for number in range(5):
        contract_store.add_request(other, f"other {number}", T0 + 2 + number)
    contract_store.add_request(episode, "second ask", T0 + 9)
    requests = contract_store.episode_requests(episode, 10)
    assert [(r.text, r.tool) for r in requests] == [
        ("first ask", "claude-code"),
        ("second ask", "claude-code"),
    ]
    assert [r.text for r in contract_store.episode_requests(episode, 1)] == ["first ask"]
    assert contract_store.episode_requests(424_242, 10) == []
    contract_store.set_dismissed("episodes", episode, T0 + 10, None, audit(T0 + 10))
    assert contract_store.episode_requests(episode, 10) == []  # as recent_requests: hidden


def test_a_retired_summary_is_dismissed_only_when_no_other_episode_links_it(
    contract_store: HubStore,
) -> None:
    first = contract_store.open_episode("uid-1", "shop", "claude-code", T0)
    second = contract_store.open_episode("uid-2", "shop", "claude-code", T0)
    shared, _ = contract_store.add_memory(memory("Session: run the tests", kind="summary"))
    for episode in (first, second):
        contract_store.link_episode_memory(episode, shared.id)
    entry = AuditEntry(T0 + 1, "claude-code", "dismiss_memory", None, "ok", "went on")
    assert not contract_store.retire_episode_memory(first, shared.id, T0 + 1, "went on", entry)
    assert contract_store.episode_memory_ids(first, "summary", 10) == []
    assert contract_store.episode_memory_ids(second, "summary", 10) == [shared.id]
    assert contract_store.dismissed_memory_ids([shared.id]) == set()
    assert contract_store.retire_episode_memory(second, shared.id, T0 + 2, "went on", entry)
    hidden = contract_store.search_memories(MemoryQuery(dismissed=True), T0)
    assert [(m.id, m.dismissed_at, m.dismiss_reason) for m in hidden] == [
        (shared.id, T0 + 2, "went on")
    ]
    assert [(a.actor, a.tool, a.project, a.detail) for a in contract_store.list_audit(5)] == [
        ("claude-code", "dismiss_memory", "shop", "went on")
    ]


def test_retiring_a_dismissed_summary_keeps_its_dismissal(contract_store: HubStore) -> None:
    episode = contract_store.open_episode("uid-1", "shop", "claude-code", T0)
    saved, _ = contract_store.add_memory(memory("Session: a silly idea", kind="summary"))
    contract_store.link_episode_memory(episode, saved.id)
    contract_store.set_dismissed("memories", saved.id, T0 + 1, "noise", audit(T0 + 1))
    entry = AuditEntry(T0 + 2, "claude-code", "dismiss_memory", None, "ok")
    assert not contract_store.retire_episode_memory(episode, saved.id, T0 + 2, "went on", entry)
    hidden = contract_store.search_memories(MemoryQuery(dismissed=True), T0)
    assert [(m.dismissed_at, m.dismiss_reason) for m in hidden] == [(T0 + 1, "noise")]


def test_dismissing_hides_an_item_audits_it_and_restoring_brings_it_back(
    contract_store: HubStore,
) -> None:
    saved, _ = contract_store.add_memory(memory("to hide"))
    entry = AuditEntry(T0 + 1, "cli", "dismiss", None, "ok", "wrong")
    assert contract_store.set_dismissed("memories", saved.id, T0 + 1, "wrong", entry) == "shop"
    assert contract_store.dismissed_memory_ids([saved.id]) == {saved.id}
    assert contract_store.count_memories(None) == 0
    hidden = contract_store.search_memories(MemoryQuery(dismissed=True), T0)
    assert [(m.id, m.dismiss_reason) for m in hidden] == [(saved.id, "wrong")]
    (row,) = contract_store.list_audit(10)
    assert (row.tool, row.project) == ("dismiss", "shop")  # the item's project is filled in
    assert row.detail == "wrong"  # the reason, in the same transaction
    assert contract_store.set_dismissed("memories", saved.id, None, None, entry) == "shop"
    assert contract_store.dismissed_memory_ids([saved.id]) == set()
    assert contract_store.set_dismissed("memories", 424_242, T0, None, entry) is None
    assert len(contract_store.list_audit(10)) == 2


def test_restoring_an_item_that_is_not_dismissed_changes_nothing_but_is_audited(
    contract_store: HubStore,
) -> None:
    """No new sync version: it would undo an edit made elsewhere meanwhile (a dismissal)."""
    saved, _ = contract_store.add_memory(memory("never hidden"))
    before = _changes(contract_store)
    entry = AuditEntry(T0 + 1, "cli", "restore", None, "ok")
    assert contract_store.set_dismissed("memories", saved.id, None, None, entry) == "shop"
    assert _changes(contract_store) == before
    assert [row.tool for row in contract_store.list_audit(10)] == ["restore"]


def test_a_call_that_changes_nothing_is_audited_with_its_unchanged_detail(
    contract_store: HubStore,
) -> None:
    saved, _ = contract_store.add_memory(memory("hidden twice"))
    calls: list[tuple[int | None, str | None]] = [
        (None, None),  # not dismissed: nothing to restore
        (T0 + 1, "why"),
        (T0 + 2, "why"),  # the same reason again
        (T0 + 3, None),  # no reason given: the item keeps its own
        (T0 + 4, "other"),  # a new reason: still nothing changes, the first one stays
        (None, None),
    ]
    for at, reason in calls:
        entry = AuditEntry(T0, "cli", "dismiss" if at else "restore", None, "ok", reason)
        project = contract_store.set_dismissed(
            "memories", saved.id, at, reason, entry, unchanged_detail="nothing changed"
        )
        assert project == "shop"
        if at == T0 + 4:
            dismissed = contract_store.get_memory(saved.id)
            assert dismissed is not None
            assert (dismissed.dismissed_at, dismissed.dismiss_reason) == (T0 + 1, "why")
    rows = [(row.tool, row.detail) for row in reversed(contract_store.list_audit(10))]
    assert rows == [
        ("restore", "nothing changed"),
        ("dismiss", "why"),
        ("dismiss", "nothing changed"),
        ("dismiss", "nothing changed"),
        ("dismiss", "nothing changed"),
        ("restore", None),
    ]


def test_a_dismissal_not_kept_is_taken_over_with_the_new_reason(contract_store: HubStore) -> None:
    """keep_reason false (a summary its session replaced): the user's dismissal owns it."""
    saved, _ = contract_store.add_memory(memory("replaced by the session"))
    entry = AuditEntry(T0, "hook", "dismiss", None, "ok", "the session went on: #2")
    contract_store.set_dismissed("memories", saved.id, T0, "the session went on: #2", entry)
    entry = AuditEntry(T0 + 1, "cli", "dismiss", None, "ok", "wrong")
    contract_store.set_dismissed("memories", saved.id, T0 + 1, "wrong", entry, keep_reason=False)

    taken = contract_store.get_memory(saved.id)
    assert taken is not None
    assert (taken.dismissed_at, taken.dismiss_reason) == (T0, "wrong")


def _changes(store: HubStore) -> tuple[int, int]:
    """The end of the store's change log, and how many changes it holds."""
    page = store.export_changes(
        after=0, limit=1000, max_bytes=10**7, local_only=False, exclude_origin=None,
        projects=None,
    )  # fmt: skip
    return page.cursor, len(page.records)


def test_a_dismissed_fact_counts_as_dismissed_not_superseded(contract_store: HubStore) -> None:
    stated, _ = contract_store.add_fact(fact("db", "host", "alpha"))
    entry = AuditEntry(T0, "cli", "dismiss", None, "ok")
    assert contract_store.dismissed_fact_ids([stated.id]) == set()
    assert contract_store.set_dismissed("facts", stated.id, T0, None, entry) == "shop"
    assert contract_store.dismissed_fact_ids([stated.id], since=T0) == {stated.id}
    assert contract_store.dismissed_fact_ids([stated.id], since=T0 + 1) == set()
    assert contract_store.dismissed_fact_ids([]) == set()
    assert contract_store.superseded_fact_ids([stated.id], now=T0) == set()
    assert contract_store.project_of("facts", stated.id) == "shop"
    assert contract_store.project_of("episodes", 424_242) is None


def test_the_audit_trail_reads_newest_first_and_filters(contract_store: HubStore) -> None:
    contract_store.add_audit(audit(T0, actor="ci"))
    contract_store.add_audit(audit(T0 + 2, actor="ops", tool="search", result="refused"))
    contract_store.add_audit(audit(T0 + 1, actor="ci", tool="search"))
    assert [e.at for e in contract_store.list_audit(10)] == [T0 + 2, T0 + 1, T0]
    assert [e.at for e in contract_store.list_audit(1)] == [T0 + 2]
    page = contract_store.list_audit_page(10, "ci", "search")
    assert [e.at for e in page] == [T0 + 1]
    refused = contract_store.list_audit_page(10, None, None, "shop", "refused")
    assert [e.actor for e in refused] == ["ops"]
    assert contract_store.last_audit_by_actor() == {"ci": T0 + 1, "ops": T0 + 2}


def test_a_page_of_the_audit_trail_says_how_many_match_and_keeps_its_bound(
    contract_store: HubStore,
) -> None:
    """The hub's Audit page pages to older rows: a page from an offset, the count of matching
    rows, and their highest id, which bounds the later pages while new rows are written."""
    for n in range(5):  # at T0+n, the oldest first; project "shop", then "api", alternately
        entry = audit(T0 + n, actor="ci" if n % 2 else "ops")
        contract_store.add_audit(replace(entry, project="shop" if n % 2 else "api"))
    contract_store.add_audit(AuditEntry(T0 + 9, "anonymous", "auth", None, "refused"))
    first = contract_store.audit_page(AuditQuery(limit=2))
    assert (first.total, first.offset) == (6, 0)
    assert [row.at for row in first.rows] == [T0 + 9, T0 + 4]
    assert first.newest_id > 0
    contract_store.add_audit(audit(T0 + 20, actor="ci"))  # written after the first page
    second = contract_store.audit_page(AuditQuery(limit=2, offset=2, upto=first.newest_id))
    assert (second.total, second.offset) == (6, 2)
    assert [row.at for row in second.rows] == [T0 + 3, T0 + 2]
    assert contract_store.audit_page(AuditQuery(limit=2)).total == 7  # read anew: the new row
    past = contract_store.audit_page(AuditQuery(limit=2, offset=50, upto=first.newest_id))
    assert past.offset == 5 and [row.at for row in past.rows] == [T0]  # past the end: the last
    ci = contract_store.audit_page(AuditQuery(limit=10, actor="ci", upto=first.newest_id))
    assert ci.total == 2 and [row.at for row in ci.rows] == [T0 + 3, T0 + 1]
    shop = contract_store.audit_page(AuditQuery(limit=10, projects=("shop", "web")))
    assert [row.at for row in shop.rows] == [T0 + 20, T0 + 3, T0 + 1]  # never a row of none
    refused = contract_store.audit_page(AuditQuery(limit=10, tool="auth", result="refused"))
    assert [row.actor for row in refused.rows] == ["anonymous"]
    nothing = contract_store.audit_page(AuditQuery(limit=10, projects=()))
    assert (nothing.total, nothing.offset, nothing.rows, nothing.newest_id) == (0, 0, [], 0)
