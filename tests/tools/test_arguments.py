"""Tool arguments as models send them: a blank optional argument is an omitted one.

Models often fill every optional field, with ``""`` where they mean nothing. The reference gives
each optional argument a default or says what leaving it out does; a blank value gets exactly
that, as a blank project, title, kind or when already did, and a blank required argument is
still missing.
"""

from __future__ import annotations

import pytest

from aletheia_mem.errors import InvalidInputError
from aletheia_mem.tools.arguments import check_arguments
from tests.tools.helpers import body_lines, db_rows, unwrap

BLANKS = ("", "  ")


def _payments_on(call, database):
    facts = [{"subject": "payments-api", "predicate": "database", "object": database}]
    return call("save_memory", text=f"payments-api runs on {database}", facts=facts)


@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_predicate_does_not_narrow_fact_history(call, blank):
    _payments_on(call, "PostgreSQL 16")

    result = call("fact_history", subject="payments-api", predicate=blank)

    assert result.text == call("fact_history", subject="payments-api").text
    assert body_lines(result)[1].startswith("- fact #1 payments-api · database = PostgreSQL 16")


@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_as_of_lists_the_current_facts(call, blank):
    _payments_on(call, "PostgreSQL 16")

    result = call("fact_history", subject="payments-api", as_of=blank)

    assert not result.is_error, result.text
    assert body_lines(result)[0] == 'Current facts about "payments-api":'


@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_project_on_timeline_finds_an_anchor_in_any_project(call, blank):
    call("save_memory", text="Billing runs nightly", project="billing")

    result = call("timeline", anchor=1, project=blank)

    assert result.text == call("timeline", anchor=1).text
    assert unwrap(result).startswith("→ #1 ")


def test_a_blank_anchor_leaves_the_query_to_find_it(call):
    call("save_memory", text="Use pnpm, not npm, in the shop repo")

    result = call("timeline", anchor="", query="pnpm")

    assert unwrap(result).startswith("→ #1 ")


@pytest.mark.parametrize("blank", BLANKS)
def test_blank_search_options_are_the_defaults(call, blank):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", type="decision")
    expected = call("search", query="pnpm").text
    options = (
        "type",
        "kind",
        "since",
        "until",
        "older_than_days",
        "order",
        "limit",
        "offset",
        "file",
        "file_suffix",
    )

    for name in options:
        result = call("search", query="pnpm", **{name: blank})
        assert result.text == expected, (name, result.text)


@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_type_saves_a_note(call, blank):
    assert call("save_memory", text="Staging deploys need the VPN", type=blank).text == (
        "Saved as #1 in shop."
    )

    assert unwrap(call("get_observations", ids=[1])).startswith("#1 [note] ")


@pytest.mark.parametrize("blank", BLANKS)
def test_blank_dismiss_and_restore_types_address_a_memory(call, blank):
    call("save_memory", text="Staging deploys need the VPN")

    dismissed = call("dismiss_memory", id=1, type=blank, reason=blank)
    restored = call("restore_memory", id=1, type=blank)

    assert dismissed.text.startswith("Dismissed memory #1. ")
    assert restored.text == "Restored memory #1."


@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_scope_tier_adds_an_everywhere_rule(call, blank):
    result = call("add_rule", then="Run the tests before you commit", scopeTier=blank)

    assert result.text.startswith("Rule saved (r_")
    assert unwrap(call("list_rules")).startswith(
        "- Always: Run the tests before you commit  [everywhere]  (id r_"
    )


@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_limit_gives_the_default_session_context(call, blank):
    call("save_memory", text="Staging deploys need the VPN")

    result = call("session_start_context", limit=blank)

    assert result.text == call("session_start_context").text


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("search", {"query": "  "}, "query is required."),
        ("fact_history", {"subject": ""}, "subject is required."),
        ("save_memory", {"text": " "}, "text is required."),
        ("confirm_rule", {"id": ""}, "id is required."),
        ("work_state_read", {"list": " "}, "list is required."),
        ("dismiss_memory", {"id": ""}, "id is required."),
    ],
)
def test_a_blank_required_argument_is_still_required(call, tool, arguments, message):
    result = call(tool, **arguments)

    assert result.is_error
    assert result.text == message


