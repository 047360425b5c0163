"""FactStore and RuleStore: facts over time, standing rules."""

from __future__ import annotations

from aletheia_mem.storage.contracts import HubStore
from tests.storage.contract.rows import T0, audit, fact, memory, rule


def test_the_same_value_again_keeps_the_current_fact(contract_store: HubStore) -> None:
    first, created = contract_store.add_fact(fact("db", "host", "alpha"))
    again, created_again = contract_store.add_fact(fact("DB ", "Host", "alpha", at=T0 + 1))
    assert created and not created_again and again == first
    assert contract_store.get_fact(first.id) == first


def test_a_new_value_supersedes_the_current_fact(contract_store: HubStore) -> None:
    old, _ = contract_store.add_fact(fact("db", "host", "alpha", at=T0))
    new, created = contract_store.add_fact(fact("db", "host", "beta", at=T0 + 10))
    assert created and new.valid_to is None and new.superseded_by is None
    closed = contract_store.get_fact(old.id)
    assert closed is not None and closed.valid_to == T0 + 10 and closed.superseded_by == new.id
    assert contract_store.superseded_fact_ids([old.id, new.id], now=T0 + 10) == {old.id}
    assert [f.id for f in contract_store.facts_about("DB", "shop", None)] == [new.id, old.id]
    assert [f.id for f in contract_store.current_facts("shop", 10, T0 + 10)] == [new.id]


def test_fact_project_names_are_the_projects_holding_facts_by_name(
    contract_store: HubStore,
) -> None:
    assert contract_store.fact_project_names() == []
    contract_store.add_memory(memory("a memory, no fact", project="notes"))
    for project in ("zz", "factonly", "zz", "billing"):
        contract_store.add_fact(fact("svc", "owner", project, project=project))
    assert contract_store.fact_project_names() == ["billing", "factonly", "zz"]
    assert contract_store.fact_project_names(limit=2) == ["billing", "factonly"]
    assert contract_store.fact_project_names(starting="f") == ["factonly"]
    assert contract_store.fact_project_names(starting="zzz") == []


def test_the_newest_current_facts_of_many_projects_in_one_read(contract_store: HubStore) -> None:
    old, _ = contract_store.add_fact(fact("db", "host", "alpha", project="zz"))
    new, _ = contract_store.add_fact(fact("db", "host", "beta", project="zz", at=T0 + 10))
    other, _ = contract_store.add_fact(fact("svc", "owner", "al", project="factonly", at=T0 + 5))
    planned, _ = contract_store.add_fact(fact("svc", "port", "1", project="p01", at=T0 + 99))
    now = T0 + 20
    found = contract_store.newest_current_facts(None, 10, now)
    assert [f.id for f in found] == [new.id, other.id]  # not the superseded or planned ones
    assert [f.id for f in contract_store.newest_current_facts(None, 1, now)] == [new.id]
    only = contract_store.newest_current_facts(("factonly", "p01"), 10, now)
    assert [f.id for f in only] == [other.id] and old.id != planned.id


def test_a_history_page_of_the_dismissed_facts_only(contract_store: HubStore) -> None:
    kept, _ = contract_store.add_fact(fact("db", "host", "alpha"))
    hidden, _ = contract_store.add_fact(fact("db", "port", "5432", at=T0 + 1))
    contract_store.set_dismissed(
        "facts", hidden.id, T0 + 2, "wrong", audit(T0 + 2, tool="dismiss_memory")
    )
    args = {"offset": 0, "limit": 10, "now": T0 + 5}
    live = contract_store.fact_history_page("db", ("shop",), None, **args)
    gone = contract_store.fact_history_page("db", ("shop",), None, dismissed=True, **args)
    assert [f.id for f in live.facts] == [kept.id] and live.total == 1
    assert [f.id for f in gone.facts] == [hidden.id] and gone.total == 1


def test_facts_about_a_subject_filter_by_project_and_predicate(contract_store: HubStore) -> None:
    host, _ = contract_store.add_fact(fact("db", "host", "alpha"))
    port, _ = contract_store.add_fact(fact("db", "port", "5432", at=T0 + 1))
    contract_store.add_fact(fact("db", "host", "gamma", project="billing"))
    assert {f.id for f in contract_store.facts_about("db", "shop", None)} == {host.id, port.id}
    assert [f.id for f in contract_store.facts_about("db", "shop", "PORT")] == [port.id]
    assert len(contract_store.facts_about("db", None, "host")) == 2


def test_a_page_of_a_history_is_read_in_the_store_as_facts_about_orders_it(
    contract_store: HubStore,
) -> None:
    for n in range(7):  # host: values 0 to 6, each superseding the one before
        contract_store.add_fact(fact("db", "host", f"h{n}", at=T0 + n * 10))
    port, _ = contract_store.add_fact(fact("db", "port", "5432", at=T0 + 5))
    contract_store.add_fact(fact("db", "host", "far", project="billing", at=T0 + 1))
    planned, _ = contract_store.add_fact(fact("db", "host", "next", at=T0 + 1000))
    whole = [f.id for f in contract_store.facts_about("db", "shop", None)]
    now = T0 + 100
    page = contract_store.fact_history_page("DB", ("shop",), None, offset=2, limit=3, now=now)
    assert (page.total, page.offset) == (len(whole), 2) == (9, 2)
    assert [f.id for f in page.facts] == whole[2:5]
    host_now = contract_store.facts_about("db", "shop", "host")[1]  # h6, until "next" starts
    assert {f.id for f in page.current} == {host_now.id, port.id}  # not the planned one yet
    assert planned.id not in {f.id for f in page.current}
    past = contract_store.fact_history_page("db", ("shop",), None, offset=99, limit=3, now=now)
    assert (past.offset, [f.id for f in past.facts]) == (8, whole[8:])  # the oldest fact
    hosts = contract_store.fact_history_page("db", None, "Host", offset=0, limit=50, now=now)
    assert hosts.total == 9 and {f.project for f in hosts.facts} == {"shop", "billing"}
    none = contract_store.fact_history_page("db", (), None, offset=0, limit=50, now=now)
    assert (none.total, none.offset, none.facts, none.current) == (0, 0, [], [])


