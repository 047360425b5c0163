"""Fused search's top hits reordered by a pair scorer shipped in a package: ``python
bench/retrieval/pair_rerank.py``.

Issue 17 asks for paraphrase MRR 0.25 and R@10 0.40. A cross-encoder (query and memory read
together) is the usual second stage, but no package on the index ships one (README: "Rerankers
shipped in packages"); the one reranker that ships its weights is ``nanoranker`` (MIT, 91 MB
wheel, onnxruntime plus ``onnxruntime-extensions`` for its tokenizer op): a small network over
the two texts' Universal Sentence Encoder (multilingual, 512 floats) and hashed character n-gram
(64 floats) vectors, trained to score query/passage pairs. Its network reads the two vectors,
not the two texts, so a memory's vector can be made once, by the worker, as MiniLM's is.

The fused ranking is ``variants.py``'s replay (its ``baseline`` row is ``run.py``'s fused row);
prose queries only, since search fuses only those. Per variant: the fused top ``k`` (5, 10, 20)
of every prose query, or only of those ``lexical_is_confident`` judges unsure, reordered by

- ``nano``: the pair network's score, or ``use``: the cosine of the two USE vectors, or
  ``oracle``: the labelled target first (a perfect reranker: the ceiling of any cross-encoder);
- ``replace``: that score alone; ``rrf w``: 1 / (2 + fused rank) + w / (2 + rank by score);
  ``blend w``: (1 - w) x fused score + w x pair score, each min-max scaled over the ``k``.

Columns as ``variants.py`` prints them. ``--cost`` times one query's rerank of ``k`` memories on
one thread (p50 over 60 prose queries): with the memories' vectors stored (the query embedded,
the network run over ``k`` rows) and with the memories embedded at query time. Vectors of the
memories any prose query's fused top 20 holds are made once and cached beside ``variants.py``'s.
Needs ``pip install --no-deps --target DIR nanoranker onnxruntime-extensions`` and ``DIR`` on
``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import __main__

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from dataset import load_queries
from passages import Array
from variants import Query, Replay, Variant, World, observe, print_row

from aletheia_mem.search.fusion import fuse, lexical_is_confident
from aletheia_mem.search.semantic.engine import memory_text
from aletheia_mem.storage.sqlite import SqliteStore
from run import CACHE, corpus_store, fingerprint

TARGETS = {str(q["query"]): tuple(q["targets"]) for q in load_queries()}  # type: ignore[call-overload]
POOL = 20  # the deepest rerank: vectors for every memory in a prose query's fused top 20


class PairModel:
    """``nanoranker``'s two ONNX files on one thread: vectors, then the pair network."""

    def __init__(self) -> None:
        import nanoranker  # type: ignore[import-not-found]

        self._module = nanoranker

    def vectors(self, texts: Sequence[str]) -> Array:
        """One row per text: its USE vector (512) then its character n-gram vector (64)."""
        module = self._module  # each text alone, as the package does (a batch pads: scores
        # move by up to 0.02)
        dense = np.stack([module.semantic_embed(t) for t in texts])
        chars = np.stack([module.textual_embed(t) for t in texts])
        return np.concatenate([dense, chars], axis=1).astype(np.float32)

    def scores(self, query: Array, memories: Array) -> Array:
        pairs = np.concatenate([np.tile(query, (len(memories), 1)), memories], axis=1)
        out = self._module.reranker_model.run(["output"], {"input": pairs})[0]
        return np.asarray(out.reshape(-1), dtype=np.float32)


@dataclass(frozen=True)
class Rerank:
    name: str
    top: int = 0  # 0: the fused ranking as it is
    unsure_only: bool = False
    key: str = "nano"  # or "use": the USE vectors' cosine
    mode: str = "replace"  # or "rrf", "blend"
    weight: float = 1.0


def fused_order(replay: Replay, raw: str) -> tuple[list[int], dict[int, float], bool]:
    """``Replay.rank`` before its cut to 10: the whole fused order, its scores and whether
    lexical search was judged confident (prose queries; others keep their lexical order)."""
    q, w = replay.w.queries[raw], replay.w
    similarity, _ = replay.semantic(q)
    confident = lexical_is_confident(q.lexical, similarity, q.cover, replay.v.fusion)
    scores = fuse(q.lexical, similarity, w.priors, confident, replay.v.fusion)
    order = sorted((-s, -w.created.get(i, 0), -i) for i, s in scores.items())
    return [-neg for _, _, neg in order], scores, confident


def _scaled(values: Array) -> Array:
    spread = float(values.max() - values.min())
    return (values - values.min()) / spread if spread > 0 else np.zeros_like(values)


