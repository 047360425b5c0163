"""Tokens and the stores they sync: the same random calls give the same answers on SQLite and
on PostgreSQL, token ids included (each kind's own behaviour is in test_hub_parts.py)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.storage.hub_rows import HubToken
from tests.pg import MigratedSchemas
from tests.stores import open_target, selected_kinds

pytestmark = pytest.mark.skipif(
    len(selected_kinds()) < 2, reason="compares SQLite with PostgreSQL: needs both kinds"
)


def _calls(seed: int, steps: int = 40) -> list[tuple[str, tuple[Any, ...]]]:
    """Token adds (names and hashes that clash), revocations by name or prefix, and claims
    of a few store ids by live, revoked and unknown tokens made before or after revocations."""
    rng = random.Random(seed)
    now = 1_000
    calls: list[tuple[str, tuple[Any, ...]]] = []
    for _ in range(steps):
        now += rng.choice((0, 1, 500))
        name = rng.choice("abcde")
        call = rng.choices(("add", "revoke", "claim"), (2, 2, 6))[0]
        if call == "add":
            hashed = f"hash-{name}{rng.randint(0, 2)}"
            row = HubToken(0, name, hashed, f"alt_{name}", "sync", None, now, None)
            calls.append(("add_token", (row,)))
        elif call == "revoke":
            calls.append(("revoke_token", (rng.choice((name, f"alt_{name}")), now)))
        else:  # by a token of this id, made at a random time (or one never added)
            store_id = rng.choice(("a" * 32, "b" * 32, "A" * 32))
            made = rng.choice((0, now - 500, now))
            claimer = HubToken(rng.randint(0, 6), "x", "h", "alt_x", "sync", None, made, None)
            calls.append(("claim_sync_store", (store_id, claimer, now)))
        calls.append(("stores_held", ()))
    return calls


@pytest.mark.parametrize("seed", range(10))
def test_token_calls_answer_the_same_on_both_stores(
    seed: int, tmp_path: Path, pg_schemas: MigratedSchemas
) -> None:
    sqlite = open_target(tmp_path / "tokens.db")
    postgres = open_target(pg_schemas.clean("tokens"))
    try:
        done = []
        for method, args in _calls(seed):
            done.append((method, args))
            answers = [getattr(store, method)(*args) for store in (sqlite, postgres)]
            assert answers[0] == answers[1], done
        assert sqlite.list_tokens() == postgres.list_tokens()
    finally:
        sqlite.close()
        postgres.close()
