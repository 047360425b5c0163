"""Rules for every project reach a store that syncs with a project-limited token, over a real
hub on both stores; such a token cannot write them, and sees no item of another project through
a rule's evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories, rules
from tests.hub.helpers import Hub, running_hub, store_of
from tests.hub.sync_helpers import items_at
from tests.hub.test_sync_e2e import open_store, run_sync
from tests.stores import rows_at

pytestmark = pytest.mark.e2e
WIDE = "Never force-push main"
NARROW = "Ship behind a flag"


def _seed_admin(folder: Path) -> dict[str, str]:
    """The admin's machine: a shop and a billing note, a rule for every project and one for a
    situation citing both, a billing rule, and a shop rule citing both notes."""
    store = open_store(folder)
    try:
        ids, uids = {}, {}
        for project in ("shop", "billing"):
            item = memories.MemoryInput(f"{project} invoices close on the 5th", project, "t")
            memory, _ = memories.save_memory(store, system_clock, item)
            ids[project], uids[project] = memory.id, memory.uid
        both = [ids["shop"], ids["billing"]]
        made = {}
        for then, tier, name, cited in (
            (WIDE, "everywhere", "", both),
            ("Run migrations twice", "situation", "deploys", both),
            ("Round cents down", "project", "billing", [ids["billing"]]),
            (NARROW, "project", "shop", both),
        ):
            rule, _ = rules.add_rule(
                store, rules.RuleInput(then, "always", tier, name, cited, [], "admin"), 1
            )
            made[then] = rule.id
        return {**made, "shop_uid": uids["shop"], "billing_uid": uids["billing"]}
    finally:
        store.close()


def _synced(folder: Path, hub: Hub, *args: str) -> str:
    done = run_sync(folder, "--hub", hub.url, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _rules_at(target: Path | str) -> dict[str, tuple[str, str, int]]:
    rows = rows_at(target, "SELECT id, scope_tier, scope_name, enabled FROM rules")
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def test_a_project_limited_token_pulls_rules_for_every_project_and_no_other_project(
    tmp_path: Path, hub_db: Path | str
) -> None:
    admin, dave = tmp_path / "admin", tmp_path / "dave"
    admin.mkdir()
    dave.mkdir()
    seeds = _seed_admin(admin)
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        _synced(admin, hub, "--token", hub.token("admin", None, "carol"))
        shop = hub.token("sync", ("shop",), "dave")
        _synced(dave, hub, "--token", shop)
        raw = hub.post("/sync/pull", {"store_id": store_of(shop), "cursor": 0}, shop)
    held = _rules_at(dave / "aletheia.db")
    assert held == {
        seeds[WIDE]: ("everywhere", "", 1),
        seeds["Run migrations twice"]: ("situation", "deploys", 1),
        seeds[NARROW]: ("project", "shop", 1),
    }
    pulled = items_at(dave / "aletheia.db")
    assert {data["project"] for (kind, _), data in pulled.items() if kind == "memory"} == {"shop"}
    for rule in (WIDE, "Run migrations twice", NARROW):  # only the evidence dave may read
        assert pulled[("rule", seeds[rule])]["evidence_memories"] == [seeds["shop_uid"]]
    # Nothing of billing in what the hub answers that token, not even a global id.
    assert raw.status == 200
    assert seeds["billing_uid"] not in json.dumps(raw.body)
    assert "billing" not in json.dumps(raw.body)
    # The hub keeps every rule's whole evidence.
    wide = items_at(hub_db)[("rule", seeds[WIDE])]
    assert sorted(wide["evidence_memories"]) == sorted([seeds["shop_uid"], seeds["billing_uid"]])


def test_a_project_limited_token_cannot_write_a_rule_for_every_project(
    tmp_path: Path, hub_db: Path | str
) -> None:
    admin, dave = tmp_path / "admin", tmp_path / "dave"
    admin.mkdir()
    dave.mkdir()
    seeds = _seed_admin(admin)
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        _synced(admin, hub, "--token", hub.token("admin", None, "carol"))
        shop = hub.token("sync", ("shop",), "dave")
        _synced(dave, hub, "--token", shop)
        before = rows_at(hub_db, "SELECT * FROM rules ORDER BY id")
        wide = items_at(hub_db)[("rule", seeds[WIDE])]
        later = system_clock()
        attacks = [  # a new rule for every project, and the admin's disabled or re-authored
            {
                "then": "Push to main directly",
                "when": "always",
                "scope_tier": "everywhere",
                "scope_name": "",
                "evidence_memories": [],
                "evidence_facts": [],
                "source": "carol/codex",
                "added_at": later,
                "last_confirmed_at": later,
                "enabled": True,
                "updated_at": later,
            },
            {**wide, "enabled": False, "updated_at": later},
            {**wide, "evidence_memories": [], "last_confirmed_at": later},
        ]
        for data in attacks:
            key = rules.rule_id(data["then"], data["when"], data["scope_tier"], "")
            reply = hub.push(shop, [{"kind": "rule", "key": key, "v": [later, ""], "data": data}])
            assert reply.status == 403, reply.body
            assert reply.body["error"]["message"] == (
                'scope_tier "everywhere" is not allowed for this token.'
            )
        # Dave disables the rule on his machine: it stays there, the hub's is untouched.
        local = open_store(dave)
        try:
            local.set_rule_enabled(seeds[WIDE], False, system_clock())
        finally:
            local.close()
        said = _synced(dave, hub)
        assert "1 rule(s) for every project or a situation stay on this machine" in said
        assert rows_at(hub_db, "SELECT * FROM rules ORDER BY id") == before


def test_a_limited_tokens_change_keeps_the_evidence_it_cannot_see(
    tmp_path: Path, hub_db: Path | str
) -> None:
    admin, dave = tmp_path / "admin", tmp_path / "dave"
    admin.mkdir()
    dave.mkdir()
    seeds = _seed_admin(admin)
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        _synced(admin, hub, "--token", hub.token("admin", None, "carol"))
        _synced(dave, hub, "--token", hub.token("sync", ("shop",), "dave"))
        local = open_store(dave)
        try:
            rules.confirm_rule(local, seeds[NARROW], system_clock() + 1000, ("shop",))
        finally:
            local.close()
        assert "pushed 1 item(s)" in _synced(dave, hub)
        at_hub = items_at(hub_db)[("rule", seeds[NARROW])]
        assert at_hub["last_confirmed_at"] > 1  # dave's confirmation arrived
        assert sorted(at_hub["evidence_memories"]) == sorted(
            [seeds["shop_uid"], seeds["billing_uid"]]
        )
        _synced(admin, hub)  # and the admin's machine keeps the billing note cited too
    at_admin = items_at(admin / "aletheia.db")[("rule", seeds[NARROW])]
    assert at_admin == at_hub
