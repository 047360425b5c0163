"""Facts in time: supersession through save_memory and the three views of fact_history."""

from __future__ import annotations

import re

import pytest

from aletheia_mem.timefmt import FIRST_MS
from tests.conftest import REFERENCE_NOW
from tests.tools.helpers import DAY_MS, body_lines, db_rows


def _state(call, database, **fact):
    return call(
        "save_memory",
        text=f"payments-api now runs on {database}",
        facts=[{"subject": "payments-api", "predicate": "database", "object": database, **fact}],
    )


def _two_versions(call, clock):
    """Fact #1 (PostgreSQL 15) from 2026-10-29, superseded by #2 (PostgreSQL 16) on 10-30."""
    _state(call, "PostgreSQL 15")
    clock.advance(DAY_MS)
    _state(call, "PostgreSQL 16")


CURRENT = "- fact #2 payments-api · database = PostgreSQL 16  (shop, since 2026-10-30)"
OLD = (
    "- fact #1 payments-api · database = PostgreSQL 15"
    "  (shop, 2026-10-29 to 2026-10-30, superseded by #2)"
)


def test_unknown_subject_says_no_facts_were_found(call):
    result = call("fact_history", subject="shop")

    assert not result.is_error
    assert result.text == 'No facts found for subject "shop".'


def test_a_quote_in_the_subject_is_escaped_as_search_and_work_state_read_quote_it(call):
    call(
        "save_memory",
        text="the quoted service",
        facts=[{"subject": 'say "hi" \\ bye', "predicate": "owner", "object": "ana"}],
    )

    missing = call("fact_history", subject='a"b')
    found = call("fact_history", subject='say "hi" \\ bye')

    assert missing.text == 'No facts found for subject "a\\"b".'
    assert 'Current facts about "say \\"hi\\" \\\\ bye":' in found.text


def test_subject_is_required(call):
    result = call("fact_history", subject=" ")

    assert result.is_error
    assert result.text == "subject is required."


def test_default_lists_current_facts_only(call, clock):
    _two_versions(call, clock)

    lines = body_lines(call("fact_history", subject="payments-api"))

    assert lines == ['Current facts about "payments-api":', CURRENT]


def test_include_superseded_lists_the_whole_history_newest_first(call, clock):
    _two_versions(call, clock)

    lines = body_lines(call("fact_history", subject="payments-api", include_superseded=True))

    assert lines == ['History of the facts about "payments-api", newest first:', CURRENT, OLD]


@pytest.mark.parametrize("later_ms", [2 * 60_000, 1_000])  # minutes apart, the same minute
def test_a_value_replaced_the_day_it_was_written_shows_the_instants_to_pass_as_as_of(
    call, clock, later_ms
):
    _state(call, "PostgreSQL 15")  # 2026-10-29T19:46:45.563Z
    clock.advance(later_ms)
    _state(call, "PostgreSQL 16")

    lines = body_lines(call("fact_history", subject="payments-api", include_superseded=True))

    start, end = re.search(r"\(shop, (\S+) to (\S+), superseded by #2\)$", lines[2]).groups()
    assert start == "2026-10-29T19:46:45.563Z"
    for shown, value in ((start, "PostgreSQL 15"), (end, "PostgreSQL 16")):  # each reads back
        valid = body_lines(call("fact_history", subject="payments-api", as_of=shown))
        assert len(valid) == 2 and value in valid[1]


def test_as_of_shows_the_facts_valid_at_that_instant(call, clock):
    _two_versions(call, clock)

    before = body_lines(call("fact_history", subject="payments-api", as_of="2026-10-30T12:00Z"))
    switch = call("fact_history", subject="payments-api", as_of=REFERENCE_NOW + DAY_MS)

    assert before == [
        'Facts about "payments-api" valid at 2026-10-30T12:00:00.000Z:',
        OLD,
    ]
    assert body_lines(switch)[1:] == [CURRENT]


def test_as_of_wins_over_include_superseded(call, clock):
    _two_versions(call, clock)

    lines = body_lines(
        call(
            "fact_history",
            subject="payments-api",
            as_of=str(REFERENCE_NOW),
            include_superseded=True,
        )
    )

    assert lines == ['Facts about "payments-api" valid at 2026-10-29T19:46:45.563Z:', OLD]


