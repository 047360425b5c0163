"""The retrieval benchmark: ``python bench/retrieval/run.py`` prints the quality and latency tables.

Quality: every labelled query (``data/queries.jsonl``) runs against the corpus
(``data/corpus.jsonl.gz``, about 6,000 memories saved through the domain) in three modes:
``lexical`` (BM25 with Aletheia's tokenisation and priors), ``semantic`` (the embedding model
alone) and ``fused`` (what ``search`` does with the semantic extra). Latency: the same queries
through ``search`` on stores grown to 10,000 and 100,000 memories, lexical and fused, in process.
Save throughput: saves per second with and without the embedding worker running.

Options: ``--models minilm,static`` (default ``minilm``; ``static`` is a measured alternative that
is not shipped, see ``static_model.py``, and so are the models of ``candidates.py``),
``--no-latency``, ``--tune`` (grids over the ranking and fusion knobs, chosen on the odd queries
and scored on the even ones). Stores, vectors and the static table are cached under
``bench/results/retrieval/`` (the first run embeds the corpus with the transformer: about ten
minutes on two cores).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from dataset import (
    CORPUS,
    NEGATIVES,
    PROJECT,
    add_copies,
    fill_store,
    load_corpus,
    load_queries,
)
from metrics import evaluate, false_positives, negative_table, percentiles, table

from aletheia_mem.domain.memories import MemoryInput, save_memory
from aletheia_mem.domain.recall import SearchRequest, search
from aletheia_mem.search.semantic import find_model
from aletheia_mem.search.semantic.engine import SemanticEngine, load_minilm
from aletheia_mem.storage.sqlite import SqliteStore

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = ROOT / "bench" / "results" / "retrieval"
SIZES = (10_000, 100_000)
SAVES = 3000


def fingerprint() -> str:
    """Changes whenever the corpus, the schema, the indexing or the redaction of saved text
    changes (cached stores go stale)."""
    digest = hashlib.sha256(CORPUS.read_bytes())
    src = ROOT / "src" / "aletheia_mem"
    indexing = [src / "search/text.py", src / "search/cjk.py"]
    indexing += sorted((src / "domain").glob("redaction*.py"))
    for path in [*sorted((src / "storage" / "migrations").glob("*.sql")), *indexing]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def corpus_store(size: int | None) -> tuple[Path, dict[int, str]]:
    """A store file with the corpus (and copies up to ``size``), built once and cached."""
    CACHE.mkdir(parents=True, exist_ok=True)
    name = f"store-{fingerprint()}-{size or 'corpus'}"
    path, keys_path = CACHE / f"{name}.db", CACHE / f"{name}.keys"
    if not path.exists():
        corpus = load_corpus()
        work = Path(tempfile.mkdtemp(dir=CACHE)) / "a.db"
        store = SqliteStore(work)
        keys = fill_store(store, corpus)
        if size:
            keys.update(add_copies(store, corpus, size))
        store.close()
        keys_path.write_text("\n".join(f"{i}\t{k}" for i, k in keys.items()), encoding="utf-8")
        os.replace(work, path)
        shutil.rmtree(work.parent, ignore_errors=True)
    pairs = (line.split("\t") for line in keys_path.read_text(encoding="utf-8").splitlines())
    return path, {int(i): k for i, k in pairs}


def open_copy(path: Path) -> tuple[SqliteStore, Path]:
    """A private copy of a cached store (engines write vectors into it)."""
    work = Path(tempfile.mkdtemp(dir=CACHE)) / "a.db"
    shutil.copy(path, work)
    return SqliteStore(work), work


def engine_for(work: Path, kind: str) -> SemanticEngine:
    files = find_model()
    if files is None:
        raise SystemExit("the semantic extra is not installed: pip install -e '.[semantic]'")
    if kind == "static":
        from static_model import static_loader

        return SemanticEngine(work, files, static_loader(CACHE / "models"))
    if kind != "minilm":
        from candidates import CandidateEngine  # models in other packages: candidates.py

        return CandidateEngine(work, files, kind)
    return SemanticEngine(work, files, load_minilm)


def vector_cache(model_id: str) -> Path:
    """Where the corpus's vectors by ``model_id`` are kept (``.npz``: keys and vectors)."""
    corpus_hash = hashlib.sha256(CORPUS.read_bytes()).hexdigest()[:12]
    return CACHE / f"vectors-{corpus_hash}-{hashlib.sha256(model_id.encode()).hexdigest()[:10]}"


