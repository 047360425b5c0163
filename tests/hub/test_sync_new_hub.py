"""A hub that lost its store (a new, empty one at the same address), or another hub: a store
that synced before sends it every item it holds, so the team's memory comes back, and a store
new to the team then pulls it all. Real hub processes, real ``aletheia sync`` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import facts, rules
from tests.hub.helpers import running_hub
from tests.hub.sync_helpers import items_at
from tests.hub.test_sync_e2e import open_store, run_sync, save_notes

pytestmark = [pytest.mark.e2e, pytest.mark.sqlite_only]
PORT = "20741"  # the one address both hubs answer at


def _add_fact_and_rules(data_dir: Path) -> None:
    store = open_store(data_dir)
    now = system_clock()
    try:
        facts.record_fact(
            store, project="shop", subject="db", predicate="engine", object="postgres",
            valid_from=None, source="cli", now=now,
        )  # fmt: skip
        for tier, name in (("project", "shop"), ("everywhere", "")):
            item = rules.RuleInput(f"rule {tier}", "", tier, name, [], [], "cli")
            rules.add_rule(store, item, now)
    finally:
        store.close()


def _sync(data_dir: Path, url: str, token: str) -> dict[str, int]:
    done = run_sync(data_dir, "--hub", url, "--token", token, "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, int] = json.loads(done.stdout)
    return report


def test_a_new_empty_hub_at_the_same_address_gets_every_item_back(tmp_path: Path) -> None:
    laptop, other = tmp_path / "laptop", tmp_path / "other"
    for folder in (laptop, other):
        folder.mkdir()
    save_notes(laptop, ["Use pnpm, not npm", "Deploy on Fridays never"])
    _add_fact_and_rules(laptop)
    hub_db = tmp_path / "hub" / "hub.db"
    hub_db.parent.mkdir()
    with running_hub(hub_db, "--rate-limit", "0", "--port", PORT) as hub:
        first = _sync(laptop, hub.url, hub.token("sync", None, "laptop"))
        assert first["pushed"] == 5  # 2 notes, a fact, 2 rules
        url = hub.url
    held = items_at(laptop / "aletheia.db")
    assert len(held) == first["pushed"]
    lost = tmp_path / "lost"
    hub_db.parent.rename(lost)  # the hub's disk died: a new hub, at the same address
    hub_db.parent.mkdir()
    with running_hub(hub_db, "--rate-limit", "0", "--port", PORT) as hub:
        assert hub.url == url
        token = hub.token("sync", None, "laptop")
        again = _sync(laptop, hub.url, token)
        assert again["pushed"] == len(held), again
        assert items_at(hub_db) == held  # every item, as the laptop has it
        assert _sync(laptop, hub.url, token)["pushed"] == 0  # known now: its changes only
        pulled = _sync(other, hub.url, hub.token("sync", None, "other"))
    assert pulled["pulled"] == len(held)
    assert items_at(other / "aletheia.db") == held


def test_a_project_limited_token_sends_a_new_hub_its_projects_items_only(tmp_path: Path) -> None:
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    save_notes(laptop, ["Use pnpm, not npm"])
    save_notes(laptop, ["Invoices go out monthly"], project="billing")
    _add_fact_and_rules(laptop)
    with running_hub(tmp_path / "first.db", "--rate-limit", "0") as hub:
        _sync(laptop, hub.url, hub.token("sync", None, "laptop"))
    with running_hub(tmp_path / "second.db", "--rate-limit", "0") as hub:
        report = _sync(laptop, hub.url, hub.token("sync", ("shop",), "laptop-shop"))
    held = items_at(laptop / "aletheia.db")  # authored laptop-shop/... by the new hub, now
    shop = {
        key: data
        for key, data in held.items()
        if data.get("project") == "shop" or data.get("scope_name") == "shop"
    }
    assert len(shop) == 3  # a note, a fact, a project rule (not billing's, nor every project's)
    assert report["pushed"] == len(shop), report
    assert report["held_back"] == 0  # the rule for every project is the first hub's to send
    assert items_at(tmp_path / "second.db") == shop


def _authors(data_dir: Path) -> dict[str, str]:
    return {
        data["text"]: data["tool"]
        for (kind, _), data in items_at(data_dir / "aletheia.db").items()
        if kind == "memory"
    }


@pytest.mark.parametrize("alice_first", [True, False], ids=["author-first", "teammate-first"])
def test_a_rebuilt_hub_authors_an_item_after_the_first_token_that_sends_it(
    tmp_path: Path, alice_first: bool
) -> None:
    """What docs/sync.md says of a rebuilt hub: the author a store sends is not taken (nothing
    proves it), so the token that sends an item first is its author; the author's own token,
    named as before and syncing first, keeps its items' authors."""
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    for folder in (alice, bob):
        folder.mkdir()
    save_notes(alice, ["Use pnpm, not npm"])
    hub_db = tmp_path / "hub" / "hub.db"
    hub_db.parent.mkdir()
    with running_hub(hub_db, "--rate-limit", "0", "--port", PORT) as hub:
        _sync(alice, hub.url, hub.token("sync", None, "alice"))
        _sync(bob, hub.url, hub.token("sync", None, "bob"))
    assert _authors(bob) == _authors(alice) == {"Use pnpm, not npm": "alice/test"}
    hub_db.parent.rename(tmp_path / "lost")
    hub_db.parent.mkdir()
    with running_hub(hub_db, "--rate-limit", "0", "--port", PORT) as hub:
        order = [(alice, "alice"), (bob, "bob")]
        for folder, name in order if alice_first else order[::-1]:
            _sync(folder, hub.url, hub.token("sync", None, name))
        for folder in (alice, bob):  # each pulls what the other's sync settled
            done = run_sync(folder)
            assert done.returncode == 0, done.stderr
    author = "alice/test" if alice_first else "bob/test"
    assert _authors(alice) == _authors(bob) == {"Use pnpm, not npm": author}
