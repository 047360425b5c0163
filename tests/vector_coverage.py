"""How far semantic recall has embedded a store, read from its file as any process would."""

from __future__ import annotations

from pathlib import Path

from aletheia_mem.search.semantic import find_model
from aletheia_mem.storage.vectors import VectorStore


def coverage(db_path: Path) -> tuple[int, int]:
    """(live memories with a current vector of the installed model, live memories)."""
    files = find_model()
    assert files is not None, "the semantic extra is not installed"
    vectors = VectorStore(db_path)
    try:
        return vectors.coverage(files.model_id)
    finally:
        vectors.close()