def seed_vectors(engine: SemanticEngine, keys: dict[int, str], kind: str) -> None:
    """Reuse vectors embedded by an earlier run (same model, same text), then catch up."""
    import numpy as np  # the extra is installed when this runs

    assert engine.wait_ready(3600), "the model did not load"
    model_id = engine._embedder.model_id if engine._embedder else kind
    cache = vector_cache(model_id)
    if cache.with_suffix(".npz").exists():
        saved = np.load(cache.with_suffix(".npz"))
        by_key = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))
        pending = engine._vectors.pending(model_id, len(keys) + 1)
        rows = [(m, by_key[keys[m.id]].tobytes()) for m in pending if keys[m.id] in by_key]
        for start in range(0, len(rows), 5000):
            engine._vectors.put(model_id, rows[start : start + 5000])
    started = time.perf_counter()
    assert engine.wait_caught_up(7200), "embedding did not finish"
    took = time.perf_counter() - started
    if took > 1:
        print(f"  embedded missing memories with {kind} in {took:.0f} s", file=sys.stderr)
    if not cache.with_suffix(".npz").exists():
        rows = engine._vectors.vectors_since(model_id, 0, 10**9)
        np.savez(
            cache,
            keys=np.array([keys[r.memory_id] for r in rows]),
            vectors=np.stack([np.frombuffer(r.vector, dtype=np.float32) for r in rows]),
        )


def now_after(store: SqliteStore) -> int:
    newest = store.get_memories([store.count_memories(None)])
    return (newest[0].created_at if newest else 0) + 86_400_000


def ranker(store: SqliteStore, keys: dict[int, str], now: int, engine: SemanticEngine | None):
    def rank(text: str) -> Sequence[str]:
        request = SearchRequest(query=text, projects=(PROJECT,), limit=10)
        result = search(store, request, now, engine)
        return [keys[m.id] for m in result.memories]

    return rank


def semantic_ranker(engine: SemanticEngine, keys: dict[int, str]):
    def rank(text: str) -> Sequence[str]:
        return [keys[i] for i, _ in engine.rank(text, (PROJECT,), 10) or []]

    return rank


Quality = dict[str, dict[str, dict[str, float]]]
Negatives = dict[str, dict[str, float]]


def quality(kinds: list[str], postgres: str | None = None) -> tuple[Quality, Negatives]:
    queries, negatives = load_queries(), load_queries(NEGATIVES)
    path, keys = corpus_store(None)
    store, work = open_copy(path)
    now = now_after(store)
    lexical = ranker(store, keys, now, None)
    results = {"lexical": evaluate(queries, lexical)}
    if postgres:
        from pg_lexical import pg_lexical  # psycopg: only with the postgres extra

        results["lexical (postgres)"], line = pg_lexical(postgres, lexical, now)
        print(line + "\n")
    wrong = {"lexical": false_positives(negatives, lexical)}
    for kind in kinds:
        engine = engine_for(work, kind)
        seed_vectors(engine, keys, kind)
        results[f"semantic ({kind})"] = evaluate(queries, semantic_ranker(engine, keys))
        fused = ranker(store, keys, now, engine)
        results[f"fused ({kind})"] = evaluate(queries, fused)
        wrong[f"fused ({kind})"] = false_positives(negatives, fused)
        engine.close()
    store.close()
    shutil.rmtree(work.parent, ignore_errors=True)
    return results, wrong


def timed(store: SqliteStore, now: int, engine: SemanticEngine | None) -> tuple[float, float]:
    queries = [str(q["query"]) for q in load_queries()]
    for text in queries[:20]:  # warm the caches
        search(store, SearchRequest(query=text, projects=(PROJECT,)), now, engine)
    samples = []
    for text in queries:
        started = time.perf_counter()
        search(store, SearchRequest(query=text, projects=(PROJECT,)), now, engine)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


def latency(kinds: list[str], sizes: Sequence[int] = SIZES) -> list[str]:
    lines = ["| memories | mode | p50 ms | p95 ms |", "|---:|---|---:|---:|"]
    for size in sizes:
        path, keys = corpus_store(size)
        store, work = open_copy(path)
        now = now_after(store)
        p50, p95 = timed(store, now, None)
        lines.append(f"| {size:,} | lexical | {p50:.1f} | {p95:.1f} |")
        for kind in kinds:
            engine = engine_for(work, kind)
            seed_vectors(engine, keys, kind)
            p50, p95 = timed(store, now, engine)
            lines.append(f"| {size:,} | fused ({kind}) | {p50:.1f} | {p95:.1f} |")
            engine.close()
        store.close()
        shutil.rmtree(work.parent, ignore_errors=True)
        print("\n".join(lines[-1 - len(kinds) :]), file=sys.stderr)
    return lines


