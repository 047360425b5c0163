"""``aletheia facts``: record facts that change over time and look at their history."""

from __future__ import annotations

import click

from aletheia_mem.cli.common import (
    echo,
    emit_json,
    handles_errors,
    json_option,
    open_cli_app,
    table,
)
from aletheia_mem.cli.memory_commands import fact_json
from aletheia_mem.cli.terminal import one_line_safe
from aletheia_mem.domain import facts as fact_domain
from aletheia_mem.domain.formatting import escape_quotes, interval_ends
from aletheia_mem.domain.limits import MAX_FACT_PART, check_length
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.base import Fact
from aletheia_mem.timefmt import format_date, format_instant, parse_instant
from aletheia_mem.tools.app import target_project


@click.group()
def facts() -> None:
    """Facts: (subject, predicate) = object, valid from a time until replaced."""


@facts.command("add")
@click.argument("subject")
@click.argument("predicate")
@click.argument("object_", metavar="OBJECT")
@click.option("--project", "-p", help="Project key. Default: this directory's project.")
@click.option("--valid-from", help="When it became true (ISO 8601 or epoch ms). Default: now.")
@json_option
@handles_errors
def add_fact(
    subject: str,
    predicate: str,
    object_: str,
    project: str | None,
    valid_from: str | None,
    as_json: bool,
) -> None:
    """Record a fact; a different object for the same subject and predicate replaces it."""
    if not (subject.strip() and predicate.strip() and object_.strip()):
        raise InvalidInputError("subject, predicate and object must not be empty.")
    with open_cli_app() as app:
        fact, created = fact_domain.record_fact(
            app.store,
            project=target_project(app, project),
            subject=subject,
            predicate=predicate,
            object=object_,
            valid_from=parse_instant(valid_from, "--valid-from") if valid_from else None,
            source=app.caller,
            now=app.clock(),
        )
    if as_json:
        emit_json({"created": created, "fact": fact_json(fact)})
    elif created:
        echo(f"Recorded fact #{fact.id} in {one_line_safe(fact.project)}.")
    elif fact.dismissed_at is not None:
        echo(
            f"Already recorded as fact #{fact.id}. It is dismissed: hidden from search and"
            f" context; aletheia restore {fact.id} --type fact brings it back."
        )
    else:
        echo(f"Already recorded as fact #{fact.id}.")


def _rows(found: list[Fact], now: int) -> list[list[str]]:
    rows = []
    for fact in found:
        since, until = format_date(fact.valid_from), "now"
        if fact.valid_to is not None:
            since, until = interval_ends(fact.valid_from, fact.valid_to)
        note = f"  (superseded by #{fact.superseded_by})" if fact.superseded_by else ""
        if fact.valid_from > now:  # written for a later time: not true yet
            until = "open-ended" if fact.valid_to is None else until
            note = f"  (upcoming from {format_date(fact.valid_from)})"
        elif fact.valid_to is not None and fact.valid_to > now and fact.superseded_by:
            note = f"  (current; #{fact.superseded_by} from {format_date(fact.valid_to)})"
        rows.append(
            [
                f"#{fact.id}",
                fact.project,
                f"{since} → {until}",
                f"{fact.subject} · {fact.predicate} = {fact.object}{note}",
            ]
        )
    return rows


@facts.command("history")
@click.argument("subject")
@click.option("--project", "-p", help="Only this project (default: every project).")
@click.option("--predicate", help="Only this predicate.")
@click.option("--as-of", help="The facts valid at this ISO 8601 date or epoch ms.")
@click.option(
    "--all",
    "--include-superseded",
    "include_superseded",
    is_flag=True,
    help="Also list replaced facts (fact_history's include_superseded).",
)
@json_option
@handles_errors
def history(
    subject: str,
    project: str | None,
    predicate: str | None,
    as_of: str | None,
    include_superseded: bool,
    as_json: bool,
) -> None:
    """Show how the facts about a subject changed (current ones by default)."""
    # as fact_history: any subject a fact can have, and never a huge echo
    check_length("subject", subject.strip(), MAX_FACT_PART)
    subject = fact_domain.asked_subject(subject)
    with open_cli_app(create=False) as app:
        at = parse_instant(as_of, "--as-of") if as_of else None
        now = app.clock()
        found = fact_domain.fact_history(
            app.store,
            subject=subject.strip(),
            project=target_project(app, project) if project and project.strip() else None,
            predicate=predicate,
            as_of=at,
            include_superseded=include_superseded,
            now=now,
        )
    if as_json:
        emit_json([fact_json(fact) for fact in found])
        return
    if not found:
        echo(one_line_safe(f'No facts found for subject "{escape_quotes(subject.strip())}".'))
        return
    if at is not None:
        shown = escape_quotes(subject.strip())
        echo(one_line_safe(f'Facts about "{shown}" valid at {format_instant(at)}:'))
    echo(table(["id", "project", "valid", "fact"], _rows(found, now)))
