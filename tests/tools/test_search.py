"""search: the index lines, facts first, every filter, file mode and hostile query text."""

from __future__ import annotations

import pytest

from aletheia_mem.domain import memories
from tests.conftest import REFERENCE_NOW
from tests.tools.helpers import DAY_MS, body_lines, saved_id

PNPM = "Use pnpm, not npm, in the shop repo"


def save(call, text, **arguments):
    return saved_id(call("save_memory", text=text, **arguments))


def test_search_lists_one_index_line_per_hit_as_in_the_reference(call, as_caller):
    save(call, PNPM, type="decision", pinned=True)
    for number in range(2, 7):
        save(call, f"Unrelated note number {number}")
    save(call, "cursor prompt about pnpm", _app=as_caller(caller="cursor"))

    result = call("search", query="pnpm", limit=5)

    assert body_lines(result) == [
        "#7 2026-10-29 [note] cursor prompt about pnpm  (shop, cursor)",
        "#1 2026-10-29 [decision] Use pnpm, not npm, in the shop repo  (shop, cli, pinned)",
    ]


def test_matching_facts_are_listed_before_memories(call):
    save(
        call,
        "Payments moved to PostgreSQL this week",
        facts=[{"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 16"}],
    )

    lines = body_lines(call("search", query="postgresql"))

    assert lines == [
        "fact #1 payments-api · database = PostgreSQL 16  (shop, since 2026-10-29)",
        "#1 2026-10-29 [note] Payments moved to PostgreSQL this week  (shop, cli)",
    ]


def _replica_facts(call, count):
    """``count`` services, each saved with its replicas fact; all match "replicas"."""
    for number in range(1, count + 1):
        fact = {"subject": f"svc{number}", "predicate": "replicas", "object": str(number)}
        save(call, f"Service svc{number} runs with more replicas now", facts=[fact])


def test_fact_lines_count_in_the_limit_facts_first(call):
    _replica_facts(call, 3)

    one = body_lines(call("search", query="replicas", limit=1))
    four = body_lines(call("search", query="replicas", limit=4))

    assert len(one) == 1 and one[0].startswith("fact #")
    assert [line.startswith("fact #") for line in four] == [True, True, True, False]


def test_offset_pages_through_facts_then_memories_without_gaps(call):
    _replica_facts(call, 7)  # 5 fact lines at most, then 7 memories: 12 lines in all

    whole = body_lines(call("search", query="replicas", limit=100))
    pages = [
        line
        for offset in range(0, 12, 3)
        for line in body_lines(call("search", query="replicas", limit=3, offset=offset))
    ]

    assert len(whole) == 12 and sum(line.startswith("fact #") for line in whole) == 5
    assert pages == whole


def test_a_page_past_the_fact_lines_says_nothing_past_the_offset(call):
    facts = [{"subject": "qux", "predicate": p, "object": "on"} for p in ("cache", "queue")]
    save(call, "Qux settings", facts=facts)
    call("dismiss_memory", id=1)  # its facts stay current

    pages = [call("search", query="qux", limit=1, offset=offset).text for offset in (0, 1, 2)]

    assert [page.startswith("No matches.") for page in pages] == [False, False, True]
    assert pages[2] == "No matches. Nothing past offset 2."


def test_ranks_in_the_structured_output_count_memories_only(call):
    _replica_facts(call, 3)

    result = call("search", query="replicas", limit=4)

    assert [head["rank"] for head in result.structured["memories"]] == [1]
    assert len(result.structured["facts"]) == 3


def test_a_fact_written_for_a_later_time_is_not_listed_as_current_before_it(call, clock):
    fact = {"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 15"}
    save(call, "Payments run on PostgreSQL 15", facts=[fact])
    upgrade = {**fact, "object": "PostgreSQL 16", "valid_from": "2026-11-05"}
    save(call, "Payments move to PostgreSQL 16 next week", facts=[upgrade])

    def facts_found() -> list[str]:
        lines = body_lines(call("search", query="postgresql"))
        return [line for line in lines if line.startswith("fact #")]

    assert facts_found() == [
        "fact #1 payments-api · database = PostgreSQL 15"
        "  (shop, since 2026-10-29; #2 from 2026-11-05)"  # current until then
    ]
    clock.advance(7 * DAY_MS)
    assert facts_found() == [
        "fact #2 payments-api · database = PostgreSQL 16  (shop, since 2026-11-05)"
    ]


