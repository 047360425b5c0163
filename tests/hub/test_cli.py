"""`aletheia mcp-link` and `aletheia audit`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aletheia_mem.cli.main import cli
from aletheia_mem.domain.redaction import REDACTED, redact_secrets
from aletheia_mem.hub.tokens import verify_token
from aletheia_mem.storage.entries import AuditEntry
from tests.stores import open_target


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for name in ("ALETHEIA_HUB_DB", "ALETHEIA_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NO_COLOR", "1")
    return CliRunner()


def test_create_prints_the_token_once_with_the_connect_snippets(
    runner: CliRunner, hub_db: Path | str
) -> None:
    result = runner.invoke(
        cli,
        ["mcp-link", "create", "--hub-db", str(hub_db), "--projects", "shop", "--name", "laptop",
         "--url", "https://hub.example.com"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    secret = next(word for word in result.output.split() if word.startswith("alt_"))
    # shown whole to its creator, once; a note that holds it is redacted
    assert redact_secrets(f"use {secret} for the shop hub") == f"use {REDACTED} for the shop hub"
    assert 'Token "laptop" (scope mcp; shop).' in result.output
    assert (
        "claude mcp add --transport http --scope user aletheia-hub https://hub.example.com/mcp"
        f" --header 'Authorization: Bearer {secret}'"
    ) in result.output
    assert f'"Authorization": "Bearer {secret}"' in result.output
    assert "aletheia sync" not in result.output  # an mcp token cannot sync
    store = open_target(hub_db)
    try:
        token = verify_token(store, secret)
    finally:
        store.close()
    assert token is not None and token.projects == ("shop",) and token.scope == "mcp"
    listed = runner.invoke(cli, ["mcp-link", "list", "--hub-db", str(hub_db)])
    assert "laptop" in listed.output and secret not in listed.output
    assert secret[:10] + "…" in listed.output


@pytest.mark.parametrize("url", ["https://hub.example.com/mcp", "https://hub.example.com/mcp/"])
def test_create_takes_the_hubs_mcp_url_as_its_address(
    runner: CliRunner, hub_db: Path | str, url: str
) -> None:
    args = ["mcp-link", "create", "--hub-db", str(hub_db), "--projects", "*", "--scope", "sync"]
    args += ["--url", url]
    result = runner.invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    created = json.loads(result.stdout)
    assert created["url"] == "https://hub.example.com/mcp"
    assert "/mcp/mcp" not in result.stdout
    assert created["sync"] == (
        f"ALETHEIA_HUB_TOKEN={created['token']} aletheia sync --hub https://hub.example.com"
    )


def test_create_reads_the_hub_db_from_the_environment_and_speaks_json(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALETHEIA_HUB_DB", str(tmp_path / "env-hub.db"))
    result = runner.invoke(
        cli, ["mcp-link", "create", "--projects", "*", "--scope", "sync", "--json"]
    )
    assert result.exit_code == 0, result.output
    created = json.loads(result.output)
    assert created["projects"] == ["*"] and created["scope"] == "sync"  # as --projects "*"
    assert created["mcp_json"]["mcpServers"]["aletheia-hub"]["url"] == "http://127.0.0.1:8787/mcp"
    assert created["sync"].startswith(f"ALETHEIA_HUB_TOKEN={created['token']} aletheia sync ")
    listed = json.loads(runner.invoke(cli, ["mcp-link", "list", "--json"]).output)
    assert [(token["name"], token["projects"]) for token in listed] == [(created["name"], ["*"])]
    assert "token" not in listed[0]


def test_revoke_ends_a_token_and_says_so(runner: CliRunner, hub_db: Path | str) -> None:
    hub_db = str(hub_db)
    runner.invoke(cli, ["mcp-link", "create", "--hub-db", hub_db, "--projects", "a", "--name", "x"])
    revoked = runner.invoke(cli, ["mcp-link", "revoke", "--hub-db", hub_db, "x"])
    assert revoked.exit_code == 0
    assert revoked.output.strip() == 'Revoked token "x". Requests with it now get 401.'
    again = runner.invoke(cli, ["mcp-link", "revoke", "--hub-db", hub_db, "x"])
    assert again.exit_code == 3 and 'No live token named "x".' in again.output
    assert "revoked" in runner.invoke(cli, ["mcp-link", "list", "--hub-db", hub_db]).output


def test_revoke_given_a_secret_does_not_repeat_it(runner: CliRunner, hub_db: Path | str) -> None:
    """A token pasted whole (rather than its name or first characters) is no live token's
    name: the refusal says so without printing the secret on the terminal again."""
    hub_db = str(hub_db)
    made = runner.invoke(cli, ["mcp-link", "create", "--hub-db", hub_db, "--projects", "a"])
    secret = next(word for word in made.output.split() if word.startswith("alt_"))
    refused = runner.invoke(cli, ["mcp-link", "revoke", "--hub-db", hub_db, secret])
    assert refused.exit_code == 3, refused.output
    assert 'No live token named "[REDACTED]".' in refused.output
    assert secret not in refused.output


@pytest.mark.parametrize(
    "lookalike",
    [
        "Bob",
        "BOB",
        "b\u043eb",
        "\u0412ob",
        "\u0392\u03bfb",
        "\uff42\uff4f\uff42",
        "b\U0001d428b",
        "\U0001d6a9ob",
    ],
)
def test_create_refuses_a_name_that_passes_for_a_tokens_name(
    runner: CliRunner, hub_db: Path | str, lookalike: str
) -> None:
    """A token's name authors what it syncs (``bob/claude-code``): another case, a Cyrillic or
    Greek letter drawn as the Latin one, a full-width or mathematical letter made a second
    "bob" that every teammate's store showed as the first."""
    hub_db = str(hub_db)
    create = ["mcp-link", "create", "--hub-db", hub_db, "--projects", "shop", "--name"]
    assert runner.invoke(cli, [*create, "bob"]).exit_code == 0
    refused = runner.invoke(cli, [*create, lookalike])
    shown = lookalike.encode("ascii", "backslashreplace").decode()
    assert (refused.exit_code, refused.stderr) == (
        4,
        f'Error: --name "{shown}" would pass for the token "bob"; choose another name.\n',
    )
    listed = json.loads(
        runner.invoke(cli, ["mcp-link", "list", "--hub-db", hub_db, "--json"]).output
    )
    assert [token["name"] for token in listed] == ["bob"]
    assert runner.invoke(cli, [*create, "bobby"]).exit_code == 0


