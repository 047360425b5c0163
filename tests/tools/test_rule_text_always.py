"""A rule without a situation reads ``Always: <rule>``, or the rule alone when it starts with
the word "Always" itself (``Always run lint``, not ``Always: Always run lint``)."""

from __future__ import annotations

from tests.tools.helpers import body_lines


def test_list_rules_and_context_do_not_double_always(call):
    call("add_rule", then="Always run lint")
    call("add_rule", then="always  answer in English")
    call("add_rule", then="Always-on services need a health check")
    call("add_rule", then="Alwaysbe careful")  # not the word
    call("add_rule", then="Always run the smoke tests", when="you deploy")

    listed = [line.split("  [")[0] for line in body_lines(call("list_rules"))]
    context = body_lines(call("session_start_context"))
    rules = call("session_start_context").structured["rules"]

    assert listed == [
        "- Always run lint",
        "- always answer in English",
        "- Always: Always-on services need a health check",
        "- Always: Alwaysbe careful",
        "- When you deploy: Always run the smoke tests",
    ]
    assert [line for line in context if line.startswith("- ")] == listed
    assert [rule["text"] for rule in rules] == [line[2:] for line in listed]


def test_a_situation_rule_saying_always_keeps_its_situation(call):
    call("add_rule", then="Always tag the release", scopeTier="situation", scopeName="releases")

    assert "- Always tag the release  [situation: releases]" in body_lines(
        call("session_start_context")
    )
