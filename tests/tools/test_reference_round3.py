"""Reference sentences a third reading found the tools did not yet keep, one test each."""

from __future__ import annotations

import re

import pytest

from aletheia_mem.domain import memories
from tests.tools.helpers import body_lines, rule_id_of, saved_id

ECONOMICS = re.compile(
    r"Context economics: (\d+) items? listed; ~\d+ tokens for this block \(estimate, chars/4\);"
    r" (.+)\."
)


def _pinned_lines(result):
    lines = body_lines(result)
    start = lines.index("## Pinned") + 1
    end = next(i for i, line in enumerate(lines[start:], start) if not line.startswith("- #"))
    return lines[start:end]


def _economics(result):
    match = ECONOMICS.fullmatch(body_lines(result)[-1])
    assert match, result.text
    return int(match.group(1)), match.group(2)


# session_start_context: "Load the session-start block for a project: pinned memories, ...";
# limit caps the recent *unpinned* memories only.
def test_every_pinned_memory_is_listed_while_the_block_has_room(call):
    for number in range(1, 26):
        call("save_memory", text=f"pinned note {number}", pinned=True)

    result = call("session_start_context", limit=1)

    assert len(_pinned_lines(result)) == 25
    assert _economics(result) == (25, "nothing cut")


# DESIGN 8: the Context economics line says what was cut; a pinned memory left out is cut.
def test_pinned_memories_past_the_budget_are_counted_as_cut(call):
    for number in range(1, 31):
        call(
            "save_memory",
            text=f"pinned {number}",
            title=f"pinned {number} " + "x" * 380,
            pinned=True,
        )

    result = call("session_start_context", limit=1)

    listed = len(_pinned_lines(result))
    assert 0 < listed < 30
    assert _economics(result) == (
        listed,
        f"{30 - listed} items cut to stay near 6000 characters; search finds them",
    )


# search: "kind (string): for example observation, summary or note." Models write Observation.
@pytest.mark.parametrize("kind", ["Observation", " observation ", "OBSERVATION"])
def test_kind_filter_ignores_case_and_surrounding_spaces(call, app, kind):
    saved_id(call("save_memory", text="pnpm note from an agent"))
    observation = memories.MemoryInput(
        text="ran pnpm install", project="shop", tool="claude-code", kind="observation"
    )
    memories.save_memory(app.store, app.clock, observation)

    lines = body_lines(call("search", query="pnpm", kind=kind))

    assert lines == ["#2 2026-10-29 [note] ran pnpm install  (shop, claude-code)"]


# get_observations: "ids ... Unknown ids are skipped." No memory has id 0 or below.
def test_ids_no_memory_can_have_are_skipped_like_other_unknown_ids(call):
    saved_id(call("save_memory", text="Staging deploys need the VPN", type="gotcha"))

    found = call("get_observations", ids=[0, 1, -3])
    nothing = call("get_observations", ids=[0])

    assert body_lines(found)[0] == "#1 [gotcha] Staging deploys need the VPN"
    assert found.structured is not None
    assert found.structured["missing_ids"] == [0, -3]
    assert not nothing.is_error
    assert nothing.text == "No memory found for id #0."


# timeline: "With nothing to anchor on it returns Nothing to anchor on."
@pytest.mark.parametrize("anchor", [0, -1])
def test_an_anchor_no_memory_can_have_is_nothing_to_anchor_on(call, anchor):
    saved_id(call("save_memory", text="note 1"))

    result = call("timeline", anchor=anchor, query="note")

    assert not result.is_error
    assert result.text == "Nothing to anchor on."


# With no lower bound on these ids, a whole number past a 64-bit integer is refused with a
# message, not a crash of the store's driver.
def test_ids_past_the_64_bit_range_are_refused_with_a_message(call):
    observations = call("get_observations", ids=[-(2**70)])
    timeline = call("timeline", anchor=-(2**70))

    assert observations.is_error
    assert observations.text == f"each of ids must be at least {-(2**63)}."
    assert timeline.is_error
    assert timeline.text == f"anchor must be at least {-(2**63)}."


# DESIGN 8: the Context economics line says what was cut. Requests cut for room are not found
# by search (no tool finds them), so the line must not say that search finds every cut item.
def test_cut_requests_are_named_and_not_said_to_be_found_by_search(call, app, clock):
    episode = app.store.start_episode("shop", "claude-code", clock())
    for number in range(1, 4):
        app.store.add_request(episode, f"request {number} " + "q" * 200, clock())
    for number in range(1, 31):  # pinned ones fill the block: only the first request stays
        call("save_memory", text=f"pinned {number}", title=f"pinned {number} " + "x" * 380,
             pinned=True)  # fmt: skip

    result = call("session_start_context", limit=100)

    lines = body_lines(result)
    requests = lines[lines.index("## Requests") + 1 :][:2]
    assert requests[0].startswith("- 2026-10-29 19:46 (claude-code) request 3 qqq")
    assert not requests[1].startswith("- 2026-")
    listed, outcome = _economics(result)
    cut_memories = 30 - (listed - 1)
    assert outcome == (
        f"{cut_memories + 2} items cut to stay near 6000 characters"
        f" ({cut_memories} memories, 2 requests); search finds the memories"
    )


# Rules go in first; rules past the budget are found by list_rules, not by search.
def test_cut_rules_are_named_with_the_tool_that_lists_them(call):
    for number in range(1, 11):
        call("add_rule", then=f"rule {number} " + "r" * 700)

    result = call("session_start_context")

    listed, outcome = _economics(result)
    assert outcome == (
        f"{10 - listed} items cut to stay near 6000 characters ({10 - listed} rules);"
        " list_rules lists the rules"
    )


# add_rule: "when (string): the situation. Default: always." and "an identical rule is not
# added twice": a rule for "Always" is the rule for the default, and list_rules shows one line.
@pytest.mark.parametrize("when", ["Always", "ALWAYS", " always "])
def test_a_rule_for_always_in_any_case_is_the_rule_for_the_default_when(call, when):
    first = call("add_rule", then="Run the tests before you commit")

    again = call("add_rule", then="Run the tests before you commit", when=when)

    assert again.text == (
        f"Rule already saved ({rule_id_of(first)}). An identical rule is not added twice."
    )
    assert len(body_lines(call("list_rules"))) == 1


# The same situation name with other spacing is the same situation: scopeName is a name.
def test_a_situation_name_with_other_spacing_is_the_same_rule(call):
    first = call(
        "add_rule", then="Ask for a review", scopeTier="situation", scopeName="reviewing PRs"
    )

    again = call(
        "add_rule", then="Ask for a review", scopeTier="situation", scopeName=" reviewing\n  PRs "
    )

    assert again.text == (
        f"Rule already saved ({rule_id_of(first)}). An identical rule is not added twice."
    )
    assert body_lines(call("list_rules"))[0].startswith(
        "- Always: Ask for a review  [situation: reviewing PRs]  (id "
    )


@pytest.mark.parametrize(
    ("files", "expected"),
    [("src/a.py", ["src/a.py"]), ("data/a,b.csv", ["data/a,b.csv"])],
)
def test_files_as_one_string_are_read_as_a_list_of_paths(call, files, expected):
    """As ids may come as "1,2", paths may come as one string: one path, since a path may
    hold a comma (a JSON array's text lists several)."""
    result = call("save_memory", text="Paths sent as one string", files=files)
    assert not result.is_error, result.text
    for path in expected:
        found = call("search", file=path).text
        assert f"#{saved_id(result)} " in found, found
