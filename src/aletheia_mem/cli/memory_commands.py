"""Memories from the terminal: save, search, show, timeline, context, dismiss and restore."""

from __future__ import annotations

from typing import Any

import click

from aletheia_mem.blank import is_blank
from aletheia_mem.cli.common import (
    ITEM_ID,
    Count,
    echo,
    emit_json,
    handles_errors,
    json_option,
    open_cli_app,
    record_json,
    style,
    table,
)
from aletheia_mem.cli.terminal import one_line_safe, terminal_safe
from aletheia_mem.domain import memories, recall
from aletheia_mem.domain.context import build_context
from aletheia_mem.domain.formatting import fact_line, none_found, observation_block
from aletheia_mem.domain.vocabulary import ITEM_TYPES, MEMORY_TYPES
from aletheia_mem.errors import InvalidInputError, NotFoundError
from aletheia_mem.search.semantic.model import SemanticSource
from aletheia_mem.storage.base import Fact, Memory
from aletheia_mem.timefmt import format_date, parse_instant
from aletheia_mem.tools.app import (
    AppContext,
    readable_projects,
    target_project,
)
from aletheia_mem.tools.arguments import check_value
from aletheia_mem.tools.memory_tools import earlier_bound, timeline_around
from aletheia_mem.tools.schemas import SEARCH
from aletheia_mem.tools.write_tools import (
    already_dismissed_text,
    dismiss_item,
    memory_input,
    restore_item,
    saved_again_notes,
)

PROJECT_HELP = 'Project key. Default: this directory\'s project; "*" for every project (reads).'
WRITE_PROJECT_HELP = "Project key. Default: this directory's project."  # "*" is refused there
# As the timeline tool: an anchor given by id may be in any project the caller can read.
TIMELINE_PROJECT_HELP = (
    'Project key: limits the lookup and the neighbours; "*" for every project. Default: with'
    " ANCHOR, the anchor's own project; with --query, this directory's project."
)


def memory_json(memory: Memory) -> dict[str, Any]:
    return record_json(memory)


def fact_json(fact: Fact) -> dict[str, Any]:
    return record_json(fact)


def memory_rows(found: list[Memory]) -> list[list[str]]:
    rows = []
    for memory in found:
        tags = f"{memory.project}, {memory.tool}" + (", pinned" if memory.pinned else "")
        title = " ".join(memory.title.split())
        rows.append(
            [f"#{memory.id}", format_date(memory.created_at), memory.type, f"{title}  ({tags})"]
        )
    return rows


@click.command()
@click.argument("text")
@click.option("--title", help="Short title. Default: the first 100 characters of the text.")
@click.option("--type", "kind", type=click.Choice(MEMORY_TYPES), default="note", show_default=True)
@click.option("--project", "-p", help=WRITE_PROJECT_HELP)
@click.option("--pin", is_flag=True, help="List it under Pinned in the session-start context.")
@click.option("--file", "files", multiple=True, help="A path the memory is about (repeatable).")
@json_option
@handles_errors
def save(
    text: str,
    title: str | None,
    kind: str,
    project: str | None,
    pin: bool,
    files: tuple[str, ...],
    as_json: bool,
) -> None:
    """Save one memory (secrets are redacted first; the same text twice is saved once)."""
    if is_blank(text):
        raise InvalidInputError("text is required.")
    arguments = {"text": text, "title": title, "project": project, "type": kind, "pinned": pin}
    with open_cli_app() as app:
        item = memory_input(app, {**arguments, "files": list(files)})
        memory, created, facts_changed = memories.save_memory_noting(app.store, app.clock, item)
    if as_json:
        emit_json({"created": created, "memory": memory_json(memory)})
    elif created:
        echo(f"Saved as #{memory.id} in {one_line_safe(memory.project)}.")
    elif memory.dismissed_at is not None:
        echo(
            f"Already saved as #{memory.id}. It is dismissed: hidden from search and context;"
            f" aletheia restore {memory.id} brings it back."
            + saved_again_notes(memory, item, facts_changed)
        )
    else:
        echo(f"Already saved as #{memory.id}." + saved_again_notes(memory, item, facts_changed))


_OLDER_THAN_DAYS = SEARCH["properties"]["older_than_days"]