def test_create_refuses_a_lookalike_of_a_revoked_tokens_name_as_of_its_name(
    runner: CliRunner, hub_db: Path | str
) -> None:
    """A revoked token's name stays taken (its syncs stay authored by it): its look-alikes too."""
    hub_db = str(hub_db)
    create = ["mcp-link", "create", "--hub-db", hub_db, "--projects", "shop", "--name"]
    runner.invoke(cli, [*create, "gina"])
    runner.invoke(cli, ["mcp-link", "revoke", "--hub-db", hub_db, "gina"])
    refused = runner.invoke(cli, [*create, "G\u0456na"])
    assert refused.exit_code == 4
    assert 'would pass for the token "gina" (revoked)' in refused.stderr


@pytest.mark.parametrize("invisible", ["\u3164", "\ufe0f", "\u034f", "\u115f"])
def test_create_refuses_a_name_holding_an_invisible_character(
    runner: CliRunner, hub_db: Path | str, invisible: str
) -> None:
    """Hangul fillers, variation selectors and the grapheme joiner print as nothing, though
    Python counts them printable: "bob" with one reads as "bob"."""
    create = ["mcp-link", "create", "--hub-db", str(hub_db), "--projects", "shop", "--name"]
    refused = runner.invoke(cli, [*create, f"bo{invisible}b"])
    assert refused.exit_code == 2
    assert "no control, format or invisible characters" in refused.stderr


BLANK_PROJECTS = 'Error: --projects needs at least one project name, or "*" for all.\n'


