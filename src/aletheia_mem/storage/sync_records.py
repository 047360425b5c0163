"""The records stores exchange when they sync, whatever their dialect.

A record is ``{"kind", "key", "v": [changed_at, origin], "data": {...}}``. ``key`` is the item's
global id (a memory's, fact's or episode's ``uid``, a rule's ``r_`` id); every reference inside
``data`` is a global id too, never a local ``#N``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Record = dict[str, Any]
KINDS = ("memory", "fact", "rule", "episode")
# The most requests one episode record carries, as every store takes them
# (``sync.records.MAX_LIST``; a test holds them equal): a receiver keeps the newest of a union.
MAX_REQUESTS = 10_000
# A pull page is at most 4 MiB of JSON (the hub's ``max_page_bytes``), so no record may be
# larger: one record's data as compact UTF-8 JSON is at most ``MAX_RECORD_BYTES``, and an
# episode's requests (the one part a merge grows: the union of both sides') at most
# ``MAX_REQUESTS_BYTES`` of it, the newest kept. The rest of an episode (a summary of 200,000
# characters, escaped) stays under the difference, so the requests kept depend on them alone.
MAX_RECORD_BYTES = 3584 * 1024
MAX_REQUESTS_BYTES = 2 * 1024 * 1024
# What a page holds besides its records: its cursor, ``more`` and the hub's ``withheld``.
PAGE_ENVELOPE_BYTES = 4096


@dataclass(frozen=True)
class ExportPage:
    """One page of changes and where the next page starts."""

    records: list[Record]
    cursor: int
    more: bool
    # records passed over as larger than a page may be (held by an earlier release)
    oversized: list[Record] = field(default_factory=list)
    # records passed over as of a project outside the ``projects`` asked for, by project
    outside: dict[str, int] = field(default_factory=dict)


@dataclass
class ApplyStats:
    """What a page of records did: applied, skipped as known, merged into another item."""

    applied: int = 0
    skipped: int = 0
    merged: int = 0
    touched_projects: set[str] = field(default_factory=set)


def record_project(record: Record) -> str | None:
    """The project a record belongs to; None for a rule that is not tied to one project."""
    data = record["data"]
    if record["kind"] == "rule":
        return str(data["scope_name"]) if data.get("scope_tier") == "project" else None
    return str(data["project"])


def json_bytes(value: Any) -> int:
    """The size of ``value`` as a page carries it: compact JSON, UTF-8."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))


def newest_requests(requests: Sequence[Sequence[Any]]) -> list[int]:
    """The positions of the requests an episode record keeps, in their order: the newest by
    time, then text (decided by the data alone, so every store keeps the same ones), at most
    ``MAX_REQUESTS`` of them and at most ``MAX_REQUESTS_BYTES`` of JSON."""
    # at most 6 bytes a character (an escaped control character), 24 for its time and marks
    surely = sum(6 * len(request[1]) + 24 for request in requests) <= MAX_REQUESTS_BYTES
    if len(requests) <= MAX_REQUESTS and surely:
        return list(range(len(requests)))
    order = sorted(range(len(requests)), key=lambda n: (requests[n][0], requests[n][1]))
    kept: list[int] = []
    size = 2  # the list's brackets
    for n in reversed(order):
        size += json_bytes([requests[n][0], requests[n][1]]) + 1
        if len(kept) == MAX_REQUESTS or size > MAX_REQUESTS_BYTES:
            break
        kept.append(n)
    return sorted(kept)
