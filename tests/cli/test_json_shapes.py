"""--json answers keep one shape per command, whatever the result, and match their siblings."""

from __future__ import annotations

from tests.cli.conftest import Invoke, json_of


def test_timeline_with_nothing_to_anchor_on_is_an_empty_list_in_json(run: Invoke) -> None:
    run("save", "a first memory")
    assert json_of(run("timeline", "1", "--json"))[0]["anchor"] is True
    result = run("timeline", "--query", "nothing-like-it", "--json")
    assert result.exit_code == 0
    assert json_of(result) == []


def test_timeline_of_an_unknown_id_is_a_not_found_error_in_json(run: Invoke) -> None:
    run("save", "a first memory")
    result = run("timeline", "99", "--json")
    assert result.exit_code == 3
    assert json_of(result) == {
        "error": {"code": "not_found", "message": "Nothing to anchor on: no memory #99."}
    }


def test_rules_add_shows_the_rule_as_rules_list_does(run: Invoke) -> None:
    added = json_of(run("rules", "add", "Run the tests before you commit", "--json"))
    listed = json_of(run("rules", "list", "--json"))
    assert added["created"] is True
    assert added["rule"] == listed[0]
    assert added["rule"]["recheck"] is None
    again = json_of(run("rules", "add", "Run the tests before you commit", "--json"))
    assert again == {"created": False, "enabled_again": False, "rule": listed[0]}


def test_re_adding_a_disabled_rule_says_it_is_enabled_again(run: Invoke) -> None:
    """As the web UI says it: the add enabled the rule again, in text and in JSON."""
    rule_id = json_of(run("rules", "add", "Squash before merge", "--json"))["rule"]["id"]
    assert run("rules", "disable", rule_id).exit_code == 0
    again = run("rules", "add", "Squash before merge")
    assert again.exit_code == 0
    assert again.stdout == (
        f"Rule already saved ({rule_id}); it was disabled and is enabled again.\n"
    )
    assert json_of(run("rules", "list", "--json"))[0]["enabled"] is True
    assert run("rules", "disable", rule_id).exit_code == 0
    shown = json_of(run("rules", "add", "Squash before merge", "--json"))
    assert (shown["created"], shown["enabled_again"], shown["rule"]["enabled"]) == (
        False,
        True,
        True,
    )
    still = run("rules", "add", "Squash before merge")
    assert still.stdout == (
        f"Rule already saved ({rule_id}). An identical rule is not added twice.\n"
    )
    assert json_of(run("rules", "add", "A new rule", "--json"))["enabled_again"] is False


def test_every_option_of_rules_sync_and_rules_add_has_help(run: Invoke) -> None:
    sync_help = " ".join(run("rules", "sync", "--help").stdout.split())
    assert "--dir DIRECTORY The repository to write to." in sync_help
    add_help = " ".join(run("rules", "add", "--help").stdout.split())
    assert "--evidence-memory ID A memory id the rule rests on (repeatable)." in add_help
    assert "--evidence-fact ID A fact id the rule rests on (repeatable)." in add_help
