"""Parsing edges of the sync protocol and of the hub's HTTP: a JSON type where a name belongs,
one item twice in a page, a fact citing a memory outside the token, headers without end, and a
hub's Retry-After that no integer parser reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.errors import RateLimitedError
from aletheia_mem.server.connections import MAX_HEADER_BYTES
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.sync import client as sync_client
from aletheia_mem.sync.client import HubClient
from aletheia_mem.sync.engine import sync_store
from tests.e2e.http_server import exchange_raw, padded_request
from tests.hub.fake_hubs import serving as _serving
from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub, store_of, uid
from tests.hub.sync_helpers import counts_at, items_at
from tests.hub.test_hostile_sync import _HostileHub, memory_record

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


def _fact_record(token: str, key: str, memory: str) -> dict[str, Any]:
    now = system_clock()
    data = {
        "project": "shop",
        "subject": f"subject {key}",
        "predicate": "is",
        "object": "dismissed",
        "valid_from": now - 10_000,
        "valid_to": None,
        "recorded_at": now,
        "superseded_by": None,
        "source": "peer",
        "memory": memory,
        "dismissed_at": now,
        "dismiss_reason": "gone",
    }
    return {"kind": "fact", "key": key, "v": [now, store_of(token)], "data": data}


@pytest.mark.parametrize("kind", [["memory"], {"memory": 1}])
def test_a_pushed_record_whose_kind_is_a_list_or_an_object_gets_400_not_500(
    hub: Hub, kind: Any
) -> None:
    token = hub.token("sync", ("shop",), f"kind-{type(kind).__name__}")
    before = counts_at(hub.db)
    fine = memory_record(key=uid("kind-fine"))
    reply = hub.push(token, [fine, {**memory_record(), "kind": kind}])
    assert reply.status == 400, reply.body
    assert reply.body["error"]["message"].startswith("record 1: kind must be one of")
    assert counts_at(hub.db) == before
    assert hub.process.poll() is None


@pytest.mark.parametrize("newest_first", [False, True])
def test_a_page_naming_one_memory_twice_keeps_its_newest_version(
    hub: Hub, newest_first: bool
) -> None:
    token = hub.token("sync", ("shop",), f"twice-{newest_first}")
    now = system_clock()
    key = uid(f"twice-{newest_first}")
    # words of each case's own: a note with the words of one the hub holds merges into it
    older_words, newer_words = (f"{age} words, newest first: {newest_first}" for age in "ON")
    older = memory_record(key=key, text=older_words, title="older", v=[now - 1000, "x"])
    newer = memory_record(key=key, text=newer_words, title="newer", v=[now, "x"])
    page = [newer, older] if newest_first else [older, newer]
    reply = hub.push(token, page)
    assert reply.status == 200, reply.body
    assert items_at(hub.db)[("memory", key)]["text"] == newer_words


def test_a_limited_token_cannot_tie_its_fact_to_a_memory_of_another_project(hub: Hub) -> None:
    """Such a tie would rank the other project's memory as stale (its facts all dismissed)."""
    admin = hub.token("admin", None, "tie-admin")
    bank = memory_record(key="e" * 32, project="bank", text="The bank's plan")
    assert hub.push(admin, [bank]).status == 200
    token = hub.token("sync", ("shop",), "tie-peer")
    before = counts_at(hub.db)
    reply = hub.push(token, [_fact_record(token, "f" * 32, memory="e" * 32)])
    assert reply.status == 403, reply.body
    assert "in the token's projects" in reply.body["error"]["message"]
    assert counts_at(hub.db) == before
    assert ("fact", "f" * 32) not in items_at(hub.db)


def test_a_fact_tied_to_a_memory_not_yet_known_is_tied_only_to_one_of_its_project(
    hub: Hub,
) -> None:
    """The tie waits for the memory; a memory of that key that arrives in another project
    (another token's push) is not the fact's."""
    token = hub.token("sync", ("shop",), "tie-later")
    assert hub.push(token, [_fact_record(token, "a" * 32, memory="b" * 32)]).status == 200
    admin = hub.token("admin", None, "tie-later-admin")
    bank = memory_record(key="b" * 32, project="bank", text="The bank's plan")
    assert hub.push(admin, [bank]).status == 200
    assert items_at(hub.db)[("fact", "a" * 32)]["memory"] is None
    own = memory_record(key="c" * 32, text="The shop's own note")  # a later tie in shop holds
    assert hub.push(token, [own, _fact_record(token, "d" * 32, memory="c" * 32)]).status == 200
    assert items_at(hub.db)[("fact", "d" * 32)]["memory"] == "c" * 32


def test_a_fact_tied_to_a_memory_of_its_own_project_still_syncs(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "tie-own")
    own = memory_record(key="d" * 32, text="The shop's own note, tied to its own fact")
    reply = hub.push(token, [own, _fact_record(token, "c" * 32, memory="d" * 32)])
    assert reply.status == 200, reply.body
    assert items_at(hub.db)[("fact", "c" * 32)]["memory"] == "d" * 32


