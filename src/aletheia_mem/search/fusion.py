"""Fusing the lexical ranking with semantic similarity.

Plain reciprocal-rank fusion was measured first (``bench/retrieval``): any weight that let the
semantic side help paraphrases pushed exact and identifier hits down, because for those queries
the semantic list is noise. What is used instead keeps the lexical ranking as the backbone
(``1 / (k + rank)``) and adds similarity only where it beats what lexical search already found:
each candidate gets ``semantic_weight * (similarity - reference)`` when positive, where the
reference is the best similarity among the top lexical hits (plus a margin) and never below
``floor``. A paraphrase, whose lexical hits are unrelated, lets similar memories rise above them;
an exact query, whose top lexical hit is also the most similar, is left as it was. A memory
lexical search did not find needs a similarity of at least ``alone``; a query that names an
identifier is not fused at all (``domain.hybrid``): the model finds look-alike ids similar.

Chosen with ``bench/retrieval/tune_fusion.py`` (864 settings; those keeping exact, identifier and
temporal MRR within 0.01 of lexical and false positives at most 2 %, best paraphrase MRR on the
odd query ids): margin 0, alone 0.4. Paraphrase MRR 0.009 -> 0.118 (R@10 0.165); the model alone
reaches 0.202 (R@10 0.376), the ceiling of any fusion with all-MiniLM-L6-v2 on this benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Fusion:
    """The fusion's knobs; defaults chosen with ``bench/retrieval/run.py``."""

    k: float = 2.0
    semantic_weight: float = 5.0
    reference_top: int = 10  # lexical hits whose best similarity sets the reference
    margin: float = 0.0
    floor: float = 0.3  # the least similarity that ever counts
    alone: float = 0.4  # the least similarity for a memory lexical search did not find
    depth: int = 50  # candidates taken from each side


DEFAULT_FUSION = Fusion()


def fuse(
    lexical: Sequence[int],
    similarity: Mapping[int, float],
    priors: Mapping[int, float],
    fusion: Fusion = DEFAULT_FUSION,
) -> dict[int, float]:
    """Memory id -> fused score (higher is better) over the lexical hits and the memories with a
    similarity; ``similarity`` holds the semantic top hits and the lexical hits' similarities.

    The lexical order already carries the priors (pinned, recency, staleness), so they weigh only
    the semantic gain (``priors``: memory id -> multiplier, 1 when absent); applying them to the
    rank scores again would reorder lexical near ties twice.
    """
    top = [similarity.get(memory_id, 0.0) for memory_id in lexical[: fusion.reference_top]]
    reference = max(fusion.floor, max(top, default=0.0) + fusion.margin)
    scores = {memory_id: 1.0 / (fusion.k + rank) for rank, memory_id in enumerate(lexical, start=1)}
    for memory_id, value in similarity.items():
        if value > reference and (memory_id in scores or value >= fusion.alone):
            gain = fusion.semantic_weight * (value - reference) * priors.get(memory_id, 1.0)
            scores[memory_id] = scores.get(memory_id, 0.0) + gain
    return scores
