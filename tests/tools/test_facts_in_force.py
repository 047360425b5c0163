"""A fact is current while it is valid now (valid_from <= now < valid_to), in every view.

Fact #1 (PG 16, from 2026-01-01) gets a successor written for a later time (#2, PG 17, from
2030-01-01): #1 has a valid_to and a superseded_by, yet it is the value in force until 2030, as
the CLI's history and the web's Facts page show it. fact_history (text and structuredContent),
search, session_start_context and list_rules's re-check say the same, on both stores.
"""

from __future__ import annotations

from tests.tools.helpers import DAY_MS, body_lines, rule_id_of

JAN_2030 = 1_893_456_000_000  # 2030-01-01T00:00:00.000Z; the clock stands at 2026-10-29
IN_FORCE_1 = "- fact #1 svc · db = PG 16  (shop, since 2026-01-01; #2 from 2030-01-01)"
UPCOMING_2 = "- fact #2 svc · db = PG 17  (shop, upcoming from 2030-01-01)"
ENDED_1 = "- fact #1 svc · db = PG 16  (shop, 2026-01-01 to 2030-01-01, superseded by #2)"
CURRENT_2 = "- fact #2 svc · db = PG 17  (shop, since 2030-01-01)"


def _db(call, value, valid_from):
    fact = {"subject": "svc", "predicate": "db", "object": value, "valid_from": valid_from}
    return call("save_memory", text=f"svc now uses {value}", facts=[fact])


def _pg16_then_pg17_in_2030(call):
    _db(call, "PG 16", "2026-01-01")
    _db(call, "PG 17", "2030-01-01")


def _current(result):
    return {fact["id"]: fact["current"] for fact in result.structured["facts"]}


def test_fact_history_calls_the_value_in_force_current_and_the_later_one_upcoming(call):
    _pg16_then_pg17_in_2030(call)

    now = call("fact_history", subject="svc")
    every = call("fact_history", subject="svc", include_superseded=True)

    assert body_lines(now) == ['Current facts about "svc":', IN_FORCE_1]
    assert _current(now) == {1: True}
    assert now.structured["facts"][0]["valid_to"] == "2030-01-01T00:00:00.000Z"
    assert now.structured["facts"][0]["superseded_by"] == 2
    assert body_lines(every)[1:] == [UPCOMING_2, IN_FORCE_1]
    assert _current(every) == {2: False, 1: True}


def test_once_the_successor_is_in_force_the_old_value_reads_as_superseded(call, clock):
    _pg16_then_pg17_in_2030(call)
    clock.now = JAN_2030

    now = call("fact_history", subject="svc")
    every = call("fact_history", subject="svc", include_superseded=True)

    assert body_lines(now) == ['Current facts about "svc":', CURRENT_2]
    assert body_lines(every)[1:] == [CURRENT_2, ENDED_1]
    assert _current(every) == {2: True, 1: False}


def test_as_of_a_past_time_shows_each_fact_as_it_stands_now(call):
    _db(call, "PG 15", "2025-01-01")
    _pg16_then_pg17_in_2030(call)  # #2 PG 16 from 2026, #3 PG 17 from 2030

    result = call("fact_history", subject="svc", as_of="2025-06-01")

    assert body_lines(result)[1:] == [
        "- fact #1 svc · db = PG 15  (shop, 2025-01-01 to 2026-01-01, superseded by #2)"
    ]
    assert _current(result) == {1: False}


def test_an_upcoming_value_between_two_reads_as_upcoming_with_its_successor(call):
    _db(call, "PG 16", "2026-01-01")
    _db(call, "PG 18", "2031-01-01")
    _db(call, "PG 17", "2030-01-01")  # splits: #3 from 2030 to 2031, then #2

    lines = body_lines(call("fact_history", subject="svc", include_superseded=True))

    assert lines[1:] == [
        "- fact #2 svc · db = PG 18  (shop, upcoming from 2031-01-01)",
        "- fact #3 svc · db = PG 17  (shop, upcoming from 2030-01-01; #2 from 2031-01-01)",
        "- fact #1 svc · db = PG 16  (shop, since 2026-01-01; #3 from 2030-01-01)",
    ]


def test_search_shows_the_value_in_force_as_current(call):
    _pg16_then_pg17_in_2030(call)

    result = call("search", query="svc db")

    assert body_lines(result)[0] == IN_FORCE_1.removeprefix("- ")
    assert _current(result) == {1: True}


def test_session_start_context_lists_the_value_in_force_as_current(call):
    _pg16_then_pg17_in_2030(call)

    result = call("session_start_context")

    assert IN_FORCE_1 in body_lines(result)
    assert _current(result) == {1: True}


def test_a_rule_on_the_value_in_force_is_flagged_only_once_its_successor_takes_force(call, clock):
    """Whoever confirms the rule before 2030 sees the old value still in force: the change
    comes later, with the time alone (no write), and a confirmation after it clears it."""
    _pg16_then_pg17_in_2030(call)
    rule_id = rule_id_of(call("add_rule", then="Use PG 16 features only", evidence_fact_ids=[1]))

    added = body_lines(call("list_rules"))[0]
    clock.now = JAN_2030 - DAY_MS
    call("confirm_rule", id=rule_id)
    clock.now = JAN_2030 - 1
    still = body_lines(call("list_rules"))[0]
    clock.now = JAN_2030
    flagged = body_lines(call("list_rules"))[0]
    structured = call("list_rules").structured["rules"][0]
    clock.advance(1)
    call("confirm_rule", id=rule_id)
    confirmed = body_lines(call("list_rules"))[0]

    assert "re-check" not in added and "re-check" not in still
    assert flagged.endswith("  [re-check: evidence fact #1 was superseded]")
    assert structured["recheck"] == "evidence fact #1 was superseded"
    assert "re-check" not in confirmed


def test_a_successor_written_for_a_past_time_flags_the_rule_at_once(call, clock):
    """As before: a backdated successor is in force already when it is recorded."""
    _db(call, "PG 16", "2026-01-01")
    call("add_rule", then="Use PG 16 features only", evidence_fact_ids=[1])
    _db(call, "PG 17", "2026-06-01")

    assert body_lines(call("list_rules"))[0].endswith(
        "  [re-check: evidence fact #1 was superseded]"
    )
