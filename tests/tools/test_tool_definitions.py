"""The 13 tool definitions as tools/list shows them: names, inputs, defaults, limits, hints."""

from __future__ import annotations

import pytest

from aletheia_mem.tools.arguments import TrimmedString
from aletheia_mem.tools.registry import TOOLS, TOOLS_BY_NAME

READ_TOOLS = [
    "search",
    "timeline",
    "get_observations",
    "session_start_context",
    "fact_history",
    "list_rules",
    "work_state_read",
]
WRITE_TOOLS = [
    "save_memory",
    "add_rule",
    "confirm_rule",
    "dismiss_memory",
    "restore_memory",
    "work_state_write",
]
REQUIRED = {
    "search": [],
    "timeline": [],
    "get_observations": ["ids"],
    "session_start_context": [],
    "fact_history": ["subject"],
    "list_rules": [],
    "work_state_read": ["list"],
    "save_memory": ["text"],
    "add_rule": ["then"],
    "confirm_rule": ["id"],
    "dismiss_memory": ["id"],
    "restore_memory": ["id"],
    "work_state_write": ["list", "items"],
}
MEMORY_TYPES = [
    "decision",
    "gotcha",
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "note",
]


def _definition(name):
    return TOOLS_BY_NAME[name].definition()


def _properties(name):
    return _definition(name)["inputSchema"]["properties"]


def test_there_are_exactly_the_13_reference_tools():
    names = [tool.name for tool in TOOLS]

    assert len(names) == 13
    assert sorted(names) == sorted(READ_TOOLS + WRITE_TOOLS)


@pytest.mark.parametrize("name", READ_TOOLS + WRITE_TOOLS)
def test_each_tool_requires_the_reference_inputs(name):
    schema = _definition(name)["inputSchema"]

    assert schema["type"] == "object"
    assert sorted(schema.get("required", [])) == sorted(REQUIRED[name])
    assert set(REQUIRED[name]) <= set(schema["properties"])


@pytest.mark.parametrize("name", READ_TOOLS)
def test_read_tools_declare_read_only_and_closed_world(name):
    annotations = _definition(name)["annotations"]

    assert annotations["readOnlyHint"] is True
    assert annotations["openWorldHint"] is False


@pytest.mark.parametrize("name", WRITE_TOOLS)
def test_write_tools_declare_idempotent_and_closed_world(name):
    annotations = _definition(name)["annotations"]

    assert annotations["readOnlyHint"] is False
    assert annotations["idempotentHint"] is True
    assert annotations["openWorldHint"] is False


@pytest.mark.parametrize("name", [tool for tool in WRITE_TOOLS if tool != "work_state_write"])
def test_write_tools_other_than_work_state_write_are_not_destructive(name):
    assert _definition(name)["annotations"]["destructiveHint"] is False


def test_work_state_write_is_destructive_because_it_replaces_a_whole_list():
    assert _definition("work_state_write")["annotations"]["destructiveHint"] is True


@pytest.mark.parametrize("name", READ_TOOLS + WRITE_TOOLS)
def test_every_tool_has_a_title_and_a_description(name):
    definition = _definition(name)

    assert definition["name"] == name
    assert definition["title"]
    assert definition["annotations"]["title"] == definition["title"]
    assert len(definition["description"]) > 40


def test_descriptions_give_the_intended_order():
    first = _definition("session_start_context")["description"]
    search = _definition("search")["description"]
    timeline = _definition("timeline")["description"]
    observations = _definition("get_observations")["description"]

    assert "first" in first
    assert first.index("search") < first.index("timeline") < first.index("get_observations")
    assert "get_observations" in search
    assert "timeline" in search
    assert "after search" in timeline
    assert "after search or timeline" in observations
    assert "list_rules first" in _definition("add_rule")["description"]


def test_search_inputs_and_defaults():
    properties = _properties("search")

    assert set(properties) == {
        "query",
        "file",
        "file_suffix",
        "project",
        "type",
        "kind",
        "limit",
        "offset",
        "since",
        "until",
        "older_than_days",
        "order",
    }
    assert (properties["file_suffix"]["type"], properties["file_suffix"]["default"]) == (
        "boolean",
        False,
    )
    assert properties["type"]["enum"] == MEMORY_TYPES
    limit = properties["limit"]
    assert (limit["type"], limit["default"], limit["minimum"], limit["maximum"]) == (
        "integer",
        20,
        1,
        100,
    )
    assert (properties["offset"]["default"], properties["offset"]["minimum"]) == (0, 0)
    assert properties["order"]["enum"] == ["relevance", "date_desc", "date_asc"]
    assert properties["order"]["default"] == "relevance"
    assert "a bare date includes that day" in properties["until"]["description"]
    assert "The earlier of this and until wins" in properties["older_than_days"]["description"]
    assert "working directory" in properties["project"]["description"]


def test_timeline_inputs_and_defaults():
    properties = _properties("timeline")

    assert set(properties) == {"anchor", "query", "project", "before", "after"}
    for side in ("before", "after"):
        assert (properties[side]["default"], properties[side]["maximum"]) == (5, 50)
    assert "priority over query" in properties["anchor"]["description"]


