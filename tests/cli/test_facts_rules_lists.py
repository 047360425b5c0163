"""facts, rules (with sync into instruction files) and work-state lists."""

from __future__ import annotations

import json

from aletheia_mem.domain.rule_sync import BLOCK_END, BLOCK_START
from tests.cli.conftest import Invoke, Workspace, json_of


def test_a_new_fact_supersedes_the_old_and_history_shows_both(run: Invoke) -> None:
    assert run("facts", "add", "payments-api", "database", "PostgreSQL 15").stdout == (
        "Recorded fact #1 in shop.\n"
    )
    run("facts", "add", "payments-api", "database", "PostgreSQL 16")
    same = run("facts", "add", "payments-api", "database", "PostgreSQL 16")
    assert same.stdout == "Already recorded as fact #2.\n"
    current = run("facts", "history", "payments-api")
    assert "PostgreSQL 16" in current.stdout
    assert "PostgreSQL 15" not in current.stdout
    full = json_of(run("facts", "history", "payments-api", "--all", "--json"))
    assert [(f["id"], f["superseded_by"]) for f in full] == [(2, None), (1, 2)]
    assert full[1]["valid_to"] == full[0]["valid_from"]
    # the tool's name for the flag works too
    named = run("facts", "history", "payments-api", "--include-superseded", "--json")
    assert json_of(named) == full


def test_history_shows_a_value_written_for_a_later_time_as_upcoming(run: Invoke) -> None:
    """As fact_history and the web's Facts page: the old value stays current until then."""
    run("facts", "add", "checkout", "provider", "Stripe", "--valid-from", "2020-01-01")
    run("facts", "add", "checkout", "provider", "Adyen", "--valid-from", "2999-01-01")
    lines = run("facts", "history", "checkout", "--all").stdout.splitlines()
    adyen = next(line for line in lines if "Adyen" in line)
    stripe = next(line for line in lines if "Stripe" in line)
    assert "2999-01-01 → open-ended" in adyen and "(upcoming from 2999-01-01)" in adyen
    assert "2020-01-01 → 2999-01-01" in stripe and "(current; #2 from 2999-01-01)" in stripe
    assert "superseded" not in stripe


def test_unknown_subject_says_so(run: Invoke) -> None:
    run("facts", "add", "payments-api", "database", "PostgreSQL 16")
    assert run("facts", "history", "nothing").stdout == 'No facts found for subject "nothing".\n'


def test_rules_add_list_confirm_disable(run: Invoke) -> None:
    added = run(
        "rules", "add", "Run the tests before you commit", "--when", "you are about to commit"
    )
    assert added.exit_code == 0
    rule_id = added.stdout.split("(")[1].split(")")[0]
    assert rule_id.startswith("r_") and len(rule_id) == 12
    assert (
        "already saved"
        in run(
            "rules", "add", "Run the tests before you commit", "--when", "you are about to commit"
        ).stdout
    )
    listed = run("rules", "list")
    assert "When you are about to commit: Run the tests before you commit" in listed.stdout
    confirmed = run("rules", "confirm", rule_id)
    assert confirmed.stdout.startswith(f"Confirmed rule {rule_id} on ")
    assert run("rules", "disable", rule_id).exit_code == 0
    assert run("rules", "list").stdout == (
        "No enabled rules (1 disabled: aletheia rules list --all shows it).\n"
    )
    everything = json_of(run("rules", "list", "--all", "--json"))
    assert [(r["id"], r["enabled"]) for r in everything] == [(rule_id, False)]
    missing = run("rules", "disable", "r_0000000000")
    assert missing.exit_code == 3
    assert missing.stderr == 'Error: No rule with id "r_0000000000".\n'


def test_rule_with_unknown_evidence_is_refused(run: Invoke) -> None:
    result = run("rules", "add", "Never commit .env files", "--evidence-memory", "7")
    assert result.exit_code == 2
    assert result.stderr == "Error: Unknown evidence memory id #7.\n"


