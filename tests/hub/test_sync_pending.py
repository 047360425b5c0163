"""References to items a store does not have yet: kept aside, filled in when the items come, and
few per rule from a sender, since an id no item ever takes would wait for good."""

from __future__ import annotations

from typing import Any

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import rules
from aletheia_mem.storage.sync_apply_rules import MAX_WAITING
from tests.hub.test_hostile_sync import memory_record

ORIGIN = "e" * 32


def _rule(cited: list[str], now: int) -> dict[str, Any]:
    data = {
        "then": "Read the cited notes",
        "when": "you deploy",
        "scope_tier": "project",
        "scope_name": "shop",
        "evidence_memories": cited,
        "evidence_facts": [],
        "source": "codex",
        "added_at": now,
        "last_confirmed_at": now,
        "enabled": True,
        "updated_at": now,
    }
    key = rules.rule_id(data["then"], data["when"], "project", "shop")
    return {"kind": "rule", "key": key, "v": [now, ORIGIN], "data": data}


def _exported_rule(store: Any) -> dict[str, Any]:
    page = store.export_changes(
        after=0, limit=100, max_bytes=10**7, local_only=False, exclude_origin=None, projects=None
    )
    return next(r for r in page.records if r["kind"] == "rule")


def test_a_pushed_rule_leaves_few_ids_waiting_and_they_fill_in_when_their_items_come(
    store: Any,
) -> None:
    now = system_clock() - 1000
    cited = [f"u{n:02d}" for n in range(12, 0, -1)]  # 12 ids the hub has no item for
    rule = _rule(cited, now)
    stats = store.apply_changes([rule], projects=("shop",), now=now, author="eve")
    assert stats.merged == 1  # kept otherwise than sent: travels back with the hub's version
    kept = sorted(cited)[:MAX_WAITING]
    exported = _exported_rule(store)
    assert exported["data"]["evidence_memories"] == kept
    assert exported["v"][0] > now
    # the items come in a later page: their references are filled in
    notes = [memory_record(key=key, text=f"note {key}", v=[now, ORIGIN]) for key in kept[:2]]
    store.apply_changes(notes, projects=("shop",), now=now, author="eve")
    [held] = [r for r in store.list_rules() if r.id == rule["key"]]
    assert len(held.evidence_memory_ids) == 2
    assert _exported_rule(store)["data"]["evidence_memories"] == kept


def test_a_pulled_rule_keeps_every_id_waiting(store: Any) -> None:
    """A store pulls a rule before the items it cites (the hub had them): none is dropped."""
    now = system_clock() - 1000
    cited = [f"u{n:02d}" for n in range(30)]
    store.apply_changes([_rule(cited, now)], projects=None, now=now)
    assert _exported_rule(store)["data"]["evidence_memories"] == cited
    notes = [memory_record(key=key, text=f"note {key}", v=[now, ORIGIN]) for key in cited]
    store.apply_changes(notes, projects=None, now=now)
    [held] = store.list_rules()
    assert len(held.evidence_memory_ids) == 30
