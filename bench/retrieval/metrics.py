"""Recall@k, MRR and latency percentiles for the retrieval benchmark."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

KINDS = ("exact", "identifier", "paraphrase", "temporal")
Ranker = Callable[[str], Sequence[str]]


def first_hit(ranked: Sequence[str], targets: Sequence[str]) -> int | None:
    """The 1-based rank of the first relevant key in the top 10, or None."""
    for rank, key in enumerate(ranked[:10], start=1):
        if key in targets:
            return rank
    return None


def evaluate(queries: list[dict[str, object]], rank: Ranker) -> dict[str, dict[str, float]]:
    """Per kind (and ``all``): recall@1, @5, @10 and MRR@10."""
    hits: dict[str, list[int | None]] = {}
    for query in queries:
        ranked = rank(str(query["query"]))
        found = first_hit(ranked, query["targets"])  # type: ignore[arg-type]
        hits.setdefault(str(query["kind"]), []).append(found)
        hits.setdefault("all", []).append(found)
    return {kind: _summary(values) for kind, values in hits.items()}


def false_positives(queries: list[dict[str, object]], rank: Ranker) -> dict[str, float]:
    """For queries that should find nothing: how many found something, per subkind and ``all``."""
    found: dict[str, list[bool]] = {}
    for query in queries:
        hit = bool(rank(str(query["query"])))
        found.setdefault(str(query.get("subkind", "negative")), []).append(hit)
        found.setdefault("all", []).append(hit)
    return {kind: sum(values) / len(values) for kind, values in found.items()} | {
        "n": float(len(queries))
    }


def negative_table(results: dict[str, dict[str, float]]) -> str:
    """A Markdown table of false-positive rates: one row per mode."""
    kinds = [k for k in next(iter(results.values())) if k not in ("n", "all")]
    lines = [
        "| mode | n | " + " | ".join(kinds) + " | all |",
        "|---|---:|" + "---:|" * (len(kinds) + 1),
    ]
    for mode, rates in results.items():
        cells = " | ".join(f"{100 * rates[k]:.1f} %" for k in [*kinds, "all"])
        lines.append(f"| {mode} | {int(rates['n'])} | {cells} |")
    return "\n".join(lines)


def _summary(found: list[int | None]) -> dict[str, float]:
    n = len(found)
    return {
        "n": float(n),
        "r1": sum(1 for f in found if f is not None and f <= 1) / n,
        "r5": sum(1 for f in found if f is not None and f <= 5) / n,
        "r10": sum(1 for f in found if f is not None) / n,
        "mrr": sum(1.0 / f for f in found if f is not None) / n,
    }


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    """p50 and p95 of a list of milliseconds."""
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """A Markdown table: one row per (kind, mode)."""
    lines = [
        "| queries | n | mode | R@1 | R@5 | R@10 | MRR |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for kind in (*KINDS, "all"):
        for mode, by_kind in results.items():
            row = by_kind.get(kind)
            if row is None:
                continue
            lines.append(
                f"| {kind} | {int(row['n'])} | {mode} | {row['r1']:.3f} | {row['r5']:.3f}"
                f" | {row['r10']:.3f} | {row['mrr']:.3f} |"
            )
    return "\n".join(lines)
