"""``worklists.list_index`` (what ``aletheia lists list`` shows): the live lists the
work_state_write tool made, in one project or several, the latest write first, on each store."""

from __future__ import annotations

from aletheia_mem.domain import worklists
from aletheia_mem.storage.contracts import HubStore
from tests.conftest import FakeClock, ToolCaller


def test_the_index_holds_each_live_list_with_its_count_the_latest_first(
    store: HubStore, clock: FakeClock, call: ToolCaller
) -> None:
    call("work_state_write", list="todo", items=["ship docs", {"task": "b", "done": False}])
    clock.advance(1000)
    call("work_state_write", list="later", items=["3", 3, True], project="other")
    clock.advance(1000)
    call("work_state_write", list="empty", items=[])
    clock.advance(1000)
    call("work_state_write", list="gone", items=["x"])
    call("dismiss_memory", id=4, reason="done")

    index = worklists.list_index(store, ("shop", "other"), 10)
    assert [(s.name, s.project, s.items) for s in index] == [
        ("empty", "shop", 0),
        ("later", "other", 3),
        ("todo", "shop", 2),
    ]
    assert [s.updated_at for s in index] == [clock.now - 1000, clock.now - 2000, clock.now - 3000]
    assert [s.name for s in worklists.list_index(store, ("shop",), 10)] == ["empty", "todo"]
    assert [s.name for s in worklists.list_index(store, ("shop", "other"), 2)] == [
        "empty",
        "later",
    ]
    assert worklists.list_index(store, ("nowhere",), 10) == []


def test_a_rewrite_moves_a_list_first_and_keeps_its_id(
    store: HubStore, clock: FakeClock, call: ToolCaller
) -> None:
    call("work_state_write", list="todo", items=["a"])
    clock.advance(1000)
    call("work_state_write", list="plan", items=["b"])
    clock.advance(1000)
    call("work_state_write", list="todo", items=["a", "c"])
    index = worklists.list_index(store, ("shop",), 10)
    assert [(s.name, s.id, s.items) for s in index] == [("todo", 1, 2), ("plan", 2, 1)]
