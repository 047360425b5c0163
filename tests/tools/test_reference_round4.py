"""Reference sentences a fourth reading (search to add_rule, as a client sees them) found the
tools did not yet keep, one test each."""

from __future__ import annotations

import pytest

from aletheia_mem.tools.registry import TOOLS_BY_NAME
from tests.tools.helpers import body_lines, db_rows, saved_id

# 1692-02-03T16:18:50.124Z in epoch milliseconds: an instant whose seconds, as a float, times
# 1000 lands a millisecond off.
OLD_INSTANT = "1692-02-03T16:18:50.124Z"
OLD_INSTANT_MS = -8_769_886_869_876
# ... and one that a float reads a millisecond early.
LATER_INSTANT = "2038-11-26T08:15:50.023Z"
LATER_INSTANT_MS = 2_174_372_150_023


# fact_history: "as_of (string): facts valid at an ISO 8601 date or epoch milliseconds." One
# instant in either form is the same instant, and the answer names the instant asked for.
@pytest.mark.parametrize(
    "as_of", [OLD_INSTANT, str(OLD_INSTANT_MS), OLD_INSTANT_MS], ids=["iso", "epoch-text", "epoch"]
)
def test_as_of_in_either_form_is_the_instant_a_fact_started(call, as_of):
    fact = {"subject": "clock tower", "predicate": "state", "object": "built"}
    saved_id(call("save_memory", text="An old fact", facts=[{**fact, "valid_from": OLD_INSTANT}]))

    result = call("fact_history", subject="clock tower", as_of=as_of)

    assert body_lines(result) == [
        f'Facts about "clock tower" valid at {OLD_INSTANT}:',
        "- fact #1 clock tower · state = built  (shop, since 1692-02-03)",
    ]
    assert result.structured is not None
    assert result.structured["facts"][0]["valid_from"] == OLD_INSTANT


# search: "since, until (string): ISO 8601 date, date-time or epoch milliseconds." An until
# date-time includes that instant, as since does: a memory saved at it is found.
def test_until_a_date_time_includes_a_memory_saved_at_that_instant(call, clock):
    clock.now = LATER_INSTANT_MS
    saved_id(call("save_memory", text="Clock tower bells ring at noon"))

    result = call("search", query="clock tower bells", until=LATER_INSTANT)

    assert body_lines(result) == [
        "#1 2038-11-26 [note] Clock tower bells ring at noon  (shop, cli)"
    ]


# add_rule: "evidence_memory_ids, evidence_fact_ids (array of number): ids the rule rests on.
# An unknown id is an error." (DESIGN 7: "an error naming it".) No item has id 0 or below.
@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("evidence_memory_ids", "Unknown evidence memory id #0."),
        ("evidence_fact_ids", "Unknown evidence fact id #0."),
    ],
)
def test_an_evidence_id_no_item_can_have_is_an_unknown_id_named_in_the_error(
    call, app, argument, message
):
    saved_id(call("save_memory", text="Staging deploys need the VPN"))

    result = call("add_rule", then="Connect the VPN first", **{argument: [0]})
    negative = call("add_rule", then="Connect the VPN first", **{argument: [-3]})

    assert result.is_error
    assert result.text == message
    assert negative.is_error
    assert negative.text == message.replace("#0", "#-3")
    assert db_rows(app, "SELECT count(*) FROM rules") == [(0,)]


# session_start_context: "project (string): default is the project of the server's working
# directory. For a project-limited token it is the first allowed project." tools/list says both.
def test_session_start_context_project_description_names_both_defaults():
    project = TOOLS_BY_NAME["session_start_context"].definition()["inputSchema"]["properties"][
        "project"
    ]

    assert "working directory" in project["description"]
    assert "first allowed project" in project["description"]