class Reranker:
    def __init__(
        self, world: World, vectors: dict[int, Array], queries: dict[str, Array], r: Rerank
    ) -> None:
        self.world, self.vectors, self.queries, self.r = world, vectors, queries, r
        self.fused = Replay(world, Variant("baseline"))
        self.model = PairModel() if r.key == "nano" else None

    def pair_scores(self, raw: str, top: Sequence[int]) -> Array:
        if self.r.key == "oracle":  # a perfect reranker: the target first
            wanted = TARGETS.get(raw, ())
            return np.array([self.world.keys[i] in wanted for i in top], dtype=np.float32)
        query, memories = self.queries[raw], np.stack([self.vectors[i] for i in top])
        if self.model is not None:
            return self.model.scores(query, memories)
        dense = memories[:, :512]
        return np.asarray(dense @ query[:512] / np.linalg.norm(dense, axis=1), dtype=np.float32)

    def rank(self, raw: str) -> list[int]:
        q, r = self.world.queries[raw], self.r
        if not q.terms:
            return []
        if not q.prose:
            return q.lexical[:10]
        order, fused, confident = fused_order(self.fused, raw)
        if not r.top or (r.unsure_only and confident) or len(order) < 2:
            return order[:10]
        top = order[: r.top]
        pair = self.pair_scores(raw, top)
        if r.mode == "replace":
            key = pair
        elif r.mode == "rrf":
            by_pair = np.argsort(-pair, kind="stable").argsort()
            key = np.array([1 / (2 + n) + r.weight / (2 + by_pair[n]) for n in range(len(top))])
        else:
            mine = _scaled(np.array([fused[i] for i in top], dtype=np.float32))
            key = (1 - r.weight) * mine + r.weight * _scaled(pair)
        reordered = [top[n] for n in np.argsort(-key, kind="stable")]
        return (reordered + order[r.top :])[:10]


def pair_vectors(world: World) -> tuple[dict[int, Array], dict[str, Array]]:
    """USE and n-gram vectors of every prose query and of the memories in their fused top
    ``POOL``: made once, cached."""
    cache = CACHE / f"pair-rerank-{fingerprint()}.npz"
    prose = [raw for raw, q in world.queries.items() if q.terms and q.prose]
    if not cache.exists():
        replay = Replay(world, Variant("baseline"))
        wanted = sorted({i for raw in prose for i in fused_order(replay, raw)[0][:POOL]})
        path, _ = corpus_store(None)
        store = SqliteStore(path)
        texts = [memory_text(m) for m in store.get_memories(wanted)]  # type: ignore[arg-type]
        store.close()
        model = PairModel()
        memories = model.vectors(texts)
        queries = model.vectors([world.queries[raw].text for raw in prose])
        np.savez(cache, ids=np.array(wanted), memories=memories, queries=queries)
    saved = np.load(cache)
    vectors = dict(zip(saved["ids"].tolist(), saved["memories"], strict=True))
    return vectors, dict(zip(prose, saved["queries"], strict=True))


def cost(world: World, top: int) -> None:
    """CPU ms for one query's rerank of ``top`` memories (p50 over 60 prose queries)."""
    model, replay = PairModel(), Replay(world, Variant("baseline"))
    path, _ = corpus_store(None)
    store = SqliteStore(path)
    stored, embedded = [], []
    prose = [raw for raw, q in world.queries.items() if q.terms and q.prose][:60]
    for raw in prose:
        ids = fused_order(replay, raw)[0][:top]
        texts = [memory_text(m) for m in store.get_memories(ids)]  # type: ignore[arg-type]
        started = time.process_time()
        memories = model.vectors(texts)
        middle = time.process_time()
        model.scores(model.vectors([world.queries[raw].text])[0], memories)
        ended = time.process_time()
        stored.append(1000 * (ended - middle))
        embedded.append(1000 * (ended - started))
    store.close()
    p50: Callable[[list[float]], float] = statistics.median
    print(f"top {top}: {p50(stored):.1f} ms with stored vectors, {p50(embedded):.1f} ms embedding")


HEADER = (
    "| variant | odd MRR / R@10 | even MRR / R@10 | all MRR / R@10 | exact | identifier |"
    " temporal | FP | |\n|---|---|---|---|---:|---:|---:|---:|---|"
)


def _variants() -> list[Rerank]:
    found = [Rerank("fused (today)")]
    found += [Rerank(f"oracle top {k}, unsure only", k, True, "oracle") for k in (5, 10, 20)]
    found += [Rerank(f"oracle top {k}", k, False, "oracle") for k in (5, 10, 20)]
    for key in ("nano", "use"):
        for unsure in (False, True):
            guard = ", unsure only" if unsure else ""
            for k in (5, 10, 20):
                found.append(Rerank(f"{key} top {k}{guard}", k, unsure, key))
                for mode, weight in (("rrf", 0.5), ("rrf", 1.0), ("blend", 0.3), ("blend", 0.5)):
                    name = f"{key} top {k}{guard}, {mode} {weight}"
                    found.append(Rerank(name, k, unsure, key, mode, weight))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="variants whose name holds one of these")
    parser.add_argument("--cost", action="store_true", help="time the rerank per query")
    args = parser.parse_args()
    __main__.Query, __main__.World = Query, World  # type: ignore[attr-defined] # as variants.py
    world = observe()  # pickled them when run as a script
    vectors, queries = pair_vectors(world)
    if args.cost:
        for top in (5, 10, 20):
            cost(world, top)
        return
    wanted = [w for w in args.only.split(",") if w]
    print(HEADER)
    for r in _variants():
        if not wanted or any(w in r.name for w in wanted):
            print_row(world, r.name, Reranker(world, vectors, queries, r).rank)


if __name__ == "__main__":
    main()
