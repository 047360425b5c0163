"""The SQLite store, one module per concern (see ``store.py``, which composes them)."""

from aletheia_mem.storage.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
