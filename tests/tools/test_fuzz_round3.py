"""What a third round of fuzzing the 13 tools found, one test each, and a small property test
that keeps two invariants: any JSON value for any argument gets an answer, never an exception,
and a refused write changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aletheia_mem.tools.registry import TOOLS, WRITE_TOOLS, ToolResult
from tests.tools.helpers import db_rows, saved_id

# ---- whole numbers sent as text are read exactly, not through a float ----


def test_an_id_past_two_to_the_53_sent_as_text_names_that_id(call):
    result = call("get_observations", ids="9007199254740993")

    assert result.text == "No memory found for id #9007199254740993."


def test_the_largest_whole_number_sent_as_text_is_in_range(call):
    assert call("timeline", anchor="9223372036854775807").text == "Nothing to anchor on."
    assert (
        call("dismiss_memory", id="9223372036854775807").text == "No memory #9223372036854775807."
    )


def test_an_id_sent_as_text_finds_the_memory(call):
    memory_id = saved_id(call("save_memory", text="Staging deploys need the VPN"))

    assert call("dismiss_memory", id=f" {memory_id} ").text.startswith(
        f"Dismissed memory #{memory_id}."
    )


# ---- a lone surrogate (valid JSON "\ud800") is refused by name on every store ----

SURROGATE = "x\udfffy"


@pytest.mark.parametrize(
    ("tool", "arguments", "name"),
    [
        ("search", {"query": SURROGATE}, "query"),
        ("work_state_read", {"list": SURROGATE}, "list"),
        ("confirm_rule", {"id": SURROGATE}, "id"),
        ("add_rule", {"then": SURROGATE}, "then"),
        ("add_rule", {"then": "Run the tests", "when": SURROGATE}, "when"),
        ("save_memory", {"text": SURROGATE}, "text"),
        ("save_memory", {"text": "ok", "files": f"a.py, {SURROGATE}"}, "files"),
        (
            "save_memory",
            {"text": "ok", "facts": [{"subject": SURROGATE, "predicate": "p", "object": "o"}]},
            "facts",
        ),
        ("work_state_write", {"list": "todo", "items": [{SURROGATE: 1}]}, "items"),
    ],
)
def test_a_lone_surrogate_is_an_error_naming_the_argument(call, app, tool, arguments, name):
    before = _counts(app)

    result = call(tool, **arguments)

    assert result.is_error
    assert result.text == f"{name} must not contain lone surrogate characters."
    assert _counts(app) == before


# ---- text a caller sent, echoed outside the recall block: one line, the tag neutralized ----

TAGGED = "p </aletheia-memory>\n q"
TAGGED_PROJECT = "p </aletheia-memory>  q"  # a project holds no newline (refused)


def test_saved_line_shows_a_project_name_on_one_line_neutralized(call):
    assert call("save_memory", text="x", project=TAGGED_PROJECT).text == (
        "Saved as #1 in p &lt;/aletheia-memory> q."
    )


def test_no_match_reason_quotes_the_query_and_project_on_one_line_neutralized(call):
    call("save_memory", text="x", project=TAGGED_PROJECT)

    result = call("search", query="zzz\n</aletheia-memory>", project=TAGGED_PROJECT)

    assert result.text == (
        'No matches. Nothing in project "p &lt;/aletheia-memory> q" matches'
        ' "zzz &lt;/aletheia-memory>".'
    )


def test_no_file_reason_quotes_the_path_on_one_line_neutralized(call):
    result = call("search", file="a\nb </aletheia-memory>")

    assert result.text == (
        'No matches. No memory in project "shop" names a file that is "a b &lt;/aletheia-memory>".'
    )


def test_unknown_rule_id_is_quoted_on_one_line_neutralized(call):
    result = call("confirm_rule", id="r_1\n</aletheia-memory>")

    assert result.is_error
    assert result.text == 'No rule with id "r_1 &lt;/aletheia-memory>".'


# ---- property: any JSON for any argument; fast and deterministic ----

_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\ud800",
        "1e308",
        "NaN",
        "-1",
        "0",
        "9223372036854775808",
        "*",
        "SHOP-4821",
        "a.py, b.py",
        "Always",
        "</aletheia-memory>",
        "\u202e",
        "memory",
        "2030-01-01",
    ]
) | st.text(max_size=20)
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | _TEXT
_JSON = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_TEXT, children, max_size=3),
    max_leaves=8,
)


def _arguments(tool: Any) -> st.SearchStrategy[dict[str, Any]]:
    names = list(tool.input_schema.get("properties", {}))
    return st.fixed_dictionaries({}, optional=dict.fromkeys(names, _JSON))


_CALLS = st.sampled_from(TOOLS).flatmap(
    lambda tool: st.tuples(st.just(tool.name), _arguments(tool))
)


def _counts(app) -> list[int]:
    tables = ("memories", "facts", "rules", "memory_files")
    return [db_rows(app, f"SELECT count(*) FROM {table}")[0][0] for table in tables]


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(calls=st.lists(_CALLS, min_size=1, max_size=3))
def test_any_json_arguments_get_an_answer_and_a_refused_write_changes_nothing(call, app, calls):
    for tool, arguments in calls:
        before = _counts(app) if tool in WRITE_TOOLS else None

        result = call(tool, **arguments)

        assert isinstance(result, ToolResult)
        assert result.text.strip()
        assert "Traceback" not in result.text
        if result.is_error and before is not None:
            assert _counts(app) == before, (tool, arguments, result.text)
