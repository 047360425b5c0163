"""Bad input that click itself catches is told like every other error: one line on stderr,
the error object on stdout with --json, exit code 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from aletheia_mem.cli.main import cli
from tests.cli.conftest import Invoke, Workspace, json_of


@pytest.fixture
def aletheia(workspace: Workspace) -> Invoke:
    """The CLI run as ``aletheia``, the name its errors point to for help."""

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), prog_name="aletheia", catch_exceptions=False)

    return invoke


BAD_INPUT = [
    (["search", "pnpm", "--limit", "500"], "Error: Invalid value for '--limit' / '-n': 500 is"
     " not in the range 1<=x<=100. Try 'aletheia search --help'.\n"),
    (["bogus"], "Error: No such command 'bogus'. Try 'aletheia --help'.\n"),
    (["--bogus"], "Error: No such option '--bogus'. Try 'aletheia --help'.\n"),
    (["rules", "bogus"], "Error: No such command 'bogus'. Try 'aletheia rules --help'.\n"),
    (["save"], "Error: Missing argument 'TEXT'. Try 'aletheia save --help'.\n"),
    (["show", "abc"], "Error: Invalid value for 'IDS...': 'abc' is not a valid id."
     " Try 'aletheia show --help'.\n"),
    (["serve", "--port", "x"], "Error: --port must be a port number from 0 to 65535."
     " Try 'aletheia serve --help'.\n"),
    (["import", "missing.jsonl"], "Error: Invalid value for 'SOURCE': 'missing.jsonl': No such"
     " file or directory. Try 'aletheia import --help'.\n"),
    # click's suggestion ends with "?": no "." is added after it
    (["search", "pnpm", "--limt", "3"], "Error: No such option '--limt'. Did you mean"
     " '--limit'? Try 'aletheia search --help'.\n"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "stderr"), BAD_INPUT, ids=[" ".join(c) for c, _ in BAD_INPUT])
def test_a_usage_error_is_one_line_with_exit_code_2(
    aletheia: Invoke, command: list[str], stderr: str
) -> None:
    result = aletheia(*command)
    assert result.exit_code == 2
    assert result.stderr == stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "command",
    [["search", "pnpm", "--limit", "0"], ["show", "abc"], ["import", "missing.jsonl"],
     ["rules", "add", "x", "--scope-tier", "galaxy"], ["connect", "emacs"]],
    ids=" ".join,
)  # fmt: skip
def test_a_usage_error_with_json_also_prints_the_error_object(
    run: Invoke, command: list[str]
) -> None:
    result = run(*command, "--json")
    assert result.exit_code == 2
    error = json_of(result)["error"]
    assert error["code"] == "invalid_input"
    assert result.stderr.startswith(f"Error: {error['message']}")
    assert result.stderr.count("\n") == 1


def test_a_group_without_a_command_still_shows_its_help(run: Invoke) -> None:
    result = run("rules")
    assert result.exit_code == 2
    assert "Commands:" in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("command", "flag"),
    [(["search", "pnpm", "--since", "yesterday"], "--since"),
     (["search", "pnpm", "--until", "soon"], "--until"),
     (["facts", "history", "api", "--as-of", "then"], "--as-of"),
     (["facts", "add", "api", "db", "pg", "--valid-from", "now"], "--valid-from")],
    ids=lambda v: v if isinstance(v, str) else "",
)  # fmt: skip
def test_a_bad_date_names_the_option_the_user_typed(
    run: Invoke, command: list[str], flag: str
) -> None:
    run("save", "a first memory")
    result = run(*command)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {flag} must be an ISO 8601 date, date-time or epoch milliseconds.\n"
    )


HUGE = "a" * 100_000
TOO_LONG_NAMES = [
    (["lists", "read", HUGE], "list must be at most 200 characters."),
    (["rules", "confirm", HUGE], "id must be at most 200 characters."),
    (["rules", "disable", HUGE], "id must be at most 200 characters."),
    (["rules", "sync", "--tool", HUGE], "--tool must be at most 200 characters."),
    (["facts", "history", HUGE], "subject must be at most 2000 characters."),
    (["mcp-link", "revoke", HUGE], "name must be at most 100 characters."),
]


@pytest.mark.parametrize(
    ("args", "message"), TOO_LONG_NAMES, ids=[" ".join(args[:2]) for args, _ in TOO_LONG_NAMES]
)
def test_an_over_long_name_is_refused_as_the_tool_refuses_it_not_echoed(
    aletheia: Invoke, args: list[str], message: str
) -> None:
    aletheia("save", "a note")  # a store to look in: the length is what is wrong
    result = aletheia(*args)
    assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n")


@pytest.mark.parametrize(
    "args",
    [["search", "x", "--type", HUGE], ["connect", HUGE], ["show", HUGE]],
    ids=lambda args: args[0],
)
def test_a_usage_error_quotes_a_huge_argument_by_its_start_and_end(
    aletheia: Invoke, args: list[str]
) -> None:
    result = aletheia(*args)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and len(result.stderr) < 1100
    assert result.stderr.startswith("Error: Invalid value for ")
    assert "…" in result.stderr and result.stderr.endswith(f" Try 'aletheia {args[0]} --help'.\n")