def test_get_observations_takes_an_array_of_ids():
    ids = _properties("get_observations")["ids"]

    assert ids["type"] == "array"
    assert ids["items"]["type"] == "integer"


def test_session_start_context_inputs_and_defaults():
    properties = _properties("session_start_context")

    assert set(properties) == {"project", "limit"}
    limit = properties["limit"]
    assert (limit["default"], limit["minimum"], limit["maximum"]) == (20, 1, 100)


def test_fact_history_inputs_and_defaults():
    properties = _properties("fact_history")

    assert set(properties) == {"subject", "project", "predicate", "as_of", "include_superseded"}
    assert properties["include_superseded"]["default"] is False
    assert "priority over include_superseded" in properties["as_of"]["description"]


def test_list_rules_takes_no_input():
    assert _properties("list_rules") == {}


def test_save_memory_inputs_defaults_and_limits():
    properties = _properties("save_memory")

    assert {"text", "title", "project", "type", "pinned"} <= set(properties)
    assert set(properties) - {"text", "title", "project", "type", "pinned"} == {"facts", "files"}
    assert properties["text"]["maxLength"] == 20_000
    assert properties["title"]["maxLength"] == 400
    assert "first 100 characters" in properties["title"]["description"]
    assert properties["type"]["enum"] == MEMORY_TYPES
    assert properties["type"]["default"] == "note"
    assert properties["pinned"]["default"] is False


def test_add_rule_inputs_defaults_and_limits():
    properties = _properties("add_rule")

    assert set(properties) == {
        "then",
        "when",
        "scopeTier",
        "scopeName",
        "evidence_memory_ids",
        "evidence_fact_ids",
    }
    assert properties["then"]["maxLength"] == 800
    assert properties["when"]["default"] == "always"
    assert properties["scopeTier"]["enum"] == ["everywhere", "project", "situation"]
    assert properties["scopeTier"]["default"] == "everywhere"
    for name in ("evidence_memory_ids", "evidence_fact_ids"):
        assert properties[name]["type"] == "array"


def test_confirm_rule_takes_a_string_id():
    assert _properties("confirm_rule")["id"]["type"] == "string"


@pytest.mark.parametrize("name", ["dismiss_memory", "restore_memory"])
def test_dismiss_and_restore_take_an_integer_id_and_an_item_type(name):
    properties = _properties(name)

    assert properties["id"]["type"] == "integer"
    assert properties["type"]["enum"] == ["memory", "observation", "fact", "episode"]
    assert properties["type"]["default"] == "memory"


def test_dismiss_reason_is_documented_as_cut_to_300_characters():
    assert "300 characters" in _properties("dismiss_memory")["reason"]["description"]


def test_work_state_tools_inputs():
    write = _properties("work_state_write")
    read = _properties("work_state_read")

    assert set(write) == {"list", "items", "project"}
    assert write["items"]["type"] == "array"
    kinds = [branch["type"] for branch in write["items"]["items"]["anyOf"]]
    assert sorted(kinds) == ["boolean", "number", "object", "string"]
    assert "after trimming" in write["list"]["description"]
    assert set(read) == {"list", "project"}
    assert "replaces all its items" in _definition("work_state_write")["description"]


PROJECT_TOOLS = [
    "search",
    "timeline",
    "session_start_context",
    "fact_history",
    "work_state_read",
    "save_memory",
    "work_state_write",
]


@pytest.mark.parametrize("name", PROJECT_TOOLS)
def test_project_declares_the_200_characters_it_is_refused_past(name):
    assert _properties(name)["project"]["maxLength"] == 200


def test_work_state_write_tells_the_size_limit_of_its_items_as_json():
    assert (
        "at most 100000 characters as JSON"
        in _properties("work_state_write")["items"]["description"]
    )


def test_title_is_measured_trimmed_as_the_other_names_are():
    assert isinstance(_properties("save_memory")["title"], TrimmedString)


def _properties_everywhere(schema):
    """Every property schema in ``schema``, nested ones (array items, objects) included."""
    for name, spec in schema.get("properties", {}).items():
        yield name, spec
        yield from _properties_everywhere(spec)
        if isinstance(spec.get("items"), dict):
            yield from _properties_everywhere(spec["items"])


@pytest.mark.parametrize("name", READ_TOOLS + WRITE_TOOLS)
def test_every_property_has_a_description_enums_included(name):
    for prop, spec in _properties_everywhere(_definition(name)["inputSchema"]):
        assert spec.get("description", "").strip(), (name, prop)


@pytest.mark.parametrize("name", READ_TOOLS + WRITE_TOOLS)
def test_whole_numbers_are_integers_and_no_type_is_a_list(name):
    text = str(_definition(name))
    assert "multipleOf" not in text
    for schema in (_definition(name)["inputSchema"], _definition(name).get("outputSchema", {})):
        stack = [schema]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                assert not isinstance(node.get("type"), list), (name, node)
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)


def test_every_tool_names_a_handler_that_exists() -> None:
    for spec in TOOLS:
        assert callable(spec.handler), spec.name
        assert spec.handler.__name__ == spec.name
