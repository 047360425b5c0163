"""``aletheia sync``: exchange this store's new and changed items with a team hub."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from aletheia_mem.cli.common import (
    Count,
    echo,
    emit_json,
    existing_store,
    handles_errors,
    json_option,
    misplaced_store,
    projects_json,
)
from aletheia_mem.cli.terminal import one_line_safe
from aletheia_mem.clock import system_clock
from aletheia_mem.config import load_settings
from aletheia_mem.errors import InvalidInputError, NoStoreError, UnauthorizedError
from aletheia_mem.http_urls import checked_token
from aletheia_mem.storage.open import open_local_store
from aletheia_mem.sync.client import HubClient, hub_base_url
from aletheia_mem.sync.engine import DEFAULT_PAGE_SIZE, SyncReport, sync_store
from aletheia_mem.sync.home import HomedStore, NewStoreId, new_id_if_elsewhere

HUB_TOKEN_ENV = "ALETHEIA_HUB_TOKEN"  # noqa: S105 - a variable name
NO_HUB_YET = (
    "No hub yet: run ALETHEIA_HUB_TOKEN=TOKEN aletheia sync --hub URL once; it is remembered."
)


@click.command("sync")
@click.option("--hub", "url", help="The hub's URL (remembered after a successful sync).")
@click.option(
    "--token",
    envvar=HUB_TOKEN_ENV,
    show_envvar=True,
    help="A sync or admin token from `aletheia mcp-link create` (seen by `ps`: prefer"
    f" {HUB_TOKEN_ENV} or --token-stdin).",
)
@click.option("--token-stdin", is_flag=True, help="Read the token from standard input.")
@click.option(
    "--ca-file",
    # Absolute: it is remembered with the hub, and later runs start in other folders.
    type=click.Path(exists=True, dir_okay=False, resolve_path=True),
    help="PEM file of the CA (or self-signed certificate) the hub's TLS certificate is from.",
)
@click.option(
    "--page-size",
    type=Count(1, 1000),
    default=DEFAULT_PAGE_SIZE,
    show_default=True,
    help="Items per request.",
)
@click.option("--progress", is_flag=True, help="Report each page on stderr.")
@click.option(
    "--new-store-id",
    "new_id",
    is_flag=True,
    help="Sync as a new store: for a copy made by an earlier release, or a backup restored"
    " over the store's own file (a copy is found by itself otherwise).",
)
@json_option
@handles_errors
def sync(
    url: str | None,
    token: str | None,
    token_stdin: bool,
    ca_file: str | None,
    page_size: int,
    progress: bool,
    new_id: bool,
    as_json: bool,
) -> None:
    """Push this store's new and changed items to the hub and pull everyone else's.

    This store is the one every command uses: the file ALETHEIA_HUB_DB names, else aletheia.db
    in ALETHEIA_DATA_DIR (a postgresql:// ALETHEIA_HUB_DB is a hub's store: refused).

    Memories, facts and their history, rules, work-state lists, episodes, dismissals and
    restores travel; only the token's projects. Safe to repeat and to interrupt: the next run
    goes on where this one stopped. The hub and token are remembered (the token in a file
    only you can read, beside the store).
    """
    if token_stdin:
        token = sys.stdin.readline().strip() or None
    path = _sqlite_store_in_use()
    if url is None and not path.exists():  # a folder there: the broken store, as save says
        _no_hub_without_a_store()
    store = open_local_store(path)
    try:
        remembered = store.remembered_hub()
        given = bool(token)
        url, token, ca_file, same_hub = _hub_and_token(
            store.hub_token_path, remembered, url, token, ca_file
        )
        client = HubClient(url, token, ca_file, on_wait=_say_wait)
        renewed = _new_id_first(store, new_id, as_json)

        def remember() -> None:
            store.remember_hub(client.url, client.token, ca_file)

        # A first sync (or one with the remembered hub) is remembered once the hub took the
        # token, so one stopped halfway goes on with a plain ``aletheia sync``; another hub
        # replaces the remembered one only once a sync with it has gone through.
        early = remembered is None or same_hub
        try:
            report = sync_store(
                store,
                client,
                system_clock,
                page_size=page_size,
                progress=_progress if progress else _silent,
                accepted=remember if early else lambda: None,
            )
        except UnauthorizedError as error:
            remembered_at = None if given else store.hub_token_path
            raise UnauthorizedError(f"{error.message} {_new_token_hint(remembered_at)}") from None
        if not early:
            remember()
    finally:
        store.close()
    if as_json:
        emit_json(
            {
                "hub": report.hub_url,
                "token": report.token_name,
                "projects": projects_json(report.projects),
                "pushed": report.pushed,
                "merged_at_hub": report.merged_at_hub,
                "held_back": report.held_back,
                "withheld_by_hub": report.withheld,
                "left_out": report.left_out.as_json(),
                "references_dropped": report.unlinked.as_json(),
                "repaired": report.repaired,
                "pulled": report.pulled,
                "applied": report.applied,
                "merged": report.merged,
                "refused_pulled": report.refused_pulled.as_json(),
                "outside_token": report.outside,
                "narrowed_from": None
                if report.narrowed is None
                else projects_json(report.narrowed.before),
                "requests": client.requests,
                "new_store_id": None if renewed is None else renewed.as_json(),
            }
        )
        return
    for line in _screened(report):
        echo(line)
    echo(_summary(report))


def _hub_and_token(
    token_file: Path,
    remembered: tuple[str, str, str | None] | None,
    url: str | None,
    token: str | None,
    ca_file: str | None,
) -> tuple[str, str, str | None, bool]:
    """The hub's URL, the token (checked), the CA file, and whether the hub is the remembered
    one: what was given, else what is remembered for that hub (its token goes to no other)."""
    if url is None and remembered is not None:
        url = remembered[0]
    if url is None:
        raise InvalidInputError(NO_HUB_YET)
    base = hub_base_url(url)
    same_hub = remembered is not None and hub_base_url(remembered[0]) == base
    where = f"from {HUB_TOKEN_ENV}, --token-stdin or --token"
    if same_hub and remembered is not None:
        if not token and remembered[1]:
            where = (
                f"remembered in {token_file} (damaged: give the token again with"
                f" {HUB_TOKEN_ENV}, --token-stdin or --token)"
            )
        token = token or remembered[1]
        ca_file = ca_file or remembered[2]  # the hub's, whoever's token comes with it
    if not token:
        raise InvalidInputError(_token_needed(remembered, base))
    return url, checked_token(token, where), ca_file, same_hub


def _new_id_first(store: HomedStore, asked: bool, as_json: bool) -> NewStoreId | None:
    """A new sync id for a copied or restored store (or when asked), said at once: a sync that
    fails afterwards keeps the new id, and would not say it again."""
    try:
        renewed = new_id_if_elsewhere(store, system_clock(), asked=asked)
    except OSError as error:
        raise InvalidInputError(f"Cannot look at the store file {store.path}: {error}") from None
    if renewed is not None and not as_json:
        echo(renewed.line())
    return renewed


def _token_needed(remembered: tuple[str, str, str | None] | None, base: str) -> str:
    """Why a token must be given: a first sync, a hub other than the remembered one (its
    token goes to no other URL), or a remembered token whose file is gone."""
    give = f"{HUB_TOKEN_ENV}, --token-stdin or --token"
    if remembered is None:
        return f"A token is needed the first time: {give}."
    known = hub_base_url(remembered[0])
    if known != base:
        return (
            f"A token is needed for {base}: the remembered token is sent only to the"
            f" remembered hub, {known} (another name or port for it is another URL). Give it"
            f" with {give}, or run aletheia sync without --hub."
        )
    return f"A token is needed: the remembered token's file is gone. Give it with {give}."


def _new_token_hint(remembered_at: Path | None) -> str:
    """What to do when the hub does not know the token (401): give a valid one, which is
    remembered in place of the old once the hub takes it."""
    give = f"{HUB_TOKEN_ENV}=TOKEN aletheia sync (or --token-stdin)"
    if remembered_at is None:
        return (
            "Check the token, or ask the hub's admin for a new one (aletheia mcp-link create),"
            f" and give it with {give}."
        )
    return (
        f"The token remembered in {remembered_at} no longer works: give a new one with {give};"
        " it is remembered in its place."
    )


def _summary(report: SyncReport) -> str:
    """The line a sync ends with; what the hub merged and the rules held back only when any."""
    scope = "every project" if report.projects is None else ", ".join(report.projects)
    at_hub = f" ({report.merged_at_hub} merged at the hub)" if report.merged_at_hub else ""
    line = (
        f"Synced with {report.hub_url} ({scope}): pushed {report.pushed} item(s){at_hub}, pulled"
        f" {report.pulled} ({report.applied} new or changed here, {report.merged} merged)."
    )
    if report.held_back:
        line += (
            f" {report.held_back} rule(s) for every project or a situation stay on this"
            " machine: a token limited to projects pushes only rules of its projects."
        )
    if report.outside:
        names = _some(sorted(report.outside))
        those = "that project" if len(report.outside) == 1 else "those projects"
        line += (
            f" {sum(report.outside.values())} item(s) of {names} stay on this machine: the"
            f" token does not cover {those}, and the hub would refuse them."
        )
    if report.withheld:
        reasons = "; ".join(f"{count}: {reason}" for reason, count in report.withheld.items())
        line += (
            f" The hub held back {sum(report.withheld.values())} record(s) no store takes"
            f" ({reasons}); its audit trail names them (sync-withheld)."
        )
    return line


def _some(names: list[str], shown: int = 5) -> str:
    """``names`` (each made one safe line), the first ``shown`` of them and how many more."""
    listed = ", ".join(one_line_safe(name) for name in names[:shown])
    return listed + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _narrowed(report: SyncReport) -> str | None:
    """The line for a hub that covers fewer of this token's projects than at the last sync
    (an admin narrowed it): which it no longer covers, and that those no longer sync."""
    if report.narrowed is None or report.projects is None:
        return None
    before = report.narrowed.before
    dropped = None if before is None else sorted(set(before) - set(report.projects))
    lost = "every project" if dropped is None else _some(dropped)
    them = "the other projects" if dropped is None else lost
    return (
        f'The hub no longer covers {lost} for the token "{one_line_safe(report.token_name)}"'
        f" (only {_some(report.projects)} now): this store's changes to {them} stay on this"
        " machine and the hub's are no longer pulled; the rest syncs as before. A token that"
        " covers them syncs them again (docs/sync.md)."
    )


def _screened(report: SyncReport) -> list[str]:
    """Lines for what the sync held back or repaired (``sync.screening``), and a narrowed
    token, said before the last line."""
    narrowed = _narrowed(report)
    lines = [] if narrowed is None else [narrowed]
    if report.refused_pulled.total:
        lines.append(
            f"Held back {report.refused_pulled.total} pulled record(s) this store refuses, not"
            f" applied here: {report.refused_pulled.summary()} A newer version of such an item"
            " is checked again (docs/troubleshooting.md)."
        )
    if report.left_out.total:
        lines.append(
            f"Left out {report.left_out.total} item(s) of this store the hub would refuse:"
            f" {report.left_out.summary()} Change or forget them here, and they go with the next"
            " sync (docs/troubleshooting.md)."
        )
    if report.unlinked.total:
        lines.append(
            f"Sent {report.unlinked.total} item(s) without their reference to an item no store"
            f" takes, as the hub sends such items: {report.unlinked.summary()}"
        )
    if report.repaired:
        lines.append(
            f"Keyed {report.repaired} list(s) again from their name, as work_state_write keys"
            " it: their dedupe key did not start with list:."
        )
    return lines


def _no_hub_without_a_store() -> None:
    """Without ``--hub`` and with no store file yet, there is no remembered hub either:
    a mistyped ``ALETHEIA_DATA_DIR`` (or ``ALETHEIA_HUB_DB``) is told as the read commands tell
    it, the default folder as no hub yet; exit code 7 (no store) and no store made either way.

    Raises:
        NoStoreError: always.
    """
    settings = load_settings()
    if os.environ.get(settings.store_variable, "").strip():
        existing_store(settings)
    raise NoStoreError(NO_HUB_YET)


def _sqlite_store_in_use() -> Path:
    """The store the CLI uses (``ALETHEIA_HUB_DB``'s file, else the data folder's): SQLite only,
    as the remembered hub and its token file are.

    Raises:
        InvalidInputError: ``ALETHEIA_HUB_DB`` names a PostgreSQL database, a hub's store.
        NoStoreError: a file stands where the store's folder should be.
    """
    settings = load_settings()
    problem = misplaced_store(settings)  # a file where the data folder should be: exit 7
    if problem is not None:
        raise problem
    store = settings.store
    if not isinstance(store, Path):
        raise InvalidInputError(
            "aletheia sync exchanges a SQLite store with a hub; ALETHEIA_HUB_DB names a"
            " PostgreSQL database (a hub's own store). Unset it to sync the data folder's store."
        )
    return store


def _progress(message: str) -> None:
    sys.stderr.write(f"sync: {message}\n")
    sys.stderr.flush()


def _silent(message: str) -> None:
    """No progress output."""


def _say_wait(seconds: int) -> None:
    """Every wait on the rate limit is said: a minute without a word looks hung."""
    sys.stderr.write(
        f"aletheia sync: the hub's rate limit for this token is used up; waiting {seconds} s.\n"
    )
    sys.stderr.flush()
