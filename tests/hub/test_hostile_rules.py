"""A teammate whose token is limited to `shop` attacks the other projects' rules, over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories, rules
from tests.hub.helpers import Hub, running_hub
from tests.hub.sync_helpers import items_at
from tests.stores import open_target, rows_at

pytestmark = pytest.mark.e2e
REFUSED = "is not allowed for this token."


def _seed(db: Path | str) -> dict[str, object]:
    """The admin's rules and a billing memory, in the hub's store before it starts."""
    store = open_target(db)
    try:
        billing, _ = memories.save_memory(
            store, system_clock, memories.MemoryInput("Invoices close on the 5th", "billing", "t")
        )
        wide = rules.RuleInput("Never force-push main", "always", "everywhere", "", [], [], "admin")
        narrow = rules.RuleInput(
            "Round cents down", "always", "project", "billing", [], [], "admin"
        )
        everywhere, _ = rules.add_rule(store, wide, 1)
        billing_rule, _ = rules.add_rule(store, narrow, 1)
        return {"billing_memory": billing.id, "everywhere": everywhere, "billing": billing_rule}
    finally:
        store.close()


@pytest.fixture(scope="module")
def seeded(module_hub_db: Path | str) -> Iterator[tuple[Hub, dict[str, object]]]:
    seeds = _seed(module_hub_db)
    with running_hub(module_hub_db, "--rate-limit", "0") as hub:
        yield hub, seeds


def _shop(hub: Hub, name: str) -> tuple[str, str]:
    token = hub.token("sync", ("shop",), name)
    return token, hub.initialize(token)


def _rule_rows(db: Path | str) -> list[tuple[str, str, str, int, int]]:
    sql = "SELECT id, then_text, source, last_confirmed_at, enabled FROM rules ORDER BY id"
    return rows_at(db, sql)  # type: ignore[return-value]


@pytest.mark.parametrize("tier", ["everywhere", "situation"])
def test_a_project_token_cannot_add_a_rule_beyond_its_projects(
    seeded: tuple[Hub, dict[str, object]], tier: str
) -> None:
    hub, _ = seeded
    token, session = _shop(hub, f"add-{tier}")
    before = _rule_rows(hub.db)
    text, is_error = hub.call_tool(
        token, session, "add_rule", then="Leak nothing", scopeTier=tier, scopeName="billing"
    )
    assert is_error and text.endswith(f'scopeTier "{tier}" {REFUSED}')
    assert _rule_rows(hub.db) == before


def test_a_project_token_still_adds_rules_to_its_own_project(
    seeded: tuple[Hub, dict[str, object]],
) -> None:
    hub, _ = seeded
    token, session = _shop(hub, "add-own")
    text, is_error = hub.call_tool(
        token, session, "add_rule", then="Use pnpm", scopeTier="project", scopeName="shop"
    )
    assert not is_error and text.startswith("Rule saved (r_")


def test_another_projects_evidence_id_is_as_unknown_as_a_missing_one(
    seeded: tuple[Hub, dict[str, object]],
) -> None:
    hub, seeds = seeded
    token, session = _shop(hub, "evidence")
    billing_id = seeds["billing_memory"]
    seen = hub.call_tool(
        token, session, "add_rule", then="x", scopeTier="project", evidence_memory_ids=[billing_id]
    )
    missing = hub.call_tool(
        token, session, "add_rule", then="x", scopeTier="project", evidence_memory_ids=[99999]
    )
    assert seen == (f"Unknown evidence memory id #{billing_id}.", True)
    assert missing == ("Unknown evidence memory id #99999.", True)


def test_a_project_token_cannot_confirm_another_projects_rule_or_learn_it_exists(
    seeded: tuple[Hub, dict[str, object]],
) -> None:
    hub, seeds = seeded
    billing = seeds["billing"]
    everywhere = seeds["everywhere"]
    assert isinstance(billing, rules.Rule) and isinstance(everywhere, rules.Rule)
    token, session = _shop(hub, "confirm")
    before = _rule_rows(hub.db)
    other = hub.call_tool(token, session, "confirm_rule", id=billing.id)
    missing = hub.call_tool(token, session, "confirm_rule", id="r_0123456789")
    wide = hub.call_tool(token, session, "confirm_rule", id=everywhere.id)
    assert other == (f'No rule with id "{billing.id}".', True)
    assert missing == ('No rule with id "r_0123456789".', True)
    assert wide == (
        f'Rule {everywhere.id} applies in every project (scopeTier "everywhere"); this token is'
        " limited to projects, so confirming it is not allowed for this token.",
        True,
    )  # confirm_rule has no scopeTier argument for the message to name
    sql = "SELECT result FROM audit WHERE actor = 'confirm' AND tool = 'confirm_rule' ORDER BY id"
    assert [row[0] for row in rows_at(hub.db, sql)][-1] == "refused"
    assert _rule_rows(hub.db) == before


def test_list_rules_shows_a_project_token_no_other_projects_rule(
    seeded: tuple[Hub, dict[str, object]],
) -> None:
    hub, _ = seeded
    token, session = _shop(hub, "lister")
    text, is_error = hub.call_tool(token, session, "list_rules")
    assert not is_error
    assert "Never force-push main" in text and "Round cents down" not in text


def _rule_record(hub: Hub, rule_id: str) -> dict[str, object]:
    found = items_at(hub.db)[("rule", rule_id)]
    return {"kind": "rule", "key": rule_id, "v": [system_clock(), "f" * 32], "data": found}


def test_pushing_over_the_admins_everywhere_rule_is_refused(
    seeded: tuple[Hub, dict[str, object]],
) -> None:
    hub, seeds = seeded
    everywhere = seeds["everywhere"]
    assert isinstance(everywhere, rules.Rule)
    token = hub.token("sync", ("shop",), "overwriter")
    record = _rule_record(hub, everywhere.id)
    record["data"] = {**record["data"], "source": "admin", "enabled": False}  # type: ignore[dict-item]
    before = _rule_rows(hub.db)
    reply = hub.push(token, [record])
    assert reply.status == 403 and reply.body["error"]["message"].endswith(REFUSED)
    assert _rule_rows(hub.db) == before


def test_pushing_a_disabled_copy_of_another_projects_rule_is_refused(
    seeded: tuple[Hub, dict[str, object]],
) -> None:
    hub, seeds = seeded
    billing = seeds["billing"]
    assert isinstance(billing, rules.Rule)
    token = hub.token("sync", ("shop",), "disabler")
    record = _rule_record(hub, billing.id)
    record["data"] = {**record["data"], "enabled": False}  # type: ignore[dict-item]
    before = _rule_rows(hub.db)
    reply = hub.push(token, [record])
    assert reply.status == 403
    assert _rule_rows(hub.db) == before


def test_an_unrestricted_token_may_add_an_everywhere_rule(
    seeded: tuple[Hub, dict[str, object]],
) -> None:
    hub, _ = seeded
    token = hub.token("sync", None, "lead")
    session = hub.initialize(token)
    text, is_error = hub.call_tool(token, session, "add_rule", then="Write tests first")
    assert not is_error and text.startswith("Rule saved")


def test_pushing_a_rule_that_cites_another_projects_memory_is_refused(
    seeded: tuple[Hub, dict[str, object]],
) -> None:
    hub, _ = seeded
    token = hub.token("sync", ("shop",), "citer")
    [billing_uid] = [
        key for (kind, key), data in items_at(hub.db).items()
        if kind == "memory" and data["project"] == "billing"
    ]  # fmt: skip
    then = "Check invoices before deploys"
    record = _rule_record(
        hub, str(rules.rule_id("Never force-push main", "always", "everywhere", ""))
    )
    key = rules.rule_id(then, "always", "project", "shop")
    data = {**record["data"], "then": then, "scope_tier": "project", "scope_name": "shop"}  # type: ignore[dict-item]
    data["evidence_memories"] = [billing_uid]
    before = _rule_rows(hub.db)
    reply = hub.push(token, [{**record, "key": key, "data": data}])
    assert reply.status == 403
    assert reply.body["error"]["message"] == "A rule's evidence must be in the token's projects."
    assert _rule_rows(hub.db) == before
