"""FactStore timelines: a fact goes in at its valid_from, and a key's intervals never overlap."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aletheia_mem.storage.base import Fact
from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.storage.entries import NewFact
from tests.storage.contract.rows import T0, fact

DAY = 86_400_000
INSTANTS = [T0 + n * DAY for n in range(4)]
OBJECTS = ["alpha", "beta", "gamma"]
# Probes: each instant, just before and after it, and far on both sides.
PROBES = sorted({T0 - DAY, T0 + 10 * DAY, *(at + d for at in INSTANTS for d in (-1, 0, 1))})
_subjects = itertools.count()


def _timeline(store: HubStore, subject: str) -> list[Fact]:
    return sorted(store.facts_about(subject, "shop", "host"), key=lambda f: f.id)


def _valid_at(facts: list[Fact], at: int) -> list[Fact]:
    return [f for f in facts if f.valid_from <= at and (f.valid_to is None or at < f.valid_to)]


def _spans(store: HubStore, subject: str) -> list[tuple[str, int, int | None, int | None]]:
    """(object, valid_from, valid_to, superseded_by) of each fact of ``subject``, by id."""
    return [
        (f.object, f.valid_from, f.valid_to, f.superseded_by) for f in _timeline(store, subject)
    ]


def test_a_backdated_value_ends_where_the_first_one_starts(contract_store: HubStore) -> None:
    june, _ = contract_store.add_fact(fact("db", "host", "alpha", at=T0 + 150 * DAY))
    january, created = contract_store.add_fact(fact("db", "host", "beta", at=T0))
    assert created
    assert _spans(contract_store, "db") == [
        ("alpha", T0 + 150 * DAY, None, None),
        ("beta", T0, T0 + 150 * DAY, june.id),
    ]
    assert [f.id for f in _valid_at(_timeline(contract_store, "db"), T0 + DAY)] == [january.id]
    assert [f.id for f in contract_store.current_facts("shop", 10, T0 + 150 * DAY)] == [june.id]


def test_current_facts_and_fact_search_take_the_facts_valid_now(contract_store: HubStore) -> None:
    """A value written for a later time is not current before it, and the one it will replace
    is, though no longer open."""
    first, _ = contract_store.add_fact(fact("db", "host", "alpha", at=T0))
    later, _ = contract_store.add_fact(fact("db", "host", "beta", at=T0 + 2 * DAY))
    ahead, _ = contract_store.add_fact(fact("cache", "host", "redis", at=T0 + 2 * DAY))
    expected = {T0 - 1: set(), T0 + DAY: {first.id}, T0 + 3 * DAY: {later.id, ahead.id}}
    for at, ids in expected.items():
        assert {f.id for f in contract_store.current_facts("shop", 10, at)} == ids, at
        assert {f.id for f in contract_store.search_facts(["host"], None, 10, at)} == ids, at


def test_a_value_between_two_splits_the_interval_it_falls_in(contract_store: HubStore) -> None:
    first, _ = contract_store.add_fact(fact("db", "host", "alpha", at=T0))
    future, _ = contract_store.add_fact(fact("db", "host", "gamma", at=T0 + 30 * DAY))
    middle, _ = contract_store.add_fact(fact("db", "host", "beta", at=T0 + 10 * DAY))
    assert _spans(contract_store, "db") == [
        ("alpha", T0, T0 + 10 * DAY, middle.id),
        ("gamma", T0 + 30 * DAY, None, None),
        ("beta", T0 + 10 * DAY, T0 + 30 * DAY, future.id),
    ]
    facts = _timeline(contract_store, "db")
    assert [f.id for f in _valid_at(facts, T0 + 20 * DAY)] == [middle.id]
    assert [f.id for f in _valid_at(facts, T0 + 5 * DAY)] == [first.id]


def test_a_later_write_at_the_same_valid_from_wins(contract_store: HubStore) -> None:
    earlier, _ = contract_store.add_fact(fact("db", "host", "alpha", at=T0))
    later, created = contract_store.add_fact(fact("db", "host", "beta", at=T0))
    assert created
    assert _spans(contract_store, "db") == [("alpha", T0, T0, later.id), ("beta", T0, None, None)]
    assert _valid_at(_timeline(contract_store, "db"), T0) == [later]
    assert contract_store.superseded_fact_ids([earlier.id, later.id], now=T0) == {earlier.id}


def test_values_written_in_one_millisecond_without_a_valid_from_follow_each_other(
    contract_store: HubStore,
) -> None:
    """Each starts at the first millisecond no fact of its key starts at: the one before holds
    until then, and none is left valid at no instant. The current value again changes nothing."""
    written = [
        contract_store.add_fact(fact("db", "host", value, when_written=True))
        for value in ("alpha", "beta", "beta", "gamma", "alpha")
    ]
    first, second, again, third, fourth = (saved for saved, _ in written)
    assert [created for _, created in written] == [True, True, False, True, True]
    assert again == second
    assert sorted(_spans(contract_store, "db"), key=lambda span: span[1]) == [
        ("alpha", T0, T0 + 1, second.id),
        ("beta", T0 + 1, T0 + 2, third.id),
        ("gamma", T0 + 2, T0 + 3, fourth.id),
        ("alpha", T0 + 3, None, None),
    ]
    facts = _timeline(contract_store, "db")
    assert [[f.id for f in _valid_at(facts, at)] for at in range(T0, T0 + 4)] == [
        [first.id],
        [second.id],
        [third.id],
        [fourth.id],
    ]


def test_the_same_value_inside_its_interval_changes_nothing(contract_store: HubStore) -> None:
    first, _ = contract_store.add_fact(fact("db", "host", "alpha", at=T0))
    contract_store.add_fact(fact("db", "host", "beta", at=T0 + 10 * DAY))
    before = _timeline(contract_store, "db")
    again, created = contract_store.add_fact(fact("db", "host", "alpha", at=T0 + 5 * DAY))
    assert not created and again.id == first.id and again == before[0]
    assert _timeline(contract_store, "db") == before


Write = tuple[int, str]  # valid_from, object


def _expected(writes: list[Write], at: int) -> str | None:
    """The object of the write with the greatest valid_from <= ``at``, the last one on ties."""
    starts = [(start, n, obj) for n, (start, obj) in enumerate(writes) if start <= at]
    return max(starts)[2] if starts else None


def _check_tiling(facts: list[Fact]) -> None:
    """One open fact, and each closed one superseded by the fact that starts where it ends."""
    by_id = {f.id: f for f in facts}
    assert len([f for f in facts if f.valid_to is None]) == 1
    for f in facts:
        if f.valid_to is None:
            assert f.superseded_by is None
        else:
            assert f.valid_from <= f.valid_to
            assert f.superseded_by is not None
            assert by_id[f.superseded_by].valid_from == f.valid_to


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.tuples(st.sampled_from(INSTANTS), st.sampled_from(OBJECTS)), min_size=1))
def test_any_sequence_of_writes_gives_one_value_per_instant(
    contract_store: HubStore, writes: list[Write]
) -> None:
    subject = f"svc-{next(_subjects)}"  # a key of its own: the store outlives one example
    kept: list[Write] = []
    for start, obj in writes:
        saved, created = contract_store.add_fact(fact(subject, "host", obj, at=start))
        assert created == (_expected(kept, start) != obj)
        assert saved.object == obj and saved in _valid_at(_timeline(contract_store, subject), start)
        if created:
            kept.append((start, obj))
    facts = _timeline(contract_store, subject)
    _check_tiling(facts)
    for at in PROBES:
        valid = [f.object for f in _valid_at(facts, at)]
        expected = _expected(kept, at)
        assert valid == ([] if expected is None else [expected]), at


def test_a_successor_written_for_a_later_time_supersedes_only_once_in_force(
    contract_store: HubStore,
) -> None:
    """Superseded means replaced by a value in force at ``now``; the change happened when the
    successor took force (or was recorded, if later), which is what ``since`` is checked
    against."""
    held, _ = contract_store.add_fact(fact("db", "host", "alpha", at=T0))
    later = T0 + 30 * DAY
    contract_store.add_fact(fact("db", "host", "beta", at=later))  # recorded at T0 + 30 days
    ahead, _ = contract_store.add_fact(fact("cache", "host", "redis", at=T0))
    contract_store.add_fact(
        NewFact("shop", "cache", "host", "valkey", valid_from=later, recorded_at=T0, source="cli")
    )
    ids = [held.id, ahead.id]
    assert contract_store.superseded_fact_ids(ids, now=later - 1) == set()
    assert contract_store.superseded_fact_ids(ids, now=later) == {held.id, ahead.id}
    # checked (a rule confirmed) after #ahead's successor was recorded, before it took force
    assert contract_store.superseded_fact_ids(ids, now=later, since=T0 + DAY) == {
        held.id,
        ahead.id,
    }
    assert contract_store.superseded_fact_ids(ids, now=later + DAY, since=later + 1) == set()


def test_count_current_facts_counts_what_current_facts_lists(contract_store: HubStore) -> None:
    for n in range(12):
        contract_store.add_fact(fact(f"svc{n}", "host", "alpha", at=T0))
    contract_store.add_fact(fact("svc0", "host", "beta", at=T0 + DAY))  # ahead at T0
    contract_store.add_fact(fact("svc1", "host", "gamma", at=T0 + 2 * DAY, project="billing"))
    for at, count in ((T0 - 1, 0), (T0, 12), (T0 + DAY, 12), (T0 + 3 * DAY, 12)):
        assert contract_store.count_current_facts("shop", at) == count, at
        assert len(contract_store.current_facts("shop", 100, at)) == count, at
    assert contract_store.count_current_facts("billing", T0 + 3 * DAY) == 1


When = tuple[int, str, bool]  # valid_from (or the moment of the write), object, when written
# Instants a millisecond apart, so that a write moved on meets the next one's facts.
NEAR = [T0, T0 + 1, T0 + 2, T0 + DAY]


def _start(kept: list[Write], write: When) -> int:
    """Where ``write`` starts: a stated valid_from as given; a moment of writing moved past
    every millisecond a stored fact starts at."""
    start, _, when_written = write
    taken = {at for at, _ in kept}
    while when_written and start in taken:
        start += 1
    return start


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.tuples(st.sampled_from(NEAR), st.sampled_from(OBJECTS), st.booleans())))
def test_only_a_stated_valid_from_already_taken_leaves_a_fact_valid_at_no_instant(
    contract_store: HubStore, writes: list[When]
) -> None:
    subject = f"svc-{next(_subjects)}"
    kept: list[Write] = []
    emptied = 0  # stated valid_froms another fact already started at: each empties that one
    for write in writes:
        start, obj, when_written = write
        at = _start(kept, write)
        new = fact(subject, "host", obj, at=start, when_written=when_written)
        saved, created = contract_store.add_fact(new)
        assert created == (_expected(kept, at) != obj)
        assert saved in _valid_at(_timeline(contract_store, subject), at)
        if created:
            assert saved.valid_from == at
            emptied += at in {taken for taken, _ in kept}
            kept.append((at, obj))
    facts = _timeline(contract_store, subject)
    if facts:
        _check_tiling(facts)
    assert len([f for f in facts if f.valid_to == f.valid_from]) == emptied
    for at in sorted({T0 - 1, *(f.valid_from + d for f in facts for d in (-1, 0, 1))}):
        expected = _expected(kept, at)
        assert [f.object for f in _valid_at(facts, at)] == ([] if expected is None else [expected])
