"""save, search, show, timeline, context, dismiss and restore from the terminal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Invoke, Workspace, json_of


def test_save_then_search_finds_it_in_this_directorys_project(run: Invoke) -> None:
    saved = run("save", "Use pnpm, not npm, in the shop repo", "--type", "decision", "--pin")
    assert saved.exit_code == 0
    assert saved.stdout == "Saved as #1 in shop.\n"
    again = run("save", "Use pnpm, not npm, in the shop repo", "--type", "decision", "--pin")
    assert again.stdout == "Already saved as #1.\n"
    found = run("search", "pnpm")
    assert found.exit_code == 0
    assert found.stdout.splitlines()[0].split() == ["id", "date", "type", "title"]
    assert "#1" in found.stdout
    assert "Use pnpm, not npm, in the shop repo  (shop, cli, pinned)" in found.stdout


def test_search_json_is_for_scripts(run: Invoke) -> None:
    run("save", "Staging deploys need the VPN", "--type", "gotcha", "--file", "deploy/staging.sh")
    data = json_of(run("search", "--file", "staging.sh", "--file-suffix", "--json"))
    [memory] = data["memories"]
    assert memory["id"] == 1
    assert memory["files"] == ["deploy/staging.sh"]
    assert memory["tool"] == "cli"
    assert data["empty_reason"] is None


def test_a_file_search_refuses_the_filters_it_does_not_apply(run: Invoke) -> None:
    run("save", "Staging deploys need the VPN", "--file", "deploy/staging.sh")
    for given in (["--since", "yesterday"], ["--since", "2026-01-01"], ["--type", "gotcha"]):
        refused = run("search", "--file", "deploy/staging.sh", *given)
        assert refused.exit_code == 2
        assert refused.stderr == (
            f"Error: --file finds memories by path: {given[0]} does not apply to it"
            " (only --project, --file-suffix and --limit do).\n"
        )
    both = run("search", "deploys", "--file", "deploy/staging.sh", "--type", "gotcha")
    assert (both.exit_code, both.stderr) == (
        2,
        "Error: --file finds memories by path: QUERY, --type do not apply to it"
        " (only --project, --file-suffix and --limit do).\n",
    )
    found = run("search", "--file", "deploy/staging.sh", "--limit", "5", "--order", "relevance")
    assert found.exit_code == 0 and "Staging deploys need the VPN" in found.stdout


@pytest.mark.usefixtures("workspace")
@pytest.mark.parametrize(
    "args", [["--file-suffix", "cart.py"], ["cart.py", "--file-suffix"], ["--file-suffix"]]
)
def test_file_suffix_without_file_is_refused_not_a_word_search(
    run: Invoke, args: list[str]
) -> None:
    """--file-suffix is a flag: ``--file-suffix cart.py`` (the path taken for its value) ran a
    word search for "cart.py" without a hint, while every other mix is refused."""
    run("save", "The cart rounds prices half up", "--file", "src/cart.py")
    aletheia = str(Path(sys.executable).parent / "aletheia")
    for extra in ([], ["--json"]):
        result = subprocess.run(
            [aletheia, "search", *args, *extra], capture_output=True, text=True, timeout=30
        )
        assert result.returncode == 2
        said = (
            "--file-suffix only goes with --file (a flag: --file PATH --file-suffix finds the"
            " paths that end with PATH)."
        )
        assert result.stderr == f"Error: {said}\n"
        if extra:
            assert json.loads(result.stdout)["error"] == {"code": "invalid_input", "message": said}
        else:
            assert result.stdout == ""


def test_empty_search_says_why(run: Invoke) -> None:
    run("save", "a memory of another project", "--project", "billing")
    result = run("search", "anything")
    assert result.exit_code == 0
    assert result.stdout == 'No matches. Project "shop" has no memories yet.\n'


def test_search_without_a_query_is_an_error_with_the_references_message(run: Invoke) -> None:
    result = run("search")
    assert result.exit_code == 2
    assert result.stderr == "Error: query is required.\n"
    as_json = run("search", "--json")
    assert json_of(as_json) == {"error": {"code": "invalid_input", "message": "query is required."}}


def test_secrets_are_redacted_before_saving(run: Invoke) -> None:
    run("save", "deploy key is AKIAZ7Q3MEXW4LRT2N5K for staging")
    shown = run("show", "1")
    assert "AKIAZ7Q3MEXW4LRT2N5K" not in shown.stdout
    assert "[REDACTED]" in shown.stdout


def test_show_prints_the_full_memory_and_unknown_ids_fail(run: Invoke) -> None:
    run("save", "Staging deploys need the VPN", "--title", "VPN for staging", "--type", "gotcha")
    shown = run("show", "1")
    assert shown.exit_code == 0
    assert shown.stdout.startswith("#1 [gotcha] VPN for staging\nshop · ")
    assert "· source: cli\nStaging deploys need the VPN\n" in shown.stdout
    missing = run("show", "9")
    assert missing.exit_code == 3
    assert missing.stderr == "Error: No memory found for id #9.\n"


def test_timeline_marks_the_anchor(run: Invoke) -> None:
    for text in ("first note", "second note", "third note"):
        run("save", text)
    result = run("timeline", "2", "--before", "1", "--after", "1")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()[1:]
    assert [line.split()[0] for line in lines] == ["#1", "→", "#3"]
    assert run("timeline").exit_code == 2


def test_timeline_of_an_unknown_id_is_not_found_and_a_query_without_a_hit_is_no_match(
    run: Invoke,
) -> None:
    """Exit codes (troubleshooting.md): 3 is "no memory ... with that id", as for show; a
    search with no match, which --query is, is done (0)."""
    run("save", "first note")
    missing = run("timeline", "99")
    no_match = run("timeline", "--query", "nothing-like-it")
    assert missing.exit_code == 3
    assert missing.stdout == ""
    assert missing.stderr == "Error: Nothing to anchor on: no memory #99.\n"
    assert no_match.exit_code == 0
    assert no_match.stdout == "Nothing to anchor on.\n"


def test_context_is_the_session_start_block(run: Invoke) -> None:
    run("save", "Use pnpm", "--type", "decision", "--pin")
    result = run("context")
    assert result.exit_code == 0
    assert result.stdout.startswith("# Memory for shop\n## Pinned\n- #1 ")
    assert "[D] Use pnpm\n" in result.stdout
    assert "Context economics: 1 item listed;" in result.stdout


def test_context_estimates_the_tokens_of_what_it_prints(run: Invoke) -> None:
    """Printed without the recall wrapper, the block's estimate leaves the wrapper out too."""
    run("save", "Use pnpm", "--type", "decision", "--pin")
    printed = run("context").stdout.rstrip("\n")

    tokens = int(re.search(r"~(\d+) tokens for this block \(estimate, chars/4\)", printed)[1])

    assert abs(tokens - len(printed) // 4) <= 1, (tokens, len(printed))


def test_dismiss_hides_and_restore_brings_back(run: Invoke) -> None:
    run("save", "Use yarn in the shop repo")
    dismissed = run("dismiss", "1", "--reason", "outdated")
    assert dismissed.exit_code == 0
    assert dismissed.stdout == (
        "Dismissed memory #1. It is hidden from search and context; aletheia restore undoes this.\n"
    )
    assert run("search", "yarn").stdout.startswith("No matches.")
    restored = run("restore", "1")
    assert restored.stdout == "Restored memory #1.\n"
    assert "#1" in run("search", "yarn").stdout


def test_saving_a_dismissed_memory_again_says_it_is_dismissed(run: Invoke) -> None:
    run("save", "Use yarn in the shop repo")
    run("dismiss", "1")
    again = run("save", "Use yarn in the shop repo")
    assert again.exit_code == 0
    assert again.stdout == (
        "Already saved as #1. It is dismissed: hidden from search and context;"
        " aletheia restore 1 brings it back.\n"
    )


def test_restoring_an_item_that_is_not_dismissed_says_so(run: Invoke) -> None:
    run("save", "Use yarn in the shop repo")
    restored = run("restore", "1")
    assert restored.exit_code == 0
    assert restored.stdout == "Nothing to restore: memory #1 is not dismissed.\n"
    assert json_of(run("restore", "1", "--json"))["restored"] is False
    run("dismiss", "1")
    assert json_of(run("restore", "1", "--json"))["restored"] is True


def test_a_restore_that_restores_nothing_is_audited_as_changing_nothing(run: Invoke) -> None:
    run("save", "Use yarn in the shop repo")
    for _ in range(2):
        assert run("restore", "1").stdout == "Nothing to restore: memory #1 is not dismissed.\n"
    run("dismiss", "1", "--reason", "outdated")
    again = run("dismiss", "1", "--reason", "third")  # already dismissed: nothing changes
    assert again.stdout == "Nothing to dismiss: memory #1 is already dismissed.\n"
    assert json_of(run("dismiss", "1", "--json"))["dismissed"] is False
    assert json_of(run("show", "1", "--json"))[0]["dismiss_reason"] == "outdated"
    rows = json_of(run("audit", "--local", "--json"))
    assert [(row["tool"], row["result"], row["detail"]) for row in rows] == [
        ("dismiss_memory", "ok", "nothing changed: it was already dismissed"),
        ("dismiss_memory", "ok", "third (nothing changed: it was already dismissed)"),
        ("dismiss_memory", "ok", "outdated"),
        ("restore_memory", "ok", "nothing changed: it was not dismissed"),
        ("restore_memory", "ok", "nothing changed: it was not dismissed"),
    ]
    text = run("audit", "--local").stdout
    assert text.count("nothing changed: it was not dismissed") == 2


def test_a_search_emptied_by_its_filters_names_the_cli_s_options(run: Invoke) -> None:
    """Not the tool's argument names (until or older_than_days)."""
    run("save", "Use pnpm in the shop repo", "--type", "decision")
    result = run("search", "pnpm", "--until", "2025")
    assert (
        result.stdout == "No matches. The filters (--until) excluded every memory that matched.\n"
    )
    both = json_of(run("search", "pnpm", "--type", "gotcha", "--since", "2025", "--json"))
    assert both["empty_reason"] == (
        "The filters (--type, --since) excluded every memory that matched."
    )


def test_older_than_days_keeps_to_older_memories_and_the_earlier_bound_wins(
    run: Invoke,
) -> None:
    """As the search tool's older_than_days: a memory saved just now is 0 days old, not 1."""
    run("save", "Use pnpm in the shop repo")

    def titles(*options: str) -> list[str]:
        found = json_of(run("search", "pnpm", *options, "--json"))
        return [memory["title"] for memory in found["memories"]]

    assert titles("--older-than-days", "0") == ["Use pnpm in the shop repo"]
    assert titles("--older-than-days", "0", "--until", "9999") == ["Use pnpm in the shop repo"]
    assert titles("--older-than-days", "1.5", "--until", "9999") == []
    assert titles("--older-than-days", "0", "--until", "2025") == []
    older = run("search", "pnpm", "--older-than-days", "1")
    assert older.stdout == (
        "No matches. The filters (--older-than-days) excluded every memory that matched.\n"
    )
    both = json_of(run("search", "pnpm", "--older-than-days", "1", "--until", "2999", "--json"))
    assert both["empty_reason"] == (
        "The filters (--until or --older-than-days) excluded every memory that matched."
    )


@pytest.mark.parametrize(
    ("days", "message"),
    [
        ("-1", "--older-than-days must be from 0 to 1000000."),
        ("1000001", "--older-than-days must be from 0 to 1000000."),
        ("ten", "--older-than-days must be a number."),
        ("\uff11", "--older-than-days must be a number."),
        ("nan", "--older-than-days must be a number."),
    ],
)
def test_older_than_days_is_checked_as_the_tool_checks_it(
    run: Invoke, days: str, message: str
) -> None:
    run("save", "Use pnpm in the shop repo")
    refused = run("search", "pnpm", f"--older-than-days={days}")
    assert (refused.exit_code, refused.stderr) == (2, f"Error: {message}\n")
    with_file = run("search", "--file", "a.py", "--older-than-days", "1")
    assert (with_file.exit_code, with_file.stderr) == (
        2,
        "Error: --file finds memories by path: --older-than-days does not apply to it"
        " (only --project, --file-suffix and --limit do).\n",
    )


def test_dismissing_an_unknown_item_exits_not_found(run: Invoke) -> None:
    run("save", "a first memory")
    result = run("dismiss", "5", "--type", "fact")
    assert result.exit_code == 3
    assert result.stderr == "Error: No fact #5.\n"


def test_another_project_by_name_and_every_project_with_a_star(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "billing uses stripe", "--project", "billing")
    assert run("search", "stripe").stdout.startswith("No matches.")
    assert "#1" in run("search", "stripe", "--project", "billing").stdout
    assert "#1" in run("search", "stripe", "-p", "*").stdout


def test_store_location_follows_aletheia_data_dir(run: Invoke, workspace: Workspace) -> None:
    run("save", "where am I")
    assert (workspace.data_dir / "aletheia.db").exists()


@pytest.mark.parametrize("config", ["not json", '{"exclude_projects": "billing"}'])
def test_a_bad_config_file_is_a_one_line_error_with_exit_1(
    run: Invoke, workspace: Workspace, config: str
) -> None:
    workspace.data_dir.mkdir(parents=True, exist_ok=True)
    (workspace.data_dir / "config.json").write_text(config, encoding="utf-8")
    for args in (("save", "a note"), ("search", "note"), ("context",)):
        result = run(*args)
        assert result.exit_code == 1, args
        assert result.stderr.startswith("Error: ") and "config.json" in result.stderr
        assert result.stderr.count("\n") == 1
    assert not (workspace.data_dir / "aletheia.db").exists()  # nothing was saved


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ('{"exclude_projects": [', "is not valid JSON: Expecting value: line 1 column 23"),
        ('["billing"]', "is not a JSON object."),
    ],
)
def test_a_bad_config_file_says_what_is_wrong_with_it(
    run: Invoke, workspace: Workspace, config: str, said: str
) -> None:
    workspace.data_dir.mkdir(parents=True, exist_ok=True)
    (workspace.data_dir / "config.json").write_text(config, encoding="utf-8")
    assert said in run("search", "note").stderr


