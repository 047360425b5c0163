"""The Context economics line tells what the block left out (DESIGN §8: "items listed, ~tokens
..., what was cut"): the current facts past the first 10 that the Facts section lists (the
reference's "up to 10 active facts"), and every pinned memory past the ones read, not only those
the budget cut of them."""

from __future__ import annotations

import re

from aletheia_mem.storage.entries import NewMemory
from tests.conftest import REFERENCE_NOW
from tests.tools.helpers import body_lines

ECONOMICS = re.compile(
    r"Context economics: (\d+) items? listed; ~(\d+) tokens for this block"
    r" \(estimate, chars/4\); (.+)\."
)


def _outcome(result):
    match = ECONOMICS.fullmatch(body_lines(result)[-1])
    assert match, result.text
    return match.group(3)


def _facts(call, count, project="shop"):
    facts = [{"subject": f"svc{n}", "predicate": "db", "object": "PG 16"} for n in range(count)]
    call("save_memory", text="The services' databases", facts=facts, project=project)


def _fact_lines(result):
    return [line for line in body_lines(result) if line.startswith("- fact #")]


def test_current_facts_past_the_first_ten_are_told_as_left_out(call):
    _facts(call, 13)

    result = call("session_start_context")

    assert len(_fact_lines(result)) == 10
    assert _outcome(result) == "3 current facts left out past the first 10; search finds them"
    assert result.structured["facts_left_out"] == 3
    assert result.structured["items_cut"] == 0


def test_one_fact_past_the_ten_is_told_in_the_singular(call):
    _facts(call, 11)

    result = call("session_start_context")

    assert _outcome(result) == "1 current fact left out past the first 10; search finds it"


def test_ten_current_facts_leave_nothing_out(call):
    _facts(call, 10)
    _facts(call, 5, project="billing")  # another project's facts are not this block's

    result = call("session_start_context")

    assert len(_fact_lines(result)) == 10
    assert _outcome(result) == "nothing cut"
    assert result.structured["facts_left_out"] == 0


def test_facts_left_out_are_told_after_what_the_budget_cut(call):
    _facts(call, 12)
    for number in range(12):
        call("add_rule", then=f"Rule {number}: " + "keep the tests green " * 33)

    result = call("session_start_context")

    cut = result.structured["items_cut"]
    told = _outcome(result)
    assert cut > 0
    assert told.startswith(f"{cut} items cut to stay near 6000 characters (")
    assert told.endswith(
        " rules); 2 current facts left out past the first 10; search finds the facts;"
        " list_rules lists the rules"
    )


def test_search_finds_them_is_said_once_after_the_cut_memories_and_the_facts_left_out(call, clock):
    _facts(call, 13)
    for number in range(60):
        call("save_memory", text=f"note {number}", title=f"Note {number} " + "about checkout " * 8)

    result = call("session_start_context", limit=100)

    cut = result.structured["items_cut"]
    assert cut > 0
    assert _outcome(result) == (
        f"{cut} items cut to stay near 6000 characters;"
        " 3 current facts left out past the first 10; search finds them"
    )


def test_every_pinned_memory_past_the_ones_read_counts_as_cut(call, app):
    """More pinned memories than the block reads (353) are all counted, not only the read
    ones the budget cut."""
    for number in range(400):
        new = NewMemory("shop", "note", "note", "x", f"pinned {number}", "cli", REFERENCE_NOW,
                        f"pinned-{number}", pinned=True)  # fmt: skip
        app.store.add_memory(new)

    result = call("session_start_context", limit=1)

    listed = len(result.structured["pinned"])
    assert 0 < listed < 353
    assert result.structured["items_cut"] == 400 - listed
    assert _outcome(result) == (
        f"{400 - listed} items cut to stay near 6000 characters; search finds them"
    )


def test_one_cut_item_is_told_in_the_singular(call):
    for number in range(8):
        call("add_rule", then=f"Rule {number}: " + "keep the tests green " * 37)

    result = call("session_start_context")

    assert result.structured["items_cut"] == 1
    assert _outcome(result) == (
        "1 item cut to stay near 6000 characters (1 rule); list_rules lists the rules"
    )
