"""``aletheia rules``: list, add, confirm, disable and sync standing rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from aletheia_mem.blank import is_blank
from aletheia_mem.cli.common import (
    ITEM_ID,
    cli_settings,
    echo,
    emit_json,
    handles_errors,
    json_option,
    open_cli_app,
    record_json,
    table,
)
from aletheia_mem.cli.terminal import terminal_safe
from aletheia_mem.domain import rule_admin, rule_sync
from aletheia_mem.domain import rules as rule_domain
from aletheia_mem.domain.formatting import rule_scope, rule_text
from aletheia_mem.domain.limits import MAX_NAME, check_length
from aletheia_mem.domain.vocabulary import SCOPE_TIERS
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.projects import project_for_directory, project_root
from aletheia_mem.storage.contracts import Store
from aletheia_mem.storage.entries import Rule
from aletheia_mem.timefmt import format_date
from aletheia_mem.tools.app import target_project


def rule_json(rule: Rule, recheck: str | None) -> dict[str, Any]:
    """A rule as every ``rules`` command's ``--json`` shows it."""
    return {**record_json(rule), "recheck": recheck}


def stored_rule_json(store: Store, rule_id: str, now: int) -> dict[str, Any]:
    """The rule with this id as ``rules list --json`` shows it, read after a change.

    Raises:
        NotFoundError: there is no rule with that id.
    """
    rule = store.get_rule(rule_id)
    if rule is None:
        raise rule_domain.no_such_rule(rule_id)
    recheck = rule_domain.recheck_reason(store, rule, now) if rule.enabled else None
    return rule_json(rule, recheck)


@click.group()
def rules() -> None:
    """Standing rules every coding tool should follow."""


@rules.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also list disabled rules.")
@json_option
@handles_errors
def list_rules(show_all: bool, as_json: bool) -> None:
    """List the enabled rules, flagging those that need a re-check."""
    with open_cli_app(create=False) as app:
        now = app.clock()
        found = app.store.list_rules(enabled_only=not show_all)
        checks = {r.id: rule_domain.recheck_reason(app.store, r, now) for r in found if r.enabled}
        disabled = 0 if found or show_all else len(app.store.list_rules(enabled_only=False))
    if as_json:
        emit_json([rule_json(rule, checks.get(rule.id)) for rule in found])
        return
    if not found:
        echo(_no_rules_line(disabled))
        return
    rows = []
    for rule in found:
        state = "" if rule.enabled else "disabled"
        reason = checks.get(rule.id)
        if reason:
            state = f"re-check: {reason}"
        rows.append(
            [
                rule.id,
                rule_scope(rule),
                f"{format_date(rule.added_at)} / {format_date(rule.last_confirmed_at)}",
                rule.source,
                rule_text(rule) + (f"  [{state}]" if state else ""),
            ]
        )
    echo(table(["id", "scope", "added / confirmed", "source", "rule"], rows))


def _no_rules_line(disabled: int) -> str:
    """What rules list says when it lists nothing: disabled rules are there, or none at all."""
    if not disabled:
        return "No rules yet. aletheia rules add adds one."
    them = "it" if disabled == 1 else "them"
    return f"No enabled rules ({disabled} disabled: aletheia rules list --all shows {them})."


@rules.command("add")
@click.argument("then")
@click.option("--when", default="always", show_default=True, help="The situation.")
@click.option(
    "--scope-tier",
    type=click.Choice(SCOPE_TIERS),
    default="everywhere",
    show_default=True,
)
@click.option("--scope-name", help="The project or situation name for that tier.")
@click.option(
    "--evidence-memory",
    "memory_ids",
    multiple=True,
    type=ITEM_ID,
    help="A memory id the rule rests on (repeatable).",
)
@click.option(
    "--evidence-fact",
    "fact_ids",
    multiple=True,
    type=ITEM_ID,
    help="A fact id the rule rests on (repeatable).",
)
@json_option
@handles_errors
def add_rule(
    then: str,
    when: str,
    scope_tier: str,
    scope_name: str | None,
    memory_ids: tuple[int, ...],
    fact_ids: tuple[int, ...],
    as_json: bool,
) -> None:
    """Add a rule (at most 800 characters); an identical rule is not added twice."""
    then = " ".join(then.split())
    if is_blank(then):
        raise InvalidInputError("then is required.")
    if len(then) > 800:
        raise InvalidInputError("then must be at most 800 characters.")
    with open_cli_app() as app:
        name = rule_domain.rule_scope_name(
            scope_tier,
            scope_name or "",
            lambda given: target_project(app, given or None),
            ("--scope-tier", "--scope-name"),
        )
        item = rule_domain.RuleInput(
            then=then,
            when=when,
            scope_tier=scope_tier,
            scope_name=name,
            evidence_memory_ids=memory_ids,
            evidence_fact_ids=fact_ids,
            source=cli_settings().tool or rule_domain.OWNER_SOURCE,  # ALETHEIA_TOOL, else you
        )
        rule, added = rule_domain.add_rule_telling(app.store, item, app.clock())
        recheck = rule_domain.recheck_reason(app.store, rule, app.clock()) if rule.enabled else None
    if as_json:  # the rule as rules list --json shows it
        emit_json(
            {
                "created": added == "created",
                "enabled_again": added == "enabled",
                "rule": rule_json(rule, recheck),
            }
        )
    elif added == "created":
        echo(f"Rule saved ({rule.id}). aletheia rules sync writes it to your tools.")
    else:
        echo(rule_domain.already_saved(rule.id, added))