def test_search_without_query_or_file_is_an_error(call):
    for arguments in ({}, {"query": ""}, {"query": "   "}, {"file": " "}):
        result = call("search", **arguments)
        assert result.is_error
        assert result.text == "query is required."


def test_empty_project_returns_no_matches_with_the_reason(call):
    result = call("search", query="pnpm")

    assert not result.is_error
    assert result.text == 'No matches. Project "shop" has no memories yet.'


def test_query_that_matches_nothing_returns_no_matches_with_the_reason(call):
    save(call, PNPM)

    assert call("search", query="kubernetes").text == (
        'No matches. Nothing in project "shop" matches "kubernetes".'
    )


def test_filters_that_exclude_every_hit_are_named_in_the_reason(call):
    save(call, PNPM, type="decision")

    result = call("search", query="pnpm", type="gotcha")

    assert result.text == "No matches. The filters (type) excluded every memory that matched."
    dated = call("search", query="pnpm", type="gotcha", until="2025-01-01")
    assert dated.text == (
        "No matches. The filters (type, until or older_than_days) excluded every memory that"
        " matched."
    )


def test_since_later_than_until_is_the_reason_not_a_filter_never_given(call):
    save(call, PNPM)

    result = call("search", query="pnpm", since="2026-12-07", until="2026-12-01")

    assert not result.is_error
    assert result.text == (
        "No matches. since is later than until or older_than_days: no memory can match both."
    )


def test_offset_past_the_last_hit_says_so(call):
    save(call, PNPM)

    assert call("search", query="pnpm", offset=5).text == "No matches. Nothing past offset 5."


def test_omitted_project_searches_only_the_working_directory_project(call, as_caller):
    save(call, "billing uses pnpm workspaces", project="billing")

    from_shop = call("search", query="pnpm")
    from_billing = call("search", query="pnpm", _app=as_caller(default_project="billing"))

    assert from_shop.text == 'No matches. Project "shop" has no memories yet.'
    assert body_lines(from_billing) == [
        "#1 2026-10-29 [note] billing uses pnpm workspaces  (billing, cli)"
    ]


def test_named_project_and_star_choose_what_search_covers(call):
    save(call, "shop uses pnpm")
    save(call, "billing uses pnpm workspaces", project="billing")

    named = body_lines(call("search", query="pnpm", project=" Billing "))
    every = body_lines(call("search", query="pnpm", project="*", order="date_asc"))

    assert named == ["#2 2026-10-29 [note] billing uses pnpm workspaces  (billing, cli)"]
    assert every == [
        "#1 2026-10-29 [note] shop uses pnpm  (shop, cli)",
        "#2 2026-10-29 [note] billing uses pnpm workspaces  (billing, cli)",
    ]


def test_project_limited_caller_is_refused_other_projects(call, as_caller):
    save(call, "shop uses pnpm")
    save(call, "billing uses pnpm workspaces", project="billing")
    limited = as_caller(allowed_projects=("shop",))

    refused = call("search", _app=limited, query="pnpm", project="billing")
    every = call("search", _app=limited, query="pnpm", project="*")

    assert refused.is_error
    assert refused.text == 'Project "billing" is not allowed for this token.'
    assert body_lines(every) == ["#1 2026-10-29 [note] shop uses pnpm  (shop, cli)"]


def test_omitted_project_of_a_limited_caller_is_its_first_project(call, as_caller):
    """As the schema says, and as session_start_context and save_memory default: "*" for all."""
    save(call, "shop uses pnpm")
    save(call, "billing uses pnpm workspaces", project="billing")
    limited = as_caller(allowed_projects=("billing", "shop"))

    omitted = body_lines(call("search", _app=limited, query="pnpm"))
    every = body_lines(call("search", _app=limited, query="pnpm", project="*"))

    assert omitted == ["#2 2026-10-29 [note] billing uses pnpm workspaces  (billing, cli)"]
    assert len(every) == 2


def test_type_filter_keeps_one_memory_type(call):
    save(call, "pnpm lockfile conflicts", type="gotcha")
    save(call, "adopt pnpm", type="decision")

    lines = body_lines(call("search", query="pnpm", type="decision"))

    assert lines == ["#2 2026-10-29 [decision] adopt pnpm  (shop, cli)"]


def test_unknown_type_is_an_error_listing_the_eight_types(call):
    result = call("search", query="pnpm", type="idea")

    assert result.is_error
    assert result.text == (
        "type must be one of: decision, gotcha, bugfix, feature, refactor, change, discovery, note."
    )


