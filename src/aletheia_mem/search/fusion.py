"""Fusing the lexical ranking with semantic similarity, adapted to how sure the lexical side is.

Every candidate scores its similarity to the query (times its priors), and a lexical hit adds
``weight / (k + rank)``. The weight depends on the query: when lexical search is confident, it is
large and the lexical order stands (an exact or temporal query: the words found the thing, the
priors picked its current version); when it is not, it is small, similarity decides and lexical
rank only breaks near ties (a paraphrase: its words are common and matched unrelated memories).
Lexical search is confident when its top hit holds most of the query's terms (``cover``), or when
the two sides agree at the top: most of the ``agree_top`` most similar memories are among the
``agree_depth`` best lexical hits (``agreement``). A memory
lexical search did not find needs a similarity of at least ``alone``, and ``alone_empty`` when it
found nothing at all (no query word is in any memory: say so unless something is very close). A
query that names an identifier is not fused at all (``domain.hybrid``).

Chosen with ``bench/retrieval/tune_fusion.py`` (the settings keeping exact, identifier and
temporal MRR within 0.01 of lexical and false positives at most 2 %, best paraphrase MRR):
paraphrase MRR 0.009 -> 0.127, R@10 0.009 -> 0.266 (the previous fusion: 0.118 and 0.165); with
the semantic side's pseudo-relevance feedback (``SemanticSource.rank``) 0.169 and 0.376; with
agreement judged at the top (3 most similar among the 5 best lexical hits, instead of 5 among 20:
paraphrases whose common words found some of their neighbours were judged confident, and their
targets pushed out) 0.194 and 0.404 (chosen on the odd query ids: 0.215 -> 0.254 there, and
0.123 -> 0.133, R@10 0.352 -> 0.370 on the even ones), exact 0.881 -> 0.879, temporal
0.963 -> 0.958 (lexical: 0.881, 0.966). The model with feedback alone reaches 0.214 and 0.459,
and no fusion of the two does better on MRR: judging every paraphrase unsure (an oracle,
``bench/retrieval/misses.py``) gives 0.214 and 0.450. A paraphrase's target is in the lexical top
10 once in 109 queries, so the lexical side adds little recall there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aletheia_mem.search.text import index_extras

_WORD = re.compile(r"[^\W_]+")
_SUFFIXES = ("ing", "ed", "es", "s", "ly")


@dataclass(frozen=True)
class Fusion:
    """The fusion's knobs; defaults chosen with ``bench/retrieval/tune_fusion.py``."""

    k: float = 1.0
    confident_weight: float = 3.0  # lexical rank outweighs any similarity gap
    unsure_weight: float = 0.2  # lexical rank breaks near ties only
    cover: float = 0.6  # share of the query's terms in the top lexical hit that makes it sure
    agreement: float = 0.4  # share of the semantic top hits found lexically that makes it sure
    agree_top: int = 3
    agree_depth: int = 5
    alone: float = 0.3  # least similarity for a memory lexical search did not find
    alone_empty: float = 0.45  # the same when lexical search found nothing
    depth: int = 50  # candidates taken from each side


DEFAULT_FUSION = Fusion()


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def term_cover(terms: Sequence[str], text: str) -> float:
    """The share of ``terms`` found in ``text`` (words, identifier parts, plurals folded): an
    approximation of what the full-text index matched."""
    words = {w.lower() for w in _WORD.findall(text)} | {e.lower() for e in index_extras(text)}
    words |= {_stem(w) for w in words}
    found = sum(1 for term in terms if term in words or _stem(term) in words)
    return found / len(terms) if terms else 0.0


def lexical_is_confident(
    lexical: Sequence[int], similarity: Mapping[int, float], cover: float, fusion: Fusion
) -> bool:
    """Whether the lexical order should stand (see the module's docstring); ``cover`` is
    ``term_cover`` of the top lexical hit."""
    if not lexical:
        return False
    if cover >= fusion.cover:
        return True
    best = sorted(similarity, key=lambda memory_id: -similarity[memory_id])[: fusion.agree_top]
    found = set(lexical[: fusion.agree_depth])
    agreed = sum(1 for memory_id in best if memory_id in found)
    return bool(best) and agreed / fusion.agree_top >= fusion.agreement


def fuse(
    lexical: Sequence[int],
    similarity: Mapping[int, float],
    priors: Mapping[int, float],
    confident: bool,
    fusion: Fusion = DEFAULT_FUSION,
) -> dict[int, float]:
    """Memory id -> fused score (higher is better) over the lexical hits and the memories with a
    similarity (the semantic top hits and the lexical hits); ``priors``: memory id -> multiplier
    (pinned, recency, staleness), 1 when absent."""
    weight = fusion.confident_weight if confident else fusion.unsure_weight
    floor = fusion.alone if lexical else fusion.alone_empty
    scores = {
        memory_id: similarity.get(memory_id, 0.0) * priors.get(memory_id, 1.0)
        + weight / (fusion.k + rank)
        for rank, memory_id in enumerate(lexical[: fusion.depth], start=1)
    }
    for memory_id, value in similarity.items():
        if memory_id not in scores and value >= floor:
            scores[memory_id] = value * priors.get(memory_id, 1.0)
    return scores
