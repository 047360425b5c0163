"""all-MiniLM-L6-v2 run by onnxruntime from the int8 ``model.onnx`` itself.

Same model, same tokenizer and pooling as ``minilm`` (the numpy forward pass); onnxruntime runs
the int8 matrix products as integers. Measured on two busy cores: a query in 4.7 ms p50 against
97 ms for numpy (15 ms at best), and vectors within cosine 0.999 of numpy's, so both share a
model id and stored vectors stay valid whichever runs. One intra-op thread: the server's
requests keep the other core.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnxruntime  # type: ignore[import-untyped]
from numpy.typing import NDArray

from aletheia_mem.search.semantic.minilm import embed_in_batches, pad
from aletheia_mem.search.semantic.model import ModelFiles
from aletheia_mem.search.semantic.wordpiece import WordPiece

Array = NDArray[np.float32]
DIM = 384


def _session(path: str) -> Any:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initialisers are noise here
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


class OrtMiniLM:
    """The sentence embedder: ``embed(texts)`` gives unit rows of 384 floats."""

    def __init__(self, files: ModelFiles) -> None:
        self.model_id = files.model_id
        self.dim = DIM
        self.tokenizer = WordPiece(files.vocab)
        self._session = _session(str(files.weights))
        self._inputs = {node.name for node in self._session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> Array:
        """Unit-length sentence vectors, one row per text, in the order given."""
        return embed_in_batches(self.tokenizer, self._forward, texts, self.dim)

    def _forward(self, batch: list[list[int]]) -> Array:
        ids, mask = pad(batch)
        feed = {
            "input_ids": ids,
            "attention_mask": mask.astype(np.int64),
            "token_type_ids": np.zeros_like(ids),
        }
        (hidden,) = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        weights = mask[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return np.asarray(pooled / norms, dtype=np.float32)
