"""What ``doctor`` and the start-up notice say about semantic recall. Imports no numpy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from aletheia_mem.search.semantic.model import INSTALL_HINT, find_model

_told = False
_told_store = False


def semantic_status(db_path: Path | None, enabled: bool) -> dict[str, Any]:
    """Whether the model is installed, its id, and how many live memories have its vectors."""
    files = find_model()
    status: dict[str, Any] = {"enabled": enabled, "model_found": files is not None}
    if files is None:
        status["hint"] = INSTALL_HINT
        return status
    status["model"] = files.model_id
    if db_path is not None:
        from aletheia_mem.storage.vectors import VectorStore

        vectors = VectorStore(db_path)
        try:
            status["memories_with_vectors"], status["memories"] = vectors.coverage(files.model_id)
        finally:
            vectors.close()
    return status


def tell_unavailable(local_store: bool) -> None:
    """Say once per process, on stderr, why semantic search that was asked for is lexical only:
    the store keeps no vectors (not ``local_store``), or the model is not installed."""
    if not local_store:
        tell_store_without_vectors()  # the same setting works on a SQLite store
    elif find_model() is None:
        tell_model_missing()


def tell_model_missing() -> None:
    """Say once per process, on stderr, that semantic search was asked for without the model."""
    global _told
    if not _told:
        _told = True
        print(
            "aletheia: ALETHEIA_SEMANTIC is on but the embedding model is not installed"
            f" ({INSTALL_HINT}); search is lexical only.",
            file=sys.stderr,
        )


def tell_store_without_vectors() -> None:
    """Say once per process, on stderr, that semantic search was asked for on a store that keeps
    no vectors: a PostgreSQL database (vectors live beside a SQLite store only)."""
    global _told_store
    if not _told_store:
        _told_store = True
        print(
            "aletheia: ALETHEIA_SEMANTIC is on but the store is a PostgreSQL database, which keeps"
            " no vectors (semantic recall needs a SQLite store); search is lexical only.",
            file=sys.stderr,
        )