def test_rules_sync_writes_a_block_and_replaces_only_the_block(
    run: Invoke, workspace: Workspace
) -> None:
    claude_md = workspace.project / "CLAUDE.md"
    claude_md.write_text("# Shop\n\nHand-written notes.\n", encoding="utf-8")
    run("rules", "add", "Run the tests before you commit", "--when", "you are about to commit")
    run("rules", "add", "Use pnpm", "--scope-tier", "project")
    run("rules", "add", "Only in billing", "--scope-tier", "project", "--scope-name", "billing")
    dry = run("rules", "sync", "--dry-run")
    assert dry.exit_code == 0
    assert f"{claude_md}: would change:" in dry.stdout
    assert "+- When you are about to commit: Run the tests before you commit" in dry.stdout
    assert claude_md.read_text(encoding="utf-8") == "# Shop\n\nHand-written notes.\n"
    assert run("rules", "sync").stdout == f"{claude_md}: rules written.\n"
    text = claude_md.read_text(encoding="utf-8")
    assert text.startswith("# Shop\n\nHand-written notes.\n\n" + BLOCK_START + "\n")
    assert "- Always: Use pnpm\n" in text
    assert "billing" not in text
    assert text.endswith(BLOCK_END + "\n")
    claude_md.write_text(text + "\nNotes after the block.\n", encoding="utf-8")
    rule_id = json_of(run("rules", "list", "--json"))[1]["id"]
    run("rules", "disable", rule_id)
    run("rules", "sync")
    synced = claude_md.read_text(encoding="utf-8")
    assert "Use pnpm" not in synced
    assert synced.startswith("# Shop\n\nHand-written notes.\n\n" + BLOCK_START)
    assert synced.endswith(BLOCK_END + "\n\nNotes after the block.\n")
    assert run("rules", "sync").stdout == f"{claude_md}: up to date.\n"


def test_rules_sync_without_files_creates_agents_and_claude_md(
    run: Invoke, workspace: Workspace
) -> None:
    run("rules", "add", "Write tests first")
    run("rules", "sync")
    for name in ("AGENTS.md", "CLAUDE.md"):
        assert "- Always: Write tests first\n" in (workspace.project / name).read_text()
    run("rules", "sync", "--tool", "cursor")
    cursor = (workspace.project / ".cursor" / "rules" / "aletheia.mdc").read_text()
    assert cursor.startswith(
        "---\ndescription: Standing rules from Aletheia\nalwaysApply: true\n---\n"
    )


def test_rules_sync_refuses_a_block_without_its_end(run: Invoke, workspace: Workspace) -> None:
    agents = workspace.project / "AGENTS.md"
    agents.write_text(f"intro\n{BLOCK_START}\nhalf a block\n", encoding="utf-8")
    run("rules", "add", "Run the tests before you commit")
    result = run("rules", "sync")
    assert result.exit_code == 2
    assert "no <!-- aletheia:rules:end --> after it" in result.stderr
    assert agents.read_text(encoding="utf-8") == f"intro\n{BLOCK_START}\nhalf a block\n"


def test_rules_add_of_a_disabled_rule_answers_it_enabled_and_not_created(run: Invoke) -> None:
    rule_id = json_of(run("rules", "add", "Run the linter", "--json"))["rule"]["id"]
    run("rules", "disable", rule_id)
    again = json_of(run("rules", "add", "Run the linter", "--json"))
    listed = json_of(run("rules", "list", "--json"))[0]
    assert again == {"created": False, "enabled_again": True, "rule": listed}
    assert again["rule"]["id"] == rule_id and again["rule"]["enabled"] is True