@rules.command("confirm")
@click.argument("rule_id", metavar="ID")
@json_option
@handles_errors
def confirm(rule_id: str, as_json: bool) -> None:
    """Record that a rule was re-checked: only its last-confirmed date changes."""
    check_length("id", rule_id.strip(), MAX_NAME)  # as confirm_rule: never a huge echo
    with open_cli_app(create=False) as app:
        now = app.clock()
        rule_domain.confirm_rule(app.store, rule_id.strip(), now)
        shown = stored_rule_json(app.store, rule_id.strip(), now)
    if as_json:  # the rule as rules list --json shows it
        emit_json({"confirmed": True, "rule": shown})
    else:
        echo(
            f"Confirmed rule {rule_id.strip()} on {format_date(now)}. It stays as it is; only"
            " the date it was last checked changed."
        )


@rules.command("disable")
@click.argument("rule_id", metavar="ID")
@json_option
@handles_errors
def disable(rule_id: str, as_json: bool) -> None:
    """Switch a rule off: it is kept, but no longer listed, shown in context or synced."""
    check_length("id", rule_id.strip(), MAX_NAME)
    with open_cli_app(create=False) as app:
        now = app.clock()
        rule_admin.set_rule_enabled(app.store, rule_id.strip(), False, now)
        shown = stored_rule_json(app.store, rule_id.strip(), now)
    if as_json:  # the rule as rules list --all --json shows it
        emit_json({"disabled": True, "rule": shown})
    else:
        echo(f"Disabled rule {rule_id.strip()}. Adding the same rule again brings it back.")


@rules.command("sync")
@click.option(
    "--tool",
    "tools",
    multiple=True,
    help="Only this tool's file (claude-code, codex, gemini-cli, cursor, windsurf, vscode...).",
)
@click.option("--all-tools", is_flag=True, help="Write every tool's instruction file.")
@click.option(
    "--dir",
    "directory",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The repository to write to.  [default: this directory's, or ALETHEIA_CWD's]",
)
@click.option("--dry-run", is_flag=True, help="Show the changes without writing.")
@json_option
@handles_errors
def sync(
    tools: tuple[str, ...], all_tools: bool, directory: Path | None, dry_run: bool, as_json: bool
) -> None:
    """Write the enabled rules into the tools' instruction files of this repository.

    The rules go in a marked block (CLAUDE.md, AGENTS.md, GEMINI.md, .cursor/rules,
    .windsurf/rules, .github/copilot-instructions.md) that the next sync replaces; text
    outside the block is never touched. By default the files that exist are updated, or
    AGENTS.md and CLAUDE.md when none does.
    """
    for tool in tools:  # an unknown tool is named in the error: never a huge echo
        check_length("--tool", tool, MAX_NAME)
    if directory is None:  # ALETHEIA_CWD (else the working folder), as the web UI
        directory = cli_settings().cwd
        if not directory.is_dir():
            raise InvalidInputError(f"ALETHEIA_CWD names {directory}, which is not a folder.")
    root = project_root(directory)
    targets = rule_sync.resolve_targets(tools, root, all_tools)
    with open_cli_app(create=False) as app:
        project = project_for_directory(root)
        changes = rule_sync.plan_sync(app.store, project, root, targets)
    rule_sync.check_lengths(changes)  # a dry run says so too
    written = [] if dry_run else rule_sync.apply_sync(changes)
    if as_json:
        emit_json(
            {
                "project": project,
                "dry_run": dry_run,
                "files": [
                    {
                        "path": str(c.path),
                        "link_to": None if c.link_to is None else str(c.link_to),
                        "changed": c.changed,
                        "written": c.path in written,
                        "left_out": c.left_out,
                    }
                    for c in changes
                ],
            }
        )
        return
    for change in changes:
        name = change.path if change.link_to is None else f"{change.path} -> {change.link_to}"
        if not change.changed:
            echo(f"{name}: up to date.")
        elif dry_run:
            echo(f"{name}: would change:")
            echo(terminal_safe(change.diff()))
        elif change.left_out:
            echo(
                f"{name}: rules written ({change.left_out:,} newer enabled"
                f" {'rule' if change.left_out == 1 else 'rules'} left out: the block holds at"
                f" most {rule_sync.MAX_BLOCK_RULE_CHARS:,} characters of rules)."
            )
        else:
            echo(f"{name}: rules written.")
