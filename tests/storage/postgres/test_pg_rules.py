"""Rules on PostgreSQL: one row per content id, enabled, disabled and confirmed."""

from __future__ import annotations

from dataclasses import replace

from aletheia_mem.domain.rules import rule_id
from aletheia_mem.storage.entries import Rule
from aletheia_mem.storage.postgres.store import PostgresStore


def _rule(then: str, added_at: int = 1_000, tier: str = "project", name: str = "web") -> Rule:
    return Rule(
        id=rule_id(then, "", tier, name),
        then=then,
        when="",
        scope_tier=tier,
        scope_name=name,
        evidence_memory_ids=(3, 1),
        evidence_fact_ids=(7,),
        source="agent",
        added_at=added_at,
        last_confirmed_at=added_at,
        enabled=True,
    )


def test_a_new_rule_is_stored_and_read_back_whole(pg_store: PostgresStore) -> None:
    rule = _rule("Use tabs")
    assert pg_store.add_rule(rule) == (rule, True)
    assert pg_store.get_rule(rule.id) == rule


def test_the_identical_rule_again_is_not_a_second_row(pg_store: PostgresStore) -> None:
    rule = _rule("Use tabs")
    pg_store.add_rule(rule)
    again, created = pg_store.add_rule(replace(rule, added_at=9_000))
    assert (again, created) == (rule, False)
    assert pg_store.list_rules() == [rule]


def test_adding_a_disabled_rule_again_enables_it(pg_store: PostgresStore) -> None:
    rule = _rule("Use tabs")
    pg_store.add_rule(rule)
    assert pg_store.set_rule_enabled(rule.id, False, at=2_000) is True
    assert pg_store.list_rules() == []
    stored, created = pg_store.add_rule(replace(rule, added_at=3_000))
    assert created is True and stored.id == rule.id
    assert pg_store.get_rule(rule.id) == rule


def test_rules_list_in_the_order_added_and_disabled_ones_on_request(
    pg_store: PostgresStore,
) -> None:
    first, second, third = _rule("b", 1_000), _rule("a", 2_000), _rule("c", 2_000)
    for rule in (first, second, third):
        pg_store.add_rule(rule)
    pg_store.set_rule_enabled(second.id, False, at=5_000)
    assert pg_store.list_rules() == [first, third]
    assert [rule.then for rule in pg_store.list_rules(enabled_only=False)] == ["b", "a", "c"]


def test_confirm_moves_last_confirmed_and_says_whether_the_rule_exists(
    pg_store: PostgresStore,
) -> None:
    rule = _rule("Use tabs")
    pg_store.add_rule(rule)
    assert pg_store.confirm_rule(rule.id, at=7_000) is True
    found = pg_store.get_rule(rule.id)
    assert found is not None and found.last_confirmed_at == 7_000
    assert pg_store.confirm_rule("nope", at=7_000) is False
    assert pg_store.set_rule_enabled("nope", True, at=7_000) is False
    assert pg_store.get_rule("nope") is None