def save_rate(engine_kind: str | None) -> float:
    """Saves per second into a 10,000-memory store, with or without the worker embedding."""
    path, _ = corpus_store(SIZES[0])
    store, work = open_copy(path)
    engine = None
    if engine_kind is not None:
        engine = engine_for(work, engine_kind)
        assert engine.wait_ready(3600)
    clock = lambda: now  # noqa: E731
    now = now_after(store)
    started = time.perf_counter()
    for n in range(SAVES):
        item = MemoryInput(text=f"save throughput probe {n}", project=PROJECT, tool="bench")
        save_memory(store, clock, item)
        if engine is not None and n % 50 == 0:
            engine.rank("probe", (PROJECT,), 5)  # searches wake the worker, as in real use
    rate = SAVES / (time.perf_counter() - started)
    if engine is not None:
        engine.close()
    store.close()
    shutil.rmtree(work.parent, ignore_errors=True)
    return rate


def tune() -> None:
    """Grid over ranking knobs on the odd queries; report the best on the even ones."""
    from aletheia_mem.search.rank import DEFAULT_RANKING

    queries = load_queries()
    dev = [q for q in queries if int(str(q["id"])) % 2]
    test = [q for q in queries if not int(str(q["id"])) % 2]
    path, keys = corpus_store(None)
    store, _ = open_copy(path)
    now = now_after(store)
    from aletheia_mem.domain import hybrid
    from aletheia_mem.search.query import query_terms
    from aletheia_mem.storage.base import MemoryQuery

    def make(ranking):
        def rank(text: str) -> Sequence[str]:
            query = MemoryQuery(terms=tuple(query_terms(text)), projects=(PROJECT,), limit=10)
            return [
                keys[m.id] for m in hybrid.search_memories(store, query, text, None, now, ranking)
            ]

        return rank

    grid = [
        replace(
            DEFAULT_RANKING,
            title=title,
            facts=facts,
            files=files,
            stale_factor=stale,
            recency_boost=recency,
        )
        for title in (2.0, 4.0, 8.0)
        for facts in (0.3, 0.6, 1.2)
        for files in (0.25, 0.5, 1.0)
        for stale in (1.0, 0.8, 0.6)
        for recency in (0.0, 0.05, 0.2)
    ]
    scored = sorted(
        ((evaluate(dev, make(r))["all"]["mrr"], n) for n, r in enumerate(grid)), reverse=True
    )
    for mrr, n in scored[:5]:
        test_mrr = evaluate(test, make(grid[n]))["all"]["mrr"]
        print(f"dev MRR {mrr:.3f} test MRR {test_mrr:.3f} {grid[n]}")
    print(f"default: test MRR {evaluate(test, make(DEFAULT_RANKING))['all']['mrr']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="minilm")
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="latency store sizes")
    parser.add_argument("--postgres", help="also run the lexical queries on PostgreSQL (a URL)")
    args = parser.parse_args()
    if args.tune:
        tune()
        return
    kinds: list[str] = [k for k in args.models.split(",") if k]  # type: ignore[misc]
    if kinds and find_model() is None:
        print("semantic extra not installed: lexical only", file=sys.stderr)
        kinds = []
    started = time.perf_counter()
    print(f"## Retrieval quality ({len(load_queries())} queries, {len(load_corpus())} memories)\n")
    results, wrong = quality(kinds, args.postgres)
    print(table(results))
    negatives = len(load_queries(NEGATIVES))
    print(f"\n## False positives ({negatives} queries that should find nothing)\n")
    print(negative_table(wrong))
    if not args.no_latency:
        print("\n## Search latency (in process, `search` with project filter, limit 20)\n")
        sizes = [int(size) for size in args.sizes.split(",") if size]
        print("\n".join(latency(kinds, sizes)))
        print("\n## Save throughput (10,000-memory store)\n")
        print(f"- without semantic: {save_rate(None):.0f} saves/s")
        for kind in kinds:
            print(f"- with the {kind} embedding worker running: {save_rate(kind):.0f} saves/s")
    print(f"\n(ran in {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
