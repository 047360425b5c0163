"""work_state_write and work_state_read: named lists replaced whole, per project."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.tools.helpers import db_rows, unwrap

TODO = ["ship docs", {"task": "test hooks", "done": False}]


def _read(call, name, **arguments):
    return json.loads(unwrap(call("work_state_read", list=name, **arguments)))


def test_write_and_read_answer_as_in_the_reference(call):
    for number in range(1, 16):
        call("save_memory", text=f"earlier memory {number}")

    written = call("work_state_write", list="todo", items=TODO)
    read = call("work_state_read", list="todo")

    assert not written.is_error
    assert written.text == 'Saved list "todo" with 2 item(s) as #16.'
    assert unwrap(read) == '["ship docs",{"task":"test hooks","done":false}]'


def test_list_ids_share_the_memory_id_sequence(call):
    call("save_memory", text="first memory")
    call("work_state_write", list="todo", items=["a"])

    assert call("save_memory", text="second memory").text == "Saved as #3 in shop."


def test_writing_an_existing_name_replaces_all_items_and_keeps_the_id(call, app):
    call("work_state_write", list="todo", items=TODO)

    result = call("work_state_write", list="todo", items=["release 1.2"])

    assert result.text == 'Saved list "todo" with 1 item(s) as #1.'
    assert _read(call, "todo") == ["release 1.2"]
    assert db_rows(app, "SELECT count(*) FROM memories WHERE kind = 'work_state'") == [(1,)]


def test_an_empty_list_clears_the_items(call):
    call("work_state_write", list="todo", items=TODO)

    result = call("work_state_write", list="todo", items=[])

    assert result.text == 'Saved list "todo" with 0 item(s) as #1.'
    assert _read(call, "todo") == []


def test_list_name_is_matched_exactly_after_trimming(call):
    written = call("work_state_write", list="  todo \n", items=["a"])

    assert written.text == 'Saved list "todo" with 1 item(s) as #1.'
    assert _read(call, "todo") == ["a"]
    assert _read(call, " todo ") == ["a"]
    assert call("work_state_read", list="Todo").text == 'No list named "Todo".'


def test_unknown_list_says_there_is_no_list_with_that_name(call):
    result = call("work_state_read", list="x")

    assert not result.is_error
    assert result.text == 'No list named "x".'


def test_items_keep_their_json_types(call):
    items = ["text", 3, 2.5, True, False, {"task": "nested", "tags": ["a", "b"], "n": None}]

    call("work_state_write", list="mixed", items=items)

    assert _read(call, "mixed") == items


@pytest.mark.parametrize("bad", [None, ["nested", "list"]])
def test_items_must_be_strings_numbers_booleans_or_objects(call, bad):
    result = call("work_state_write", list="todo", items=["ok", bad])

    assert result.is_error
    assert result.text == "items must hold only strings, numbers, booleans or plain objects."


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"items": ["a"]}, "list is required."),
        ({"list": "  ", "items": ["a"]}, "list is required."),
        ({"list": "todo"}, "items is required."),
        ({"list": "todo", "items": {"a": 1}}, "items must be an array."),
    ],
)
def test_list_and_items_are_required(call, arguments, message):
    result = call("work_state_write", **arguments)

    assert result.is_error
    assert result.text == message


def test_lists_belong_to_a_project(call, as_caller):
    call("work_state_write", list="todo", items=["shop task"])
    call("work_state_write", list="todo", items=["billing task"], project="billing")

    assert _read(call, "todo") == ["shop task"]
    assert _read(call, "todo", project="Billing") == ["billing task"]
    billing = as_caller(default_project="billing")
    assert _read(call, "todo", _app=billing) == ["billing task"]


def test_lists_are_not_listed_in_session_context(call):
    call("save_memory", text="Use pnpm")
    call("work_state_write", list="todo", items=TODO)

    assert "todo" not in unwrap(call("session_start_context"))


def test_a_session_context_with_nothing_else_names_the_lists(call):
    call("work_state_write", list="todo", items=TODO)

    assert '"todo" (work_state_read reads one)' in unwrap(call("session_start_context"))


def test_secrets_in_items_are_redacted_and_the_list_stays_json(call, app):
    items = [
        'export TOKEN=abcd1234efgh"x',
        {"password": "hunter2hunter2"},
        "db at postgres://app:s3cr3tpass@db.internal/prod",
    ]

    call("work_state_write", list="creds", items=items)

    [(stored,)] = db_rows(app, "SELECT text FROM memories WHERE kind = 'work_state'")
    for secret in ("abcd1234efgh", "hunter2hunter2", "s3cr3tpass"):
        assert secret not in stored
    assert json.loads(stored) == _read(call, "creds")
    assert _read(call, "creds") == [
        'export TOKEN=[REDACTED]"x',
        {"password": "[REDACTED]"},
        "db at postgres://app:[REDACTED]@db.internal/prod",
    ]


def test_items_with_nan_or_infinity_are_an_error(call):
    result = call("work_state_write", list="todo", items=[float("nan"), float("inf")])

    assert result.is_error
    assert result.text == "items must hold only finite numbers."
    assert call("work_state_read", list="todo").text == 'No list named "todo".'


def test_a_name_with_inner_spaces_is_shown_as_it_is_stored(call):
    written = call("work_state_write", list=" my  list ", items=["a"])
    missing = call("work_state_read", list="my  other")

    assert written.text == 'Saved list "my  list" with 1 item(s) as #1.'
    assert missing.text == 'No list named "my  other".'
    assert _read(call, "my  list") == ["a"]  # the name as shown reads the list back
    assert call("work_state_read", list="my list").text == 'No list named "my list".'


def test_a_name_with_a_line_break_is_shown_as_its_json_string(call):
    # The reply stays one line; the quoted name is the JSON string to send back.
    written = call("work_state_write", list='to"do\tnow\nlater', items=["a"])

    assert written.text == 'Saved list "to\\"do\\tnow\\nlater" with 1 item(s) as #1.'
    assert _read(call, json.loads('"to\\"do\\tnow\\nlater"')) == ["a"]


def test_a_value_named_by_its_object_is_judged_by_that_name(call, app):
    items = [
        {"name": "DB_PASSWORD", "value": "Tr0ub4dor3xyzW"},
        {"value": "hunter2hunter2", "key": "api_key"},  # the name after the value
        {"name": "LOG_LEVEL", "value": "debug"},
    ]

    call("work_state_write", list="env", items=items)

    [(stored,)] = db_rows(app, "SELECT text FROM memories WHERE kind = 'work_state'")
    assert "Tr0ub4dor3xyzW" not in stored
    assert "hunter2hunter2" not in stored
    assert _read(call, "env") == [
        {"name": "DB_PASSWORD", "value": "[REDACTED]"},
        {"value": "[REDACTED]", "key": "api_key"},
        {"name": "LOG_LEVEL", "value": "debug"},
    ]


def test_a_rewritten_list_is_found_since_the_day_of_its_last_write(call, clock):
    """A list is replaced whole: its rewrite dates it, for since= and the timeline."""
    call("work_state_write", list="todo", items=["draft release notes"])
    day = 86_400_000
    clock.advance(3 * day)
    call("save_memory", text="release train moved to Thursdays")
    clock.advance(3 * day)
    call("work_state_write", list="todo", items=["publish release notes"])
    today = datetime.fromtimestamp(clock.now / 1000, UTC).date()
    yesterday = (today - timedelta(days=1)).isoformat()

    found = unwrap(call("search", query="release", since=today.isoformat()))
    assert "#1" in found and "#2" not in found
    before = unwrap(call("search", query="release", until=yesterday))
    assert "#2" in before and "#1" not in before
    around = unwrap(call("timeline", anchor=2, before=3, after=3))
    assert around.index("#2") < around.index("#1")  # the list comes after the note now
