"""Builds a large, realistic store quickly through the store's own write path.

Memories go through ``SqliteStore``'s insert-and-index code (the code ``add_memory`` runs), one
to a transaction as saves come, so the FTS index (whose b-trees follow the transactions), the
file index and every table index are laid out as in production. Episodes, requests, rules,
lists and dismissals go through the public store methods. No hand-written SQL. The builder's own
connection skips fsync (``synchronous = OFF``): the file is a throwaway, and the layout is the
same.

Shape: memories over a year (70% in the measured project), a pinned one in 700, a fact in 20,
a session (episode) per 8 memories with 4 user requests each, 25 rules, 5 work-state lists and a
dismissed memory in 500.
"""

from __future__ import annotations

import inspect
import random
import time
from pathlib import Path

from aletheia_mem.domain.memories import dedupe_key
from aletheia_mem.domain.rules import rule_id
from aletheia_mem.domain.worklists import WORK_STATE_KIND, list_key

try:
    from aletheia_mem.storage.entries import AuditEntry, NewFact, NewMemory, Rule
except ImportError:  # a --baseline-src checkout from before storage/entries.py
    from aletheia_mem.storage.base import (  # type: ignore[attr-defined,no-redef]
        AuditEntry,
        NewFact,
        NewMemory,
        Rule,
    )
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.facts import put_fact
from aletheia_mem.storage.sqlite.memories import insert_memory
from corpus import SEED, NoteWriter, component, identifier

BATCH = 1  # memories per transaction: one, as each save_memory
DAY_MS = 86_400_000
OTHER_PROJECTS = ("billing", "infra", "mobile")
TARGET_SHARE = 0.7  # the rest is spread over OTHER_PROJECTS
PINNED_EVERY = 700
FACT_EVERY = 20
EPISODE_EVERY = 8
REQUESTS_PER_EPISODE = 4
DISMISSED_EVERY = 500
RULES = 25
LISTS = 5


# A --baseline-src checkout from before insert_memory took a uid makes its own (random) ones.
TAKES_UID = "uid" in inspect.signature(insert_memory).parameters


def build_store(path: Path, project: str, count: int, now: int | None = None) -> None:
    """``count`` memories over a year, 70% in ``project``, with facts, episodes and rules."""
    rng = random.Random(SEED + 2)
    writer = NoteWriter(seed=SEED + 3)
    uids = random.Random(SEED + 4)  # apart from ``rng``: the same content as before uids
    now = now if now is not None else _now_ms()
    start, step = now - 365 * DAY_MS, max(365 * DAY_MS // max(count, 1), 1)
    store = SqliteStore(path)
    store._conn.execute("PRAGMA synchronous = OFF")
    try:
        for first in range(0, count, BATCH):
            size = min(BATCH, count - first)
            times = [start + (first + i) * step for i in range(size)]
            _add_batch(store, rng, uids, writer, project, times)
        _add_episodes(store, rng, project, count // EPISODE_EVERY, start, step * EPISODE_EVERY)
        _add_rules_and_lists(store, rng, project, now)
        _dismiss_some(store, rng, count, now)
    finally:
        store.close()


def _add_batch(
    store: SqliteStore,
    rng: random.Random,
    uids: random.Random,
    writer: NoteWriter,
    project: str,
    times: list[int],
) -> None:
    with store._write() as conn:
        for at in times:
            note = writer.note()
            owner = project if rng.random() < TARGET_SHARE else rng.choice(OTHER_PROJECTS)
            title = note.title or " ".join(note.text.split())[:100]
            new = NewMemory(
                project=owner,
                type=note.type,
                kind="note",
                title=title,
                text=note.text,
                tool=rng.choice(("claude-code", "codex", "cursor", "cli")),
                created_at=at,
                dedupe_key=dedupe_key(title, note.text),
                files=note.files,
                pinned=rng.randrange(PINNED_EVERY) == 0,
            )
            if TAKES_UID:
                memory_id = insert_memory(conn, new, uid=seeded_uid(uids, at))
            else:
                memory_id = insert_memory(conn, new)
            if rng.randrange(FACT_EVERY) == 0:
                fact = NewFact(
                    project=owner,
                    subject=component(rng),
                    predicate=rng.choice(("uses", "owner", "timeout_ms", "deploys to")),
                    object=identifier(rng),
                    valid_from=at,
                    recorded_at=at,
                    source=new.tool,
                )
                put_fact(conn, fact, memory_id)


def _add_episodes(
    store: SqliteStore, rng: random.Random, project: str, count: int, start: int, step: int
) -> None:
    for index in range(count):
        at = start + index * step
        owner = project if rng.random() < TARGET_SHARE else rng.choice(OTHER_PROJECTS)
        episode = store.start_episode(owner, rng.choice(("claude-code", "codex")), at)
        for offset in range(REQUESTS_PER_EPISODE):
            text = f"please {identifier(rng)} in the {component(rng)} and add tests"
            store.add_request(episode, text, at + offset * 60_000)
        store.end_episode(episode, at + 600_000, None)


def _add_rules_and_lists(store: SqliteStore, rng: random.Random, project: str, now: int) -> None:
    for index in range(RULES):
        then = f"Never call {identifier(rng)} from the {component(rng)} (rule {index})"
        tier = rng.choice(("everywhere", "project", "situation"))
        scope = {"everywhere": "", "project": project, "situation": "when deploying"}[tier]
        when = "always" if tier != "situation" else "you deploy"
        store.add_rule(
            Rule(
                rule_id(then, when, tier, scope),
                then,
                when,
                tier,
                scope,
                (),
                (),
                "cli",
                now,
                now,
                True,
            )
        )
    for index in range(LISTS):
        name = f"todo-{index}"
        store.put_work_state(
            NewMemory(
                project=project,
                type="note",
                kind=WORK_STATE_KIND,
                title=f"{name} list",
                text=f'["{identifier(rng)}","{identifier(rng)}"]',
                tool="cli",
                created_at=now,
                dedupe_key=list_key(name),
            )
        )


def _dismiss_some(store: SqliteStore, rng: random.Random, count: int, now: int) -> None:
    for _ in range(count // DISMISSED_EVERY):
        memory_id = rng.randint(1, count)
        audit = AuditEntry(now, "bench", "dismiss_memory", None, "ok")
        store.set_dismissed("memories", memory_id, now, "duplicate", audit)


def seeded_uid(rng: random.Random, millis: int) -> str:
    """A version 7 UUID in hex, as ``storage/uids.py`` makes them, with seeded random bits."""
    raw = bytearray(millis.to_bytes(6, "big") + rng.randbytes(10))
    raw[6] = raw[6] & 0x0F | 0x70
    raw[8] = raw[8] & 0x3F | 0x80
    return raw.hex()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