def test_a_pulled_record_whose_kind_is_a_list_is_held_back_with_a_clear_reason(
    tmp_path: Path,
) -> None:
    _HostileHub.page = [memory_record(key=uid("fine")), {**memory_record(), "kind": ["memory"]}]
    _HostileHub.projects = None
    store = SqliteStore(tmp_path / "local.db")
    try:
        with _serving(_HostileHub) as url:
            report = sync_store(store, HubClient(url, "alt_x"), system_clock)
    finally:
        store.close()
    assert counts_at(tmp_path / "local.db")["memories"] == 1
    (held,) = report.refused_pulled.as_json()
    assert held["reason"].startswith("kind must be one of"), held


def test_a_pull_page_naming_one_memory_twice_is_applied_whole(tmp_path: Path) -> None:
    now = system_clock()
    _HostileHub.projects = None
    _HostileHub.page = [
        memory_record(key=uid("pulled-twice"), text="older words", v=[now - 1000, "b" * 32]),
        memory_record(key=uid("pulled-twice"), text="newer words", v=[now, "b" * 32]),
    ]
    store = SqliteStore(tmp_path / "local.db")
    try:
        with _serving(_HostileHub) as url:
            sync_store(store, HubClient(url, "alt_x"), system_clock)
    finally:
        store.close()
    assert items_at(tmp_path / "local.db")[("memory", uid("pulled-twice"))]["text"] == "newer words"


class _LimitedHub(BaseHTTPRequestHandler):
    """A hub answering every request 429 with the Retry-After a test sets."""

    retry_after: ClassVar[str] = "1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(429)
        self.send_header("retry-after", self.retry_after)  # latin-1, as HTTP headers are
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.mark.parametrize(
    ("retry_after", "wait"),
    [("\u00b2", 1), ("-3", 1), ("", 1), ("9" * 5000, sync_client.MAX_WAIT_SECONDS)],
)
def test_a_retry_after_no_integer_parser_reads_is_waited_on_without_a_crash(
    retry_after: str, wait: int
) -> None:
    """ "\u00b2" (a latin-1 header byte) is a digit to ``str.isdigit`` that ``int`` refuses, as
    it refuses 5,000 digits: a ValueError and its traceback, before."""
    _LimitedHub.retry_after = retry_after
    waits: list[float] = []
    with _serving(_LimitedHub) as url, pytest.raises(RateLimitedError):
        HubClient(url, "alt_x", sleep=waits.append).call("/sync/hello", {})
    assert waits == [wait] * sync_client.MAX_RATE_LIMIT_WAITS


def _send_headers(hub: Hub, size: int) -> bytes:
    """A request on ``/sync/hello`` whose headers hold ``size`` bytes of padding."""
    request = padded_request(b"POST /sync/hello HTTP/1.1", size, b"{}")
    return exchange_raw(urlsplit(hub.url).port or 0, request, WAIT_SECONDS)


def test_request_headers_past_the_cap_get_431_and_the_hub_serves_on(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        head, _, body = _send_headers(hub, 20 * MAX_HEADER_BYTES).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 431 "), head
        assert b"content-length: %d" % len(body) in head and b"too large" in body
        assert _send_headers(hub, MAX_HEADER_BYTES // 2).startswith(b"HTTP/1.1 401 ")
        token = hub.token("sync", ("shop",), "after-headers")
        assert hub.post("/sync/hello", {"store_id": store_of(token)}, token).status == 200
        # a body's bytes are no headers, in the piece that ends the headers or after it
        padded = {"store_id": store_of(token), "pad": "p" * 20 * MAX_HEADER_BYTES}
        assert hub.post("/sync/hello", padded, token).status == 200


def test_a_content_length_of_thousands_of_leading_zeros_is_read_not_a_500(hub: Hub) -> None:
    """The parser reads ``000…0NN`` as NN; the guard's ``int`` refused its digits (a 500)."""
    token = hub.token("sync", ("shop",), "zeros")
    body = json.dumps({"store_id": store_of(token)}).encode()
    request = (
        b"POST /sync/hello HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + token.encode() + b"\r\n"
        b"Content-Length: " + b"0" * 5000 + b"%d\r\nConnection: close\r\n\r\n" % len(body) + body
    )
    reply = exchange_raw(urlsplit(hub.url).port or 0, request, WAIT_SECONDS)
    assert reply.startswith(b"HTTP/1.1 200 "), reply


@pytest.mark.parametrize("size", [MAX_HEADER_BYTES + 1000, 120_000])
def test_headers_past_the_cap_in_one_piece_get_431_not_served(hub: Hub, size: int) -> None:
    """One send holding the whole request: the parser reads its headers to their end in one
    go. Counted only by the pieces read, a request under two pieces' worth was served (a 401
    for 120,000 bytes in one header); the header fields the parser hands over are counted too."""
    request = (
        b"POST /sync/hello HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: "
        + b"a" * size
        + b"\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
    )
    reply = exchange_raw(urlsplit(hub.url).port or 0, request, WAIT_SECONDS)
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:200]
    assert _send_headers(hub, MAX_HEADER_BYTES // 2).startswith(b"HTTP/1.1 401 ")
