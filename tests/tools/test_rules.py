"""Rules: add_rule, list_rules with its re-check flags, confirm_rule."""

from __future__ import annotations

import re

import pytest

from tests.tools.helpers import DAY_MS, body_lines, db_rows, rule_id_of

COMMIT_RULE = {"then": "Run the tests before you commit", "when": "you are about to commit"}
RULE_SAVED = re.compile(
    r"Rule saved \(r_[0-9a-f]{10}\)\. The owner syncs rules to tools from the Rules page\."
)


def _line(rule_id, *, source="cli", added="2026-10-29", confirmed="2026-10-29"):
    return (
        "- When you are about to commit: Run the tests before you commit  [everywhere]"
        f"  (id {rule_id}, added {added}, source: {source}, last confirmed {confirmed})"
    )


def test_list_rules_prints_one_line_per_rule_as_in_the_reference(call, as_caller):
    rule_id = rule_id_of(call("add_rule", _app=as_caller(caller="you"), **COMMIT_RULE))

    assert body_lines(call("list_rules")) == [_line(rule_id, source="you")]


def test_add_rule_answers_as_in_the_reference(call):
    call("save_memory", text="A .env file was committed once")

    result = call(
        "add_rule",
        then="Never commit .env files",
        when="you stage files",
        evidence_memory_ids=[1],
    )

    assert not result.is_error
    assert RULE_SAVED.fullmatch(result.text)


def test_add_rule_stores_what_was_given(call, app):
    call("save_memory", text="A .env file was committed once")
    rule_id = rule_id_of(
        call(
            "add_rule",
            then="Never commit .env files",
            when="you stage files",
            evidence_memory_ids=[1],
        )
    )

    assert db_rows(
        app,
        "SELECT id, then_text, when_text, scope_tier, scope_name, evidence_memory_ids,"
        " evidence_fact_ids, source, enabled FROM rules",
    ) == [
        (
            rule_id,
            "Never commit .env files",
            "you stage files",
            "everywhere",
            "",
            "[1]",
            "[]",
            "cli",
            1,
        )
    ]


def test_identical_rule_is_not_added_twice(call, app):
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE))

    again = call(
        "add_rule", then="Run the tests  before you commit ", when="you are about to commit"
    )

    assert not again.is_error
    assert again.text == (f"Rule already saved ({rule_id}). An identical rule is not added twice.")
    assert db_rows(app, "SELECT count(*) FROM rules") == [(1,)]
    assert len(body_lines(call("list_rules"))) == 1


def test_adding_a_disabled_rule_again_says_it_is_enabled_again(call, app, clock):
    # The owner disabled it (aletheia rules disable): the add enables it, and says so, in
    # the words rules add and the Rules page use.
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE))
    app.store.set_rule_enabled(rule_id, False, clock())

    again = call("add_rule", **COMMIT_RULE)

    assert not again.is_error
    assert again.text == (f"Rule already saved ({rule_id}); it was disabled and is enabled again.")
    assert len(body_lines(call("list_rules"))) == 1
    third = call("add_rule", **COMMIT_RULE)  # enabled now: nothing changes
    assert third.text == (f"Rule already saved ({rule_id}). An identical rule is not added twice.")


def test_list_rules_with_only_disabled_rules_says_how_many_are_disabled(call, app, clock):
    assert call("list_rules").text == "No rules yet. add_rule adds one."
    first = rule_id_of(call("add_rule", **COMMIT_RULE))
    app.store.set_rule_enabled(first, False, clock())

    assert call("list_rules").text == "No enabled rules (1 disabled by the owner)."

    second = rule_id_of(call("add_rule", then="Use pnpm"))
    app.store.set_rule_enabled(second, False, clock())
    assert call("list_rules").text == "No enabled rules (2 disabled by the owner)."
    call("add_rule", then="Use pnpm")  # enabled again: listed, the disabled one not counted
    assert [line.split("  [")[0] for line in body_lines(call("list_rules"))] == [
        "- Always: Use pnpm"
    ]


def test_a_limited_token_counts_only_the_disabled_rules_it_would_see(call, app, clock, as_caller):
    other = rule_id_of(
        call("add_rule", then="Use poetry", scopeTier="project", scopeName="billing")
    )
    app.store.set_rule_enabled(other, False, clock())
    limited = as_caller(allowed_projects=("shop",))

    assert call("list_rules", _app=limited).text == "No rules yet. add_rule adds one."

    own = rule_id_of(call("add_rule", then="Use pnpm", scopeTier="project", scopeName="shop"))
    app.store.set_rule_enabled(own, False, clock())
    assert call("list_rules", _app=limited).text == "No enabled rules (1 disabled by the owner)."