def test_as_of_before_any_fact_finds_none(call, clock):
    _two_versions(call, clock)

    result = call("fact_history", subject="payments-api", as_of="2020-01-01")

    assert result.text == 'No facts found for subject "payments-api".'


def test_the_same_object_again_changes_nothing(call, app, clock):
    _state(call, "PostgreSQL 16")
    clock.advance(DAY_MS)
    call(
        "save_memory",
        text="still on PostgreSQL 16",
        facts=[{"subject": "Payments-API ", "predicate": "database", "object": "PostgreSQL 16"}],
    )

    assert db_rows(app, "SELECT id, valid_to, superseded_by FROM facts") == [(1, None, None)]
    assert body_lines(call("fact_history", subject="payments-api"))[1:] == [
        "- fact #1 payments-api · database = PostgreSQL 16  (shop, since 2026-10-29)"
    ]


def test_superseded_fact_is_closed_at_the_new_valid_from(call, app, clock):
    _two_versions(call, clock)

    assert db_rows(
        app, "SELECT id, valid_from, valid_to, superseded_by FROM facts ORDER BY id"
    ) == [
        (1, REFERENCE_NOW, REFERENCE_NOW + DAY_MS, 2),
        (2, REFERENCE_NOW + DAY_MS, None, None),
    ]


def test_valid_from_sets_when_a_fact_starts(call, app):
    _state(call, "PostgreSQL 14", valid_from="2026-01-01")

    assert db_rows(app, "SELECT valid_from FROM facts") == [(1_767_225_600_000,)]
    assert body_lines(call("fact_history", subject="payments-api"))[1:] == [
        "- fact #1 payments-api · database = PostgreSQL 14  (shop, since 2026-01-01)"
    ]


@pytest.mark.parametrize(
    ("valid_from", "stored"),
    [(-1, -1), ("1969-12-31T23:59:59.999Z", -1), ("0001-01-01", FIRST_MS), ("1970-01-01", 0)],
)
def test_a_fact_may_start_before_1970(call, app, valid_from, stored):
    assert not _state(call, "PostgreSQL 9", valid_from=valid_from).is_error
    assert db_rows(app, "SELECT valid_from FROM facts") == [(stored,)]


def test_subject_matches_without_regard_to_case_or_spaces(call, clock):
    _two_versions(call, clock)

    lines = body_lines(call("fact_history", subject="  PAYMENTS-API "))

    assert lines[1:] == [CURRENT]


def test_predicate_and_project_narrow_the_match(call):
    call(
        "save_memory",
        text="payments facts",
        facts=[
            {"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 16"},
            {"subject": "payments-api", "predicate": "owner", "object": "team-billing"},
        ],
    )
    call(
        "save_memory",
        text="payments facts seen from billing",
        project="billing",
        facts=[{"subject": "payments-api", "predicate": "owner", "object": "team-core"}],
    )

    by_predicate = body_lines(call("fact_history", subject="payments-api", predicate="database"))
    by_project = body_lines(call("fact_history", subject="payments-api", project="billing"))
    every = body_lines(call("fact_history", subject="payments-api"))

    assert by_predicate[1:] == [
        "- fact #1 payments-api · database = PostgreSQL 16  (shop, since 2026-10-29)"
    ]
    assert by_project[1:] == [
        "- fact #3 payments-api · owner = team-core  (billing, since 2026-10-29)"
    ]
    assert len(every) == 4


def test_unreadable_as_of_is_an_error(call):
    result = call("fact_history", subject="payments-api", as_of="yesterday")

    assert result.is_error
    assert result.text == "as_of must be an ISO 8601 date, date-time or epoch milliseconds."


def _db(call, value, valid_from):
    return call(
        "save_memory",
        text=f"svc now uses {value}",
        facts=[{"subject": "svc", "predicate": "db", "object": value, "valid_from": valid_from}],
    )


