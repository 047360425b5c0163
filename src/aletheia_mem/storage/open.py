"""The composition root of storage: the one module above the dialects that names them.

Everything else asks for the protocols of ``storage.contracts``; only the SQLite-only local
features (export and import of a local store, the remembered hub, ``aletheia doctor``) use
``open_local_store`` and the concrete ``SqliteStore``. ``open_store`` and ``open_hub_store`` take
a file path or a ``postgresql://`` URL (or libpq key=value string) alike; psycopg is imported
only for a database.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from aletheia_mem.config import is_database_url
from aletheia_mem.errors import MissingExtraError
from aletheia_mem.storage.sqlite import SqliteStore

if TYPE_CHECKING:  # protocols: typing only, off the start path
    from aletheia_mem.storage.contracts import HubStore, Store


_NO_POSTGRES_EXTRA = (
    "A postgresql:// hub needs the postgres extra:"
    " pipx install 'aletheia-mem[postgres]' (or pip install 'aletheia-mem[postgres]')."
)


def open_local_store(path: Path) -> SqliteStore:
    """The local SQLite store with its SQLite-only features (export, import, remembered hub,
    health), opened and migrated.

    Raises:
        StoreBrokenError: the file is empty, damaged, cut short or another program's.
        StoreReadOnlyError: the store needs a change this user may not write.
    """
    return SqliteStore(path)


def open_store(
    target: Path | str, *, busy_timeout_ms: int | None = None, upkeep: bool = True
) -> Store:
    """The store in use (``Settings.store``), opened and migrated: a SQLite file (made whole if
    there is none) or, for a ``postgresql://`` URL, a PostgreSQL database.

    Args:
        target: the store's file or URL.
        busy_timeout_ms: how long to wait for another writer (hooks wait little); None keeps
            the default. SQLite only: PostgreSQL writers do not wait on a file lock.
        upkeep: run the upkeep a SQLite store does on opening (``SqliteDatabase``); a hook
            leaves it to the next process.

    Raises:
        MissingExtraError: a ``postgresql://`` URL without the ``postgres`` extra installed.
        StoreUnavailableError: the PostgreSQL database cannot be reached (one line).
    """
    if isinstance(target, str) and is_database_url(target):
        return _open_postgres(target)
    store = SqliteStore(Path(target), upkeep=upkeep)
    if busy_timeout_ms is not None:
        try:
            store.set_busy_timeout(busy_timeout_ms)
        except BaseException:
            store.close()
            raise
    return store


def display_target(target: str | Path) -> str:
    """A hub store's file or URL as shown to the user: a database as a URL without its
    password (a key=value string too)."""
    if isinstance(target, str) and is_database_url(target):
        try:
            from aletheia_mem.storage.postgres.database import redact_url  # type: ignore[import-not-found,unused-ignore]

            return str(redact_url(target))
        except Exception:  # no postgres extra, or a string psycopg cannot read: show no part
            scheme = target.split("://", 1)[0] if "://" in target else "postgresql"
            return scheme + "://…"
    return str(target)


def hub_store_exists(target: str | Path) -> bool:
    """Whether a hub's store is there (a file; a database with its tables), creating nothing.

    Raises:
        StoreUnavailableError: a PostgreSQL database cannot be reached (one line).
        MissingExtraError: a ``postgresql://`` URL without the ``postgres`` extra installed.
    """
    if isinstance(target, str) and is_database_url(target):
        try:
            from aletheia_mem.storage.postgres.database import is_migrated  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise MissingExtraError(_NO_POSTGRES_EXTRA) from None
        return bool(is_migrated(target))
    return Path(target).is_file()


def open_hub_store(
    target: str | Path, *, pool_size: int | None = None, search_cache_mb: int | None = None
) -> HubStore:
    """A hub's store: a SQLite file, or a PostgreSQL database for a ``postgresql://`` URL
    (``pool_size``: its connections at most; ``search_cache_mb``: the postings search holds;
    None keeps each default).

    Raises:
        MissingExtraError: a ``postgresql://`` URL without the ``postgres`` extra installed.
    """
    if isinstance(target, str) and is_database_url(target):
        return _open_postgres(target, pool_size, search_cache_mb)
    return SqliteStore(Path(target))


def _open_postgres(
    url: str, pool_size: int | None = None, search_cache_mb: int | None = None
) -> HubStore:
    # Imported only here: psycopg is the optional ``postgres`` extra, and off the start path.
    try:
        from aletheia_mem.storage.postgres.store import open_postgres_store  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise MissingExtraError(_NO_POSTGRES_EXTRA) from None
    store: HubStore = open_postgres_store(url, pool_size, search_cache_mb)
    return store
