"""The error tree. Every error carries a stable ``code`` and a message fit for a user."""

from __future__ import annotations


class AletheiaError(Exception):
    """Base of every expected failure; its message is shown to the caller as is."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInputError(AletheiaError):
    code = "invalid_input"


class ConfigError(InvalidInputError):
    """The config file (``<data dir>/config.json``) cannot be read as one."""

    code = "config"


class NotFoundError(AletheiaError):
    code = "not_found"


class ConflictError(AletheiaError):
    code = "conflict"


class StaleListError(ConflictError):
    """A list write based on a reading of the list (its version) that it changed since."""


class ForbiddenError(AletheiaError):
    code = "forbidden"


class UnauthorizedError(ForbiddenError):
    """The hub does not know the token, or it is revoked (401)."""


class RateLimitedError(AletheiaError):
    code = "rate_limited"


class MissingExtraError(AletheiaError):
    """An optional extra the settings need is not installed (``postgres`` for a
    ``postgresql://`` store): an install to make, not bad input, so exit code 1 everywhere."""

    code = "missing_extra"


class NoStoreError(AletheiaError):
    """No store where the settings point: no file where a command that only reads looks, a
    file where the data folder should be, or a PostgreSQL database that does not exist."""

    code = "no_store"
    exit_code = 7


class StoreUnavailableError(AletheiaError):
    """A PostgreSQL store cannot be reached, or refused us (told in one line, with no password):
    a passing condition, unlike a broken store."""

    code = "store_unavailable"


class StoreBusyError(StoreUnavailableError):
    """Another process kept a SQLite store's write lock for longer than this one waits: nothing
    was changed. ``store`` names it as the user should read it (its path)."""

    def __init__(self, store: str) -> None:
        super().__init__(
            f"The store {store} is busy: another process kept it for longer than this one waits"
            " (a large `aletheia import`, say); nothing was changed. Try again once it is done."
        )


class StoreFullError(StoreUnavailableError):
    """The disk that holds the store has no room left: the write was refused whole (nothing was
    changed); it works again once space is freed. ``store`` names the store (its path)."""

    code = "store_full"

    def __init__(self, store: str, *, reading: bool = False) -> None:
        # ``reading``: the store cannot even be read, as its write-ahead log holds changes the
        # file lacks and SQLite has no room for the index it reads them through (its -shm file).
        why = (
            ", and reading it needs room too while its write-ahead log holds changes"
            if reading
            else ""
        )
        super().__init__(
            f"The disk that holds the store {store} is full (no space left){why}; nothing was"
            " changed. Free some space on it and try again."
        )


class StoreBrokenError(AletheiaError):
    """The store file is damaged, empty or another program's: nothing can be read from it."""

    code = "store_broken"
    exit_code = 8


class StoreReadOnlyError(AletheiaError):
    """The store (its file or its folder) cannot be written by this user."""

    code = "store_read_only"
    exit_code = 9


class StoreTooNewError(AletheiaError):
    """The store was made (migrated) by a newer version of Aletheia than this one: its schema is
    past the last migration known here. Nothing is changed; a newer version reads it."""

    code = "store_too_new"
    exit_code = 10