def test_lists_write_then_read(run: Invoke) -> None:
    written = run("lists", "write", "todo", "ship docs", "test hooks")
    assert written.stdout == 'Saved list "todo" with 2 item(s) as #1.\n'
    assert run("lists", "read", "todo").stdout == '- "ship docs"\n- "test hooks"\n'
    run("lists", "write", "todo", "--items-json", '["ship docs", {"task": "b", "done": false}]')
    assert json_of(run("lists", "read", "todo", "--json")) == [
        "ship docs",
        {"task": "b", "done": False},
    ]
    for blank in ("  ", "\u200b", "\u2060\ufeff"):  # as lists write and work_state_read
        unnamed = run("lists", "read", blank)
        assert (unnamed.exit_code, unnamed.stderr) == (2, "Error: list is required.\n")
    missing = run("lists", "read", "nope")
    assert missing.exit_code == 3
    assert missing.stderr == 'Error: No list named "nope".\n'
    quoted = run("lists", "read", 'say "hi"\nnow')  # quoted as the MCP tool quotes it: one line
    assert quoted.stderr == 'Error: No list named "say \\"hi\\"\\nnow".\n'
    bad = run("lists", "write", "todo", "--items-json", "[null]")
    assert bad.exit_code == 2
    for number in ("NaN", "Infinity", "1e309"):  # Python's JSON reads them; JSON has none
        infinite = run("lists", "write", "todo", "--items-json", f'["ship", {number}]')
        assert infinite.exit_code == 2
        assert infinite.stderr == "Error: items must hold only finite numbers.\n"
    assert json_of(run("lists", "read", "todo", "--json")) == [
        "ship docs",
        {"task": "b", "done": False},
    ]


def test_lists_read_shows_each_item_as_json_as_work_state_read_does(run: Invoke) -> None:
    """The reference's work_state_read answers ["ship docs",{"task":"test hooks","done":false}]:
    the text "3" and the number 3 differ in the text output too, not only with --json."""
    items = ["3", 3, "ship docs", {"task": "test hooks", "done": False}, True, 'say "hi"']
    run("lists", "write", "todo", "--items-json", json.dumps(items))
    lines = run("lists", "read", "todo").stdout.splitlines()
    assert lines == [
        '- "3"',
        "- 3",
        '- "ship docs"',
        '- {"task":"test hooks","done":false}',
        "- true",
        '- "say \\"hi\\""',
    ]
    assert [json.loads(line.removeprefix("- ")) for line in lines] == items
    assert json_of(run("lists", "read", "todo", "--json")) == items


def test_lists_list_shows_each_list_with_its_item_count_and_last_write(
    run: Invoke, workspace: Workspace
) -> None:
    nothing = run("lists", "list")  # no store yet: a read makes none
    assert (nothing.exit_code, nothing.stdout) == (7, "")
    assert not workspace.data_dir.exists()
    run("lists", "write", "todo", "ship docs", "test hooks")
    run("lists", "write", "later", "--items-json", '["3", 3, {"a": 1}]')
    run("lists", "write", "plan", "one", "-p", "other")
    run("lists", "write", "todo", "ship docs")  # rewritten: now the latest
    mine = json_of(run("lists", "list", "--json"))
    assert [(x["list"], x["items"], x["project"]) for x in mine] == [
        ("todo", 1, "shop"),
        ("later", 3, "shop"),
    ]
    assert [x["id"] for x in mine] == [1, 2]
    assert all(x["updated_at"].endswith("Z") for x in mine)
    assert mine[0]["updated_at"] > mine[1]["updated_at"]
    text = run("lists", "list").stdout.splitlines()
    assert text[0].split() == ["id", "updated", "items", "project", "list"]
    assert [line.split()[0::2] for line in text[1:]] == [["#1", "1", "todo"], ["#2", "3", "later"]]
    assert text[1].split()[1] == mine[0]["updated_at"]
    every = json_of(run("lists", "list", "-p", "*", "--json"))
    assert [(x["list"], x["project"]) for x in every] == [
        ("todo", "shop"),
        ("plan", "other"),
        ("later", "shop"),
    ]
    other = json_of(run("lists", "list", "--project", "other", "--json"))
    assert [x["list"] for x in other] == ["plan"]
    assert json_of(run("lists", "list", "-p", "nowhere", "--json")) == []
    assert run("lists", "list", "-p", "nowhere").stdout == "No lists in nowhere.\n"
    cut = run("lists", "list", "-p", "*", "-n", "2")
    assert len(cut.stdout.splitlines()) == 4  # the header, two lists, and a note of more
    assert cut.stdout.endswith(
        "There are more: these are the 2 latest (--limit takes up to 1000).\n"
    )
    assert len(json_of(run("lists", "list", "-p", "*", "-n", "2", "--json"))) == 2
    dismissed = run("dismiss", "1")
    assert dismissed.exit_code == 0
    assert [x["list"] for x in json_of(run("lists", "list", "--json"))] == ["later"]
    bad = run("lists", "list", "-n", "0")
    assert bad.exit_code == 2