def test_same_then_with_another_situation_is_another_rule(call):
    call("add_rule", **COMMIT_RULE)
    call("add_rule", then="Run the tests before you commit", when="you push")

    assert len(body_lines(call("list_rules"))) == 2


def test_rule_without_when_applies_always(call):
    call("add_rule", then="Answer in English")

    assert body_lines(call("list_rules"))[0].startswith("- Always: Answer in English  [everywhere]")


def test_project_scope_defaults_to_the_working_directory_project(call):
    call("add_rule", then="Use pnpm", scopeTier="project")
    call("add_rule", then="Use poetry", scopeTier="project", scopeName="Billing")

    lines = body_lines(call("list_rules"))

    assert lines[0].startswith("- Always: Use pnpm  [project: shop]  (id r_")
    assert lines[1].startswith("- Always: Use poetry  [project: billing]  (id r_")


def test_situation_scope_needs_a_name(call):
    result = call("add_rule", then="Be brief", scopeTier="situation")

    assert result.is_error
    assert result.text == "scopeName is required when scopeTier is situation."


def test_a_scope_name_without_a_tier_is_refused_not_dropped(call):
    result = call("add_rule", then="r", scopeName="billing")

    assert result.is_error
    assert result.text == "scopeTier project or situation is required when scopeName is given."
    assert call("list_rules").text == "No rules yet. add_rule adds one."


def test_unknown_scope_tier_is_an_error(call):
    result = call("add_rule", then="Be brief", scopeTier="team")

    assert result.is_error
    assert result.text == "scopeTier must be one of: everywhere, project, situation."


def test_unknown_evidence_memory_id_is_an_error_naming_it(call, app):
    call("save_memory", text="known memory")

    result = call("add_rule", then="Be brief", evidence_memory_ids=[1, 99])

    assert result.is_error
    assert result.text == "Unknown evidence memory id #99."
    assert db_rows(app, "SELECT count(*) FROM rules") == [(0,)]


def test_every_unknown_evidence_id_is_named_not_only_the_lowest(call, app):
    call("save_memory", text="known memory")

    result = call("add_rule", then="Be brief", evidence_memory_ids=[999, 1, 1000, 998])

    assert result.is_error
    assert result.text == "Unknown evidence memory ids #998, #999 and #1000."
    assert db_rows(app, "SELECT count(*) FROM rules") == [(0,)]


def test_unknown_evidence_fact_id_is_an_error_naming_it(call, app):
    result = call("add_rule", then="Be brief", evidence_fact_ids=[7])

    assert result.is_error
    assert result.text == "Unknown evidence fact id #7."
    assert db_rows(app, "SELECT count(*) FROM rules") == [(0,)]


def test_rule_of_800_characters_is_accepted(call):
    assert RULE_SAVED.fullmatch(call("add_rule", then="r" * 800).text)


def test_rule_over_800_characters_is_an_error(call, app):
    result = call("add_rule", then="r" * 801)

    assert result.is_error
    assert result.text == "then must be at most 800 characters."
    assert db_rows(app, "SELECT count(*) FROM rules") == [(0,)]


# DESIGN: a rule's "then (at most 800 chars)"; the reference: "then ..., at most 800
# characters". The limit is the stored rule's: whitespace collapsed, secrets redacted.
def test_the_limit_applies_to_then_as_stored_with_its_whitespace_collapsed(call, app):
    spaced = "Run the tests" + " " * 900 + "before you commit"
    words = ["r" * 100] * 7 + ["s" * 93]
    longest = " \n\t ".join(words)  # 800 characters once collapsed
    assert len(longest) > 800

    assert RULE_SAVED.fullmatch(call("add_rule", then=spaced, when=" you\n\ncommit ").text)
    assert RULE_SAVED.fullmatch(call("add_rule", then=longest).text)
    stored = db_rows(app, "SELECT then_text, when_text FROM rules")
    assert sorted(stored) == [
        ("Run the tests before you commit", "you commit"),
        (" ".join(words), "always"),
    ]
    assert all(len(then) <= 800 for then, _ in stored)


def test_then_over_800_characters_once_collapsed_is_an_error(call, app):
    result = call("add_rule", then="r" * 795 + "   " + "s" * 6)

    assert result.is_error
    assert result.text == "then must be at most 800 characters."
    assert db_rows(app, "SELECT count(*) FROM rules") == [(0,)]


def test_then_that_redaction_makes_longer_than_800_characters_is_an_error(call, app):
    then = "r" * 772 + " use password: hunter2 now"  # 801 with [REDACTED] for hunter2
    assert len(then) == 801 - len("[REDACTED]") + len("hunter2") == 798

    result = call("add_rule", then=then)

    assert result.is_error
    assert result.text == "then must be at most 800 characters once secrets are redacted."
    assert db_rows(app, "SELECT count(*) FROM rules") == [(0,)]


