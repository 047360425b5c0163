"""One page of memories ranked by BM25 fused with semantic similarity, when that is on.

Without semantic recall (the extra not installed, switched off, or its model still loading), and
for date orders, this is exactly the store's lexical search.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from aletheia_mem.search.fusion import (
    DEFAULT_FUSION,
    Fusion,
    fuse,
    lexical_is_confident,
    term_cover,
)
from aletheia_mem.search.query import is_prose, query_terms
from aletheia_mem.search.rank import DEFAULT_RANKING, Ranking
from aletheia_mem.storage.base import Memory, MemoryHead, MemoryQuery

if TYPE_CHECKING:  # protocols: typing only, off the start path
    from aletheia_mem.search.semantic.model import SemanticSource
    from aletheia_mem.storage.contracts import Store


def search_memories(
    store: Store,
    query: MemoryQuery,
    text: str,
    semantic: SemanticSource | None,
    now: int,
    ranking: Ranking = DEFAULT_RANKING,
    fusion: Fusion = DEFAULT_FUSION,
) -> list[Memory]:
    """One page of live memories for ``query``; ``text`` is what the semantic side embeds."""
    if semantic is None or _lexical_only(query, text):
        return store.search_memories(query, now, ranking)
    depth = max(fusion.depth, query.offset + query.limit)
    # The query's embedding (onnxruntime, no GIL held) overlaps the store's BM25 ranking.
    embedding = threading.Thread(target=semantic.embed_query, args=(text,), daemon=True)
    embedding.start()
    lexical = store.rank_memory_ids(replace(query, offset=0, limit=depth), now, ranking)
    embedding.join()
    similar = semantic.rank(text, query.projects, depth, candidates=lexical, feedback=bool(lexical))
    if similar is None:  # the model is still loading: BM25 alone
        return store.search_memories(query, now, ranking)
    candidates = {m.id: m for m in store.get_memories([*lexical, *(i for i, _ in similar)])}
    similarity = {
        i: value for i, value in similar if i in candidates and _passes(candidates[i], query)
    }
    stale = store.stale_memory_ids(list(similarity), now)
    priors = {
        i: ranking.prior(
            pinned=candidates[i].pinned, age_ms=now - candidates[i].created_at, stale=i in stale
        )
        for i in similarity
    }
    top = candidates.get(lexical[0]) if lexical else None
    # The share of the query's own terms, not of the other spellings searched for them
    # (``with_spellings``: ``timezone`` for ``time zone``), which no memory holds all of.
    cover = term_cover(query_terms(text), indexed_text(top)) if top is not None else 0.0
    confident = lexical_is_confident(lexical, similarity, cover, fusion)
    fused = fuse(lexical, similarity, priors, confident, fusion)
    scored = sorted(
        (-score, -candidates[i].created_at, -i) for i, score in fused.items() if i in candidates
    )
    page = scored[query.offset : query.offset + query.limit]
    return [candidates[-neg_id] for _, _, neg_id in page]


def search_heads(
    store: Store, query: MemoryQuery, text: str, semantic: SemanticSource | None, now: int
) -> Sequence[Memory | MemoryHead]:
    """``search_memories`` for an index of lines: a page the store ranks alone is read as
    heads, without the memories' text."""
    if query.terms and not query.file and (semantic is None or _lexical_only(query, text)):
        return store.memory_heads(store.rank_memory_ids(query, now))
    return search_memories(store, query, text, semantic, now)


def _lexical_only(query: MemoryQuery, text: str) -> bool:
    """Whether the store ranks this query alone, semantic recall or not: date orders, file
    lookups, and queries that name an identifier (``is_prose``), whose look-alikes the model
    finds similar; measured, fusing them gains nothing and costs the query's embedding."""
    return query.order != "relevance" or not query.terms or bool(query.file) or not is_prose(text)


def indexed_text(memory: Memory) -> str:
    """The columns the full-text index holds for a memory."""
    return "\n".join(
        [memory.title, memory.text, memory.narrative or "", *memory.facts, *memory.files]
    )


def _passes(memory: Memory, query: MemoryQuery) -> bool:
    """The store's filters, for a memory the semantic side proposed."""
    return (
        memory.dismissed_at is None
        and (query.projects is None or memory.project in query.projects)
        and (query.type is None or memory.type == query.type)
        and (query.kind is None or memory.kind == query.kind)
        and memory.kind not in query.exclude_kinds
        and (query.since is None or memory.created_at >= query.since)
        and (query.until is None or memory.created_at < query.until)
        and (query.upto is None or memory.id <= query.upto)
    )