def test_a_list_name_with_terminal_escapes_is_echoed_made_visible(run: Invoke) -> None:
    listed = run("lists", "write", "todo\x1b]0;pwned\x07", "a")
    assert "\x1b" not in listed.stdout and "\x07" not in listed.stdout


@pytest.mark.parametrize("project", ["shop\x1b[2J", "shop\u202e", "sh\u200bop"])
def test_a_project_with_control_or_format_characters_is_refused(run: Invoke, project: str) -> None:
    # Import and sync refuse such a project, so a store holding one could not be restored
    # from its export nor synced: it is refused where it would be written.
    for argv in (("save", "a note"), ("facts", "add", "api", "db", "pg"), ("lists", "write", "l")):
        refused = run(*argv, "--project", project)
        assert refused.exit_code == 2
        assert refused.stderr == "Error: project must not contain control or format characters.\n"
    assert run("search", "note", "--project", "*").stdout.startswith("No matches.")


def test_save_help_does_not_offer_every_project_which_save_refuses(run: Invoke) -> None:
    save_help = " ".join(run("save", "--help").stdout.split())
    refused = run("save", "a note", "--project", "*")
    assert "-p, --project TEXT Project key. Default: this directory's project." in save_help
    assert '"*"' not in save_help
    assert refused.exit_code == 2
    assert refused.stderr == ('Error: project "*" is only for search, timeline and lists list.\n')
    for reader in (["search"], ["timeline"], ["lists", "list"]):
        assert '"*" for every project' in " ".join(run(*reader, "--help").stdout.split())


