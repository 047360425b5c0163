"""search as a developer meets it: the misses a user audit of ~150 real queries found.

Each test saves a few memories the way an agent does (``save_memory``), asks what a developer
would ask, and checks that the obvious memory comes first (or at all); on SQLite and PostgreSQL.
"""

from __future__ import annotations

import unicodedata

import pytest

from aletheia_mem.domain.recall import search_terms
from aletheia_mem.search.rank import Ranking
from aletheia_mem.storage.base import MemoryQuery
from tests.tools.helpers import body_lines, saved_id

# What a shop project's store holds besides the memory a test looks for.
BACKGROUND = [
    ("Use pnpm, not npm, in the shop repo", "decision"),
    ("Pin Python 3.11.7 in CI: 3.11.8 broke the C extension of our ujson fork.", "decision"),
    ("SHOP-4821: apply_coupon() applied the coupon twice; now keyed by cart_id.", "bugfix"),
    ("Stripe answers HTTP 429 under load; back off in src/payments/stripe_client.py.", "gotcha"),
    ("Set DATABASE_URL to postgresql+psycopg://...; postgres:// fails at start.", "gotcha"),
    ("Run alembic upgrade head before each deploy.", "gotcha"),
    ("Celery may run a task twice after a restart (acks_late): check the payment id.", "gotcha"),
    ("nginx cut long CSV exports at 60 s (proxy_read_timeout); raised to 300 s.", "discovery"),
    ("Tag Docker images with the commit SHA, never with the branch name.", "decision"),
    ("The Grafana dashboard for checkout latency has p95 per endpoint.", "discovery"),
]


def save(call, text: str, **arguments) -> int:
    return saved_id(call("save_memory", text=text, **arguments))


def save_background(call) -> None:
    for text, kind in BACKGROUND:
        save(call, text, type=kind)


def found_ids(result) -> list[int]:
    """The memory ids of a search answer, best first (none for ``No matches.``)."""
    if result.text.startswith("No matches."):
        return []
    return [int(line.split()[0][1:]) for line in body_lines(result) if line.startswith("#")]


@pytest.mark.parametrize(
    ("query", "title", "text", "distractor"),
    [
        (
            "time zone",
            "Timezone bug in the order export",
            "Order export used naive datetimes; now every timestamp is UTC (zoneinfo).",
            "Build time of the frontend went from 90 s to 12 s after the move to Vite.",
        ),
        (
            "user name",
            "Username must be unique",
            "Sign-up refuses a username that differs only in case from an existing one.",
            "Rename the Helm release when the cluster name changes.",
        ),
        (
            "front end",
            "Frontend bundles with Vite",
            "The frontend build moved from webpack to Vite.",
            "The end of the sprint moves to Thursday.",
        ),
        (
            "data set",
            "Test dataset lives in fixtures/",
            "The anonymised dataset for the integration tests is in fixtures/orders.json.",
            "Set the log level to debug only on staging.",
        ),
    ],
)
def test_two_words_find_the_memory_that_writes_them_as_one_word(
    call, query, title, text, distractor
):
    save_background(call)
    target = save(call, text, title=title)
    save(call, distractor)

    assert found_ids(call("search", query=query))[:1] == [target]


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("Strasse", "Die Straße fehlt in der Lieferadresse des Checkouts."),
        ("Straße", "Die Strasse fehlt in der Lieferadresse des Checkouts (Schweiz)."),
        ("bahnhofstraße", "Adressen wie Bahnhofstrasse 12 werden falsch formatiert."),
        ("GROSSE", "Die Größe der Bilder wird beim Upload auf 2 MB begrenzt."),
    ],
)
def test_german_ss_and_sharp_s_spellings_find_each_other(call, query, text):
    save_background(call)
    target = save(call, text)
    save(call, "Checkout: Lieferadresse und Rechnungsadresse werden getrennt gespeichert.")

    assert found_ids(call("search", query=query))[:1] == [target]


