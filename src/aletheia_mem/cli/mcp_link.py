"""``aletheia mcp-link``: tokens for the team hub (create, list, revoke)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import click

from aletheia_mem.cli.common import (
    echo,
    emit_json,
    handles_errors,
    instant_json,
    json_option,
    projects_json,
    require_store,
    style,
    table,
)
from aletheia_mem.config import hub_db_chosen_by, hub_db_path, hub_target
from aletheia_mem.domain.limits import check_length
from aletheia_mem.errors import NoStoreError, NotFoundError
from aletheia_mem.hub.tokens import (
    MAX_NAME_LENGTH,
    SCOPES,
    RevokeBy,
    can_write,
    check_revoke_name,
    create_token,
    live_matches,
    one_to_revoke,
    parse_projects,
)
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.storage.open import display_target, hub_store_exists, open_hub_store
from aletheia_mem.storage.store_file import misplaced
from aletheia_mem.sync.client import hub_base_url
from aletheia_mem.timefmt import format_instant

DEFAULT_HUB_URL = "http://127.0.0.1:8787"
SERVER_NAME = "aletheia-hub"


NO_HUB_HINT = "check --hub-db or ALETHEIA_HUB_DB; aletheia mcp-link create starts the hub's store."


def hub_db_option(function: Any) -> Any:
    return click.option(
        "--hub-db",
        help="The hub's store file or postgresql:// URL.  [default: ALETHEIA_HUB_DB, else"
        " hub/hub.db in the data folder, the store aletheia-sync serves by default]",
    )(function)


def hub_db_of(option: str | None, *, create: bool) -> Path | str:
    """The hub's store: ``--hub-db``, else the default one (:func:`hub_db_path`); a
    ``postgresql://`` URL stays a string.

    Raises:
        NoStoreError: ``create`` is False and there is no store file there (a database without
            a hub's tables, which is left as it is), or a file stands where its folder should be.
        StoreUnavailableError: ``create`` is False and the database cannot be reached.
    """
    target = hub_target(option) if option is not None else hub_db_path()
    problem = misplaced(target, hub_db_chosen_by(option))
    if problem is not None:
        raise problem
    if create:
        return target
    if isinstance(target, str):
        # Opening migrates: a database without the tables would get them. One at an older
        # schema has them (schema_migrations) and is migrated on opening, as the hub does.
        if not hub_store_exists(target):
            raise NoStoreError(f"No hub store at {display_target(target)}: {NO_HUB_HINT}")
        return target
    return require_store(target, NO_HUB_HINT)


def connect_snippets(url: str, secret: str) -> dict[str, Any]:
    """How a remote MCP client reaches the hub with this token."""
    mcp_url = url.rstrip("/") + "/mcp"
    header = f"Authorization: Bearer {secret}"
    return {
        "claude_code": " ".join(
            [
                "claude mcp add --transport http --scope user",
                SERVER_NAME,
                shlex.quote(mcp_url),
                "--header",
                shlex.quote(header),
            ]
        ),
        "mcp_json": {
            "mcpServers": {
                SERVER_NAME: {
                    "type": "http",
                    "url": mcp_url,
                    "headers": {"Authorization": f"Bearer {secret}"},
                }
            }
        },
    }


@click.group("mcp-link")
def mcp_link() -> None:
    """Tokens for the team hub (aletheia-sync): create, list, revoke."""


@mcp_link.command("create")
@hub_db_option
@click.option(
    "--projects",
    required=True,
    metavar="A,B",
    help='Projects the token may read and write, comma separated; "*" for every project.',
)
@click.option(
    "--scope",
    type=click.Choice(SCOPES),
    default="mcp",
    show_default=True,
    help="mcp and read call the read tools; sync and admin call every tool and may sync.",
)
@click.option("--name", help="A name for the audit trail.  [default: scope-project-xxxx]")
@click.option(
    "--url",
    default=DEFAULT_HUB_URL,
    show_default=True,
    help="The hub's address as clients reach it (or its /mcp URL), for the connect snippets.",
)
@json_option
@handles_errors
def create(
    hub_db: str | None, projects: str, scope: str, name: str | None, url: str, as_json: bool
) -> None:
    """Make a token and print it once, with the snippets to connect a remote MCP client.

    Only a hash of the token is stored: copy it now.
    """
    url = hub_base_url(url)  # the hub's /mcp URL names it too
    store = open_hub_store(hub_db_of(hub_db, create=True))
    try:
        # The store's clock, not this machine's: any machine reaching the database may run this.
        secret, token = create_token(
            store, store.store_clock, scope=scope, projects=parse_projects(projects), name=name
        )
    finally:
        store.close()
    snippets = connect_snippets(url, secret)
    shown_projects = "every project" if token.projects is None else ", ".join(token.projects)
    # In the environment, not in --token, which ps shows to every user of the machine.
    sync_command = f"ALETHEIA_HUB_TOKEN={secret} aletheia sync --hub {shlex.quote(url)}"
    if as_json:
        emit_json(
            {
                "name": token.name,
                "token": secret,
                "scope": token.scope,
                "projects": projects_json(token.projects),
                "url": url.rstrip("/") + "/mcp",
                **snippets,
                "sync": sync_command if can_write(token.scope) else None,
            }
        )
        return
    echo(f'Token "{token.name}" (scope {token.scope}; {shown_projects}).')
    echo("It is shown only this once; the hub keeps only its hash.")
    echo()
    echo("  " + style(secret, bold=True))
    echo()
    echo("Claude Code:")
    echo("  " + snippets["claude_code"])
    echo()
    echo("Other MCP clients (JSON entry):")
    echo(json.dumps(snippets["mcp_json"], indent=2))
    if can_write(token.scope):
        echo()
        echo("Sync a local store with the hub:")
        echo("  " + sync_command)


@mcp_link.command("list")
@hub_db_option
@json_option
@handles_errors
def list_links(hub_db: str | None, as_json: bool) -> None:
    """The hub's tokens: name, scope, projects, first characters, created, last used, how many
    stores each syncs."""
    store = open_hub_store(hub_db_of(hub_db, create=False))
    try:
        tokens, last_used = store.list_tokens(), store.last_audit_by_actor()
        held = store.stores_held()
    finally:
        store.close()
    if as_json:
        emit_json([token_json(t, last_used.get(t.name), held.get(t.id, 0)) for t in tokens])
        return
    if not tokens:
        echo("No tokens yet. aletheia mcp-link create --projects <name> makes one.")
        return
    rows = [
        [
            token.name,
            token.scope,
            "*" if token.projects is None else ",".join(token.projects),
            token.prefix + "…",
            format_instant(token.created_at)[:16],
            (instant_json(last_used.get(token.name)) or "never")[:16],
            str(held.get(token.id, 0)),
            _status(token),
        ]
        for token in tokens
    ]
    headers = ["NAME", "SCOPE", "PROJECTS", "TOKEN", "CREATED", "LAST USED", "STORES", "STATUS"]
    echo(table(headers, rows))


def _status(token: HubToken) -> str:
    """``live``, or when the token was revoked: a token made before then may not take the
    stores it held."""
    if token.revoked_at is None:
        return "live"
    return f"revoked {format_instant(token.revoked_at)[:16]}"


def token_json(token: HubToken, last_used: int | None, stores: int) -> dict[str, Any]:
    """A token as ``mcp-link list --json`` shows it (never its secret nor its hash); ``stores``:
    how many stores sync with it (a store a revoked token held stays counted until a newer
    token takes it)."""
    return {
        "name": token.name,
        "scope": token.scope,
        "projects": projects_json(token.projects),
        "prefix": token.prefix,
        "created_at": instant_json(token.created_at),
        "last_used_at": instant_json(last_used),
        "revoked_at": instant_json(token.revoked_at),
        "stores": stores,
    }


@mcp_link.command("revoke")
@hub_db_option
@click.option(
    "--by",
    type=click.Choice(["name", "prefix"]),
    help="Read NAME only as a token's name, or only as the first characters list shows."
    "  [default: either; refused when it is one token's name and another's first characters]",
)
@click.argument("name")
@json_option
@handles_errors
def revoke(hub_db: str | None, by: RevokeBy, name: str, as_json: bool) -> None:
    """Revoke a token by its name (or the first characters shown by list).

    A name beginning with "-" goes after "--": aletheia mcp-link revoke -- -rf
    """
    wanted = name.strip().rstrip("…")
    check_revoke_name(wanted, "name")  # "", spaces or zero-width characters: no token's name
    check_length("name", wanted, MAX_NAME_LENGTH)  # no token has a longer one: no huge echo
    store = open_hub_store(hub_db_of(hub_db, create=False))
    try:
        chosen = one_to_revoke(live_matches(store.list_tokens(), wanted, by), wanted, hub_db)
        # by its name, which no other token has; the store's clock, as create takes it
        token = store.revoke_token(chosen.name, store.store_clock())
        last_used = None if token is None else store.last_audit_by_actor().get(token.name)
        stores = 0 if token is None else store.stores_held().get(token.id, 0)
    finally:
        store.close()
    if token is None:  # revoked by another process meanwhile
        raise NotFoundError(f'No live token named "{name}".')
    if as_json:  # the token as mcp-link list --json shows it
        emit_json({"revoked": True, "token": token_json(token, last_used, stores)})
        return
    echo(f'Revoked token "{token.name}". Requests with it now get 401.')
