"""Editing JSON and JSONC by position keeps every byte outside the changed member."""

from __future__ import annotations

import json

import pytest

from aletheia_mem.cli.jsonc import (
    JsoncError,
    get_member,
    parse,
    remove_member,
    set_array,
    set_member,
)

JSONC = """{
  // Editor settings, hand written.
  "editor.fontSize": 14, /* keep */
  "mcpServers": {
    "other": { "command": "node", "args": ["x.js"] }, // a friend's server
  },
}
"""


def test_new_member_is_added_after_the_last_one_with_comments_kept() -> None:
    out = set_member(JSONC, ("mcpServers", "aletheia"), {"command": "py"})
    assert out.startswith(JSONC.split('    "other"')[0])
    assert '"other": { "command": "node", "args": ["x.js"] }, // a friend\'s server\n' in out
    assert '    "aletheia": {\n      "command": "py"\n    },\n' in out  # the trailing comma style
    assert get_member(out, ("mcpServers", "aletheia")) == {"command": "py"}
    assert get_member(out, ("mcpServers", "other")) == {"command": "node", "args": ["x.js"]}


def test_replacing_a_member_changes_only_its_value() -> None:
    first = set_member(JSONC, ("mcpServers", "aletheia"), {"command": "py"})
    second = set_member(first, ("mcpServers", "aletheia"), {"command": "py3"})
    assert second == first.replace('"command": "py"', '"command": "py3"')


def test_missing_objects_on_the_path_are_created() -> None:
    text = '{\n    "theme": "dark"\n}\n'
    out = set_member(text, ("mcp", "servers", "aletheia"), {"type": "local"})
    assert out == (
        '{\n    "theme": "dark",\n    "mcp": {\n        "servers": {\n'
        '            "aletheia": {\n                "type": "local"\n            }\n'
        "        }\n    }\n}\n"
    )
    assert json.loads(out)["mcp"]["servers"]["aletheia"] == {"type": "local"}


def test_empty_object_and_empty_file_get_the_member() -> None:
    assert json.loads(set_member("{}", ("a",), 1)) == {"a": 1}
    assert json.loads(set_member("{\n}\n", ("a",), 1)) == {"a": 1}
    assert json.loads(set_member("", ("mcpServers", "aletheia"), {"x": 1})) == {
        "mcpServers": {"aletheia": {"x": 1}}
    }


def test_one_line_object_stays_valid() -> None:
    out = set_member('{"a": 1}', ("b",), [1, 2])
    assert json.loads(out) == {"a": 1, "b": [1, 2]}


def test_windows_line_endings_are_kept() -> None:
    text = '{\r\n  "a": 1\r\n}\r\n'
    out = set_member(text, ("b",), {"c": 2})
    assert "\n" not in out.replace("\r\n", "")
    assert json.loads(out) == {"a": 1, "b": {"c": 2}}


def test_non_object_on_the_path_is_refused() -> None:
    with pytest.raises(JsoncError, match="mcpServers is not an object"):
        set_member('{"mcpServers": []}', ("mcpServers", "aletheia"), {})


@pytest.mark.parametrize("bad", ['{"a": }', '{"a": 1', "[1, 2", '{"a" 1}', "{/* open", "nope"])
def test_broken_text_is_an_error_with_a_place(bad: str) -> None:
    with pytest.raises(JsoncError, match="line 1"):
        parse(bad)


def test_parsed_values_match_the_json_module_on_plain_json() -> None:
    text = json.dumps({"a": [1, 2.5, -3e2, True, None, 'é\\n"q"'], "b": {"c": {}}}, indent=2)
    assert parse(text).value == json.loads(text)


def test_a_hundred_levels_parse_and_one_more_is_a_named_error() -> None:
    assert parse("[" * 100 + "]" * 100).end == 200
    with pytest.raises(JsoncError, match="nested more than 100 levels deep at line 1, column 101"):
        parse("[" * 101 + "]" * 101)


def test_a_member_added_then_removed_leaves_the_text_as_it_was() -> None:
    for text in (
        JSONC,
        '{"mcpServers": {"x": 1}}',
        '{\r\n  "mcpServers": {\r\n    "x": 1\r\n  }\r\n}\r\n',
    ):
        added = set_member(text, ("mcpServers", "aletheia"), {"command": "py"})
        assert remove_member(added, ("mcpServers", "aletheia")) == text
    assert remove_member('{"a": {"aletheia": 1}}', ("a", "aletheia")) == '{"a": {}}'
    assert remove_member('{"a": 1}', ("b", "c")) == '{"a": 1}'


@pytest.mark.parametrize(
    "text",
    [
        '{\n\t"mcpServers": {\n\t\t"gh": {"url": "u"}, /* trailing */\n\t},\n}\n',
        '{\n  "mcpServers": {\n    "gh": 1 /* note */\n  }\n}\n',
        '{\n  "mcpServers": {\n    "gh": 1 /* a */, // b\n  }\n}\n',
        '{\n  "mcpServers": {\n    "gh": 1 }\n}\n',
        '{\n  "mcpServers": {\n    "gh": 1, }\n}\n',
        '{\r\n  "mcpServers": {\r\n    "gh": 1 }\r\n}\r\n',
        '{\n  "mcpServers": {\n    "gh": 1 /* open\n  */ }\n}\n',
        '{\n  "mcpServers": {\n    "x": 2\n    ,\n  }\n}\n',
        '{\n  "mcpServers": {\n    // none yet\n  }\n}\n',
    ],
    ids=[
        "block-comment-after-comma",
        "block-comment-no-comma",
        "two-comments",
        "brace-on-the-line",
        "comma-and-brace-on-the-line",
        "crlf-brace-on-the-line",
        "comment-over-two-lines",
        "comma-on-its-own-line",
        "only-a-comment-inside",
    ],
)
def test_comments_and_braces_beside_the_last_member_come_back_where_they_were(
    text: str,
) -> None:
    """What follows the last member on its line stays on that line: a comment there moved to a
    line of its own, or under the new member, once it was added and removed again."""
    added = set_member(text, ("mcpServers", "aletheia"), {"command": "py"})
    assert get_member(added, ("mcpServers", "aletheia")) == {"command": "py"}
    assert remove_member(added, ("mcpServers", "aletheia")) == text


def test_set_array_keeps_the_text_of_the_elements_that_stay() -> None:
    text = '{\n  "stop": [\n    {"command": "a"}, // mine\n    {"command": "old"}\n  ]\n}\n'
    out = set_array(text, ("stop",), [{"command": "a"}, {"command": "new"}])
    assert '    {"command": "a"}, // mine\n' in out
    assert json.loads(out.replace("// mine", ""))["stop"] == [{"command": "a"}, {"command": "new"}]
    back = set_array(out, ("stop",), [{"command": "a"}])
    assert back == '{\n  "stop": [\n    {"command": "a"} // mine\n  ]\n}\n'