def test_a_write_before_a_future_fact_splits_the_timeline_without_overlap(call, app):
    _db(call, "B", "2026-01-01")
    _db(call, "C", "2030-01-01")
    _db(call, "A", "2026-12-04")

    rows = db_rows(app, "SELECT id, object, valid_from, valid_to, superseded_by FROM facts")
    as_of = body_lines(call("fact_history", subject="svc", as_of="2027-01-01"))
    before = body_lines(call("fact_history", subject="svc", as_of="2026-06-01"))
    later = body_lines(call("fact_history", subject="svc", as_of="2030-01-01"))

    jan_2026, dec_2026, jan_2030 = 1_767_225_600_000, 1_796_342_400_000, 1_893_456_000_000
    assert sorted(rows) == [
        (1, "B", jan_2026, dec_2026, 3),
        (2, "C", jan_2030, None, None),
        (3, "A", dec_2026, jan_2030, 2),
    ]
    assert [line.split("  ")[0] for line in as_of[1:]] == ["- fact #3 svc · db = A"]
    assert [line.split("  ")[0] for line in before[1:]] == ["- fact #1 svc · db = B"]
    assert [line.split("  ")[0] for line in later[1:]] == ["- fact #2 svc · db = C"]


def test_a_backdated_write_keeps_the_later_fact_visible_as_of_its_start(call):
    _db(call, "A", "2026-06-01")
    _db(call, "B", "2026-01-01")

    june = body_lines(call("fact_history", subject="svc", as_of="2026-06-01"))
    march = body_lines(call("fact_history", subject="svc", as_of="2026-03-01"))

    assert [line.split("  ")[0] for line in june[1:]] == ["- fact #1 svc · db = A"]
    assert [line.split("  ")[0] for line in march[1:]] == ["- fact #2 svc · db = B"]


def test_a_value_for_a_time_still_ahead_is_not_current_yet(call, clock):
    _db(call, "B", "2026-01-01")
    _db(call, "C", "2030-01-01")  # the clock stands at 2026-10-29

    current = body_lines(call("fact_history", subject="svc"))
    history = body_lines(call("fact_history", subject="svc", include_superseded=True))
    clock.advance(4 * 365 * DAY_MS)
    in_2030 = body_lines(call("fact_history", subject="svc"))

    assert [line.split("  ")[0] for line in current[1:]] == ["- fact #1 svc · db = B"]
    assert [line.split("  ")[0] for line in history[1:]] == [
        "- fact #2 svc · db = C",
        "- fact #1 svc · db = B",
    ]
    assert [line.split("  ")[0] for line in in_2030[1:]] == ["- fact #2 svc · db = C"]


def _fact(subject: str, predicate: str, value: str, **more: object) -> dict[str, object]:
    return {"subject": subject, "predicate": predicate, "object": value, **more}


def test_two_values_for_one_subject_and_predicate_in_one_call_are_refused(call, app):
    """Saved, facts[0] would hold from T to T (superseded by facts[1] at once): a fact valid
    at no instant, which as_of never finds. Subject and predicate match as the store keys them."""
    result = call(
        "save_memory",
        text="atomic3",
        facts=["a note", _fact("a", "b", "c"), _fact(" A ", "B", "z")],
    )

    assert result.is_error
    assert result.text == (
        'facts[2] gives subject "A" and predicate "B" another value than facts[1] from the same'
        " time: one call states one value for each (a later valid_from records a change)."
    )
    assert db_rows(app, "SELECT COUNT(*) FROM memories") == [(0,)]
    assert db_rows(app, "SELECT COUNT(*) FROM facts") == [(0,)]


def test_two_values_from_one_valid_from_are_refused(call, app):
    result = call(
        "save_memory",
        text="two values on new year's day",
        facts=[
            _fact("api", "port", "80", valid_from="2026-01-01"),
            _fact("api", "port", "8080", valid_from=1_767_225_600_000),
        ],
    )

    assert result.is_error
    assert result.text.startswith('facts[1] gives subject "api" and predicate "port" another')
    assert db_rows(app, "SELECT COUNT(*) FROM facts") == [(0,)]


def test_one_call_may_state_the_same_value_twice_or_a_change_at_a_later_valid_from(call, app):
    twice = call(
        "save_memory",
        text="the same value twice",
        facts=[_fact("a", "b", "c"), _fact("A", "b", "c"), _fact("a", "other", "z")],
    )
    change = call(
        "save_memory",
        text="a change in one call",
        facts=[
            _fact("api", "port", "80", valid_from="2026-01-01"),
            _fact("api", "port", "8080", valid_from="2026-02-01"),
        ],
    )

    assert not twice.is_error and not change.is_error
    assert db_rows(
        app, "SELECT subject, predicate, object, superseded_by FROM facts ORDER BY id"
    ) == [
        ("a", "b", "c", None),
        ("a", "other", "z", None),
        ("api", "port", "80", 4),
        ("api", "port", "8080", None),
    ]