def test_kind_filter_keeps_one_memory_kind(call, app):
    save(call, "pnpm note from an agent")
    observation = memories.MemoryInput(
        text="ran pnpm install", project="shop", tool="claude-code", kind="observation"
    )
    memories.save_memory(app.store, app.clock, observation)

    observations = body_lines(call("search", query="pnpm", kind="observation"))
    notes = body_lines(call("search", query="pnpm", kind="note"))

    assert observations == ["#2 2026-10-29 [note] ran pnpm install  (shop, claude-code)"]
    assert notes == ["#1 2026-10-29 [note] pnpm note from an agent  (shop, cli)"]


def test_limit_and_offset_page_through_hits(call):
    for number in range(1, 6):
        save(call, f"pnpm note {number}")

    first = body_lines(call("search", query="pnpm", order="date_asc", limit=2))
    second = body_lines(call("search", query="pnpm", order="date_asc", limit=2, offset=2))

    assert [line.split()[0] for line in first] == ["#1", "#2"]
    assert [line.split()[0] for line in second] == ["#3", "#4"]


@pytest.mark.parametrize("limit", [0, 101, 2.5, "many"])
def test_limit_outside_1_to_100_is_an_error(call, limit):
    result = call("search", query="pnpm", limit=limit)

    assert result.is_error
    assert result.text.startswith("limit must be")


def test_limit_100_is_allowed(call):
    save(call, PNPM)

    assert not call("search", query="pnpm", limit=100).is_error


def _three_days(call, clock):
    """#1 on 2026-10-29, #2 on 2026-10-30, #3 on 2026-10-31, each at 19:46; the clock on #3."""
    for day in range(3):
        save(call, f"pnpm note of day {day + 1}")
        if day < 2:
            clock.advance(DAY_MS)


def _ids(result):
    return [line.split()[0] for line in body_lines(result)]


def test_since_keeps_results_from_that_time_on(call, clock):
    _three_days(call, clock)

    assert _ids(call("search", query="pnpm", since="2026-10-30", order="date_asc")) == [
        "#2",
        "#3",
    ]
    assert _ids(call("search", query="pnpm", since="2026-10-30T19:46:45.564Z")) == ["#3"]


def test_a_bare_until_date_includes_that_whole_day(call, clock):
    _three_days(call, clock)

    result = call("search", query="pnpm", until="2026-10-30", order="date_asc")

    assert _ids(result) == ["#1", "#2"]


def test_until_date_time_includes_that_instant_as_since_does(call, clock):
    _three_days(call, clock)

    at = call("search", query="pnpm", until="2026-10-30T19:46:45.563Z", order="date_asc")
    before = call("search", query="pnpm", until="2026-10-30T19:46:45.562Z", order="date_asc")

    assert _ids(at) == ["#1", "#2"]
    assert _ids(before) == ["#1"]


def test_since_and_until_accept_epoch_milliseconds(call, clock):
    _three_days(call, clock)
    day_two = REFERENCE_NOW + DAY_MS

    as_number = call("search", query="pnpm", since=day_two, until=day_two + 1)
    as_text = call("search", query="pnpm", since=str(day_two), until=str(day_two + 1))

    assert _ids(as_number) == ["#2"]
    assert _ids(as_text) == ["#2"]


def test_unreadable_date_is_an_error(call):
    result = call("search", query="pnpm", since="last tuesday")

    assert result.is_error
    assert result.text == "since must be an ISO 8601 date, date-time or epoch milliseconds."


def test_older_than_days_keeps_only_older_results(call, clock):
    _three_days(call, clock)

    assert _ids(call("search", query="pnpm", older_than_days=1.5)) == ["#1"]
    assert _ids(call("search", query="pnpm", older_than_days=0.5, order="date_asc")) == [
        "#1",
        "#2",
    ]


def test_with_until_and_older_than_days_the_earlier_bound_wins(call, clock):
    _three_days(call, clock)

    until_earlier = call("search", query="pnpm", until="2026-10-29", older_than_days=0.5)
    days_earlier = call("search", query="pnpm", until="2026-10-31", older_than_days=1.5)

    assert _ids(until_earlier) == ["#1"]
    assert _ids(days_earlier) == ["#1"]


