"""A measured alternative, not shipped: a static embedding distilled from MiniLM.

One vector per vocabulary piece, averaged per text.

Distillation (the Model2Vec recipe) runs every WordPiece token through the full model once, keeps
the mean-pooled output, reduces it with PCA and down-weights frequent pieces (SIF weights over the
vocabulary's frequency order). Embedding a text is then a table look-up and a mean: microseconds
instead of a transformer pass, which is what keeps search and background indexing fast on a CPU.
The benchmark measured it (``--models static``): search and indexing become almost free, but
its paraphrase recall was a fraction of the transformer's, so Aletheia ships the transformer.
The table is built from the installed weights (about two minutes) and cached.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from aletheia_mem.search.semantic.minilm import MiniLM
from aletheia_mem.search.semantic.model import ModelFiles
from aletheia_mem.search.semantic.wordpiece import WordPiece

Array = NDArray[np.float32]
DIMENSIONS = 256
SIF_COEFFICIENT = 1e-4
MAX_PIECES = 512
_DISTIL_BATCH = 512
_FIRST_REAL_PIECE = 999  # [PAD] and the [unusedN] slots come first in BERT's vocabulary


def distil(model: MiniLM, dimensions: int = DIMENSIONS) -> Array:
    """The static table: one row per vocabulary id (zeros for unused ids)."""
    vocab_size = model.word.shape[0]
    raw = np.zeros((vocab_size, model.dim), dtype=np.float32)
    tokenizer = model.tokenizer
    for start in range(_FIRST_REAL_PIECE, vocab_size, _DISTIL_BATCH):
        ids = range(start, min(start + _DISTIL_BATCH, vocab_size))
        raw[start : start + len(ids)] = model.pooled(
            [[tokenizer.cls_id, i, tokenizer.sep_id] for i in ids]
        )
    real = raw[_FIRST_REAL_PIECE:]
    mean = real.mean(axis=0)
    _, _, components = np.linalg.svd(real - mean, full_matrices=False)
    reduced = np.zeros((vocab_size, dimensions), dtype=np.float32)
    reduced[_FIRST_REAL_PIECE:] = (real - mean) @ components[:dimensions].T
    rank = np.arange(vocab_size, dtype=np.float64) + 2.0
    probability = (1.0 / rank) / np.sum(1.0 / rank)
    weights = SIF_COEFFICIENT / (SIF_COEFFICIENT + probability)
    return np.asarray(reduced * weights[:, None], dtype=np.float32)


class StaticEmbedder:
    """Texts to unit vectors by averaging the distilled table's rows of their pieces."""

    def __init__(self, table: Array, tokenizer: WordPiece, model_id: str) -> None:
        self.table = table
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.dim = int(table.shape[1])

    def embed(self, texts: Sequence[str]) -> Array:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = self.tokenizer.encode(text, MAX_PIECES + 2)[1:-1]
            if ids:
                out[row] = self.table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.maximum(norms, 1e-12), dtype=np.float32)


def save_table(table: Array, path: Path) -> None:
    """Write atomically, so a concurrent reader sees the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    with partial.open("wb") as handle:
        np.save(handle, table)
    os.replace(partial, path)


def load_table(path: Path) -> Array | None:
    try:
        table = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    return np.asarray(table, dtype=np.float32)


def static_loader(cache_dir: Path):
    """A ``SemanticEngine`` loader giving the static embedder (table cached in ``cache_dir``)."""

    def load(files: ModelFiles) -> StaticEmbedder:
        model = MiniLM(files)
        path = cache_dir / f"static-{DIMENSIONS}-{files.model_id.replace('/', '_')}.npy"
        table = load_table(path)
        if table is None:
            table = distil(model)
            save_table(table, path)
        return StaticEmbedder(table, model.tokenizer, f"{files.model_id}/static{DIMENSIONS}")

    return load
