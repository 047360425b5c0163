"""How ``search`` ranks: identifiers, old and pinned decisions, superseded facts, field weights."""

from __future__ import annotations

import re

from aletheia_mem.search.rank import DAY_MS, Ranking
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.timefmt import format_instant

YEAR_MS = 365 * DAY_MS


def _ids(text: str) -> list[int]:
    """The memory ids of a search result, in order (fact lines have no #id)."""
    return [int(n) for n in re.findall(r"^#(\d+) ", text, flags=re.MULTILINE)]


def _save(call, text: str, **extra) -> int:
    result = call("save_memory", text=text, **extra)
    assert not result.is_error, result.text
    return int(re.search(r"#(\d+)", result.text).group(1))


def test_identifier_query_finds_the_memory_that_spells_it_differently(call) -> None:
    target = _save(call, "Raise max_retries to 5 for the payment client; the gateway flaps.")
    _save(call, "The payment client logs every request at debug level.")
    _save(call, "Retries of failed jobs are capped by the queue, not by us.")
    for spelling in ("maxRetries", "MaxRetries", "max-retries", "MAX_RETRIES"):
        assert _ids(call("search", query=spelling).text)[0] == target, spelling


def test_camel_case_memory_is_found_by_its_words(call) -> None:
    target = _save(call, "ConfigParser drops comments when it writes the file back.")
    _save(call, "Parser errors show the line number since 2.3.")
    assert _ids(call("search", query="config parser").text)[0] == target


def test_file_path_in_a_query_finds_the_memory_about_that_file(call) -> None:
    target = _save(call, "Connection pooling lives here.", files=["src/shop/db/pool.py"])
    _save(call, "The pool of workers is sized from the CPU count.")
    assert _ids(call("search", query="src/shop/db/pool.py").text)[0] == target


def test_word_forms_match_by_stemming(call) -> None:
    target = _save(call, "Deploying on Fridays is forbidden after the outage.")
    assert _ids(call("search", query="deployment friday").text) == [target]


def test_title_match_ranks_above_a_match_in_the_text(call) -> None:
    in_text = _save(call, "We talked about many things, among them caching of sessions.")
    in_title = _save(call, "Keep sessions in memory for now.", title="Session caching")
    assert _ids(call("search", query="caching").text) == [in_title, in_text]


def test_old_pinned_decision_is_still_found(call, clock) -> None:
    decision = _save(call, "Use pnpm, not npm, in the shop repo.", type="decision", pinned=True)
    clock.advance(3 * YEAR_MS)
    for n in range(25):
        _save(call, f"npm audit output number {n} was noisy again today.")
    found = _ids(call("search", query="pnpm npm", limit=5).text)
    assert decision in found


def test_three_year_old_memory_is_still_found_without_a_pin(call, clock) -> None:
    old = _save(call, "The billing export runs at 02:00 UTC because of the bank's cut-off.")
    clock.advance(3 * YEAR_MS)
    _save(call, "Unrelated newer memory about the login page.")
    assert _ids(call("search", query="billing export").text) == [old]


def test_pinned_memory_wins_a_near_tie(call) -> None:
    plain = _save(call, "Staging database is refreshed weekly.")
    pinned = _save(call, "Staging database is refreshed nightly.", pinned=True)
    assert _ids(call("search", query="staging database refreshed").text)[0] == pinned
    assert plain in _ids(call("search", query="staging database refreshed").text)


def test_newer_memory_wins_a_tie(call, clock) -> None:
    older = _save(call, "The cache key includes the locale.")
    clock.advance(30 * DAY_MS)
    newer = _save(call, "The cache key includes the currency.")
    assert _ids(call("search", query="cache key").text) == [newer, older]


def _billing_memories(call, clock) -> tuple[int, int]:
    old = _save(
        call,
        "Billing database: the billing database is MySQL.",
        facts=[{"subject": "billing", "predicate": "database", "object": "MySQL"}],
    )
    clock.advance(DAY_MS)
    new = _save(
        call,
        "Billing database is PostgreSQL now.",
        facts=[{"subject": "billing", "predicate": "database", "object": "PostgreSQL"}],
    )
    return old, new


