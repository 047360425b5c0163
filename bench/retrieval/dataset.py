"""The benchmark's data: the shipped corpus and queries, and stores filled with them."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from aletheia_mem.domain.memories import FactInput, MemoryInput, save_memory
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "data" / "corpus.jsonl.gz"
QUERIES = HERE / "data" / "queries.jsonl"
NEGATIVES = HERE / "data" / "negatives.jsonl"
PROJECT = "bench"
YEAR_MS = 365 * 86_400_000


@dataclass
class SetClock:
    """A clock the loader moves to each memory's own date."""

    now: int = 0

    def __call__(self) -> int:
        return self.now


def load_corpus() -> list[dict[str, object]]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def load_queries(path: Path = QUERIES) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def fill_store(store: SqliteStore, corpus: list[dict[str, object]]) -> dict[int, str]:
    """Save the corpus through the domain (redaction, facts, supersession), oldest first.

    Returns memory id -> corpus key.
    """
    clock = SetClock()
    keys: dict[int, str] = {}
    for item in corpus:
        clock.now = int(str(item["created_at"]))
        facts = [FactInput(s, p, o, clock.now) for s, p, o in item["facts"]]  # type: ignore[attr-defined]
        memory, _ = save_memory(
            store,
            clock,
            MemoryInput(
                text=str(item["text"]),
                title=str(item["title"]),
                project=PROJECT,
                tool="bench",
                type=str(item["type"]),
                facts=facts,
                files=list(item["files"]),  # type: ignore[call-overload]
            ),
        )
        keys[memory.id] = str(item["key"])
    return keys


def add_copies(store: SqliteStore, corpus: list[dict[str, object]], total: int) -> dict[int, str]:
    """Grow the store to ``total`` memories with dated copies of the corpus (no facts, no dedupe).

    The copies carry the corpus's real text, so posting lists grow as a real store's would.
    Returns memory id -> corpus key of the copied item.
    """
    keys: dict[int, str] = {}
    have = store.count_memories(None)
    n = 0
    while have < total:
        item = corpus[n % len(corpus)]
        generation = n // len(corpus) + 1
        new = NewMemory(
            project=PROJECT,
            type=str(item["type"]),
            kind="note",
            title=str(item["title"]),
            text=str(item["text"]),
            tool="bench",
            created_at=int(str(item["created_at"])) - generation * YEAR_MS // 7,
            dedupe_key=None,
            files=tuple(item["files"]),  # type: ignore[arg-type]
        )
        memory, _ = store.add_memory(new)
        keys[memory.id] = str(item["key"])
        have += 1
        n += 1
    return keys
