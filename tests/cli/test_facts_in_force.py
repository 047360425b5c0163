"""The CLI's search, context and rules list read a fact as fact_history does: the value in force
now is current though its successor is already written for a later time, and a rule resting
on it needs no re-check yet."""

from __future__ import annotations

from tests.cli.conftest import Invoke, json_of

IN_FORCE = "fact #1 svc · db = PG 16  (shop, since 2020-01-01; #2 from 2999-01-01)"


def _pg16_then_pg17_in_2999(run: Invoke) -> None:
    run("facts", "add", "svc", "db", "PG 16", "--valid-from", "2020-01-01")
    run("facts", "add", "svc", "db", "PG 17", "--valid-from", "2999-01-01")


def test_search_and_context_list_the_value_in_force_as_current(run: Invoke) -> None:
    _pg16_then_pg17_in_2999(run)

    found = run("search", "svc").stdout.splitlines()
    context = run("context").stdout.splitlines()

    assert found[0] == IN_FORCE
    assert f"- {IN_FORCE}" in context


def test_a_rule_on_the_value_in_force_needs_no_re_check_yet(run: Invoke) -> None:
    _pg16_then_pg17_in_2999(run)
    run("rules", "add", "Use PG 16 features only", "--evidence-fact", "1")

    listed = run("rules", "list").stdout
    as_json = json_of(run("rules", "list", "--json"))

    assert "Use PG 16 features only" in listed and "re-check" not in listed
    assert as_json[0]["recheck"] is None