def test_then_is_required(call):
    result = call("add_rule", when="you commit")

    assert result.is_error
    assert result.text == "then is required."


def test_secrets_in_a_rule_are_redacted_before_storage(call, app):
    call("add_rule", then="Log in with DEPLOY_PASSWORD=hunter2hunter2 on staging")

    [(then,)] = db_rows(app, "SELECT then_text FROM rules")
    assert then == "Log in with DEPLOY_PASSWORD=[REDACTED] on staging"


def test_no_rules_yet(call):
    result = call("list_rules")

    assert not result.is_error
    assert result.text == "No rules yet. add_rule adds one."


def test_list_rules_takes_no_input(call):
    result = call("list_rules", extra="ignored")

    assert not result.is_error


def test_dismissed_evidence_memory_flags_the_rule_for_a_re_check(call):
    call("save_memory", text="A .env file was committed once")
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE, evidence_memory_ids=[1]))

    call("dismiss_memory", id=1)
    flagged = body_lines(call("list_rules"))
    call("restore_memory", id=1)
    restored = body_lines(call("list_rules"))

    assert flagged == [_line(rule_id) + "  [re-check: evidence memory #1 was dismissed]"]
    assert restored == [_line(rule_id)]


def test_a_rule_citing_evidence_dismissed_before_it_was_added_is_flagged_until_confirmed(
    call, clock
):
    fact = {"subject": "ci", "predicate": "runner", "object": "GitHub Actions"}
    call("save_memory", text="A .env file was committed once")
    call("save_memory", text="CI runs on GitHub Actions", facts=[fact])
    call("save_memory", text="CI moved to Buildkite", facts=[{**fact, "object": "Buildkite"}])
    call("dismiss_memory", id=1)
    clock.advance(DAY_MS)
    on_memory = rule_id_of(call("add_rule", **COMMIT_RULE, evidence_memory_ids=[1]))
    on_fact = rule_id_of(call("add_rule", then="Use Buildkite", evidence_fact_ids=[1]))
    flagged = body_lines(call("list_rules"))

    clock.advance(DAY_MS)
    call("confirm_rule", id=on_memory)
    call("confirm_rule", id=on_fact)

    assert flagged == [
        _line(on_memory, added="2026-10-30", confirmed="2026-10-30")
        + "  [re-check: evidence memory #1 was dismissed]",
        f"- Always: Use Buildkite  [everywhere]  (id {on_fact}, added 2026-10-30, source: cli,"
        " last confirmed 2026-10-30)  [re-check: evidence fact #1 was superseded]",
    ]
    assert "re-check" not in "\n".join(body_lines(call("list_rules")))


def test_superseded_evidence_fact_flags_the_rule_for_a_re_check(call, clock):
    fact = {"subject": "ci", "predicate": "runner", "object": "GitHub Actions"}
    call("save_memory", text="CI runs on GitHub Actions", facts=[fact])
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE, evidence_fact_ids=[1]))
    assert body_lines(call("list_rules")) == [_line(rule_id)]

    clock.advance(DAY_MS)
    call("save_memory", text="CI moved to Buildkite", facts=[{**fact, "object": "Buildkite"}])

    assert body_lines(call("list_rules")) == [
        _line(rule_id) + "  [re-check: evidence fact #1 was superseded]"
    ]


def test_a_dismissed_evidence_fact_is_named_dismissed_not_superseded(call):
    call(
        "save_memory",
        text="The db engine",
        facts=[{"subject": "db", "predicate": "engine", "object": "postgres"}],
    )
    call("dismiss_memory", id=1, type="fact")
    rule_id = rule_id_of(call("add_rule", then="Use postgres", evidence_fact_ids=[1]))

    assert body_lines(call("list_rules")) == [
        f"- Always: Use postgres  [everywhere]  (id {rule_id}, added 2026-10-29, source: cli,"
        " last confirmed 2026-10-29)  [re-check: evidence fact #1 was dismissed]"
    ]


def test_confirming_a_rule_clears_its_evidence_flags_until_its_evidence_changes_again(call, clock):
    fact = {"subject": "ci", "predicate": "runner", "object": "GitHub Actions"}
    call("save_memory", text="CI runs on GitHub Actions", facts=[fact])
    call("save_memory", text="A .env file was committed once")
    evidence = {"evidence_fact_ids": [1], "evidence_memory_ids": [2]}
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE, **evidence))
    clock.advance(DAY_MS)
    call("save_memory", text="CI moved to Buildkite", facts=[{**fact, "object": "Buildkite"}])
    call("dismiss_memory", id=2)
    flagged = body_lines(call("list_rules"))

    clock.advance(DAY_MS)
    call("confirm_rule", id=rule_id)
    confirmed = body_lines(call("list_rules"))
    clock.advance(DAY_MS)
    call("restore_memory", id=2)
    call("dismiss_memory", id=2)
    dismissed_again = body_lines(call("list_rules"))

    assert flagged == [
        _line(rule_id)
        + "  [re-check: evidence memory #2 was dismissed; evidence fact #1 was superseded]"
    ]
    line = _line(rule_id, confirmed="2026-10-31")
    assert confirmed == [line]
    assert dismissed_again == [line + "  [re-check: evidence memory #2 was dismissed]"]


