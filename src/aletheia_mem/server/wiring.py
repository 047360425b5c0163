"""The composition root of the transports: settings, store and clock become one AppContext."""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, cast

from aletheia_mem.clock import system_clock
from aletheia_mem.config import Settings, load_excluded_projects, semantic_enabled
from aletheia_mem.domain.repositories import note_repository, repository_log
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.projects import is_excluded, project_for_directory
from aletheia_mem.storage.open import open_hub_store, open_store
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.store_file import misplaced
from aletheia_mem.tools.app import AppContext

if TYPE_CHECKING:  # the semantic extra's types and the protocols stay off the start path
    from collections.abc import Callable

    from aletheia_mem.search.semantic.model import SemanticSource
    from aletheia_mem.storage.contracts import HubStore, Store


def open_app(settings: Settings) -> AppContext:
    """Open (and migrate) the store in use (``settings.store``: ``ALETHEIA_HUB_DB``, else the
    data folder's) for a local, all-projects caller.

    Raises:
        InvalidInputError: a ``postgresql://`` URL without the ``postgres`` extra installed.
        StoreUnavailableError: the PostgreSQL database cannot be reached (one line).
        NoStoreError: a file stands where the store's folder should be.
    """
    problem = misplaced(settings.store, settings.store_variable)  # a mistyped path: exit 7
    if problem is not None:
        raise problem
    store = open_store(settings.store)  # first: a broken store stops here, in one line
    app = _closing_on_failure(store, lambda: _context(settings, store, _local_path(settings.store)))
    # Only a local server knows the repository its tools name files in (a hub has no cwd):
    # its folder, whose repository a file search finds when it needs it.
    return replace(app, repository=settings.cwd)


def open_hub_app(
    settings: Settings,
    target: str | Path,
    *,
    pool_size: int | None = None,
    search_cache_mb: int | None = None,
) -> AppContext:
    """Open (and migrate) a hub's store: a SQLite file or a ``postgresql://`` database (with
    ``pool_size`` connections at most and ``search_cache_mb`` of postings held for search; None
    keeps the store's default)."""
    store = open_hub_store(target, pool_size=pool_size, search_cache_mb=search_cache_mb)
    return _closing_on_failure(store, lambda: _context(settings, store, _local_path(target)))


def _local_path(target: str | Path) -> Path | None:
    return target if isinstance(target, Path) else None


def _closing_on_failure(store: Store, make: Callable[[], AppContext]) -> AppContext:
    """``make()``; the store closed if it fails (a semantic engine that cannot open, an
    interrupt), so that no connection is left to the garbage collector."""
    try:
        return make()
    except BaseException:
        store.close()
        raise


def tell_semantic_unavailable(settings: Settings) -> None:
    """Say on stderr, once per process, why semantic search that was asked for is lexical only
    here (no model, or a store that keeps no vectors). A server calls it before forking its
    workers: they inherit that it was said, so it is said once, not once per worker."""
    if semantic_enabled():
        # Imported only when asked for; imports no numpy.
        from aletheia_mem.search.semantic.status import tell_unavailable

        tell_unavailable(local_store=isinstance(settings.store, Path))


def _context(settings: Settings, store: Store, db_path: Path | None) -> AppContext:
    semantic: SemanticSource | None = None
    if db_path is not None and semantic_enabled():
        # Imported only when asked for: the engine and the vector store stay off the start path.
        from aletheia_mem.search.semantic.engine import open_semantic

        semantic = open_semantic(db_path)
    if semantic is None and semantic_enabled():
        from aletheia_mem.search.semantic.status import tell_unavailable

        tell_unavailable(local_store=db_path is not None)  # not silently lexical
    return AppContext(
        store=store,
        clock=system_clock,
        default_project=project_for_directory(settings.cwd),
        caller=settings.tool or "mcp",
        semantic=semantic,
    )


def note_working_repository(app: AppContext, cwd: Path) -> None:
    """Record the git work tree a local server starts in, for Write to tools (best effort: a
    busy or read-only store only logs a line)."""
    log = repository_log(app.store)
    if log is None or is_excluded(cwd, app.default_project, load_excluded_projects()):
        return  # an excluded project leaves no trace, as with the hooks
    try:
        note_repository(log, cwd, app.clock())
    except Exception as error:  # never stops a server from starting
        logging.getLogger("aletheia").warning("could not record the repository: %s", error)


def close_app(app: AppContext) -> None:
    """Close the store and, when semantic recall was opened, its worker and connections."""
    try:
        close_semantic = getattr(app.semantic, "close", None)
        if callable(close_semantic):
            close_semantic()
    finally:
        app.store.close()


def hub_store(app: AppContext) -> HubStore:
    """The store with what the hub and the HTTP transport need beyond the tools' ``Store``:
    tokens, the change log, MCP sessions and rate windows. Every store ``open_app`` and
    ``open_hub_app`` open is one.

    Raises:
        TypeError: the app runs on a store without them (a test double).
    """
    store = app.store
    if not _is_hub_store(type(store)):
        raise TypeError("This feature needs a hub store.")
    return cast("HubStore", store)


@cache
def _is_hub_store(kind: type) -> bool:
    """Once per class: a protocol's isinstance costs ~80 us, and the hub asks per request."""
    from aletheia_mem.storage.contracts import HubStore  # off the start path

    return issubclass(kind, HubStore)


def sqlite_store(app: AppContext) -> SqliteStore:
    """The concrete local store, for ``aletheia export`` and ``import`` (SQLite only: they copy
    the file's rows as they are stored).

    Raises:
        InvalidInputError: the store in use is a PostgreSQL database (``ALETHEIA_HUB_DB``).
    """
    if not isinstance(app.store, SqliteStore):
        raise InvalidInputError(
            "Export and import copy a SQLite store; ALETHEIA_HUB_DB names a PostgreSQL"
            " database: back it up with pg_dump instead."
        )
    return app.store