def test_lists_write_refuses_more_than_1000_items_as_the_tool_does(run: Invoke) -> None:
    for args in (
        [str(number) for number in range(1001)],
        ["--items-json", json.dumps(list(range(1001)))],
    ):
        refused = run("lists", "write", "big", *args)
        assert (refused.exit_code, refused.stderr) == (
            2,
            "Error: items must hold at most 1000 items.\n",
        )
    assert run("lists", "read", "big").exit_code == 3  # nothing was written
    assert run("lists", "write", "big", *map(str, range(1000))).exit_code == 0


def _nested(levels: int) -> str:
    return "[" + '{"a":' * levels + "1" + "}" * levels + "]"


def test_lists_write_refuses_what_the_tools_argument_check_refuses(run: Invoke) -> None:
    # A lone surrogate crashed the write with a traceback; 500 levels crashed it in recursion,
    # and 200 made the official client's work_state_read hang.
    for items_json, problem in (
        ('["a\\ud800b"]', "items must not contain lone surrogate characters."),
        ('[{"k\\udfff": 1}]', "items must not contain lone surrogate characters."),
        (_nested(31), "items must not nest more than 30 levels deep."),
        (_nested(500), "items must not nest more than 30 levels deep."),
        (_nested(5000), "items must not nest more than 30 levels deep."),  # past recursion
    ):
        refused = run("lists", "write", "deep", "--items-json", items_json)
        assert (refused.exit_code, refused.stderr) == (2, f"Error: {problem}\n")
    assert run("lists", "read", "deep").exit_code == 3  # nothing was written
    assert run("lists", "write", "deep", "--items-json", _nested(30)).exit_code == 0


def test_history_shows_a_value_replaced_the_same_day_by_its_instants(run: Invoke) -> None:
    run("facts", "add", "cache", "ttl", "60 s", "--valid-from", "2026-01-05T10:00:00Z")
    run("facts", "add", "cache", "ttl", "90 s", "--valid-from", "2026-01-05T12:30:00Z")
    lines = run("facts", "history", "cache", "--include-superseded").stdout.splitlines()
    old = next(line for line in lines if "60 s" in line)
    assert "2026-01-05T10:00:00.000Z → 2026-01-05T12:30:00.000Z" in old


def test_history_finds_a_subject_as_long_as_a_fact_may_have(run: Invoke) -> None:
    # facts add stores subjects of up to 2000 characters; history refused those past 400.
    subject = "s" * 2000
    assert run("facts", "add", subject, "db", "pg").exit_code == 0
    found = run("facts", "history", subject)
    assert found.exit_code == 0 and "db = pg" in found.stdout


def test_a_scope_name_without_a_tier_is_refused_not_dropped(run: Invoke) -> None:
    result = run("rules", "add", "ev rule", "--scope-name", "foo")

    assert result.exit_code != 0
    assert (
        "--scope-tier project or situation is required when --scope-name is given." in result.output
    )
    assert "ev rule" not in run("rules", "list").stdout