def test_a_word_in_no_memory_does_not_hide_the_matches_of_very_common_words(call, app):
    # A search scores at most ``score_budget`` matches; when every word of a query matches more
    # than that, the memories holding all of them are scored. A word no memory holds must not
    # make that "none": the same query without it finds them.
    for number in range(6):
        extra = " after the checkout service restarted" if number % 2 else ""
        save(call, f"Deploy note {number}{extra}.")
    small_budget = Ranking(score_budget=2)

    def ranked(text: str) -> list[int]:
        query = MemoryQuery(terms=search_terms(app.store, text), projects=("shop",))
        return [m.id for m in app.store.search_memories(query, app.clock(), small_budget)]

    assert ranked("deploy checkout") == [6, 4, 2]
    assert ranked("deploy checkout flicker") == [6, 4, 2]


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("v3.12.4", "Local development uses pyenv with Python 3.12.4 now."),
        ("4.2.11", "Bump Django to v4.2.11: it fixes the CSRF regression."),
        ("4.2.10", "Django v4.2.10 has a CSRF regression: skip it."),
        ("v20.11", "The worker images run Node 20.11.1 since the upgrade."),
    ],
)
def test_a_version_is_found_with_or_without_its_v(call, query, text):
    save_background(call)
    target = save(call, text, type="change")

    assert found_ids(call("search", query=query))[:1] == [target]


def test_a_fact_is_not_listed_first_for_a_part_of_a_query_word(call):
    # Facts come before the memories, whatever their score: one that shares only a camelCase
    # part with the query ("Java" of "JavaScript", "SQL" of "MySQL") is not about what was asked.
    save_background(call)
    runtime = {"subject": "billing-service", "predicate": "runtime", "object": "Java 21"}
    save(call, "The billing service was upgraded to Java 21.", facts=[runtime])
    engine = {"subject": "payments-db", "predicate": "engine", "object": "PostgreSQL 16"}
    save(call, "Payments moved to PostgreSQL 16.", facts=[engine])
    orders = {"subject": "orders-db", "predicate": "engine", "object": "MySQL 8"}
    save(call, "The orders database is MySQL 8 on RDS.", facts=[orders])
    bundle = save(call, "The checkout widget's JavaScript bundle is 240 kB; lazy-load the map.")

    javascript = body_lines(call("search", query="JavaScript"))
    mysql = body_lines(call("search", query="MySQL"))

    assert javascript[0].startswith(f"#{bundle} ")
    assert not [line for line in javascript if line.startswith("fact #")]
    assert [line for line in mysql if line.startswith("fact #")] == [
        "fact #3 orders-db · engine = MySQL 8  (shop, since 2026-10-29)"
    ]
    # A fact is still found by its whole words and by a word of a name the query spells out.
    assert body_lines(call("search", query="Java"))[0].startswith("fact #1 billing-service")
    assert body_lines(call("search", query="payments_db"))[0].startswith("fact #2 payments-db")


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_query_in_decomposed_unicode_finds_the_word(call, form):
    # macOS file names and text copied from them spell "Ü" as "U" and a combining diaeresis.
    save_background(call)
    target = save(call, unicodedata.normalize(form, "Übersetzung der Fehlermeldungen im Checkout"))
    sizes = save(call, unicodedata.normalize(form, "Größe der Vorschaubilder: höchstens 2 MB."))

    assert found_ids(call("search", query=unicodedata.normalize("NFD", "Übersetzung"))) == [target]
    assert found_ids(call("search", query=unicodedata.normalize("NFD", "größe"))) == [sizes]


def test_a_file_is_found_however_its_relative_path_or_separators_were_written(call):
    save_background(call)
    dotted = save(call, "Rounding fix in the checkout.", files=["./src/cart/checkout.py"])
    windows = save(call, "Checkout totals on Windows.", files=["src\\cart\\checkout.py"])
    plain = save(call, "Checkout coupon order.", files=["src/cart/checkout.py"])
    save(call, "Another checkout.", files=["legacy/src/cart/checkout.py"])
    everyone = [plain, windows, dotted]  # newest first, as file mode lists them

    for spelling in ("src/cart/checkout.py", "./src/cart/checkout.py", "src\\cart\\checkout.py"):
        assert found_ids(call("search", file=spelling)) == everyone, spelling
    suffix = found_ids(call("search", file="cart\\checkout.py", file_suffix=True))
    assert set(suffix) == {*everyone, plain + 1}
    assert found_ids(call("search", file="src/cart/checkout.py", limit=2)) == everyone[:2]
