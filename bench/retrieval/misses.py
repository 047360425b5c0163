"""Where each paraphrase query's target ranks: ``python bench/retrieval/misses.py``.

One line per paraphrase query: the target's rank by BM25 (of at most 1,000 hits), by the model
alone (over every memory), by the model with pseudo-relevance feedback (its top 50 and the BM25
hits: what fusion sees) and fused (top 10), with the target's similarity and the best one. Then
the counts per band of ranks, and the best a fusion of these two rankings could do: every
paraphrase judged unsure (an oracle no rule can match, since it knows the query's kind). Needs
the vector cache that ``run.py`` writes.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Sequence

from dataset import PROJECT, load_queries
from metrics import evaluate
from tune_fusion import observe

from aletheia_mem.search.fusion import DEFAULT_FUSION, fuse
from aletheia_mem.search.query import query_terms
from aletheia_mem.storage.base import MemoryQuery
from run import corpus_store, engine_for, now_after, open_copy, ranker, seed_vectors


def rank_of(ranked: Sequence[str], target: str) -> int | None:
    return ranked.index(target) + 1 if target in ranked else None


BANDS = ((1, "1"), (10, "2-10"), (50, "11-50"), (200, "51-200"), (10**9, "over 200"))


def band(rank: int | None) -> str:
    if rank is None:
        return "absent"
    return next(name for top, name in BANDS if rank <= top)


def main() -> None:
    queries = [q for q in load_queries() if q["kind"] == "paraphrase"]
    path, keys = corpus_store(None)
    store, work = open_copy(path)
    now = now_after(store)
    engine = engine_for(work, "minilm")
    seed_vectors(engine, keys, "minilm")
    fused = ranker(store, keys, now, engine)
    seen = {}
    bands: dict[str, Counter[str]] = {
        m: Counter() for m in ("lexical", "model", "feedback", "fused")
    }
    print("| fused | model | feedback | lexical | similarity | best | target | query |")
    print("|---:|---:|---:|---:|---:|---:|---|---|")
    for query in queries:
        text, target = str(query["query"]), str(query["targets"][0])  # type: ignore[index]
        terms = tuple(query_terms(text))
        found = MemoryQuery(terms=terms, projects=(PROJECT,), limit=1000)
        lexical = [keys[i] for i in store.rank_memory_ids(found, now)] if terms else []
        alone = engine.rank(text, (PROJECT,), len(keys)) or []
        seen[text] = observe(store, engine, text, now, DEFAULT_FUSION.depth)
        feedback = sorted(seen[text].similarity.items(), key=lambda pair: -pair[1])
        ranks = {
            "lexical": rank_of(lexical, target),
            "model": rank_of([keys[i] for i, _ in alone], target),
            "feedback": rank_of([keys[i] for i, _ in feedback], target),
            "fused": rank_of(list(fused(text)), target),
        }
        for mode, rank in ranks.items():
            bands[mode][band(rank)] += 1
        similarity = next(value for i, value in alone if keys[i] == target)
        cells = " | ".join(str(ranks[m] or "-") for m in ("fused", "model", "feedback", "lexical"))
        print(f"| {cells} | {similarity:.2f} | {alone[0][1]:.2f} | {target} | {text} |")
    names = [name for _, name in BANDS] + ["absent"]
    print("\n| mode | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for mode, counts in bands.items():
        print(f"| {mode} | " + " | ".join(str(counts[name]) for name in names) + " |")

    def oracle(text: str) -> list[str]:
        s = seen[text]
        scores = fuse(s.lexical, s.similarity, s.priors, False, DEFAULT_FUSION)
        order = sorted((-v, -s.created.get(i, 0), i) for i, v in scores.items())
        return [keys[i] for _, _, i in order[:10]]

    best = evaluate(queries, oracle)["paraphrase"]
    print(f"\nevery paraphrase judged unsure: MRR {best['mrr']:.3f}, R@10 {best['r10']:.3f}")
    engine.close()
    store.close()
    shutil.rmtree(work.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