def test_order_by_date_desc_and_date_asc(call, clock):
    _three_days(call, clock)

    assert _ids(call("search", query="pnpm", order="date_desc")) == ["#3", "#2", "#1"]
    assert _ids(call("search", query="pnpm", order="date_asc")) == ["#1", "#2", "#3"]


def test_relevance_order_puts_the_best_match_first(call, clock):
    save(call, "A long note about many things; somewhere it says vite once, among other words")
    clock.advance(60_000)
    save(call, "Notes on the build")
    clock.advance(60_000)
    save(call, "Vite config: vite dev server and vite preview", title="Vite")

    assert _ids(call("search", query="vite")) == ["#3", "#1"]


def test_unknown_order_is_an_error(call):
    result = call("search", query="pnpm", order="random")

    assert result.is_error
    assert result.text == "order must be one of: relevance, date_desc, date_asc."


def test_file_finds_memories_by_exact_path(call):
    save(call, "checkout rounding bug", files=["src/app/checkout.py"])
    save(call, "cart totals", files=["src/app/cart.py"])
    save(call, "old checkout", files=["legacy/src/app/checkout.py"])

    exact = body_lines(call("search", file="src/app/checkout.py"))
    partial = call("search", file="checkout.py")

    assert exact == ["#1 2026-10-29 [note] checkout rounding bug  (shop, cli)"]
    assert partial.text == (
        'No matches. No memory in project "shop" names a file that is "checkout.py".'
    )


def test_file_suffix_matches_paths_that_end_with_the_text(call):
    save(call, "checkout rounding bug", files=["src/app/checkout.py"])
    save(call, "cart totals", files=["src/app/cart.py"])
    save(call, "old checkout", files=["legacy/src/app/checkout.py"])

    lines = body_lines(call("search", file="app/checkout.py", file_suffix=True))

    assert lines == [
        "#3 2026-10-29 [note] old checkout  (shop, cli)",
        "#1 2026-10-29 [note] checkout rounding bug  (shop, cli)",
    ]


def test_file_mode_ignores_query_and_the_other_filters(call):
    save(call, "checkout rounding bug", type="bugfix", files=["src/app/checkout.py"])

    lines = body_lines(
        call("search", file="src/app/checkout.py", query="nothing alike", type="decision")
    )

    assert lines == ["#1 2026-10-29 [bugfix] checkout rounding bug  (shop, cli)"]


def test_file_mode_does_not_read_the_dates_it_ignores(call):
    save(call, "checkout rounding bug", files=["src/app/checkout.py"])

    result = call(
        "search", file="src/app/checkout.py", since="last week", until="soon", older_than_days=1
    )

    assert not result.is_error
    assert body_lines(result) == ["#1 2026-10-29 [note] checkout rounding bug  (shop, cli)"]
    assert call("search", query="checkout", since="last week").is_error  # a query reads them


def test_file_mode_applies_project_and_limit(call):
    for number in range(3):
        save(call, f"checkout change {number}", files=["src/checkout.py"])
    save(call, "billing checkout", project="billing", files=["src/checkout.py"])

    assert len(body_lines(call("search", file="src/checkout.py", limit=2))) == 2
    assert body_lines(call("search", file="src/checkout.py", project="billing")) == [
        "#4 2026-10-29 [note] billing checkout  (billing, cli)"
    ]


# (query, whether it holds a word of the stored memory "Use pnpm, not npm, in the shop repo")
HOSTILE_QUERIES = [
    ('"', False),
    ('"pnpm', True),
    ("pnpm*", True),
    ("*", False),
    ("NEAR(pnpm npm)", True),
    ("NEAR(", False),
    ("-pnpm", True),
    ("-", False),
    ("title:pnpm", True),
    (":", False),
    ("(pnpm", True),
    ("pnpm))", True),
    ("pnpm AND", True),
    ("OR pnpm", True),
    ("AND OR", False),
    ("NOT", True),  # an operator word is searched as the word: "not npm"
    ("^pnpm + {npm}", True),
    ("pnpm' OR 1=1 --", True),
]


@pytest.mark.parametrize(("query", "has_word"), HOSTILE_QUERIES)
def test_fts_syntax_in_the_query_never_raises(call, query, has_word):
    save(call, PNPM)

    result = call("search", query=query)

    assert not result.is_error
    if has_word:
        assert body_lines(result) == [
            "#1 2026-10-29 [note] Use pnpm, not npm, in the shop repo  (shop, cli)"
        ]
    else:
        assert result.text.startswith("No matches. ")


