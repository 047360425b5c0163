"""A value made only of whitespace and Unicode format characters (a zero-width space U+200B,
a joiner U+200D, a byte-order mark U+FEFF, a word joiner U+2060) shows nothing: it is as empty
as one of spaces ("text is required.", a title falling back to the text, the default
project). Over the tools, on both stores."""

from __future__ import annotations

import pytest

from tests.tools.helpers import db_rows, rule_id_of, saved_id

INVISIBLE = ["\u200b", "\u200b\u200b", " \u200d\ufeff ", "\u2060\n"]


@pytest.mark.parametrize("value", INVISIBLE)
@pytest.mark.parametrize(
    ("tool", "name", "table"),
    [("save_memory", "text", "memories"), ("add_rule", "then", "rules")],
)
def test_an_invisible_required_text_is_refused_as_missing(call, app, value, tool, name, table):
    result = call(tool, **{name: value})

    assert result.is_error
    assert result.text == f"{name} is required."
    assert db_rows(app, f"SELECT count(*) FROM {table}") == [(0,)]


@pytest.mark.parametrize("title", INVISIBLE)
def test_an_invisible_title_is_the_texts_as_a_blank_one(call, app, title):
    saved_id(call("save_memory", text="Staging deploys need the VPN", title=title))

    assert db_rows(app, "SELECT title FROM memories") == [("Staging deploys need the VPN",)]


@pytest.mark.parametrize("when", INVISIBLE)
def test_an_invisible_situation_is_always(call, app, when):
    rule_id = rule_id_of(call("add_rule", then="Run the tests"))

    again = call("add_rule", then="Run the tests", when=when)

    assert again.text.startswith(f"Rule already saved ({rule_id}).")
    assert db_rows(app, "SELECT when_text FROM rules") == [("always",)]


def test_an_invisible_situation_name_is_no_name(call, app):
    result = call("add_rule", then="Speak French", scopeTier="situation", scopeName="\u200b")

    assert result.is_error
    assert result.text == "scopeName is required when scopeTier is situation."


@pytest.mark.parametrize("name", INVISIBLE)
def test_a_list_with_an_invisible_name_is_refused(call, app, name):
    result = call("work_state_write", list=name, items=["ship"])

    assert result.is_error
    assert result.text == "list is required."
    assert db_rows(app, "SELECT count(*) FROM memories") == [(0,)]


@pytest.mark.parametrize("project", INVISIBLE)
def test_an_invisible_project_is_the_default_one_as_a_blank_one(call, project):
    result = call("save_memory", text="A note", project=project)

    assert result.text == "Saved as #1 in shop."


def test_a_project_holding_a_format_character_is_refused_naming_it(call):
    result = call("save_memory", text="A note", project="sh\u200dop")

    assert result.is_error
    assert result.text == "project must not contain control or format characters."


def test_a_visible_word_beside_a_zero_width_space_is_kept(call, app):
    result = call("save_memory", text="\u200bnote")

    assert not result.is_error, result.text
    assert db_rows(app, "SELECT text FROM memories") == [("\u200bnote",)]