def _search(app: AppContext, now: int, query: str | None, file: str | None, **options: Any) -> Any:
    since = parse_instant(options["since"], "--since") if options["since"] else None
    until = (
        parse_instant(options["until"], "--until", end_of_day=True) if options["until"] else None
    )
    until_name = "--until"
    if options["older_than_days"] is not None:  # checked as the tool's older_than_days
        days = check_value("--older-than-days", _OLDER_THAN_DAYS, options["older_than_days"])
        until_name = "--until or --older-than-days" if until is not None else "--older-than-days"
        until = earlier_bound(until, days, now)
    request = recall.SearchRequest(
        query=query,
        projects=readable_projects(app, options["project"]),
        file=file,
        file_suffix=options["file_suffix"],
        type=options["kind_filter"],
        kind=options["memory_kind"],
        since=since,
        until=until,
        order=options["order"],
        limit=options["limit"],
        offset=options["offset"],
        repository=app.repository,  # the repository the command runs in, as a local server's
        filter_names=("--type", "--kind", "--since", until_name),
    )
    return recall.search(app.store, request, now, _query_only_semantic(app))


def _query_only_semantic(app: AppContext) -> SemanticSource | None:
    """Semantic recall from the vectors already stored (the server's worker embeds memories):
    a one-shot search loads the model, embeds its query and starts no background work."""
    engine = app.semantic
    if engine is None:
        return None
    from aletheia_mem.search.semantic.engine import SemanticEngine  # only with the extra on

    if isinstance(engine, SemanticEngine) and not engine.load_for_query():
        return None
    return engine


@click.command()
@click.argument("query", required=False)
@click.option("--file", help="Find memories about this exact file path instead.")
@click.option(
    "--file-suffix", is_flag=True, help="Only with --file: match stored paths that end with it."
)
@click.option("--project", "-p", help=PROJECT_HELP)
@click.option("--type", "kind_filter", type=click.Choice(MEMORY_TYPES), help="Only this type.")
@click.option("--kind", "memory_kind", help="Only this kind (note, observation, summary...).")
@click.option("--since", help="From this ISO 8601 date, date-time or epoch ms on.")
@click.option(
    "--until",
    help="Up to this ISO 8601 date, date-time or epoch ms (a bare date includes that day).",
)
@click.option(
    "--older-than-days",
    metavar="DAYS",
    help="Only results older than this many days (0 to 1000000, fractions too);"
    " with --until, the earlier bound wins.",
)
@click.option(
    "--order",
    type=click.Choice(["relevance", "date_desc", "date_asc"]),
    default="relevance",
    show_default=True,
)
@click.option("--limit", "-n", type=Count(1, 100), default=20, show_default=True)
@click.option("--offset", type=Count(0, 1_000_000), default=0, show_default=True)
@json_option
@handles_errors
def search(query: str | None, file: str | None, as_json: bool, **options: Any) -> None:
    """Search memories and facts (matching facts first), or find memories by file."""
    query = (query or "").strip() or None
    file = (file or "").strip() or None
    if options["file_suffix"] and not file:  # a flag: `--file-suffix cart.py` is a word search
        raise InvalidInputError(
            "--file-suffix only goes with --file (a flag: --file PATH --file-suffix finds the"
            " paths that end with PATH)."
        )
    if not query and not file:
        raise InvalidInputError("query is required.")
    if file:
        _refuse_filters_with_file({**options, "query": query})
    with open_cli_app(create=False) as app:
        now = app.clock()
        result = _search(app, now, query, file, **options)
    if as_json:
        emit_json(
            {
                "facts": [fact_json(fact) for fact in result.facts],
                "memories": [memory_json(memory) for memory in result.memories],
                "empty_reason": result.empty_reason,
            }
        )
        return
    if result.empty_reason is not None:
        echo(terminal_safe(f"No matches. {result.empty_reason}"))
        return
    for fact in result.facts:
        echo(style(one_line_safe(fact_line(fact, now)), fg="cyan"))
    if result.memories:
        echo(table(["id", "date", "type", "title"], memory_rows(result.memories)))


# Search options (and the query) that a file search does not apply (only --project, --file-suffix
# and --limit do, as with the tool), with the value each has when not given.
_NOT_WITH_FILE = {
    "query": ("QUERY", None),
    "kind_filter": ("--type", None),
    "memory_kind": ("--kind", None),
    "since": ("--since", None),
    "until": ("--until", None),
    "older_than_days": ("--older-than-days", None),
    "order": ("--order", "relevance"),
    "offset": ("--offset", 0),
}


def _refuse_filters_with_file(options: dict[str, Any]) -> None:
    """A user who asks for a filter gets it or is told: the tool ignores them (its reference
    says so), but a command line that seems to filter and does not would mislead.

    Raises:
        InvalidInputError: a filter that a file search does not apply was given.
    """
    given = [flag for name, (flag, unset) in _NOT_WITH_FILE.items() if options[name] != unset]
    if given:
        verb = "does" if len(given) == 1 else "do"
        raise InvalidInputError(
            f"--file finds memories by path: {', '.join(given)} {verb} not apply to it"
            " (only --project, --file-suffix and --limit do)."
        )


