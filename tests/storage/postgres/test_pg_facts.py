"""PgFacts: saving, superseding, reading and searching facts, also by racing writers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from aletheia_mem.storage.entries import NewFact
from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from tests.storage.postgres.racing import race

NOW = 1_790_000_000_000
ROOT = Path(__file__).resolve().parents[3]


def _fact(obj: str, at: int = NOW, subject: str = "Checkout  Service") -> NewFact:
    return NewFact("shop", subject, "Runs On", obj, at, at, "test")


def test_a_new_value_supersedes_the_current_fact_and_the_same_value_does_not(
    pg_facts: PgFacts,
) -> None:
    first, created = pg_facts.add_fact(_fact("k8s"))
    same, created_same = pg_facts.add_fact(_fact("k8s", NOW + 1, subject="checkout service"))
    second, created_second = pg_facts.add_fact(_fact("nomad", NOW + 5))
    assert created and not created_same and created_second
    assert same == first
    old = pg_facts.get_fact(first.id)
    assert old is not None and old.valid_to == NOW + 5 and old.superseded_by == second.id
    assert second.valid_to is None and second.subject == "Checkout  Service"
    assert pg_facts.get_fact(second.id + 100) is None
    assert pg_facts.superseded_fact_ids([first.id, second.id], now=NOW + 5) == {first.id}
    assert pg_facts.existing_fact_ids([first.id, second.id, 999]) == {first.id, second.id}
    assert pg_facts.superseded_fact_ids([], now=NOW) == set() == pg_facts.existing_fact_ids([])


def test_a_value_valid_before_every_other_ends_where_the_first_one_starts(
    pg_facts: PgFacts,
) -> None:
    current, _ = pg_facts.add_fact(_fact("k8s", NOW))
    earlier, created = pg_facts.add_fact(_fact("nomad", NOW - 100))
    assert created and earlier.valid_to == NOW and earlier.superseded_by == current.id
    assert pg_facts.get_fact(current.id) == current  # still open


def test_facts_about_and_current_facts_list_newest_first(pg_facts: PgFacts) -> None:
    pg_facts.add_fact(_fact("k8s", NOW))
    pg_facts.add_fact(_fact("nomad", NOW + 1))
    other = NewFact("shop", "Checkout Service", "owner", "team-a", NOW + 2, NOW + 2, "test")
    pg_facts.add_fact(other)
    about = pg_facts.facts_about(" CHECKOUT service ", "shop", None)
    assert [f.object for f in about] == ["team-a", "nomad", "k8s"]
    assert [f.object for f in pg_facts.facts_about("checkout service", None, "runs on")] == [
        "nomad",
        "k8s",
    ]
    assert pg_facts.facts_about("checkout service", "elsewhere", None) == []
    assert [f.object for f in pg_facts.current_facts("shop", 10, NOW + 10)] == ["team-a", "nomad"]
    assert [f.object for f in pg_facts.current_facts("shop", 1, NOW + 10)] == ["team-a"]


def test_fact_search_finds_current_facts_by_any_term_and_project(pg_facts: PgFacts) -> None:
    pg_facts.add_fact(_fact("k8s cluster"))
    current, _ = pg_facts.add_fact(_fact("nomad cluster", NOW + 1))
    db_fact = NewFact("ops", "database", "engine", "postgres", NOW, NOW, "test")
    database, _ = pg_facts.add_fact(db_fact)
    assert [f.id for f in pg_facts.search_facts(["cluster"], None, 5, NOW + 10)] == [current.id]
    assert [f.id for f in pg_facts.search_facts(["k8s"], None, 5, NOW + 10)] == []
    both = pg_facts.search_facts(["postgres", "nomad"], ("shop", "ops"), 5, NOW + 10)
    assert {f.id for f in both} == {current.id, database.id}
    assert pg_facts.search_facts(["postgres"], ("shop",), 5, NOW + 10) == []
    assert pg_facts.search_facts([], None, 5, NOW + 10) == []


def _assert_one_consistent_chain(facts: PgFacts, db: PgDatabase, saved: int) -> None:
    with db.read() as conn:
        rows = conn.execute("SELECT id, valid_to, superseded_by FROM facts ORDER BY id").fetchall()
    current = [row for row in rows if row[1] is None]
    assert len(current) == 1
    assert all(row[2] is not None for row in rows if row[1] is not None)
    assert 1 <= len(rows) <= saved
    assert facts.facts_about("checkout service", "shop", "runs on")[0].id == current[0][0]


def test_threads_saving_one_key_at_once_keep_one_current_fact_and_never_fail(
    pg_store_url: str,
) -> None:
    databases = [PgDatabase(pg_store_url) for _ in range(2)]
    parts = [PgFacts(db) for db in databases]

    # 16 threads of 40 saves: enough that, with row locks alone, some writer lost the race
    # 50 times running in every one of three tries (5 to 7 failed saves each).
    def save(n: int) -> None:
        for i in range(40):
            parts[n % 2].add_fact(_fact(f"value {n}-{i % 4}", NOW + i))

    errors = race(save, 16)
    try:
        assert errors == []
        _assert_one_consistent_chain(parts[0], databases[0], 16 * 40)
    finally:
        for db in databases:
            db.close()


_SAVE_IN_A_PROCESS = """
import sys
from aletheia_mem.storage.entries import NewFact
from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from tests.storage.postgres.racing import race
db = PgDatabase(sys.argv[1])
for i in range(20):
    at = 1_790_000_000_000 + i
    fact = NewFact("shop", "checkout service", "runs on", sys.argv[2] + str(i), at, at, "p")
    PgFacts(db).add_fact(fact)
db.close()
"""


def test_processes_saving_one_key_at_once_keep_one_current_fact(
    pg_store_url: str, pg_facts: PgFacts, pg_db: PgDatabase
) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _SAVE_IN_A_PROCESS, pg_store_url, f"p{n}-"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
        )
        for n in range(3)
    ]
    try:
        for process in processes:
            _, stderr = process.communicate(timeout=60)
            assert process.returncode == 0, stderr.decode()
    finally:
        for process in processes:
            process.kill()
            process.communicate()
    _assert_one_consistent_chain(pg_facts, pg_db, 60)


def test_fact_search_takes_hostile_terms_as_words(pg_facts: PgFacts) -> None:
    """The terms reach the statement as one array parameter: placeholders, quotes, NUL bytes,
    LIKE wildcards and huge terms are words to look for, or nothing, never SQL."""
    injected, _ = pg_facts.add_fact(_fact("%(tokens)s'); DROP TABLE facts; --", subject="Probe"))
    plain, _ = pg_facts.add_fact(_fact("k8s"))
    hostile = [
        ["%(tokens)s"],
        ["%(projects)s", "%s", "$1"],
        ["'); DROP TABLE facts; --"],
        ["%", "_", "*"],
        ["a\x00b", "\x00"],
        ["x" * 100_000],
        ["\U0001f642" * 50] * 32,
    ]
    for terms in hostile:
        found = pg_facts.search_facts(terms, None, 10, NOW + 10)
        assert plain.id not in {fact.id for fact in found}, terms
    assert [f.id for f in pg_facts.search_facts(["drop", "table"], ("shop",), 10, NOW + 10)] == [
        injected.id
    ]
    assert [f.id for f in pg_facts.search_facts(["tokens"], None, 10, NOW + 10)] == [injected.id]
    assert [f.id for f in pg_facts.search_facts(["k8s"], None, 10, NOW + 10)] == [plain.id]
