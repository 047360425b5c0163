"""A synced peer puts into a hub only what a tool call could: real hub processes (SQLite and
PostgreSQL), plain HTTP pushes as a hostile peer sends them, and a real ``aletheia sync``.

A rule with a blank ``then``, a situation without a name, a project rule of ``*``, a fact
without a subject are refused as the tools refuse them; a blank ``when``, a project's name
in capitals, an episode ending before it started are kept as a tool would have kept them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain.memories import dedupe_key
from aletheia_mem.domain.rules import rule_id
from aletheia_mem.storage.open import open_hub_store
from tests.hub.helpers import Hub, running_hub, uid
from tests.hub.sync_helpers import counts_at, items_at
from tests.hub.test_hostile_sync import ORIGIN, episode_record, memory_record
from tests.hub.test_sync_e2e import run_sync, save_notes

pytestmark = pytest.mark.e2e


def rule_record(
    then: str, when: str = "always", tier: str = "project", name: str = "shop", **changes: Any
) -> dict[str, Any]:
    """A rule record keyed by the id of its text and scope as given (a peer's own rule_id)."""
    now = system_clock()
    data = {
        "then": then, "when": when, "scope_tier": tier, "scope_name": name,
        "evidence_memories": [], "evidence_facts": [], "source": "codex", "added_at": now,
        "last_confirmed_at": now, "enabled": True, "updated_at": now,
    }  # fmt: skip
    data.update(changes)
    return {
        "kind": "rule",
        "key": rule_id(then, when, tier, name),
        "v": [now, ORIGIN],
        "data": data,
    }


def fact_record(key: str, **changes: Any) -> dict[str, Any]:
    now = system_clock()
    data = {
        "project": "shop", "subject": "db", "predicate": "is", "object": "postgres",
        "valid_from": now, "valid_to": None, "recorded_at": now, "superseded_by": None,
        "source": "codex", "memory": None, "dismissed_at": None, "dismiss_reason": None,
    }  # fmt: skip
    data.update(changes)
    return {"kind": "fact", "key": key, "v": [now, ORIGIN], "data": data}


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


# (the token's projects, the record, the problem the hub names)
REFUSED = [
    (("shop",), rule_record(""), "then is required."),
    (("shop",), rule_record("   ", when="you commit"), "then is required."),
    (None, rule_record("Name it", tier="situation", name=""), "scope_name is required when"),
    (None, rule_record("Name it", tier="situation", name="  "), "scope_name is required when"),
    (None, rule_record("Every project", name="*"), 'scope_name "*" is only for search'),
    (None, rule_record("No project", name=""), "scope_name must not be empty."),
    (("shop",), fact_record(uid("blank subject"), subject="  "), "subject is required."),
    (("shop",), fact_record(uid("blank predicate"), predicate=""), "predicate is required."),
    (("shop",), fact_record(uid("blank object"), object="\n"), "object is required."),
]


@pytest.mark.parametrize(("projects", "record", "problem"), REFUSED)
def test_a_pushed_record_a_tool_refuses_is_refused_naming_it_and_its_field(
    hub: Hub, projects: tuple[str, ...] | None, record: dict[str, Any], problem: str
) -> None:
    token = hub.token("sync", projects, f"peer-{abs(hash(json.dumps(record)))}")
    before = counts_at(hub.db)
    reply = hub.push(token, [memory_record(key=uid(f"beside {record['key']}")), record])
    assert reply.status == 400, reply.body
    message = reply.body["error"]["message"]
    assert message.startswith(f"record 1 ({record['kind']} {record['key']}): {problem}"), message
    assert counts_at(hub.db) == before  # nothing of the page applied


def _rule_at_hub(hub: Hub, then: str) -> tuple[str, dict[str, Any]]:
    (found,) = [
        (key, data)
        for (kind, key), data in items_at(hub.db).items()
        if kind == "rule" and data["then"] == then
    ]
    return found


@pytest.mark.parametrize(
    ("projects", "sent", "kept"),
    [
        # a blank situation is add_rule's default one; its words one space apart
        (("shop",), ("Run  the\ttests", "  ", "project", "shop"), ("always", "project", "shop")),
        (("shop",), ("Lint first", "ALWAYS", "project", "shop"), ("always", "project", "shop")),
        # a project's name as its key, as a tool keys it (and then within the token's projects)
        (("shop",), ("Use pnpm", "always", "project", " Shop "), ("always", "project", "shop")),
        (None, ("Be kind", "always", "everywhere", "shop"), ("always", "everywhere", "")),
        (
            None,
            ("Tag it", "you  release", "situation", " a  release "),
            ("you release", "situation", "a release"),
        ),
    ],
)
def test_a_pushed_rule_is_kept_as_add_rule_keeps_it_under_that_rules_id(
    hub: Hub,
    projects: tuple[str, ...] | None,
    sent: tuple[str, str, str, str],
    kept: tuple[str, str, str],
) -> None:
    token = hub.token("sync", projects, f"rule-{abs(hash(sent))}")
    reply = hub.push(token, [rule_record(*sent)])
    assert reply.status == 200, reply.body
    then = " ".join(sent[0].split())
    key, data = _rule_at_hub(hub, then)
    assert (data["when"], data["scope_tier"], data["scope_name"]) == kept
    assert key == rule_id(then, *kept) != rule_id(*sent)


def test_a_pushed_episode_ending_before_it_started_ends_when_it_started(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "episode-backwards")
    record = episode_record(uid("backwards"), [])
    started = record["data"]["started_at"]
    record["data"]["ended_at"] = started - 60_000
    assert hub.push(token, [record]).status == 200
    held = items_at(hub.db)[("episode", uid("backwards"))]
    assert (held["started_at"], held["ended_at"]) == (started, started)


def test_a_pushed_note_without_a_dedupe_key_is_keyed_and_a_save_of_its_words_finds_it(
    hub: Hub,
) -> None:
    token = hub.token("sync", ("shop",), "no-dedupe-key")
    record = memory_record(key=uid("keyless"), title="Keyless", text="Staging is on Fridays")
    assert record["data"]["dedupe_key"] is None
    assert hub.push(token, [record]).status == 200
    held = items_at(hub.db)[("memory", uid("keyless"))]
    assert held["dedupe_key"] == dedupe_key("Keyless", "Staging is on Fridays")
    session = hub.initialize(token)
    text, is_error = hub.call_tool(
        token, session, "save_memory", text="Staging is on Fridays", title="Keyless", project="shop"
    )
    assert not is_error and text.startswith("Already saved as #"), text


def test_a_pushed_text_past_its_length_is_named_by_its_length_not_its_type(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "too-long")
    record = memory_record(key=uid("too long"), text="x" * 200_001)
    reply = hub.push(token, [record])
    assert reply.status == 400, reply.body
    assert reply.body["error"]["message"] == (
        f"record 0 (memory {uid('too long')}): text must be at most 200000 characters."
    )
    record = memory_record(key=uid("long file"), files=["a.py", "f" * 200_001])
    reply = hub.push(token, [record])
    assert reply.body["error"]["message"] == (
        f"record 0 (memory {uid('long file')}): each of files must be at most 200000 characters."
    )


def test_a_rules_waiting_evidence_is_never_filled_in_with_another_projects_item(
    hub: Hub,
) -> None:
    """A shop token cites an id no item has yet; a billing memory that later takes that id is
    not the shop rule's evidence (citing it once known is refused: 403), a shop one is."""
    shop = hub.token("sync", ("shop",), "waiting-shop")
    billing = hub.token("sync", ("billing",), "waiting-billing")
    cited = [uid("billing takes it"), uid("shop takes it")]
    rule = rule_record("Check the invoices", evidence_memories=cited)
    assert hub.push(shop, [rule]).status == 200
    taken = memory_record(key=cited[0], project="billing", text="Invoices close on the 5th")
    assert hub.push(billing, [taken]).status == 200
    assert hub.push(shop, [memory_record(key=cited[1], text="Invoices are in shop/")]).status == 200
    held = items_at(hub.db)
    assert held[("memory", cited[0])]["project"] == "billing"
    assert held[("rule", rule["key"])]["evidence_memories"] == [cited[1]]


def test_a_rule_a_hub_took_with_a_blank_then_is_held_back_on_pull_and_the_sync_goes_on(
    tmp_path: Path, hub_db: Path | str
) -> None:
    """An earlier build took it on push (applied here as the hub applies a checked page): a
    store no longer applies it, and still syncs."""
    a, b = tmp_path / "a", tmp_path / "b"
    save_notes(a, ["Deploys need the VPN"])
    b.mkdir()
    store = open_hub_store(hub_db)
    try:
        store.apply_changes([rule_record("   ")], projects=None, now=system_clock(), author="x")
    finally:
        store.close()
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tokens = {folder: hub.token("sync", None, folder.name) for folder in (a, b)}
        done = run_sync(a, "--hub", hub.url, "--token", tokens[a])
        assert done.returncode == 0, done.stderr
        done = run_sync(b, "--hub", hub.url, "--token", tokens[b], "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        (held,) = report["refused_pulled"]
        assert (held["reason"], held["count"]) == ("then is required.", 1)
        assert held["first"].startswith("rule r_")
    found = items_at(b / "aletheia.db")
    assert [data["text"] for (kind, _), data in found.items() if kind == "memory"] == [
        "Deploys need the VPN"
    ]
    assert not [key for key in found if key[0] == "rule"]