def test_every_reason_for_a_re_check_is_listed_in_one_flag_in_a_fixed_order(call, clock):
    """DESIGN §7 flags a rule when an evidence memory was dismissed, an evidence fact was
    superseded, or it was not confirmed for 90 days: each that holds is told, not the first."""
    fact = {"subject": "ci", "predicate": "runner", "object": "GitHub Actions"}
    call("save_memory", text="CI runs on GitHub Actions", facts=[fact])
    call("save_memory", text="A .env file was committed once")
    call("save_memory", text="The db engine", facts=[{"subject": "db", "predicate": "engine",
                                                      "object": "postgres"}])  # fmt: skip
    evidence = {"evidence_fact_ids": [2, 1], "evidence_memory_ids": [2, 1]}
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE, **evidence))
    clock.advance(DAY_MS)
    call("save_memory", text="CI moved to Buildkite", facts=[{**fact, "object": "Buildkite"}])
    call("dismiss_memory", id=2)
    call("dismiss_memory", id=2, type="fact")
    clock.advance(89 * DAY_MS)

    result = call("list_rules")

    reasons = (
        "evidence memory #2 was dismissed; evidence fact #2 was dismissed;"
        " evidence fact #1 was superseded; not confirmed for 90 days"
    )
    assert body_lines(result) == [_line(rule_id) + f"  [re-check: {reasons}]"]
    assert result.structured["rules"][0]["recheck"] == reasons


def test_rule_not_confirmed_for_90_days_is_flagged_and_stays_enabled(call, clock):
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE))

    clock.advance(89 * DAY_MS)
    day_89 = body_lines(call("list_rules"))
    clock.advance(DAY_MS)
    day_90 = body_lines(call("list_rules"))

    assert day_89 == [_line(rule_id)]
    assert day_90 == [_line(rule_id) + "  [re-check: not confirmed for 90 days]"]


def test_confirm_rule_answers_as_in_the_reference(call):
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE))

    result = call("confirm_rule", id=rule_id)

    assert not result.is_error
    assert result.text == (
        f"Confirmed rule {rule_id} on 2026-10-29. It stays as it is; only the date it was"
        " last checked changed."
    )


def test_confirm_rule_changes_only_the_last_confirmed_date(call, app, clock):
    rule_id = rule_id_of(call("add_rule", **COMMIT_RULE))
    columns = "id, then_text, when_text, scope_tier, scope_name, source, added_at, enabled"
    before = db_rows(app, f"SELECT {columns} FROM rules")
    clock.advance(90 * DAY_MS)

    result = call("confirm_rule", id=f" {rule_id} ")

    assert result.text.startswith(f"Confirmed rule {rule_id} on 2027-01-27. ")
    assert db_rows(app, f"SELECT {columns} FROM rules") == before
    assert body_lines(call("list_rules")) == [_line(rule_id, confirmed="2027-01-27")]


def test_confirming_an_unknown_rule_is_an_error(call):
    result = call("confirm_rule", id="r_0000000000")

    assert result.is_error
    assert result.text == 'No rule with id "r_0000000000".'


@pytest.mark.parametrize("arguments", [{}, {"id": " "}])
def test_confirm_rule_needs_an_id(call, arguments):
    result = call("confirm_rule", **arguments)

    assert result.is_error
    assert result.text == "id is required."


@pytest.mark.parametrize("tier", ["project", "situation"])
@pytest.mark.parametrize("name", ["shop\u200b", "deploy \u202eevil", "esc\x1b[31m"])
def test_a_scope_name_with_control_or_format_characters_is_refused(call, app, tier, name):
    # Sync refuses such a scope name: one such rule stopped every push of the store.
    result = call("add_rule", then="Use poetry", scopeTier=tier, scopeName=name)

    assert result.is_error
    assert result.text == "scopeName must not contain control or format characters."
    assert db_rows(app, "SELECT count(*) FROM rules") == [(0,)]


def test_a_scope_name_spread_over_lines_is_one_line(call, app):
    call("add_rule", then="Use poetry", scopeTier="situation", scopeName="deploy\n\tprod")

    assert db_rows(app, "SELECT scope_name FROM rules") == [("deploy prod",)]