def test_files_sent_as_a_json_string_are_the_paths_it_lists(call):
    # Some clients send an array argument as its JSON text; split at its commas, it would
    # store '["src/a.py"' and '"src/b.py"]', paths search with file never finds.
    call("save_memory", text="Checkout totals", files='["src/a.py", "src/b.py"]')

    assert unwrap(call("get_observations", ids=[1])).endswith("Files:\n- src/a.py\n- src/b.py")
    assert unwrap(call("search", file="src/b.py")).startswith("#1 ")


@pytest.mark.parametrize("path", ["data/a,b.csv", "docs/notes, 2026.md"])
def test_one_string_for_files_is_one_path_commas_and_all(call, app, path):
    call("save_memory", text="comma path", files=path)

    assert unwrap(call("get_observations", ids=[1])).endswith(f"Files:\n- {path}")
    assert db_rows(app, "SELECT files FROM memories") == [(f'["{path}"]',)]


def test_ids_as_one_string_are_still_split_at_commas(call):
    call("save_memory", text="first")
    call("save_memory", text="second")

    assert len(body_lines(call("get_observations", ids="1,2"))) > 4
    assert unwrap(call("get_observations", ids="1,2")).count("\n---\n") == 1


def test_a_path_that_starts_with_a_bracket_is_still_one_path(call):
    call("save_memory", text="The product page", files="[id].tsx")

    assert unwrap(call("get_observations", ids=[1])).endswith("Files:\n- [id].tsx")


def test_ids_sent_as_a_json_string_are_the_ids_it_lists(call):
    call("save_memory", text="Staging deploys need the VPN")
    call("save_memory", text="Staging is behind the VPN")

    fetched = call("get_observations", ids="[1, 2]")
    rule = call("add_rule", then="Connect the VPN first", evidence_memory_ids="[2]")

    assert unwrap(fetched).count("\n---\n") == 1
    assert rule.text.startswith("Rule saved (r_")


def test_a_json_string_of_other_values_is_still_refused(call):
    files = call("save_memory", text="Checkout totals", files='[["src/a.py"]]')
    ids = call("get_observations", ids='["one"]')
    surrogate = call("save_memory", text="Checkout totals", files='["src/\\ud800.py"]')

    assert files.text == "each of files must be a string."
    assert ids.text == "each of ids must be a number."
    assert surrogate.text == "files must not contain lone surrogate characters."


def test_a_number_past_a_maximum_alone_says_the_maximum():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}}
    with pytest.raises(InvalidInputError) as refused:
        check_arguments(schema, {"n": 6})
    assert refused.value.message == "n must be at most 5."  # not "from None to 5"
    assert check_arguments(schema, {"n": 5}) == {"n": 5}


def test_ids_copied_as_printed_with_a_hash_are_those_ids(call):
    # The server prints ids as #7; a model copies them as printed.
    call("save_memory", text="Staging deploys need the VPN")
    call("save_memory", text="Staging is behind the VPN")

    fetched = call("get_observations", ids=["#1", "#2"])
    fetched_text = call("get_observations", ids="#1, #2")
    around = call("timeline", anchor="#2", before=1, after=0)
    rule = call("add_rule", then="Connect the VPN first", evidence_memory_ids=["#2"])
    dismissed = call("dismiss_memory", id="#1")
    restored = call("restore_memory", id=" #1 ")

    assert unwrap(fetched).count("\n---\n") == 1
    assert unwrap(fetched_text).count("\n---\n") == 1
    assert body_lines(around)[1].startswith("→ #2 ")
    assert rule.text.startswith("Rule saved (r_")
    assert dismissed.text.startswith("Dismissed memory #1.")
    assert restored.text == "Restored memory #1."


@pytest.mark.parametrize("value", ["##1", "#", "# 1", "#-1", "1#", "#1.5"])
def test_only_one_leading_hash_before_an_id_is_forgiven(call, value):
    call("save_memory", text="Staging deploys need the VPN")

    refused = call("get_observations", ids=[value])

    assert refused.is_error
    assert refused.text.startswith("each of ids must be")


def test_a_hash_is_not_forgiven_on_numbers_that_are_not_ids(call):
    refused = call("search", query="vpn", limit="#5")

    assert refused.is_error
    assert refused.text == "limit must be a number."


