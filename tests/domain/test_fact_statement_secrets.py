"""A memory's fact summary (``memories.facts`` and its search column) is redacted part by part.

The facts table redacts a fact's subject, predicate and object each alone; the summary a memory
keeps of the same fact must hide as much, though joining the parts first would let a secret at
the end of a subject run into the predicate (``X-Api-Key: <key> uses``) and survive.
"""

from __future__ import annotations

from aletheia_mem.domain.memories import FactInput, MemoryInput, save_memory
from aletheia_mem.storage.contracts import HubStore
from tests.conftest import FakeClock
from tests.stores import held_at, target_of

API_KEY = "PLCM7HUF" + "pk5acdIbzlpk"
TOKEN = "Zk9fQ2x8" + "LmP4rT7w"


def test_a_secret_in_a_fact_subject_never_reaches_the_memory_summary(
    store: HubStore, clock: FakeClock
) -> None:
    facts = [
        FactInput(subject=f"svc X-Api-Key: {API_KEY}", predicate="uses", object="postgres"),
        FactInput(subject="svc", predicate=f"token={TOKEN}", object="rotated"),
    ]
    item = MemoryInput(text="Service wiring notes", project="shop", tool="cli", facts=facts)
    memory, _ = save_memory(store, clock, item)
    assert list(memory.facts) == [
        "svc X-Api-Key: [REDACTED] uses postgres",
        "svc token=[REDACTED] rotated",
    ]
    raw = held_at(target_of(store))
    assert API_KEY.encode() not in raw
    assert TOKEN.encode() not in raw
