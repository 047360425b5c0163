"""Offline variants of fused search: ``python bench/retrieval/variants.py``.

Runs every query (labelled and negative) once through BM25 and the model and keeps what fused
search starts from (the query's vector, its lexical ranking, the corpus's vectors, priors and
words), then replays ``hybrid.search_memories`` in numpy: the semantic side as
``SemanticEngine.rank`` does it (feedback included), ``lexical_is_confident`` and ``fuse``, with
one change per variant. The ``baseline`` row reproduces ``run.py``'s fused row. Printed per
variant: paraphrase MRR and R@10 on the odd, the even and all query ids, the other kinds' MRR and
the negative queries' false positives; ``guard`` marks a row where exact, identifier or temporal
MRR falls more than 0.01 below lexical or false positives pass 2 %.

The variants (see ``Variant``): the corpus's vectors centred; a hubness correction (CSLS); the
vectors smoothed toward their nearest neighbours; other feedback settings; lexical query
expansion from the semantic top hits (RM3-like, idf-weighted terms, added as a second BM25 run's
reciprocal rank); and reordering an unsure query's top hits by their best sentence. The rerank
needs sentence vectors (title prefixed, as ``passages.py`` splits them) of the memories any prose
query's top 20 (either side) holds: ``--sentences`` embeds them once (about 17,000 sentences,
nine minutes on two busy cores) and caches them. ``--only a,b`` runs the variants whose name
contains one of those words. Needs the vector cache that ``run.py`` writes.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from dataset import NEGATIVES, PROJECT, load_queries
from metrics import evaluate, false_positives
from numpy.typing import NDArray
from passages import GUARDED, Array, _sentences, _titled

from aletheia_mem.domain.hybrid import indexed_text
from aletheia_mem.domain.recall import search_terms
from aletheia_mem.search.fusion import (
    DEFAULT_FUSION,
    Fusion,
    fuse,
    lexical_is_confident,
    term_cover,
)
from aletheia_mem.search.query import is_prose, query_start, query_terms
from aletheia_mem.search.rank import DEFAULT_RANKING
from aletheia_mem.search.semantic import find_model
from aletheia_mem.search.semantic.engine import FEEDBACK_ROWS, FEEDBACK_WEIGHT, load_minilm
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.sqlite import SqliteStore
from run import CACHE, corpus_store, engine_for, fingerprint, now_after, open_copy, seed_vectors

PARAPHRASES = {str(q["query"]) for q in load_queries() if q["kind"] == "paraphrase"}
_WORD = re.compile(r"[a-z]{3,}")
RERANK_POOL = 20  # sentence vectors for the memories in a prose query's top 20


@dataclass
class Query:
    text: str
    terms: tuple[str, ...]
    prose: bool
    vector: Array
    lexical: list[int]  # the BM25 top 50
    cover: float  # term_cover of the top lexical hit


@dataclass
class World:
    """The corpus and the queries as fused search sees them."""

    ids: NDArray[np.int64]
    matrix: Array
    row: dict[int, int]
    priors: dict[int, float]
    created: dict[int, int]
    keys: dict[int, str]
    words: dict[int, Counter[str]]  # memory id -> its indexed words (expansion terms)
    df: Counter[str]
    queries: dict[str, Query] = field(default_factory=dict)
    sentences: dict[int, Array] = field(default_factory=dict)


def observe() -> World:
    """Every query through BM25 and the model, once (cached under ``bench/results``)."""
    cache = CACHE / f"variants-{fingerprint()}.pickle"
    if cache.exists():
        world: World = pickle.loads(cache.read_bytes())  # noqa: S301 - this script's own cache
        return world
    path, keys = corpus_store(None)
    store, work = open_copy(path)
    now = now_after(store)
    engine = engine_for(work, "minilm")
    seed_vectors(engine, keys, "minilm")
    index, embedder = engine._index, engine._embedder
    assert index is not None and embedder is not None
    ids = np.array(sorted(index._rows), dtype=np.int64)
    matrix = np.stack([index._matrix[index._rows[i]] for i in ids.tolist()])
    memories = {m.id: m for m in store.get_memories(ids.tolist())}
    stale = store.stale_memory_ids(ids.tolist(), now)
    priors = {
        i: DEFAULT_RANKING.prior(pinned=m.pinned, age_ms=now - m.created_at, stale=i in stale)
        for i, m in memories.items()
    }
    words = {i: Counter(_WORD.findall(indexed_text(m).lower())) for i, m in memories.items()}
    df: Counter[str] = Counter()
    for counts in words.values():
        df.update(counts.keys())
    created = {i: m.created_at for i, m in memories.items()}
    rows = {i: n for n, i in enumerate(ids.tolist())}
    world = World(ids, matrix, rows, priors, created, keys, words, df)
    for item in [*load_queries(), *load_queries(NEGATIVES)]:
        raw = str(item["query"])
        text = query_start(raw)
        terms = search_terms(store, raw)
        query = MemoryQuery(terms=terms, projects=(PROJECT,), limit=DEFAULT_FUSION.depth)
        lexical = store.rank_memory_ids(query, now) if terms else []
        top = indexed_text(memories[lexical[0]]) if lexical else ""
        cover = term_cover(query_terms(text), top) if lexical else 0.0
        vector = embedder.embed([text])[0]
        world.queries[raw] = Query(text, terms, is_prose(text), vector, lexical, cover)
    engine.close()
    store.close()
    shutil.rmtree(work.parent, ignore_errors=True)
    cache.write_bytes(pickle.dumps(world))
    return world


def add_sentences(world: World) -> None:
    """The sentence vectors of every memory a prose query's top ``RERANK_POOL`` holds, by the
    model (with feedback) or by BM25: embedded once, cached."""
    cache = CACHE / f"variants-sentences-{fingerprint()}.npz"
    if not cache.exists():
        replay = Replay(world, Variant("baseline"))
        wanted: set[int] = set()
        for query in world.queries.values():
            if query.terms and query.prose:
                similarity = replay.semantic(query)[0]
                wanted.update(sorted(similarity, key=lambda i: -similarity[i])[:RERANK_POOL])
                wanted.update(query.lexical[:RERANK_POOL])
        path, _ = corpus_store(None)
        store = SqliteStore(path)
        owner, texts = [], []
        for memory in store.get_memories(sorted(wanted)):
            for text in _titled(memory, _sentences(memory)):  # type: ignore[arg-type]
                owner.append(memory.id)
                texts.append(text)
        store.close()
        files = find_model()
        assert files is not None, "the semantic extra is not installed"
        embedder = load_minilm(files)
        started = time.perf_counter()
        order = sorted(range(len(texts)), key=lambda n: len(texts[n]))  # batches of like length
        vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        for start in range(0, len(order), 32):
            batch = order[start : start + 32]
            vectors[batch] = embedder.embed([texts[n] for n in batch])
        took = time.perf_counter() - started
        print(f"  embedded {len(texts)} sentences in {took:.0f} s", file=sys.stderr)
        np.savez(cache, owner=np.array(owner), vectors=vectors)
    saved = np.load(cache)
    owner, vectors = saved["owner"], saved["vectors"]
    for memory_id in np.unique(owner).tolist():
        world.sentences[memory_id] = vectors[owner == memory_id]


def unit(vector: Array) -> Array:
    return np.asarray(vector / max(float(np.linalg.norm(vector)), 1e-12), dtype=np.float32)


@dataclass(frozen=True)
class Variant:
    name: str
    fusion: Fusion = DEFAULT_FUSION
    center: float = 0.0  # subtract this share of the corpus's mean vector from every vector
    hub: float = 0.0  # CSLS: minus this times a memory's (centred) mean similarity to its nn
    smooth: float = 0.0  # each vector plus this times the mean of its nearest neighbours'
    neighbours: int = 10  # for ``hub`` and ``smooth``
    feedback_rows: int = FEEDBACK_ROWS
    feedback_weight: float = FEEDBACK_WEIGHT
    expand_terms: int = 0  # unsure queries: a second BM25 run with this many new terms
    expand_docs: int = 3  # taken from this many semantic top hits
    expand_weight: float = 0.0  # fused score += weight / (k + rank in the expanded run)
    rerank_top: int = 0  # unsure queries: reorder the top hits by their best sentence
    rerank_alpha: float = 1.0  # order key: (1 - alpha) * whole text + alpha * best sentence
    rerank_moved: bool = False  # the sentences meet the feedback-moved query, not the query
    rerank_keep: bool = True  # the top hits keep their similarity values, reordered
    oracle: bool = False  # every paraphrase judged unsure (knows the query's kind: a ceiling)
    rerank_key: str = "blend"  # or "max": the better of whole text and best sentence; or
    # "rrf": 1 / (1 + rank by whole text) + 1 / (1 + rank by best sentence)


class Replay:
    """``hybrid.search_memories`` in numpy, with a variant's changes."""

    def __init__(
        self, world: World, variant: Variant, store: SqliteStore | None = None, now: int = 0
    ) -> None:
        self.w, self.v, self.store, self.now = world, variant, store, now
        matrix = world.matrix
        self.mean: Array | None = None
        if variant.center:
            self.mean = np.float32(variant.center) * matrix.mean(axis=0)
            matrix = matrix - self.mean
            matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        if variant.smooth:
            matrix = matrix + variant.smooth * _neighbour_vectors(matrix, variant.neighbours)
            matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        self.m = matrix.astype(np.float32)
        self.penalty = np.zeros(len(matrix), dtype=np.float32)
        if variant.hub:
            hubness = _neighbour_mean(self.m, variant.neighbours)
            self.penalty = variant.hub * (hubness - hubness.mean())

    def semantic(self, q: Query) -> tuple[dict[int, float], Array]:
        """``SemanticEngine.rank`` with candidates: similarities and the (moved) query."""
        v, depth = self.v, self.v.fusion.depth
        vector = unit(q.vector - self.mean) if self.mean is not None else q.vector
        scores = self.m @ vector - self.penalty
        first = np.argsort(-scores, kind="stable")[: 2 * depth]
        if q.lexical and v.feedback_rows:
            neighbours = self.m[first[: v.feedback_rows]].mean(axis=0)
            vector = unit(vector + np.float32(v.feedback_weight) * neighbours)
            again = self.m[first] @ vector - self.penalty[first]
            order = first[np.argsort(-again, kind="stable")][:depth]
        else:
            order = first[:depth]
        taken = set(order.tolist())
        rows = order.tolist() + [self.w.row[i] for i in q.lexical if self.w.row[i] not in taken]
        sims = self.m[rows] @ vector - self.penalty[rows]
        return {int(self.w.ids[r]): float(s) for r, s in zip(rows, sims, strict=True)}, vector

    def expanded(self, q: Query, similarity: dict[int, float]) -> list[int]:
        """BM25 over the query's terms plus the best new terms of the semantic top hits
        (summed idf * (1 + log tf) * similarity; terms in over a tenth of memories left out)."""
        v, w = self.v, self.w
        assert self.store is not None
        weights: Counter[str] = Counter()
        for i in sorted(similarity, key=lambda i: -similarity[i])[: v.expand_docs]:
            for word, count in w.words[i].items():
                if w.df[word] < 0.1 * len(w.ids):
                    idf = math.log(len(w.ids) / w.df[word])
                    weights[word] += idf * (1 + math.log(count)) * similarity[i]
        new = [t for t, _ in weights.most_common() if t not in q.terms][: v.expand_terms]
        query = MemoryQuery(terms=(*q.terms, *new), projects=(PROJECT,), limit=50)
        return self.store.rank_memory_ids(query, self.now)

    def rerank(self, q: Query, similarity: dict[int, float], moved: Array) -> None:
        """Reorder the top hits by their best sentence (blended with the whole text's)."""
        v = self.v
        vector = moved if v.rerank_moved else q.vector
        top = sorted(similarity, key=lambda i: -similarity[i])[: v.rerank_top]
        key = {}
        for i in top:
            sentences = self.w.sentences.get(i)
            best = similarity[i] if sentences is None else float((sentences @ vector).max())
            key[i] = (1 - v.rerank_alpha) * similarity[i] + v.rerank_alpha * best
            if v.rerank_key == "max":
                key[i] = max(similarity[i], best)
        if v.rerank_key == "rrf":
            by_sentence = sorted(top, key=lambda i: -key[i])
            key = {i: 1 / (2 + n) + 1 / (2 + by_sentence.index(i)) for n, i in enumerate(top)}
        if v.rerank_keep:
            values = sorted((similarity[i] for i in top), reverse=True)
            reordered = sorted(top, key=lambda i: -key[i])
            similarity.update(zip(reordered, values, strict=True))
        else:
            similarity.update(key)

    def rank(self, raw: str) -> list[int]:
        q, v, w = self.w.queries[raw], self.v, self.w
        if not q.terms:
            return []
        if not q.prose:  # not fused (domain.hybrid): the lexical ranking
            return q.lexical[:10]
        similarity, vector = self.semantic(q)
        confident = lexical_is_confident(q.lexical, similarity, q.cover, v.fusion)
        if v.oracle and raw in PARAPHRASES:
            confident = False
        if v.rerank_top and not confident:
            self.rerank(q, similarity, vector)
        scores = fuse(q.lexical, similarity, w.priors, confident, v.fusion)
        if v.expand_terms and not confident:
            for rank, i in enumerate(self.expanded(q, similarity), start=1):
                if i in scores:
                    scores[i] += v.expand_weight / (v.fusion.k + rank)
        order = sorted((-s, -w.created.get(i, 0), -i) for i, s in scores.items())
        return [-neg for _, _, neg in order[:10]]