# A limit bounds what is kept: a value stored or matched trimmed is measured trimmed, as a rule
# is measured collapsed (the reference: the list name is "matched exactly after trimming").
def test_a_trimmed_value_is_measured_after_trimming(call, app):
    name, path = "n" * 200, "src/" + "p" * 996

    listed = call("work_state_write", list=f" {name}\n", items=[1])
    read = call("work_state_read", list=f"\t{name} ")
    saved = call("save_memory", text="long path", files=[f" {path} "])
    fact = {"subject": " " + "s" * 2000, "predicate": "p", "object": "o"}
    with_fact = call("save_memory", text="long subject", facts=[fact])
    history = call("fact_history", subject=" " + "s" * 2000 + " ")
    rule = call("add_rule", then="x", scopeTier="situation", scopeName=" " + "d" * 200)
    kind = call("search", query="long", kind=" " + "k" * 200)
    confirm = call("confirm_rule", id=" r_0000000000" + " " * 200)

    assert listed.text == f'Saved list "{name}" with 1 item(s) as #1.'
    assert unwrap(read) == "[1]"
    assert saved.text == "Saved as #2 in shop."
    assert db_rows(app, "SELECT files FROM memories WHERE id = 2") == [(f'["{path}"]',)]
    assert with_fact.text == "Saved as #3 in shop."
    assert body_lines(history)[1].startswith("- fact #1 " + "s" * 2000 + " · p = o")
    assert rule.text.startswith("Rule saved (r_")
    assert not kind.is_error
    assert confirm.text == 'No rule with id "r_0000000000".'


def test_a_trimmed_value_over_its_limit_keeps_its_message(call):
    assert call("work_state_write", list=" " + "n" * 201, items=[1]).text == (
        "list must be at most 200 characters."
    )
    assert call("save_memory", text="x", files=["p" * 1001]).text == (
        "each of files must be at most 1000 characters."
    )
    assert call("add_rule", then="x", scopeTier="situation", scopeName="d" * 201).text == (
        "scopeName must be at most 200 characters."
    )
    assert call("save_memory", text="x", title=" " + "c" * 401).text == (
        "title must be at most 400 characters."  # measured and kept trimmed, as a list name
    )
    assert call("save_memory", text="x", project=" " + "p" * 201).text == (
        "project must be at most 200 characters."
    )
    assert call("save_memory", text="x", project=" " + "p" * 200 + " ").text == (
        "Saved as #1 in " + "p" * 200 + "."
    )


# int() and float() read other scripts' digits and "_": "\uff11" (full-width) was memory #1,
# "\u0663" (Arabic-Indic) #3, "1_0" #10. A number given as text is ASCII digits, as the server
# prints it; blanks around it are forgiven (ASCII ones: a model's argument may carry them).
@pytest.mark.parametrize("value", ["\uff11", "\u0663", "#\uff11", "1_0", "1\u00a0", "\u30001"])
def test_an_id_in_other_digits_is_no_number_and_acts_on_nothing(call, value):
    for number in range(1, 11):
        call("save_memory", text=f"Deploy note number {number}")

    fetched = call("get_observations", ids=[value])
    fetched_text = call("get_observations", ids=f"2,{value}")
    around = call("timeline", anchor=value)
    dismissed = call("dismiss_memory", id=value)
    rule = call("add_rule", then="Deploy on Tuesdays", evidence_memory_ids=[value])
    limited = call("search", query="deploy", limit=value)

    assert fetched.text == fetched_text.text == "each of ids must be a number."
    assert around.text == "anchor must be a number."
    assert dismissed.text == "id must be a number."
    assert rule.text == "each of evidence_memory_ids must be a number."
    assert limited.text == "limit must be a number."
    assert "[dismissed" not in unwrap(call("get_observations", ids="1,3,10"))


@pytest.mark.parametrize("value", ["7", " 7 ", "#7", "\t#7\n", "+7", "7.0"])
def test_an_id_as_ascii_text_is_still_read(call, value):
    for number in range(1, 8):
        call("save_memory", text=f"Deploy note number {number}")

    assert unwrap(call("get_observations", ids=[value])).startswith("#7 ")


def test_a_time_in_other_digits_is_refused(call):
    call("save_memory", text="Deploy note")

    refused = call("search", query="deploy", since="\uff11\uff17\uff10\uff10000000000")

    assert refused.is_error
    assert refused.text.startswith("since must be")
