"""A rule that says "Always" itself reads without a doubled word (``Always run lint``), in
``rules list``, ``context`` and the instruction files ``rules sync`` writes."""

from __future__ import annotations

from tests.cli.conftest import Invoke, Workspace


def test_a_rule_that_says_always_itself_is_not_prefixed_with_always(
    run: Invoke, workspace: Workspace
) -> None:
    run("rules", "add", "Always run lint")
    run("rules", "add", "Run the tests")
    run("rules", "sync")

    listed = run("rules", "list").stdout
    written = (workspace.project / "AGENTS.md").read_text(encoding="utf-8")

    assert "Always run lint" in listed and "Always: Always" not in listed
    assert "- Always run lint\n" in written and "- Always: Run the tests\n" in written
    assert "Always: Always" not in run("context").stdout