@pytest.mark.parametrize(
    "blank", ["", "  ", "\u200b", "\u2060", "\u200b,\u2060", " \ufeff , \u00ad "]
)
def test_create_given_projects_only_blank_or_zero_width_says_it_needs_a_project(
    runner: CliRunner, hub_db: Path | str, blank: str
) -> None:
    """Zero-width characters alone are blank (``is_blank``), as spaces are: the same message,
    never one about format characters nor a token for a project named by nothing."""
    create = ["mcp-link", "create", "--hub-db", str(hub_db), "--projects", blank]
    refused = runner.invoke(cli, create)
    assert (refused.exit_code, refused.stderr) == (2, BLANK_PROJECTS)


def test_create_drops_a_blank_project_among_names_as_an_empty_one(
    runner: CliRunner, hub_db: Path | str
) -> None:
    """``shop,\u00ad`` made a token for "shop" and for a project named by a soft hyphen."""
    base = ["mcp-link", "create", "--hub-db", str(hub_db), "--json"]
    shop = runner.invoke(cli, [*base, "--projects", "shop,\u00ad, \u200b ,,billing"])
    assert json.loads(shop.stdout)["projects"] == ["shop", "billing"]
    every = runner.invoke(cli, [*base, "--projects", "*,\u2060"])
    assert json.loads(every.stdout)["projects"] == ["*"]
    inside = runner.invoke(cli, [*base, "--projects", "sh\u200bop"])  # not blank: refused
    assert "--projects must not contain control or format characters." in inside.stderr


@pytest.mark.parametrize("blank", ["  ", "\u200b", "\u2060\ufeff"])
def test_create_given_a_blank_or_zero_width_name_gives_the_default_name(
    runner: CliRunner, hub_db: Path | str, blank: str
) -> None:
    """A blank --name is "not given" (the default name); a zero-width one was refused as
    holding format characters, and --projects of a word joiner alone was refused for --name."""
    create = ["mcp-link", "create", "--hub-db", str(hub_db), "--projects", "shop", "--json"]
    made = runner.invoke(cli, [*create, "--name", blank])
    assert made.exit_code == 0 and json.loads(made.stdout)["name"].startswith("mcp-shop-")


def test_create_refuses_an_unknown_scope(runner: CliRunner) -> None:
    bad = runner.invoke(
        cli, ["mcp-link", "create", "--hub-db", "x.db", "--projects", "s", "--scope", "root"]
    )
    assert bad.exit_code == 2


def test_audit_lists_the_newest_rows_and_filters_by_token(
    runner: CliRunner, hub_db: Path | str
) -> None:
    store = open_target(hub_db)
    try:
        store.add_audit(AuditEntry(1_000, "laptop", "save_memory", "shop", "ok"))
        store.add_audit(AuditEntry(2_000, "ci", "search", None, "refused"))
    finally:
        store.close()
    shown = runner.invoke(cli, ["audit", "--hub-db", str(hub_db)])
    assert shown.exit_code == 0
    lines = shown.output.splitlines()
    assert lines[0].split() == ["TIME", "TOKEN", "TOOL", "PROJECT", "RESULT", "DETAIL"]
    assert lines[1].split()[1:] == ["ci", "search", "-", "refused"]
    assert lines[2].split()[1:] == ["laptop", "save_memory", "shop", "ok"]
    only = json.loads(
        runner.invoke(cli, ["audit", "--hub-db", str(hub_db), "--token", "ci", "--json"]).output
    )
    assert only == [
        {"at": "1970-01-01T00:00:02.000Z", "token": "ci", "tool": "search", "project": None,
         "result": "refused", "detail": None}
    ]  # fmt: skip
    nosuch = runner.invoke(cli, ["audit", "--hub-db", str(hub_db), "--token", "nosuch"])
    assert (nosuch.exit_code, nosuch.output) == (0, "No audit rows match --token nosuch.\n")
    both = runner.invoke(cli, ["audit", "--hub-db", str(hub_db), "--token", "ci", "--tool", "x"])
    assert both.output == "No audit rows match --token ci and --tool x.\n"