# Every command with a --project that names one project; and those that take "*"
SINGLE_PROJECT = [
    ["save", "a note"],
    ["context"],
    ["facts", "add", "api", "db", "pg"],
    ["facts", "history", "api"],
    ["lists", "write", "todo"],
    ["lists", "read", "todo"],
    ["rules", "add", "Run the tests", "--scope-tier", "project", "--scope-name"],
]
EVERY_PROJECT = [["search", "note"], ["timeline", "1"], ["lists", "list"]]


@pytest.mark.parametrize("command", SINGLE_PROJECT, ids=" ".join)
def test_a_single_project_command_given_every_project_names_the_commands_that_take_it(
    run: Invoke, command: list[str]
) -> None:
    """The CLI told the tools' words ("only for search and timeline"), which leave out
    ``lists list``; the MCP tools keep theirs."""
    assert run("save", "a note in shop").exit_code == 0
    flag = [] if command[-1] == "--scope-name" else ["--project"]
    refused = run(*command, *flag, "*", input="- x\n")
    assert refused.exit_code == 2, refused.output
    named = 'project "*" is only for search, timeline and lists list.'
    assert refused.stderr == f"Error: {named}\n"
    for reader in EVERY_PROJECT:  # each command the message names takes "*"
        read = run(*reader, "--project", "*")
        assert read.exit_code == 0, (reader, read.output)


