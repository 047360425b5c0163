"""Benchmark of secret redaction: ``python bench/redaction_bench.py [--quick] [--compare]``.

Prints a markdown table: the time to redact a 1 KB and a 20,000-character memory (p50 and p99,
in process; the look-alike note holds full-width and invisible characters, which are folded, the
Cyrillic and Greek note letters that look like Latin ones, read as such in the mixed-script note),
the worst time over adversarial inputs of 20,000 characters and how it grows from 5,000
(catastrophic backtracking would show here), and recall and false positives on the labelled
corpus (``tests/domain/redaction_corpus.jsonl``). With ``--compare`` and detect-secrets
installed, the same corpus and texts through detect-secrets' default plugins.
"""

# ruff: noqa: RUF001  (the Cyrillic and Greek note holds letters that look like Latin ones)
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from aletheia_mem.domain.redaction import redact_secrets
from redaction_corpus import Case, load_corpus

NOTE = (
    "Decided to move the session cache from Redis to the Postgres unlogged table because the"
    " staging cluster kept evicting keys under load. See src/cache/store.py and migration 0042."
    " Run `make test` before pushing; the CI job `integration-db` needs DATABASE_URL set to the"
    " local container. Commit 3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345 fixed the flaky test.\n"
)
CONFIG = (
    "DB_HOST=db.internal\nDB_USER=app\nDB_PASSWORD=Tr0ub4dor&3x\nREDIS_URL=redis://cache:6379/0\n"
    "database:\n  pool: 10\n  timeout: 30\n  password: s3cr3tPW9\n"
    "curl -u admin:Cu7lPassw0rd https://api.example.com/v1/items?limit=50\n"
    "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0\n"
)