def test_a_project_whose_every_memory_is_dismissed_says_so_not_that_it_is_empty(call):
    for text in ("pnpm note one", "pnpm note two"):
        save(call, text)
    for memory_id in (1, 2):
        call("dismiss_memory", id=memory_id, type="memory", reason="obsolete")

    shop = call("search", query="omega")
    everywhere = call("search", query="omega", project="*")

    assert shop.text == 'No matches. Every memory in project "shop" is dismissed.'
    assert everywhere.text == "No matches. Every memory is dismissed."


def test_query_with_only_punctuation_explains_why_nothing_matches(call):
    save(call, PNPM)

    result = call("search", query='"*():-')

    assert result.text == 'No matches. The query "\\"*():-" has no words to search for.'


def test_a_quoted_query_is_echoed_as_typed_with_json_style_escapes(call):
    save(call, PNPM)

    result = call("search", query='say "zyxwv" at C:\\tmp\\x1b now\x1b')

    assert result.text == (
        'No matches. Nothing in project "shop" matches'
        ' "say \\"zyxwv\\" at C:\\\\tmp\\\\x1b now\\x1b".'
    )


def test_a_long_query_is_cut_between_escapes_never_inside_one(call):
    save(call, PNPM)

    result = call("search", query="zyxwv " * 33 + 'z"yxwv')  # the quote escaped: 199 to 201

    quoted = '"' + ("zyxwv " * 33) + 'z…"'
    assert result.text == f'No matches. Nothing in project "shop" matches {quoted}.'


def test_a_query_of_megabytes_is_read_to_its_start_and_quoted_short(call):
    save(call, PNPM)
    tail = " pnpm"  # past what a query is read to: it does not count

    result = call("search", query="zyxwv " * 2_000_000 + tail)

    quoted = '"' + ("zyxwv " * 40)[:200] + '…"'
    assert result.text == f'No matches. Nothing in project "shop" matches {quoted}.'


def test_limit_defaults_to_20(call):
    for number in range(1, 26):
        save(call, f"pnpm note {number}")

    assert len(body_lines(call("search", query="pnpm"))) == 20


def test_ties_are_broken_by_pinned_first_then_recency(call, clock):
    save(call, "pnpm cache note a", pinned=True)
    clock.advance(DAY_MS)
    save(call, "pnpm cache note b")
    clock.advance(DAY_MS)
    save(call, "pnpm cache note c")

    assert _ids(call("search", query="pnpm cache")) == ["#1", "#3", "#2"]


def test_file_mode_neither_reads_nor_checks_the_arguments_that_do_not_apply(call):
    save(call, "checkout change", files=["src/checkout.py"])
    ignored = {
        "query": ["not", "text"],
        "type": "bogus",
        "kind": "k" * 300,
        "offset": -1,
        "since": 12,
        "older_than_days": -3,
        "order": "sideways",
    }

    result = call("search", file="src/checkout.py", **ignored)

    assert body_lines(result) == ["#1 2026-10-29 [note] checkout change  (shop, cli)"]
    assert call("search", file="src/checkout.py", limit=0).text == "limit must be from 1 to 100."
    assert call("search", query="checkout", type="bogus").is_error  # a query's filter


def test_file_mode_ignores_offset_as_the_reference_says(call):
    save(call, "checkout change", files=["src/checkout.py"])

    lines = body_lines(call("search", file="src/checkout.py", offset=5))

    assert lines == ["#1 2026-10-29 [note] checkout change  (shop, cli)"]


def _found(result) -> list[int]:
    return [int(line.split()[0][1:]) for line in body_lines(result) if line.startswith("#")]


def test_a_ticket_id_does_not_find_a_longer_ticket_through_its_joined_form(call):
    # ABC-1234 joined is abc1234, seven hex-like characters: it was looked up as a short hash.
    exact = save(call, "ABC-1234 fixed the invoice rounding")
    save(call, "ABC-12345 moved the login page")

    assert _found(call("search", query="ABC-1234")) == [exact]
    assert _found(call("search", query="abc_1234")) == [exact]


def test_a_short_hash_in_a_word_or_a_path_still_finds_the_full_hash(call):
    full = save(call, "Reverted commit 3f9a8c1d2e4b5a6978cd0e1f2a3b4c5d6e7f8091 on staging")

    assert _found(call("search", query="3f9a8c1")) == [full]
    assert _found(call("search", query="revert-3f9a8c1")) == [full]