@click.command()
@click.argument("ids", nargs=-1, required=True, type=ITEM_ID)
@json_option
@handles_errors
def show(ids: tuple[int, ...], as_json: bool) -> None:
    """Show memories in full by id: text, narrative, facts and files."""
    wanted = list(dict.fromkeys(ids))
    with open_cli_app(create=False) as app:
        found = app.store.get_memories(wanted)
    if not found:
        raise NotFoundError(none_found(wanted))
    if as_json:
        emit_json([memory_json(memory) for memory in found])
    else:
        echo(terminal_safe("\n---\n".join(observation_block(memory) for memory in found)))
    seen = {memory.id for memory in found}
    missing = [memory_id for memory_id in wanted if memory_id not in seen]
    if missing:  # the others were shown: a note, not an error
        echo(none_found(missing), err=True)


@click.command()
@click.argument("anchor", required=False, type=ITEM_ID)
@click.option("--query", "-q", help="Find the anchor by search instead of by id.")
@click.option("--project", "-p", help=TIMELINE_PROJECT_HELP)
@click.option("--before", type=Count(0, 50), default=5, show_default=True)
@click.option("--after", type=Count(0, 50), default=5, show_default=True)
@json_option
@handles_errors
def timeline(
    anchor: int | None,
    query: str | None,
    project: str | None,
    before: int,
    after: int,
    as_json: bool,
) -> None:
    """Show the memories before and after one memory, with an arrow on it."""
    if anchor is None and not (query and query.strip()):
        raise InvalidInputError(
            "Nothing to anchor on. Give ANCHOR (a memory id from search) or --query."
        )
    with open_cli_app(create=False) as app:  # the owner's: an id is found in any project
        line = timeline_around(app, anchor, query, project, before, after)
        if line is None and anchor is not None:  # as show: exit code 3, "not found"
            raise NotFoundError(f"Nothing to anchor on: no memory #{anchor}.")
        if line is None:  # a search without a hit: done, as search is
            if as_json:
                emit_json([])  # the same shape as a timeline: a list, here empty
            else:
                echo("Nothing to anchor on.")
            return
    items = [*line.before, line.anchor, *line.after]
    if as_json:
        emit_json([{**memory_json(m), "anchor": m.id == line.anchor.id} for m in items])
        return
    rows = []
    for memory in items:
        mark = "→" if memory.id == line.anchor.id else ""
        rows.append([mark, *memory_rows([memory])[0]])
    echo(table(["", "id", "date", "type", "title"], rows))


@click.command()
@click.option("--project", "-p", help="Project key. Default: this directory's project.")
@click.option("--limit", type=Count(1, 100), default=20, show_default=True)
@json_option
@handles_errors
def context(project: str | None, limit: int, as_json: bool) -> None:
    """Print the session-start context block an agent gets for a project (for you to read:
    without the recall wrapper that marks it as data for the agent)."""
    with open_cli_app(create=False) as app:
        chosen = target_project(app, project)
        block = build_context(app.store, chosen, limit, now=app.clock(), wrapped=False)
    if as_json:
        emit_json({"project": chosen, "context": block})
    else:
        echo(terminal_safe(block))


def _item_options(function: Any) -> Any:
    function = click.option(
        "--type",
        "item_type",
        type=click.Choice(ITEM_TYPES),
        default="memory",
        show_default=True,
        help="What the id names.",
    )(function)
    return click.argument("item_id", metavar="ID", type=ITEM_ID)(function)


@click.command()
@_item_options
@click.option(
    "--reason",
    help="Why (kept with the item, shown by show, and in the audit trail; cut to 300 characters).",
)
@json_option
@handles_errors
def dismiss(item_id: int, item_type: Any, reason: str | None, as_json: bool) -> None:
    """Hide an item from search and context without deleting it (restore undoes it)."""
    with open_cli_app(create=False) as app:
        project, dismissed = dismiss_item(app, item_type, item_id, reason)
    if as_json:
        emit_json({"dismissed": dismissed, "type": item_type, "id": item_id, "project": project})
    elif not dismissed:
        echo(already_dismissed_text(item_type, item_id))
    else:
        echo(
            f"Dismissed {item_type} #{item_id}. It is hidden from search and context;"
            " aletheia restore undoes this."
        )


@click.command()
@_item_options
@json_option
@handles_errors
def restore(item_id: int, item_type: Any, as_json: bool) -> None:
    """Bring back an item hidden by dismiss."""
    with open_cli_app(create=False) as app:
        project, restored, message = restore_item(app, item_type, item_id)
    if as_json:
        emit_json({"restored": restored, "type": item_type, "id": item_id, "project": project})
    else:
        echo(message)


COMMANDS = (save, search, show, timeline, context, dismiss, restore)