def test_a_page_of_a_history_bounded_by_an_id_leaves_out_the_facts_recorded_after_it(
    contract_store: HubStore,
) -> None:
    ids = [contract_store.add_fact(fact("api", "url", f"u{n}", at=T0 + n))[0].id for n in range(5)]
    contract_store.add_fact(fact("other", "url", "elsewhere", at=T0 + 9))  # another subject
    now = T0 + 100
    first = contract_store.fact_history_page("api", None, None, offset=0, limit=2, now=now)
    assert [f.id for f in first.facts] == ids[:-3:-1] and first.newest_id == ids[-1]
    latest, _ = contract_store.add_fact(fact("api", "url", "u5", at=T0 + 50))
    older = contract_store.fact_history_page(
        "api", None, None, offset=2, limit=2, now=now, upto=first.newest_id
    )
    assert (older.total, older.newest_id) == (5, ids[-1])
    assert [f.id for f in older.facts] == [ids[2], ids[1]]  # not pushed down by the new one
    assert latest.id not in {f.id for f in older.current}
    anew = contract_store.fact_history_page("api", None, None, offset=2, limit=2, now=now)
    assert (anew.total, anew.newest_id, anew.facts[0].id) == (6, latest.id, ids[3])
    empty = contract_store.fact_history_page("none", None, None, offset=0, limit=2, now=now)
    assert (empty.total, empty.newest_id) == (0, 0)


def test_fact_search_finds_current_facts_by_their_words(contract_store: HubStore) -> None:
    contract_store.add_fact(fact("cache", "backend", "redis", at=T0))
    current, _ = contract_store.add_fact(fact("cache", "backend", "memcached", at=T0 + 1))
    contract_store.add_fact(fact("queue", "backend", "rabbit", project="billing"))
    found = contract_store.search_facts(["cache"], ("shop",), 10, T0 + 10)
    assert [f.id for f in found] == [current.id]
    assert contract_store.search_facts(["rabbit"], ("shop",), 10, T0 + 10) == []
    assert len(contract_store.search_facts(["backend"], None, 10, T0 + 10)) == 2


def test_facts_saved_with_a_memory_point_to_it(contract_store: HubStore) -> None:
    saved, _ = contract_store.add_memory(memory("db notes"), facts=[fact("db", "host", "alpha")])
    (stated,) = contract_store.facts_about("db", "shop", "host")
    assert stated.memory_id == saved.id
    assert contract_store.existing_fact_ids([stated.id, 424_242]) == {stated.id}


def test_a_rule_is_added_once_and_listed_in_order(contract_store: HubStore) -> None:
    first, created = contract_store.add_rule(rule("r_1", "use tabs"))
    again, created_again = contract_store.add_rule(rule("r_1", "use tabs", at=T0 + 1))
    contract_store.add_rule(rule("r_2", "run tests", at=T0 + 2))
    assert created and not created_again and again == first
    assert contract_store.get_rule("r_1") == first
    assert contract_store.get_rule("r_none") is None
    assert [r.id for r in contract_store.list_rules()] == ["r_1", "r_2"]


def test_rules_listed_up_to_a_bound_leave_out_a_later_insert_however_old(
    contract_store: HubStore,
) -> None:
    assert contract_store.newest_rule_seq() == 0
    contract_store.add_rule(rule("r_1", "use tabs", at=T0 + 10))
    contract_store.add_rule(rule("r_2", "run tests", at=T0 + 20))
    bound = contract_store.newest_rule_seq()
    contract_store.add_rule(rule("r_0", "older, taken in later", at=T0))  # as a pull keeps it
    assert [r.id for r in contract_store.list_rules(upto=bound)] == ["r_1", "r_2"]
    assert [r.id for r in contract_store.list_rules()] == ["r_0", "r_1", "r_2"]
    assert contract_store.newest_rule_seq() > bound
    assert contract_store.set_rule_enabled("r_1", False, T0 + 30)  # a change keeps its place
    listed = contract_store.list_rules(enabled_only=False, upto=bound)
    assert [r.id for r in listed] == ["r_1", "r_2"]


def test_a_disabled_rule_is_hidden_and_adding_it_again_enables_it(
    contract_store: HubStore,
) -> None:
    contract_store.add_rule(rule("r_1", "use tabs"))
    assert contract_store.set_rule_enabled("r_1", False, T0 + 1)
    assert contract_store.list_rules() == []
    assert [r.id for r in contract_store.list_rules(enabled_only=False)] == ["r_1"]
    _, created = contract_store.add_rule(rule("r_1", "use tabs", at=T0 + 2))
    assert created and [r.id for r in contract_store.list_rules()] == ["r_1"]
    assert not contract_store.set_rule_enabled("r_none", True, T0)


def test_confirming_a_rule_moves_its_last_confirmation(contract_store: HubStore) -> None:
    contract_store.add_rule(rule("r_1", "use tabs"))
    assert contract_store.confirm_rule("r_1", T0 + 99)
    confirmed = contract_store.get_rule("r_1")
    assert confirmed is not None and confirmed.last_confirmed_at == T0 + 99
    assert not contract_store.confirm_rule("r_none", T0)
