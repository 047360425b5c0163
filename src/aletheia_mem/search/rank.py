"""Pure scoring: BM25 column weights and the gentle priors (pinned, recency, staleness).

The priors multiply a relevance score, so they reorder near ties and never hide a strong match:
recency decays smoothly with age (no cut-off, an old decision is still found), a pinned memory gets
a small lift, and a memory whose facts have all been superseded sinks below current knowledge.
Values were chosen by measurement with ``bench/retrieval/run.py --tune``.
"""

from __future__ import annotations

from dataclasses import dataclass

DAY_MS = 86_400_000


@dataclass(frozen=True)
class Ranking:
    """Every knob of relevance ranking in one place."""

    # bm25 column weights: title, text, narrative, facts, files (FTS5's k1 = 1.2 and b = 0.75
    # are fixed). Measured: title 4 over 2; title 8 scored +0.01 MRR on the benchmark, whose
    # titles are dotted API names, but reorders the reference's own search example, where a
    # title is the start of the text. The other weights barely move the score.
    title: float = 4.0
    text: float = 1.0
    narrative: float = 0.8
    facts: float = 0.7
    files: float = 0.5
    pinned_boost: float = 0.1
    recency_boost: float = 0.05
    recency_scale_days: float = 30.0
    # Measured on "current version of X" questions: MRR 0.39 without a penalty, 0.92 at 0.8, 0.96
    # at 0.7, 0.97 at 0.6; below 0.7 exact queries about old entries start to lose (0.88 -> 0.86).
    stale_factor: float = 0.7
    # The most rows one relevance search scores with bm25 (see storage/sqlite/search.py): bm25 costs
    # one to a few microseconds per matching row, and this bound keeps a search within a few ms.
    # Measured (bench/retrieval): 1000 keeps every query kind's MRR (0.684 overall vs 0.682 at
    # 2000) and cuts a 10k-memory search from 3.3 to 2.3 ms; 600 and 400 start to lose.
    score_budget: int = 1000

    def bm25_weights(self) -> tuple[float, float, float, float, float]:
        return (self.title, self.text, self.narrative, self.facts, self.files)

    def prior(self, *, pinned: bool, age_ms: int, stale: bool) -> float:
        """The multiplier a relevance score gets from what is known besides the text."""
        scale = self.recency_scale_days * DAY_MS
        recency = 1.0 + self.recency_boost * scale / (scale + max(age_ms, 0))
        pin = 1.0 + self.pinned_boost if pinned else 1.0
        return pin * recency * (self.stale_factor if stale else 1.0)


DEFAULT_RANKING = Ranking()


def rarest_within_budget(counts: list[int], budget: int) -> list[int]:
    """The indexes of the terms a relevance search scores, in query order: rarest first while
    their matches (each counted up to ``budget + 1``) fit in ``budget`` together."""
    chosen: list[int] = []
    total = 0
    for matches, index in sorted((min(count, budget + 1), i) for i, count in enumerate(counts)):
        if matches > 0 and total + matches <= budget:
            chosen.append(index)
            total += matches
    return sorted(chosen)