def full_width(text: str) -> str:
    """Each printable ASCII character as its full-width look-alike (U+FF01 to U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


# Text that NFKC changes: read folded, then as it is (the plain ASCII texts above skip folding).
LOOKALIKE_NOTE = full_width(NOTE[:200]) + "日本語のメモ\uff08本番環境\uff09。\u200b" + NOTE[200:]
# Russian, Ukrainian and Greek prose around paths and code: letters that look like Latin ones.
CYRILLIC_NOTE = (
    "Решили перенести кэш сессий из Redis в нежурналируемую таблицу Postgres, потому что"
    " кластер staging постоянно вытеснял ключи под нагрузкой. См. src/cache/store.py и миграцию"
    " 0042. Перед пушем запустите `make test`; задаче CI `integration-db` нужна переменная"
    " DATABASE_URL. Коміт 3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345 виправив нестабільний тест."
    " Η ρύθμιση του διακομιστή άλλαξε: ο κωδικός πρόσβασης δεν αποθηκεύεται πια στο αρχείο.\n"
)
# The same with a Cyrillic "e" in "Redis": a word that mixes scripts, so look-alikes are read as
# Latin letters and the text is read twice.
MIXED_SCRIPT_NOTE = CYRILLIC_NOTE.replace("Redis", "R\u0435dis")
# Repeated to 5,000 and 20,000 characters: the time must grow linearly.
ADVERSARIAL = {
    "letters": "a",
    "equals": "=",
    "assignments": "a=",
    "password chain": "password=",
    "open quotes": 'token="',
    "colons": "key: ",
    "url prefixes": "https://u:",
    "url at signs": "https://u:p@",
    "pem headers": "-----BEGIN PRIVATE KEY-----",
    "dashes": "-",
    "long token": "ghp_A1",
    "jwt parts": "eyJa.",
    "bearer": "Bearer ",
    "flags": "--password ",
    "prose words": "password is ",
    "private tags": "<private>",
    "kubernetes": "kind: Secret\ndata:\n  k: v\n",
    "backslashes": "\\",
    "weak name chain": "key=",
    "openai prefixes": "sk-",
    "short flags": " -p",
    "full-width assignments": full_width("password="),
    "zero-width inside words": "token\u200b",
    "look-alike names": "p\u0430ssword=",
    "bare passphrases": "password: correct horse battery staple\n",
    "colon word runs": ": a b c d\n",
    "colon camel case": "password: CorrectHorse\n",
    "sentence passphrases": "the password is correct horse battery staple, ",
    "sentence word runs": "pass is a b c d ",
    "hex keys in prose": "the datadog key 3f9a8c1d2e4b5a6978c0d1e2f3a4b5c6 ",
    "exported words": "export db_password=Sunshine; ",
    "named token prefixes": "hf_ModelLoaderConfigurationForTransformers ",
}


@dataclass(frozen=True)
class Row:
    metric: str
    value: float
    unit: str
    target: str = ""
    passed: bool | None = None


def _sized(base: str, size: int) -> str:
    return (base * (size // len(base) + 1))[:size]


def _times_us(function: Callable[[str], object], text: str, runs: int) -> list[float]:
    function(text)  # warm up: first-use compilation is not part of the steady cost
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        function(text)
        timings.append((time.perf_counter() - started) * 1e6)
    return sorted(timings)


def _percentile(sorted_values: list[float], share: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * share))]


def speed_rows(name: str, function: Callable[[str], object], runs: int) -> list[Row]:
    rows = []
    # The 1 KB target is for ASCII text; look-alike text is read twice, folded and as it is.
    texts = (("note", NOTE, 100.0), ("config with secrets", CONFIG, 100.0))
    others = (
        ("look-alike note", LOOKALIKE_NOTE),
        ("Cyrillic and Greek note", CYRILLIC_NOTE),
        ("mixed-script note", MIXED_SCRIPT_NOTE),
    )
    for label, base, target_1k in (*texts, *((label, text, None) for label, text in others)):
        for size, target in ((1_000, target_1k), (20_000, None)):
            timings = _times_us(function, _sized(base, size), runs if size < 20_000 else runs // 10)
            p50 = statistics.median(timings)
            rows.append(
                Row(
                    f"{name}: {size:,}-char {label}, p50",
                    p50,
                    "µs",
                    f"<= {target:.0f} µs" if target else "",
                    p50 <= target if target else None,
                )
            )
            rows.append(
                Row(f"{name}: {size:,}-char {label}, p99", _percentile(timings, 0.99), "µs")
            )
    return rows


def adversarial_rows(runs: int) -> list[Row]:
    """The slowest adversarial input at 20,000 characters, and the worst growth from 5,000."""
    slowest: dict[str, float] = {}
    growth: dict[str, float] = {}
    for name, unit in ADVERSARIAL.items():
        small = min(_times_us(redact_secrets, _sized(unit, 5_000), runs))
        large = min(_times_us(redact_secrets, _sized(unit, 20_000), runs))
        slowest[name], growth[name] = large / 1000, large / max(small, 1.0)
    worst = max(slowest, key=slowest.__getitem__)
    steepest = max(growth, key=growth.__getitem__)
    return [
        Row(
            f"aletheia: slowest of {len(ADVERSARIAL)} adversarial 20,000-char inputs ({worst})",
            slowest[worst],
            "ms",
            "<= 50 ms",
            slowest[worst] <= 50,
        ),
        Row(
            f"aletheia: time at 20,000 / time at 5,000 chars, steepest input ({steepest})",
            growth[steepest],
            "x",
            "<= 6 x (linear: 4 x; quadratic: 16 x)",
            growth[steepest] <= 6,
        ),
    ]


def quality_rows(name: str, detects: Callable[[Case], bool], cases: list[Case]) -> list[Row]:
    secrets = [case for case in cases if case.secrets]
    innocent = [case for case in cases if not case.secrets]
    found = sum(detects(case) for case in secrets)
    damaged = sum(detects(case) for case in innocent)
    families = len({case.family for case in secrets})
    recall = 100 * found / len(secrets)
    return [
        Row(f"{name}: recall on {len(secrets)} secrets in {families} families", recall, "%"),
        Row(f"{name}: innocent texts changed, of {len(innocent)}", damaged, "texts"),
    ]


def aletheia_detects(case: Case) -> bool:
    redacted = redact_secrets(case.text)
    if case.secrets:
        return not any(secret in redacted for secret in case.secrets)
    return redacted != case.text


def detect_secrets_rows(cases: list[Case], runs: int) -> list[Row]:
    """detect-secrets 1.x with its default plugins, on the same corpus and texts."""
    try:
        from detect_secrets.core.scan import scan_line  # type: ignore[import-not-found]
        from detect_secrets.settings import default_settings  # type: ignore[import-not-found]
    except ImportError:
        return [Row("detect-secrets: not installed (pip install detect-secrets)", 0, "")]

    def found_values(text: str) -> list[str]:
        return [str(s.secret_value) for line in text.splitlines() for s in scan_line(line)]

    def detects(case: Case) -> bool:
        values = found_values(case.text)
        if case.secrets:
            return all(any(s in v or v in s for v in values) for s in case.secrets)
        return bool(values)

    with default_settings():
        return quality_rows("detect-secrets", detects, cases) + speed_rows(
            "detect-secrets", found_values, max(20, runs // 20)
        )


def markdown(rows: list[Row]) -> str:
    lines = ["| Measurement | Measured | Target | Result |", "|---|---:|---|---|"]
    for row in rows:
        result = "" if row.passed is None else ("pass" if row.passed else "FAIL")
        value = f"{row.value:,.1f} {row.unit}" if row.unit else ""
        lines.append(f"| {row.metric} | {value} | {row.target} | {result} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, for a smoke test")
    parser.add_argument("--compare", action="store_true", help="also run detect-secrets")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    runs = 200 if args.quick else 3_000
    cases = load_corpus()
    rows = speed_rows("aletheia", redact_secrets, runs)
    rows += adversarial_rows(2 if args.quick else 9)
    rows += quality_rows("aletheia", aletheia_detects, cases)
    if args.compare:
        rows += detect_secrets_rows(cases, runs)
    print(markdown(rows))
    missed = [row for row in rows if row.passed is False]
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
