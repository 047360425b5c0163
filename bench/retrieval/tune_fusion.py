"""Choose the fusion by measurement: ``python bench/retrieval/tune_fusion.py``.

Runs every query (labelled and negative) once through BM25 and the embedding model, keeps what the
fusion sees (the lexical ranking, the similarities, the priors), then scores a grid of ``Fusion``
settings offline. A setting qualifies when exact, identifier and temporal MRR stay within 0.01 of
lexical and at most 2 % of the negative queries find anything; the qualifying settings are listed
by paraphrase MRR, chosen on the odd query ids and scored on the even ones. Needs the vector cache
that ``run.py`` writes (its first run embeds the corpus).
"""

from __future__ import annotations

import itertools
import shutil
from dataclasses import dataclass, replace

from dataset import NEGATIVES, PROJECT, load_queries
from metrics import evaluate, false_positives

from aletheia_mem.domain.hybrid import indexed_text
from aletheia_mem.search.fusion import (
    DEFAULT_FUSION,
    Fusion,
    fuse,
    lexical_is_confident,
    term_cover,
)
from aletheia_mem.search.query import is_prose, query_terms
from aletheia_mem.search.rank import DEFAULT_RANKING
from aletheia_mem.storage.base import MemoryQuery
from run import corpus_store, engine_for, now_after, open_copy, seed_vectors

GUARDED = ("exact", "identifier", "temporal")


@dataclass(frozen=True)
class Seen:
    """What the fusion sees for one query."""

    lexical: list[int]
    similarity: dict[int, float]
    priors: dict[int, float]
    created: dict[int, int]
    prose: bool
    cover: float  # term_cover of the top lexical hit


def observe(store, engine, text: str, now: int, depth: int) -> Seen:
    terms = tuple(query_terms(text))
    query = MemoryQuery(terms=terms, projects=(PROJECT,), limit=depth)
    lexical = store.rank_memory_ids(query, now) if terms else []
    similar = engine.rank(text, (PROJECT,), depth, candidates=lexical, feedback=bool(lexical))
    similar = similar or []
    similarity = dict(similar)
    memories = {m.id: m for m in store.get_memories([*lexical, *similarity])}
    stale = store.stale_memory_ids(list(similarity), now)
    priors = {
        i: DEFAULT_RANKING.prior(
            pinned=memories[i].pinned, age_ms=now - memories[i].created_at, stale=i in stale
        )
        for i in similarity
    }
    created = {i: m.created_at for i, m in memories.items()}
    cover = term_cover(terms, indexed_text(memories[lexical[0]])) if lexical else 0.0
    return Seen(lexical, similarity, priors, created, is_prose(text), cover)


def ranked(seen: Seen, fusion: Fusion) -> list[int]:
    if not seen.prose:  # not fused (domain.hybrid): the lexical ranking
        return seen.lexical[:10]
    confident = lexical_is_confident(seen.lexical, seen.similarity, seen.cover, fusion)
    scores = fuse(seen.lexical, seen.similarity, seen.priors, confident, fusion)
    order = sorted((-s, -seen.created.get(i, 0), -i) for i, s in scores.items())
    return [-neg for _, _, neg in order[:10]]


def grid() -> list[Fusion]:
    return [
        replace(
            DEFAULT_FUSION,
            k=k,
            confident_weight=3.0,
            unsure_weight=unsure,
            cover=cover,
            agreement=agreement,
            alone=alone,
            alone_empty=alone_empty,
            agree_top=agree_top,
            agree_depth=agree_depth,
        )
        for k, unsure, cover, agreement, alone, alone_empty, (agree_top, agree_depth) in (
            itertools.product(
                (1.0, 3.0),
                (0.0, 0.05, 0.1, 0.2),
                (0.6, 0.7, 1.01),
                (0.4, 0.6, 0.8, 1.01),
                (0.0, 0.3),
                (0.45, 0.5),
                ((5, 20), (3, 5)),
            )
        )
    ]


def main() -> None:
    queries, negatives = load_queries(), load_queries(NEGATIVES)
    path, keys = corpus_store(None)
    store, work = open_copy(path)
    now = now_after(store)
    engine = engine_for(work, "minilm")
    seed_vectors(engine, keys, "minilm")
    depth = DEFAULT_FUSION.depth
    seen = {
        str(q["query"]): observe(store, engine, str(q["query"]), now, depth)
        for q in [*queries, *negatives]
    }
    engine.close()
    store.close()
    shutil.rmtree(work.parent, ignore_errors=True)

    def rank_with(fusion: Fusion):
        return lambda text: [keys[i] for i in ranked(seen[text], fusion)]

    lexical = evaluate(queries, lambda text: [keys[i] for i in seen[text].lexical[:10]])
    print("lexical MRR:", {k: round(v["mrr"], 3) for k, v in lexical.items()})

    def semantic(text: str) -> list[str]:
        best = sorted(seen[text].similarity.items(), key=lambda pair: -pair[1])[:10]
        return [keys[i] for i, _ in best]

    alone = evaluate(queries, semantic)
    print(
        "semantic (MRR, R@10):",
        {k: (round(v["mrr"], 3), round(v["r10"], 3)) for k, v in alone.items()},
    )
    unguarded = max(grid(), key=lambda f: evaluate(queries, rank_with(f))["paraphrase"]["mrr"])
    best = evaluate(queries, rank_with(unguarded))
    print(f"best paraphrase MRR without the guards: {unguarded}")
    print("  ", {k: (round(v["mrr"], 3), round(v["r10"], 3)) for k, v in best.items()})
    results = []
    halves = {
        "odd": [q for q in queries if int(str(q["id"])) % 2],
        "even": [q for q in queries if not int(str(q["id"])) % 2],
    }
    for fusion in grid():
        rank = rank_with(fusion)
        scores = evaluate(queries, rank)
        wrong = false_positives(negatives, rank)["all"]
        if wrong > 0.02 or any(scores[k]["mrr"] < lexical[k]["mrr"] - 0.01 for k in GUARDED):
            continue
        odd = evaluate(halves["odd"], rank)["paraphrase"]["mrr"]
        results.append((odd, fusion, scores, wrong))
    results.sort(key=lambda row: -row[0])
    for odd, fusion, scores, wrong in results[:10]:
        summary = {k: (round(v["mrr"], 3), round(v["r10"], 3)) for k, v in scores.items()}
        print(f"odd paraphrase MRR {odd:.3f} FP {100 * wrong:.1f} % {fusion}\n  {summary}")
    print(f"{len(results)} of {len(grid())} settings qualify")


if __name__ == "__main__":
    main()
