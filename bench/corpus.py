"""Seeded, varied developer-note text for the benchmarks: decisions, gotchas, paths, identifiers.

Everything comes from one ``random.Random`` so a run is repeatable; notes carry enough concrete
detail (line numbers, versions, timeouts) that thousands of them stay distinct.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import TypeVar

SEED = 20261029

TYPES = ("decision", "gotcha", "bugfix", "feature", "refactor", "change", "discovery", "note")
DOMAINS = (
    "payments", "checkout", "auth", "search", "billing", "webhook", "cart", "session", "email",
    "feature-flag", "rate-limit", "migration", "installer", "sync", "image", "audit", "token",
    "order", "pricing", "graphql", "inventory", "shipping", "refund", "invoice", "notification",
    "report", "export", "onboarding", "analytics", "geocoding", "ledger", "tax", "coupon",
    "catalog", "warehouse", "subscription", "identity", "consent", "upload", "thumbnail",
    "scheduler", "tenant", "quota", "metering", "fraud", "chargeback", "payout", "kyc",
)  # fmt: skip
ROLES = ("api", "service", "worker", "gateway", "client", "job", "cache", "store", "proxy", "sdk")
TECH = (
    ("pnpm", "npm"), ("PostgreSQL 16", "MySQL 8"), ("Redis streams", "RabbitMQ"),
    ("uvicorn", "gunicorn"), ("SQLite WAL", "a JSON file"), ("httpx", "requests"),
    ("pydantic v2", "marshmallow"), ("ruff", "flake8"), ("Vite", "webpack"),
    ("Playwright", "Selenium"), ("structlog", "stdlib logging"), ("orjson", "ujson"),
    ("Temporal", "cron"), ("OpenTelemetry", "statsd"), ("Terraform", "Pulumi"),
    ("Kafka", "SQS"), ("gRPC", "REST"), ("Bun", "Node 20"), ("esbuild", "Babel"),
    ("Vitest", "Jest"), ("Prisma", "TypeORM"), ("SQLAlchemy 2", "peewee"), ("Celery", "RQ"),
    ("Alembic", "yoyo"), ("Tailwind", "styled-components"), ("Zod", "Yup"), ("tRPC", "Apollo"),
    ("Caddy", "nginx"), ("Fly.io", "Heroku"), ("ClickHouse", "TimescaleDB"),
    ("DuckDB", "pandas"), ("Polars", "Dask"), ("mypy", "pyright"), ("uv", "poetry"),
    ("Hypothesis", "hand-written fixtures"), ("Sentry", "Rollbar"), ("Stripe", "Braintree"),
)  # fmt: skip
DIRS = (
    "src/shop", "src/payments", "src/auth", "services/billing", "packages/ui", "apps/web",
    "apps/admin", "infra/terraform", "scripts", "tests/e2e", "lib/search", "src/sync",
    "services/ledger", "services/shipping", "packages/sdk", "apps/mobile", "src/api/v2",
    "src/workers", "db/migrations", "config", "src/reports", "packages/design-system",
    "services/fraud", "src/identity", "tools/ci", "deploy/helm", "src/notifications",
)  # fmt: skip
MODULES = (
    "cart", "invoice", "checkout", "retry", "session", "webhook", "config", "schema", "client",
    "worker", "tokens", "pricing", "migrations", "router", "cache", "serializer", "hooks",
    "models", "views", "handlers", "middleware", "settings", "tasks", "queue", "ledger",
    "refunds", "payouts", "tax_rules", "coupons", "catalog", "inventory", "shipping_rates",
    "auth_flow", "oauth", "jwt", "permissions", "audit_log", "exporter", "importer", "csv_io",
    "pdf_render", "mailer", "templates", "i18n", "currency", "rounding", "feature_flags",
    "rate_limiter", "health", "metrics", "tracing", "db", "pool", "locks", "scheduler",
)  # fmt: skip
EXTENSIONS = (".py", ".ts", ".tsx", ".sql", ".go", ".yaml", ".toml", ".rs", ".json")
VERBS = (
    "parse", "load", "build", "apply", "resolve", "fetch", "sync", "validate", "render",
    "compute", "flush", "merge", "retry", "encode", "schedule", "normalize", "reconcile",
    "dispatch", "hydrate", "serialize", "refresh", "enqueue", "debounce", "throttle", "migrate",
    "rotate", "verify", "sign", "capture", "settle", "split", "round", "format", "ingest",
    "evict", "prefetch", "backfill", "redact", "charge", "notify",
)  # fmt: skip
NOUNS = (
    "Invoice", "Totals", "Cart", "Session", "Token", "Webhook", "Price", "Discount", "Order",
    "Payload", "Backoff", "Cursor", "Batch", "Schema", "Request", "Header", "Tenant", "Quota",
    "Ledger", "Entry", "Refund", "Payout", "Coupon", "Sku", "Variant", "Shipment", "Parcel",
    "Address", "Currency", "Amount", "Rate", "Tax", "Region", "Locale", "Timezone", "Report",
    "Export", "Row", "Column", "Filter", "Query", "Index", "Shard", "Replica", "Lease", "Lock",
    "Queue", "Job", "Task", "Attempt", "Signature", "Secret", "Key", "Claim", "Scope", "Role",
    "Permission", "Audit", "Event", "Metric", "Span", "Trace", "Alert", "Threshold", "Budget",
    "Window", "Bucket", "Chunk", "Page", "Offset", "Snapshot", "Checkpoint", "Migration",
    "Fixture", "Mock", "Stub", "Template", "Email", "Receipt", "Statement", "Balance", "Hold",
)  # fmt: skip
REASONS = (
    "it halves cold-start time", "the old path double-charged on retries",
    "CI kept timing out on it", "it is what the rest of the monorepo uses",
    "the vendor deprecated the v1 endpoint", "it keeps one writer per database",
    "the lockfile churn was unreviewable", "on-call asked for structured logs",
    "it removes a network hop", "the load test showed p95 above 800 ms",
    "finance needs exact decimal rounding", "the EU region must keep data in Frankfurt",
    "the free tier hit its rate limit daily", "security review flagged the token storage",
    "mobile clients cannot upgrade quickly", "the nightly backfill overran its window",
    "support could not reproduce customer reports", "the schema drifted between staging and prod",
)  # fmt: skip
SYMPTOMS = (
    "returns stale totals", "drops the last item", "raises KeyError", "deadlocks",
    "double-encodes UTF-8", "ignores the timezone", "leaks a file handle",
    "retries forever", "silently truncates to 255 chars", "skips the first page",
    "rounds half-cents the wrong way", "sends duplicate emails", "loses the idempotency key",
    "times out after exactly 30 s", "returns 500 instead of 404", "overflows int32 ids",
    "caches negative lookups for an hour", "reorders events", "logs the raw card number",
    "fails only on ARM runners", "breaks hot reload", "ignores the Retry-After header",
)  # fmt: skip
CONDITIONS = (
    "the cart is empty", "two workers start at once", "the token expires mid-request",
    "the locale is de_DE", "the payload is over 1 MB", "DST switches overnight",
    "the VPN drops", "a migration is half applied", "the cache is cold", "the request is retried",
    "the replica lags", "a tenant has no region", "the currency has no minor unit",
    "the feature flag flips mid-session", "the webhook arrives before the order",
    "the CSV has a BOM", "the clock skews by a few seconds", "the queue is paused",
)  # fmt: skip
FIXES = (
    "Wrapped it in BEGIN IMMEDIATE", "Added an idempotency key", "Pinned the version",
    "Moved the call behind a feature flag", "Normalised to UTC at the edge",
    "Added a unique index and an upsert", "Closed the handle in a finally block",
    "Capped retries at 5 with jitter", "Switched to keyset pagination",
    "Quoted the FTS input", "Used Decimal with ROUND_HALF_EVEN", "Stripped the BOM on read",
    "Honoured Retry-After", "Moved the secret to the vault", "Deferred the write to the outbox",
    "Added a lease with a 30 s heartbeat", "Sorted by (created_at, id)",
)  # fmt: skip
PEOPLE = ("maria", "dev-bot", "kenji", "amara", "the on-call", "lucas", "priya", "sam", "noor")
MISSES = (
    "kubernetes helm chart", "fortran compiler", "quantum annealing", "cobol copybook layout",
    "bluetooth pairing", "zebra crossing", "photosynthesis", "violin rosin",
)  # fmt: skip
ZIPF_EXPONENT = 0.7
_CUMULATIVE: dict[int, list[float]] = {}
T = TypeVar("T")


def pick(rng: random.Random, options: tuple[T, ...]) -> T:
    """One option, Zipf-weighted: the first few are common, the long tail is rare."""
    weights = _CUMULATIVE.get(id(options))
    if weights is None:
        ranks = range(1, len(options) + 1)
        weights = list(itertools.accumulate(rank**-ZIPF_EXPONENT for rank in ranks))
        _CUMULATIVE[id(options)] = weights
    return rng.choices(options, cum_weights=weights)[0]


def component(rng: random.Random) -> str:
    """A part of the system such as ``refund worker``."""
    return f"{pick(rng, DOMAINS)} {pick(rng, ROLES)}"


def identifier(rng: random.Random) -> str:
    """A camelCase, PascalCase or snake_case code name such as ``parseInvoiceTotals``."""
    verb, first, second = pick(rng, VERBS), pick(rng, NOUNS), pick(rng, NOUNS)
    style = rng.random()
    if style < 0.45:
        return f"{verb}{first}{second}"
    if style < 0.75:
        return f"{verb}_{first.lower()}_{second.lower()}"
    return f"{first}{second}Error"


def file_path(rng: random.Random) -> str:
    """A repository path such as ``src/payments/invoice.py``."""
    return f"{pick(rng, DIRS)}/{pick(rng, MODULES)}{pick(rng, EXTENSIONS)}"


def _decision(rng: random.Random) -> str:
    new, old = pick(rng, TECH)
    return (
        f"Decided to use {new} instead of {old} for the {component(rng)} because"
        f" {pick(rng, REASONS)}. The switch lives in {file_path(rng)}; {pick(rng, PEOPLE)}"
        f" signed off on {rng.randint(1, 28)}/{rng.randint(1, 12)}."
    )


def _gotcha(rng: random.Random) -> str:
    return (
        f"Gotcha: {identifier(rng)}() in {file_path(rng)} {pick(rng, SYMPTOMS)} when"
        f" {pick(rng, CONDITIONS)}. Set {pick(rng, DOMAINS).upper().replace('-', '_')}_TIMEOUT_MS="
        f"{rng.choice((250, 500, 1500, 3000, 30000))} or call {identifier(rng)} first."
    )


def _bugfix(rng: random.Random) -> str:
    return (
        f"Fixed: {component(rng)} {pick(rng, SYMPTOMS)} when {pick(rng, CONDITIONS)}."
        f" Root cause was {identifier(rng)} at {file_path(rng)}:{rng.randint(10, 900)}."
        f" {pick(rng, FIXES)}; regression test in tests/test_{pick(rng, MODULES)}.py."
    )


def _discovery(rng: random.Random) -> str:
    new, _ = pick(rng, TECH)
    return (
        f"Found that {new} in the {component(rng)} {pick(rng, SYMPTOMS)} under load"
        f" ({rng.randint(50, 5000)} req/s). {identifier(rng)} is the hot path; see"
        f" {file_path(rng)} and {file_path(rng)}."
    )


def _refactor(rng: random.Random) -> str:
    return (
        f"Refactored {identifier(rng)} out of {file_path(rng)} into {file_path(rng)} so the"
        f" {component(rng)} no longer imports the {component(rng)}."
        f" Behaviour unchanged; {rng.randint(3, 60)} call sites updated."
    )


def _feature(rng: random.Random) -> str:
    return (
        f"Shipped {identifier(rng)} for the {component(rng)}: {pick(rng, DOMAINS)} events now"
        f" reach the {component(rng)} within {rng.randint(1, 90)} s. Flag"
        f" {pick(rng, DOMAINS)}_{pick(rng, NOUNS).lower()}_v{rng.randint(2, 5)} gates it."
    )


def _change(rng: random.Random) -> str:
    new, _ = pick(rng, TECH)
    return (
        f"Bumped {new} to {rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)} in the"
        f" {component(rng)}. {pick(rng, FIXES)} while at it ({file_path(rng)})."
    )


def _note(rng: random.Random) -> str:
    return (
        f"Run `make {pick(rng, MODULES)}` before pushing; {pick(rng, PEOPLE)} says"
        f" {identifier(rng)} {pick(rng, SYMPTOMS)} otherwise when {pick(rng, CONDITIONS)}."
    )


_WRITERS = {
    "decision": _decision,
    "gotcha": _gotcha,
    "bugfix": _bugfix,
    "feature": _feature,
    "refactor": _refactor,
    "change": _change,
    "discovery": _discovery,
    "note": _note,
}


@dataclass(frozen=True)
class Note:
    """One memory as ``save_memory`` takes it."""

    type: str
    text: str
    title: str | None
    files: tuple[str, ...] = ()
    facts: tuple[dict[str, str], ...] = ()

    def arguments(self) -> dict[str, object]:
        """The ``save_memory`` arguments for this note."""
        args: dict[str, object] = {"text": self.text, "type": self.type}
        if self.title is not None:
            args["title"] = self.title
        if self.files:
            args["files"] = list(self.files)
        if self.facts:
            args["facts"] = list(self.facts)
        return args


@dataclass
class NoteWriter:
    """Distinct notes from a seeded generator."""

    seed: int = SEED
    rng: random.Random = field(init=False)
    seen: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def note(self) -> Note:
        rng = self.rng
        while True:
            kind = rng.choice(TYPES)
            text = _WRITERS[kind](rng)
            if text not in self.seen:
                self.seen.add(text)
                break
        title = None
        if rng.random() < 0.4:
            title = f"{kind.capitalize()}: {identifier(rng)} in the {component(rng)}"
        files = tuple(dict.fromkeys(file_path(rng) for _ in range(rng.randint(1, 3))))
        facts: tuple[dict[str, str], ...] = ()
        if rng.random() < 0.05:
            subject, predicate = component(rng), rng.choice(("uses", "owner", "timeout_ms"))
            facts = ({"subject": subject, "predicate": predicate, "object": pick(rng, TECH)[0]},)
        return Note(kind, text, title, files if rng.random() < 0.35 else (), facts)

    def notes(self, count: int) -> list[Note]:
        return [self.note() for _ in range(count)]


def queries(count: int, seed: int = SEED + 1) -> list[str]:
    """Varied search queries: keywords, identifiers, paths, questions and a few misses.

    Seven in ten are keyword-style (what agents mostly send); three in ten are sentences full
    of common words, which match most memories.
    """
    rng = random.Random(seed)
    makers = (
        lambda: pick(rng, TECH)[0],
        lambda: component(rng),
        lambda: identifier(rng),
        lambda: f"{pick(rng, VERBS)} {pick(rng, NOUNS).lower()}",
        lambda: file_path(rng),
        lambda: f"why does the {component(rng)} {pick(rng, SYMPTOMS)}",
        lambda: f"{pick(rng, SYMPTOMS)} when {pick(rng, CONDITIONS)}",
        lambda: f"{pick(rng, DOMAINS)} {pick(rng, NOUNS).lower()} {pick(rng, MODULES)}",
        lambda: pick(rng, FIXES).lower(),
        lambda: rng.choice(MISSES),
    )
    return [makers[index % len(makers)]() for index in range(count)]
