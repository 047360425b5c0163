"""The composition root: settings, store and clock become one AppContext."""

from __future__ import annotations

import logging
from pathlib import Path

from aletheia_mem.clock import system_clock
from aletheia_mem.config import Settings, semantic_enabled
from aletheia_mem.domain.repositories import note_repository, repository_log
from aletheia_mem.projects import project_for_directory
from aletheia_mem.search.semantic.model import SemanticSource
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.tools.app import AppContext


def open_app(settings: Settings) -> AppContext:
    """Open (and migrate) the configured store for a local, all-projects caller."""
    store = SqliteStore(settings.db_path)  # first: a broken store stops here, in one line
    semantic: SemanticSource | None = None
    if semantic_enabled():
        # Imported only when asked for: the engine and the vector store stay off the start path.
        from aletheia_mem.search.semantic.engine import open_semantic

        semantic = open_semantic(settings.db_path)
        if semantic is None:
            from aletheia_mem.search.semantic.status import tell_model_missing

            tell_model_missing()
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
    if log is None:
        return
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


def sqlite_store(app: AppContext) -> SqliteStore:
    """The concrete store, for the SQLite-only admin features (export, sync, hub tokens).

    Raises:
        TypeError: the app runs on another kind of store.
    """
    if not isinstance(app.store, SqliteStore):
        raise TypeError("This feature needs the SQLite store.")
    return app.store
