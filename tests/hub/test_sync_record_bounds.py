"""No record a hub or store keeps is larger than a pull page may carry (4 MiB): a hostile token
growing one episode push by push (each push within every limit) stopped every teammate's sync
for good, with pull pages of 90 MB although the hub's hello said 4 MiB."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.storage.open import open_hub_store
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sync_records import MAX_RECORD_BYTES, MAX_REQUESTS_BYTES, json_bytes
from tests.hub.helpers import Hub, running_hub, store_of, uid
from tests.hub.sync_helpers import counts_at, items_at
from tests.hub.test_hostile_sync import episode_record, memory_record
from tests.hub.test_sync_e2e import run_sync

pytestmark = pytest.mark.e2e
PAGE_BYTES = 4 * 1024 * 1024
WORDS = ("the quick brown fox jumps over the lazy dog " * 460)[:19_990]


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


def _pull_bytes(hub: Hub, token: str) -> tuple[int, dict[str, Any]]:
    """The size of the first pull page's reply as sent, and the page."""
    body = json.dumps({"store_id": store_of(token + "-reader"), "cursor": 0}).encode()
    request = urllib.request.Request(  # noqa: S310  (the hub's own http URL)
        hub.url + "/sync/pull",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
        raw = answer.read()
    return len(raw), json.loads(raw)


def _requests_bytes(requests: list[Any]) -> int:
    return json_bytes(requests)


def test_pushes_growing_one_episode_keep_its_newest_requests_and_every_sync_goes_on(
    hub: Hub, tmp_path: Path
) -> None:
    """Three pushes of 150 requests of 20,000 characters each (3 MB, within every per-push
    limit) to one episode: the hub keeps the newest that fit a record, every pull page is
    within 4 MiB, and a teammate's sync goes on."""
    token = hub.token("sync", ("shop",), "episode-grower")
    now = system_clock()
    key = uid("grown episode")
    before = counts_at(hub.db)["episode_requests"]
    for push in range(3):
        requests = [[now - 900_000 + push * 1000 + n, f"{push}-{n} {WORDS}"] for n in range(150)]
        record = episode_record(key, requests, v=[now - 30 + push, "a" * 32])
        assert hub.push(token, [record]).status == 200
    held = items_at(hub.db)[("episode", key)]["requests"]
    assert counts_at(hub.db)["episode_requests"] - before == len(held)  # as stored, not cut
    assert _requests_bytes(held) <= MAX_REQUESTS_BYTES
    newest = sorted(held)[-1]
    assert newest[1].startswith("2-149 ")  # the last push's newest request stays
    size, page = _pull_bytes(hub, hub.token("sync", ("shop",), "episode-puller"))
    assert size <= PAGE_BYTES
    assert any(record["key"] == key for record in page["records"])
    teammate = tmp_path / "teammate"
    teammate.mkdir()
    reader = hub.token("sync", ("shop",), "episode-reader")
    done = run_sync(teammate, "--hub", hub.url, "--token", reader)
    assert done.returncode == 0, done.stderr
    assert items_at(teammate / "aletheia.db")[("episode", key)]["requests"] == held


def test_a_pushed_note_larger_than_a_record_may_be_is_refused_naming_why(hub: Hub) -> None:
    """Statements of 10,000 characters, 400 of them: within each limit, 4 MB in all."""
    token = hub.token("sync", ("shop",), "big-note")
    facts = [f"{n} {WORDS[:9990]}" for n in range(400)]
    reply = hub.push(token, [memory_record(facts=facts)])
    assert reply.status == 400
    assert "larger than the 3584 KiB of JSON one synced item may hold" in str(reply.body)


def test_a_record_an_earlier_release_let_grow_past_a_page_is_left_out_of_every_pull(
    hub: Hub, tmp_path: Path
) -> None:
    """A note the hub's store holds past the bound (written before it) is held back by the
    hub, counted in the sync's line, and every record after it still arrives."""
    store = open_hub_store(hub.db)
    try:
        big = memory_record(key=uid("oversized note"), facts=[f"{n} {WORDS}" for n in range(250)])
        big["v"] = [system_clock() - 10, "c" * 32]
        assert json_bytes(big) > PAGE_BYTES
        store.apply_changes([big], projects=None, now=system_clock())
    finally:
        store.close()
    token = hub.token("sync", ("shop",), "after-oversized")
    after = memory_record(key=uid("after the oversized note"), text="after it")
    assert hub.push(token, [after]).status == 200
    size, page = _pull_bytes(hub, token)
    assert size <= PAGE_BYTES
    assert page["withheld"] == {"larger than a pull page may carry (4 MiB)": 1}
    teammate = tmp_path / "teammate"
    teammate.mkdir()
    reader = hub.token("sync", ("shop",), "oversized-reader")
    done = run_sync(teammate, "--hub", hub.url, "--token", reader)
    assert done.returncode == 0, done.stderr
    assert "larger than a pull page may carry (4 MiB)" in done.stdout
    held = items_at(teammate / "aletheia.db")
    assert ("memory", uid("oversized note")) not in held
    assert ("memory", uid("after the oversized note")) in held


def test_a_local_episode_of_many_requests_is_pushed_within_a_record(
    hub: Hub, tmp_path: Path
) -> None:
    """Requests a store's hooks wrote (4000 characters each, no limit on their number) go as
    the newest that fit a record, the same ones on the hub and the pushing store's next pull."""
    data_dir = tmp_path / "writer"
    data_dir.mkdir()
    store = SqliteStore(data_dir / "aletheia.db")
    try:
        now = system_clock()
        episode = store.open_episode(uid("local session"), "shop", "claude-code", now - 600_000)
        for n in range(800):
            store.add_request(episode, f"{n:04d} " + "é" * 3995, now - 500_000 + n)
    finally:
        store.close()
    token = hub.token("sync", ("shop",), "local-episode")
    before = counts_at(hub.db)["episode_requests"]
    done = run_sync(data_dir, "--hub", hub.url, "--token", token)
    assert done.returncode == 0, done.stderr
    held = items_at(hub.db)[("episode", uid("local session"))]
    assert json_bytes(held) <= MAX_RECORD_BYTES
    assert _requests_bytes(held["requests"]) <= MAX_REQUESTS_BYTES
    assert held["requests"][-1][1].startswith("0799 ")
    assert len(held["requests"]) < 800
    assert counts_at(hub.db)["episode_requests"] - before == len(held["requests"])


def test_a_stores_own_record_larger_than_a_page_is_left_out_and_the_rest_pushed(
    hub: Hub, tmp_path: Path
) -> None:
    """A store holding such a record (an earlier release took it) pushes everything else."""
    data_dir = tmp_path / "holder"
    data_dir.mkdir()
    store = SqliteStore(data_dir / "aletheia.db")
    try:
        big = memory_record(key=uid("a store's oversized note"))
        big["data"]["facts"] = [f"{n} {WORDS}" for n in range(250)]
        fine = memory_record(key=uid("a store's fine note"), text="a fine note")
        store.apply_changes([big, fine], projects=None, now=system_clock())
    finally:
        store.close()
    token = hub.token("sync", ("shop",), "oversized-holder")
    done = run_sync(data_dir, "--hub", hub.url, "--token", token)  # the first sends every item
    assert done.returncode == 0, done.stderr
    assert "memory #1: it is larger than a sync page may carry (4 MiB)." in done.stdout
    held = items_at(hub.db)
    assert ("memory", uid("a store's fine note")) in held
    assert ("memory", uid("a store's oversized note")) not in held