def test_superseded_fact_does_not_outrank_the_current_one(call, clock) -> None:
    old, new = _billing_memories(call, clock)
    text = call("search", query="billing database").text
    fact_lines = [line for line in text.splitlines() if line.startswith("fact ")]
    assert len(fact_lines) == 1 and "PostgreSQL" in fact_lines[0]
    assert _ids(text) == [new, old]


def test_without_the_stale_penalty_the_older_memory_would_win(
    store: SqliteStore, call, clock
) -> None:
    old, new = _billing_memories(call, clock)
    query = MemoryQuery(terms=("billing", "database"), projects=("shop",))
    assert store.rank_memory_ids(query, clock(), Ranking(stale_factor=1.0)) == [old, new]
    assert store.rank_memory_ids(query, clock()) == [new, old]


def test_a_memory_whose_fact_is_replaced_later_ranks_as_current_until_then(
    store: SqliteStore, call, clock
) -> None:
    """A value written for a later time makes the old memory stale from that time, not at once."""
    old = _save(
        call,
        "Billing database: the billing database is MySQL.",
        facts=[{"subject": "billing", "predicate": "database", "object": "MySQL"}],
    )
    clock.advance(DAY_MS)
    starts = clock() + 2 * DAY_MS
    new = _save(
        call,
        "Billing database is PostgreSQL now.",
        facts=[
            {
                "subject": "billing",
                "predicate": "database",
                "object": "PostgreSQL",
                "valid_from": format_instant(starts),
            }
        ],
    )
    query = MemoryQuery(terms=("billing", "database"), projects=("shop",))
    assert store.stale_memory_ids([old], clock()) == set()
    assert store.rank_memory_ids(query, clock()) == [old, new]
    clock.advance(2 * DAY_MS)
    assert store.stale_memory_ids([old], clock()) == {old}
    assert store.rank_memory_ids(query, clock()) == [new, old]


def test_facts_are_listed_before_memories(call) -> None:
    _save(
        call,
        "The shop deploys with Kamal.",
        facts=[{"subject": "shop", "predicate": "deploy tool", "object": "Kamal"}],
    )
    lines = [line for line in call("search", query="kamal").text.splitlines() if "Kamal" in line]
    assert lines[0].startswith("fact ")
    assert lines[-1].startswith("#")


def test_superseding_a_fact_marks_its_memory_stale_and_only_then(
    store: SqliteStore, call, clock
) -> None:
    first = _save(
        call,
        "Payments use Stripe.",
        facts=[{"subject": "payments", "predicate": "provider", "object": "Stripe"}],
    )
    assert store.stale_memory_ids([first], clock()) == set()
    clock.advance(1000)  # saved in the same millisecond, Adyen would hold from the next one
    _save(
        call,
        "Payments moved to Adyen.",
        facts=[{"subject": "payments", "predicate": "provider", "object": "Adyen"}],
    )
    assert store.stale_memory_ids([first], clock()) == {first}


def test_common_words_are_left_out_when_they_would_blow_the_score_budget(
    store: SqliteStore, call, clock
) -> None:
    for n in range(12):
        _save(call, f"service log line {n}")
    rare = _save(call, "service outage postmortem")
    query = MemoryQuery(terms=("service", "postmortem"), projects=("shop",))
    assert store.rank_memory_ids(query, clock(), Ranking(score_budget=5)) == [rare]
    assert len(store.rank_memory_ids(query, clock(), Ranking(score_budget=1000))) == 13


def test_a_query_of_only_common_words_scores_the_newest_matches(store: SqliteStore, call, clock):
    ids = [_save(call, f"service log line {n}") for n in range(12)]
    query = MemoryQuery(terms=("service", "log"), projects=("shop",))
    found = store.rank_memory_ids(query, clock(), Ranking(score_budget=4))
    assert set(found) <= set(ids[-5:]) and found


def test_date_order_lists_every_match_regardless_of_the_budget(call) -> None:
    ids = [_save(call, f"service log line {n}") for n in range(30)]
    text = call("search", query="service", order="date_desc", limit=100).text
    assert _ids(text) == list(reversed(ids))