def _neighbour_similarities(matrix: Array, k: int) -> tuple[NDArray[np.int64], Array]:
    """Each row's ``k`` nearest other rows and their similarities."""
    rows = np.zeros((len(matrix), k), dtype=np.int64)
    sims = np.zeros((len(matrix), k), dtype=np.float32)
    for start in range(0, len(matrix), 1000):
        block = matrix[start : start + 1000] @ matrix.T
        block[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf
        best = np.argpartition(-block, k - 1, axis=1)[:, :k]
        rows[start : start + len(block)] = best
        sims[start : start + len(block)] = np.take_along_axis(block, best, axis=1)
    return rows, sims


def _neighbour_vectors(matrix: Array, k: int) -> Array:
    rows, _ = _neighbour_similarities(matrix, k)
    return np.asarray(matrix[rows].mean(axis=1), dtype=np.float32)


def _neighbour_mean(matrix: Array, k: int) -> Array:
    return np.asarray(_neighbour_similarities(matrix, k)[1].mean(axis=1), dtype=np.float32)


def report(world: World, variant: Variant, store: SqliteStore, now: int) -> None:
    print_row(world, variant.name, Replay(world, variant, store, now).rank)


def print_row(world: World, name: str, rank: Callable[[str], list[int]]) -> None:
    """One table row: paraphrases on each half and all ids, the other kinds, false positives."""
    queries, negatives = load_queries(), load_queries(NEGATIVES)

    def ranker(text: str) -> Sequence[str]:
        return [world.keys[i] for i in rank(text)]

    lexical = evaluate(queries, lambda text: [world.keys[i] for i in world.queries[text].lexical])
    scores = evaluate(queries, ranker)
    halves = [
        evaluate([q for q in queries if int(str(q["id"])) % 2 == odd], ranker)["paraphrase"]
        for odd in (1, 0)
    ]
    wrong = false_positives(negatives, ranker)["all"]
    held = all(scores[k]["mrr"] >= lexical[k]["mrr"] - 0.01 for k in GUARDED)
    cells = [f"{p['mrr']:.3f} / {p['r10']:.3f}" for p in [*halves, scores["paraphrase"]]]
    cells += [f"{scores[k]['mrr']:.3f}" for k in GUARDED]
    cells += [f"{100 * wrong:.1f} %", "" if held and wrong <= 0.02 else "guard"]
    print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


HEADER = (
    "| variant | odd MRR / R@10 | even MRR / R@10 | all MRR / R@10 | exact | identifier |"
    " temporal | FP | |\n|---|---|---|---|---:|---:|---:|---:|---|"
)
TUNED = replace(DEFAULT_FUSION, unsure_weight=0.0, agreement=0.8, alone_empty=0.5)
VARIANTS = [
    Variant("baseline"),
    Variant("no feedback", feedback_rows=0),
    *(
        Variant(f"feedback {r} x{w}", feedback_rows=r, feedback_weight=w)
        for r, w in (
            (1, 0.5),
            (2, 1.0),
            (3, 0.5),
            (5, 1.0),
        )
    ),
    Variant("centred", center=1.0),
    Variant("centred half", center=0.5),
    *(Variant(f"csls {h} k{k}", hub=h, neighbours=k) for h in (0.25, 0.5) for k in (5, 20)),
    *(Variant(f"smooth {s} k{k}", smooth=s, neighbours=k) for s in (0.1, 0.4) for k in (3, 10)),
    *(
        Variant(f"expand {t} terms x{x}", expand_terms=t, expand_weight=x)
        for t in (5, 10)
        for x in (0.02, 0.05, 0.1)
    ),
    *(
        Variant(
            f"rerank top {r}, alpha {a}{', moved' if m else ''}",
            rerank_top=r,
            rerank_alpha=a,
            rerank_moved=m,
        )
        for r in (5, 10, 20)
        for a in (0.5, 1.0)
        for m in (False, True)
    ),
    Variant("rerank top 10, values blended", rerank_top=10, rerank_keep=False),
    Variant("rerank top 8", rerank_top=8),
    *(
        Variant(f"rerank top {r}, {k}", rerank_top=r, rerank_key=k)
        for r in (10, 20)
        for k in ("max", "rrf")
    ),
    Variant("rerank top 15", rerank_top=15),
    Variant("rerank top 10 + expand 10 x0.05", rerank_top=10, expand_terms=10, expand_weight=0.05),
    Variant("rerank top 10 + smooth 0.1 k3", rerank_top=10, smooth=0.1, neighbours=3),
    Variant(
        "rerank top 10 + expand + smooth",
        rerank_top=10,
        expand_terms=10,
        expand_weight=0.05,
        smooth=0.1,
        neighbours=3,
    ),
    Variant("rerank top 10, fusion tuned", rerank_top=10, fusion=TUNED),
    Variant("oracle: every paraphrase unsure", oracle=True),
    Variant(
        "oracle, unsure weight 0", oracle=True, fusion=replace(DEFAULT_FUSION, unsure_weight=0)
    ),
    Variant("oracle + rerank top 10", oracle=True, rerank_top=10),
    Variant(
        "oracle + rerank top 10, unsure weight 0",
        oracle=True,
        rerank_top=10,
        fusion=replace(DEFAULT_FUSION, unsure_weight=0),
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="variants whose name holds one of these")
    parser.add_argument("--sentences", action="store_true", help="embed sentences (rerank)")
    args = parser.parse_args()
    world = observe()
    wanted = [w for w in args.only.split(",") if w]
    chosen = [v for v in VARIANTS if not wanted or any(w in v.name for w in wanted)]
    if any(v.rerank_top for v in chosen):
        if not args.sentences:
            raise SystemExit("rerank variants need --sentences (embeds them once)")
        add_sentences(world)
    path, _ = corpus_store(None)
    store, work = open_copy(path)
    now = now_after(store)
    print(HEADER)
    for variant in chosen:
        report(world, variant, store, now)
    store.close()
    shutil.rmtree(work.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