def test_audit_of_a_hub_without_rows_says_none_yet(runner: CliRunner, hub_db: Path | str) -> None:
    open_target(hub_db).close()
    result = runner.invoke(cli, ["audit", "--hub-db", str(hub_db)])
    assert (result.exit_code, result.output) == (0, "No audit rows yet.\n")


@pytest.mark.parametrize("command", [["mcp-link"], ["mcp-link", "create"], ["audit"], ["sync"]])
def test_every_hub_command_has_help(runner: CliRunner, command: list[str]) -> None:
    result = runner.invoke(cli, [*command, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


@pytest.mark.parametrize("store", ["none yet", "made"])
def test_sync_without_a_hub_says_how_to_start(
    runner: CliRunner, tmp_path: Path, store: str
) -> None:
    if store == "made":
        assert runner.invoke(cli, ["save", "a note"]).exit_code == 0
    result = runner.invoke(cli, ["sync"])  # the default data folder, ~/.aletheia
    assert result.exit_code == (2 if store == "made" else 7)  # no store: 7, as for the reads
    assert "No hub yet: run ALETHEIA_HUB_TOKEN=TOKEN aletheia sync --hub URL once" in result.output
    assert (tmp_path / ".aletheia" / "aletheia.db").exists() is (store == "made")


def _details(output: str) -> list[str]:
    return [line.split()[-1] for line in output.splitlines() if " row-" in line]


def test_audit_pages_to_the_oldest_row_and_rows_written_meanwhile_move_none(
    runner: CliRunner, hub_db: Path | str
) -> None:
    """``aletheia audit`` read the newest --limit rows (at most 10,000) and no older ones; it
    now pages as the hub's Audit page does, each page's note giving the next one's --offset and
    --upto."""
    store = open_target(hub_db)
    try:
        for n in range(11):
            store.add_audit(AuditEntry(1_000 * n, "ci", "search", "shop", "ok", f"row-{n:02d}"))
        store.add_audit(AuditEntry(20_000, "laptop", "save_memory", "shop", "ok", "row-other"))
    finally:
        store.close()
    base = ["audit", "--hub-db", str(hub_db), "--token", "ci", "--limit", "4"]
    first = runner.invoke(cli, base, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    seen = _details(first.stdout)
    assert seen == ["row-10", "row-09", "row-08", "row-07"]
    note = first.stdout.splitlines()[-1]
    assert note.startswith("Rows 1 to 4 of 11, newest first. The next 4: the same command with")
    # a row written between two pages pushes none of those seen onto the next page
    store = open_target(hub_db)
    try:
        store.add_audit(AuditEntry(30_000, "ci", "search", "shop", "ok", "row-new"))
    finally:
        store.close()
    while "--offset" in note:
        following = note.split("the same command with ")[1].rstrip(".").split()
        page = runner.invoke(cli, [*base, *following], catch_exceptions=False)
        assert page.exit_code == 0, page.output
        seen += _details(page.stdout)
        note = page.stdout.splitlines()[-1]
    assert seen == [f"row-{n:02d}" for n in range(10, -1, -1)]
    assert note == "Rows 9 to 11 of 11, newest first."
    # the first page read anew holds the new row; with --json the note goes to stderr
    fresh = runner.invoke(cli, [*base, "--json"], catch_exceptions=False)
    assert [row["detail"] for row in json.loads(fresh.stdout)][:2] == ["row-new", "row-10"]
    assert fresh.stderr.startswith("Rows 1 to 4 of 12, newest first. The next 4:")
    past = runner.invoke(cli, [*base, "--offset", "12"], catch_exceptions=False)
    assert past.stdout == "No more audit rows: --offset 12 is past the 12 that match.\n"
    assert json.loads(runner.invoke(cli, [*base, "--offset", "12", "--json"]).stdout) == []
    everything = runner.invoke(cli, ["audit", "--hub-db", str(hub_db)], catch_exceptions=False)
    assert len(_details(everything.stdout)) == 13 and "Rows " not in everything.stdout
    none = runner.invoke(cli, ["audit", "--hub-db", str(hub_db), "--tool", "x", "--upto", "3"])
    assert none.stdout == "No audit rows match --tool x and --upto 3.\n"