def test_search_by_an_absolute_path_finds_the_file_saved_relative(run, workspace):
    run("save", "Auth tokens expire after an hour", "--file", "src/auth.py")
    absolute = str(workspace.project / "src" / "auth.py")
    data = json_of(run("search", "--file", absolute, "--json"))
    assert [memory["files"] for memory in data["memories"]] == [["src/auth.py"]]


def test_timeline_help_says_an_anchor_id_needs_no_project_as_it_behaves(run: Invoke) -> None:
    run("save", "billing note", "--project", "billing")  # #1, not this directory's project
    run("save", "shop note")
    around = run("timeline", "1")
    assert around.exit_code == 0 and "billing note" in around.stdout
    assert "shop note" not in around.stdout  # the neighbours are the anchor's project's
    assert run("timeline", "1", "-p", "shop").exit_code == 3
    shown = " ".join(run("timeline", "--help").stdout.split())
    assert (
        "Default: with ANCHOR, the anchor's own project; with --query, this directory's project."
        in shown
    )


def test_invisible_text_a_rule_and_a_list_name_are_refused_as_blank_ones(run: Invoke) -> None:
    # Only a zero-width space (a format character) and a word joiner: nothing shows.
    for argv, message in (
        (("save", "\u200b\u2060"), "text is required."),
        (("rules", "add", "\u200b"), "then is required."),
        (("lists", "write", "\ufeff", "a"), "list is required."),
    ):
        refused = run(*argv)
        assert refused.exit_code == 2, refused.stdout
        assert refused.stderr == f"Error: {message}\n"
