"""session_start_context: the sections, their limits, the 6000 character cut, the economics."""

from __future__ import annotations

import re

import pytest

from aletheia_mem.domain.captured import Captured, save_captured
from aletheia_mem.domain.kinds import OBSERVATION_KIND
from tests.tools.helpers import DAY_MS, body_lines, rule_id_of, unwrap

ECONOMICS = re.compile(
    r"Context economics: (\d+) items? listed; ~(\d+) tokens for this block"
    r" \(estimate, chars/4\); (.+)\."
)


def _near_a_quarter_of(tokens, text):
    """The estimate is chars/4 of the whole block, give or take a few percent."""
    return abs(tokens - len(text) / 4) <= len(text) / 4 * 0.03


def _economics(result):
    match = ECONOMICS.fullmatch(body_lines(result)[-1])
    assert match, result.text
    return int(match.group(1)), int(match.group(2)), match.group(3)


def test_context_reads_as_in_the_reference(call, as_caller):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", type="decision", pinned=True)
    call("save_memory", text="Staging deploys need the VPN", type="gotcha")
    call(
        "add_rule",
        _app=as_caller(caller="you"),
        then="Run the tests before you commit",
        when="you are about to commit",
    )

    result = call("session_start_context", limit=3)

    assert body_lines(result)[:-1] == [
        "# Memory for shop",
        "## Pinned",
        "- #1 19:46 [D] Use pnpm, not npm, in the shop repo",
        "## Recent",
        "### 2026-10-29",
        "- #2 19:46 [G] Staging deploys need the VPN",
        "## Rules",
        "- When you are about to commit: Run the tests before you commit",
    ]
    assert _economics(result)[0] == 3
    assert _economics(result)[2] == "nothing cut"


def test_token_estimate_is_the_block_length_over_four(call):
    call("save_memory", text="Staging deploys need the VPN", type="gotcha")

    result = call("session_start_context")

    _, tokens, _ = _economics(result)
    assert _near_a_quarter_of(tokens, result.text)


def test_a_project_with_only_lists_names_them_instead_of_nothing_saved(call):
    call("work_state_write", list="todo", items=["a", "b"])
    call("work_state_write", list='re"lease', items=["tag"])
    call("work_state_write", list="other", items=["x"], project="billing")

    result = call("session_start_context")

    assert body_lines(result)[:-1] == [
        "# Memory for shop",
        "No memories to list for this project yet; its work-state lists:"
        ' "re\\"lease", "todo" (work_state_read reads one).',
    ]


def test_lists_are_named_when_the_block_lists_rules_but_no_memory(call):
    call("work_state_write", list="todo", items=["a"])
    call("add_rule", then="Run the tests before you commit")

    lines = body_lines(call("session_start_context"))

    assert lines[-3:-1] == [
        "- Always: Run the tests before you commit",
        'No memories to list for this project yet; its work-state lists: "todo"'
        " (work_state_read reads one).",
    ]


def test_list_names_stay_within_the_6000_characters(call):
    for number in range(12):
        call("add_rule", then=f"Rule {number}: " + "keep the tests green " * 33)
    for number in range(10):
        call("work_state_write", list=f"list {number} " + "x" * 60, items=["a"])

    markdown = unwrap(call("session_start_context")).split("\nContext economics:")[0]

    assert len(markdown) <= 6000


def test_lists_are_not_named_once_the_block_lists_a_memory(call):
    call("work_state_write", list="todo", items=["a"])
    call("save_memory", text="Use pnpm")

    assert "todo" not in call("session_start_context").text


def test_empty_project_says_nothing_is_saved_yet(call):
    result = call("session_start_context")

    assert body_lines(result)[:-1] == [
        "# Memory for shop",
        "Nothing saved for this project yet. Use save_memory to keep what matters.",
    ]
    assert _economics(result)[0] == 0


def test_a_project_whose_memories_are_all_dismissed_says_so_as_search_does(call):
    fact = {"subject": "db", "predicate": "engine", "object": "postgres"}
    call("save_memory", text="db engine", facts=[fact])
    call("dismiss_memory", id=1)
    call("dismiss_memory", id=1, type="fact")

    result = call("session_start_context")

    said = 'Every memory in project "shop" is dismissed.'
    assert said in call("search", query="db").text
    assert body_lines(result)[:-1] == ["# Memory for shop", said]


def _observe(app, clock, path):
    captured = Captured("change", f"Edited {path}", f"Edited {path}", (path,))
    return save_captured(app.store, captured, OBSERVATION_KIND, "shop", "claude-code", clock())


def test_observations_fill_recent_when_it_lists_nothing_else(call, app, clock):
    """A session that has not ended (no summary yet) left only its observations: Recent lists
    them, newest first, as the recent memories they are."""
    for path in ("src/app.py", "src/db.py", "src/ui.py"):
        _observe(app, clock, path)
        clock.advance(60_000)

    result = call("session_start_context", limit=2)

    assert body_lines(result)[:-1] == [
        "# Memory for shop",
        "## Recent",
        "### 2026-10-29",
        "- #3 19:48 [C] Edited src/ui.py",
        "- #2 19:47 [C] Edited src/db.py",
    ]
    assert _economics(result)[0] == 2
    assert [m["id"] for m in result.structured["recent"]] == [3, 2]


def test_observations_stay_out_of_recent_beside_other_memories(call, app, clock):
    _observe(app, clock, "src/app.py")
    clock.advance(60_000)
    call("save_memory", text="Session: fix the login", type="change")

    lines = body_lines(call("session_start_context"))

    assert lines[1:-1] == ["## Recent", "### 2026-10-29", "- #2 19:47 [C] Session: fix the login"]


def test_recent_memories_are_grouped_by_day_newest_first(call, clock):
    call("save_memory", text="first day note", type="discovery")
    clock.advance(DAY_MS + 3_600_000)
    call("save_memory", text="second day fix", type="bugfix")
    clock.advance(60_000)
    call("save_memory", text="second day feature", type="feature")

    lines = body_lines(call("session_start_context"))

    assert lines[1:8] == [
        "## Recent",
        "### 2026-10-30",
        "- #3 20:47 [F] second day feature",
        "- #2 20:46 [B] second day fix",
        "### 2026-10-29",
        "- #1 19:46 [I] first day note",
        "Context economics: 3 items listed; ~" + lines[7].split("~")[1],
    ]


@pytest.mark.parametrize(
    ("memory_type", "mark"),
    [
        ("decision", "D"),
        ("gotcha", "G"),
        ("bugfix", "B"),
        ("feature", "F"),
        ("refactor", "R"),
        ("change", "C"),
        ("discovery", "I"),
        ("note", "N"),
    ],
)
def test_each_type_has_its_one_letter_mark(call, memory_type, mark):
    call("save_memory", text="a memory", type=memory_type)

    assert f"- #1 19:46 [{mark}] a memory" in body_lines(call("session_start_context"))


def test_limit_caps_the_recent_unpinned_memories(call, clock):
    call("save_memory", text="pinned one", pinned=True)
    for number in range(2, 8):
        clock.advance(60_000)
        call("save_memory", text=f"recent {number}")

    lines = body_lines(call("session_start_context", limit=2))

    assert [line for line in lines if line.startswith("- #")] == [
        "- #1 19:46 [N] pinned one",
        "- #7 19:52 [N] recent 7",
        "- #6 19:51 [N] recent 6",
    ]


def test_limit_defaults_to_20(call):
    for number in range(1, 23):
        call("save_memory", text=f"recent {number}")

    lines = body_lines(call("session_start_context"))

    assert len([line for line in lines if line.startswith("- #")]) == 20


@pytest.mark.parametrize("limit", [0, 101])
def test_limit_outside_1_to_100_is_an_error(call, limit):
    result = call("session_start_context", limit=limit)

    assert result.is_error
    assert result.text == "limit must be from 1 to 100."


def test_requests_of_recent_sessions_are_listed(call, app, clock):
    episode = app.store.start_episode("shop", "claude-code", clock())
    app.store.add_request(episode, "fix the flaky checkout test", clock())
    clock.advance(60_000)
    app.store.add_request(episode, "now  update\nthe changelog", clock())
    other = app.store.start_episode("billing", "codex", clock())
    app.store.add_request(other, "billing request", clock())

    lines = body_lines(call("session_start_context"))

    assert lines[1:4] == [
        "## Requests",
        "- 2026-10-29 19:47 (claude-code) now update the changelog",
        "- 2026-10-29 19:46 (claude-code) fix the flaky checkout test",
    ]


def test_a_long_request_is_cut_at_a_word_and_marked_and_structured_content_keeps_it_whole(
    call, app, clock
):
    episode = app.store.start_episode("shop", "claude-code", clock())
    asked = "please " + "refactor the checkout flow " * 12  # a space at 200, none past 331
    app.store.add_request(episode, asked, clock())

    result = call("session_start_context")

    line = body_lines(result)[2]
    shown = line.removeprefix("- 2026-10-29 19:46 (claude-code) ")
    assert shown.endswith("…") and not shown.endswith(" …")
    assert len(shown) <= 201
    assert asked.startswith(shown.removesuffix("…") + " ")
    assert result.structured["requests"][0]["text"] == asked


def test_a_request_of_200_characters_is_listed_whole(call, app, clock):
    episode = app.store.start_episode("shop", "claude-code", clock())
    asked = ("word " * 40).strip() + "s"  # 200 characters
    app.store.add_request(episode, asked, clock())

    result = call("session_start_context")

    assert body_lines(result)[2] == f"- 2026-10-29 19:46 (claude-code) {asked}"
    assert result.structured["requests"][0]["text"] == asked


def test_up_to_10_active_facts_are_listed_newest_first(call, clock):
    for number in range(1, 13):
        clock.advance(60_000)
        call(
            "save_memory",
            text=f"service {number} facts",
            facts=[
                {"subject": f"service-{number}", "predicate": "port", "object": str(8000 + number)}
            ],
        )

    lines = body_lines(call("session_start_context", limit=1))

    start = lines.index("## Facts")
    facts = [line for line in lines[start + 1 :] if line.startswith("- fact #")]
    assert len(facts) == 10
    assert facts[0] == "- fact #12 service-12 · port = 8012  (shop, since 2026-10-29)"
    assert facts[-1] == "- fact #3 service-3 · port = 8003  (shop, since 2026-10-29)"


def test_superseded_facts_are_not_listed(call, clock):
    fact = {"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 15"}
    call("save_memory", text="payments on 15", facts=[fact])
    clock.advance(DAY_MS)
    call("save_memory", text="payments on 16", facts=[{**fact, "object": "PostgreSQL 16"}])

    lines = body_lines(call("session_start_context"))

    assert [line for line in lines if line.startswith("- fact")] == [
        "- fact #2 payments-api · database = PostgreSQL 16  (shop, since 2026-10-30)"
    ]


def test_a_value_written_for_a_later_time_is_listed_from_that_time_on(call, clock):
    fact = {"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 15"}
    call("save_memory", text="payments on 15", facts=[fact])
    upgrade = {**fact, "object": "PostgreSQL 16", "valid_from": "2026-11-05"}
    call("save_memory", text="payments move to 16 next week", facts=[upgrade])

    def listed() -> list[str]:
        lines = body_lines(call("session_start_context"))
        return [line for line in lines if line.startswith("- fact")]

    # Until then the value it will replace stays the active one, though no longer open-ended.
    assert listed() == [
        "- fact #1 payments-api · database = PostgreSQL 15"
        "  (shop, since 2026-10-29; #2 from 2026-11-05)"
    ]
    clock.advance(7 * DAY_MS)
    assert listed() == [
        "- fact #2 payments-api · database = PostgreSQL 16  (shop, since 2026-11-05)"
    ]


def test_rules_section_lists_the_enabled_rules_that_apply_to_the_project(call, app, clock):
    rules = [
        {"then": "Run the tests before you commit", "when": "you are about to commit"},
        {"then": "Use pnpm", "scopeTier": "project"},
        {"then": "Use poetry", "scopeTier": "project", "scopeName": "billing"},
        {
            "then": "Keep answers short",
            "when": "you review",
            "scopeTier": "situation",
            "scopeName": "review",
        },
    ]
    for rule in rules:  # listed in the order they were added
        call("add_rule", **rule)
        clock.advance(60_000)
    disabled = rule_id_of(call("add_rule", then="Old rule"))
    app.store.set_rule_enabled(disabled, False, clock())

    lines = body_lines(call("session_start_context"))

    assert lines[1:5] == [
        "## Rules",
        "- When you are about to commit: Run the tests before you commit",
        "- Always: Use pnpm",
        "- When you review: Keep answers short  [situation: review]",
    ]


def test_a_situation_rule_shows_its_situation_as_list_rules_does(call):
    # Without it the line read "Always: ..." for a rule meant only for deploys.
    call("add_rule", then="Run the smoke tests", scopeTier="situation", scopeName="deploys")
    call("add_rule", then="Use pnpm")

    context = call("session_start_context")
    lines = body_lines(context)
    listed = call("list_rules").text

    assert context.structured["rules"][0]["text"] == lines[2][2:]  # the rule as listed
    assert lines[1:4] == [
        "## Rules",
        "- Always: Run the smoke tests  [situation: deploys]",
        "- Always: Use pnpm",
    ]
    assert "- Always: Run the smoke tests  [situation: deploys]  (id " in listed


def test_project_argument_chooses_the_project(call):
    call("save_memory", text="billing note", project="billing")

    lines = body_lines(call("session_start_context", project=" Billing"))

    assert lines[:4] == [
        "# Memory for billing",
        "## Recent",
        "### 2026-10-29",
        "- #1 19:46 [N] billing note",
    ]


def test_default_project_is_the_working_directory_project(call, as_caller):
    call("save_memory", text="billing note", project="billing")

    assert body_lines(call("session_start_context"))[0] == "# Memory for shop"
    billing = as_caller(default_project="billing")
    assert body_lines(call("session_start_context", _app=billing))[0] == "# Memory for billing"


def test_project_limited_caller_defaults_to_its_first_allowed_project(call, as_caller):
    limited = as_caller(allowed_projects=("billing", "shop"))

    assert body_lines(call("session_start_context", _app=limited))[0] == "# Memory for billing"


def test_context_is_cut_near_6000_characters_without_cutting_a_line(call, clock):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", type="decision", pinned=True)
    call("add_rule", then="Run the tests before you commit", when="you are about to commit")
    titles = {}
    for number in range(2, 102):
        clock.advance(60_000)
        title = f"Recent memory {number:03d} " + "about the checkout flow and its edge cases " * 4
        titles[number] = " ".join(title.split())
        call("save_memory", text=f"details {number}", title=title)

    result = call("session_start_context", limit=100)

    lines = body_lines(result)
    markdown = "\n".join(lines[:-1])
    assert 5000 < len(markdown) <= 6000
    memory_lines = [line for line in lines if line.startswith("- #")]
    assert memory_lines[0] == "- #1 19:46 [D] Use pnpm, not npm, in the shop repo"
    for line in memory_lines[1:]:
        number = int(line.split()[1][1:])
        assert line.endswith(f"[N] {titles[number]}")
    assert "- When you are about to commit: Run the tests before you commit" in lines
    listed, tokens, outcome = _economics(result)
    recent_listed = len(memory_lines) - 1
    assert listed == 1 + recent_listed + 1
    assert outcome == (
        f"{100 - recent_listed} items cut to stay near 6000 characters; search finds them"
    )
    assert _near_a_quarter_of(tokens, result.text)


def test_context_output_is_one_recall_block(call):
    call("save_memory", text="Staging deploys need the VPN")

    assert unwrap(call("session_start_context")).startswith("# Memory for shop\n")


def test_star_is_not_a_project_for_context(call):
    result = call("session_start_context", project="*")

    assert result.is_error
    assert result.text == 'project "*" is only for search and timeline.'


def test_a_pinned_observation_or_list_is_listed_under_pinned(call, app, clock):
    """Hook observations and lists stay out of Recent, but one the owner pinned is listed."""
    captured = Captured("change", "Edited src/app.py", "Edited src/app.py", ("src/app.py",))
    observed = save_captured(app.store, captured, OBSERVATION_KIND, "shop", "claude-code", clock())
    call("work_state_write", list="release", items=["tag v2"])
    call("save_memory", text="Staging deploys need the VPN", type="gotcha")
    app.store.set_pinned(observed.id, True, clock())

    lines = body_lines(call("session_start_context"))

    assert lines[:5] == [
        "# Memory for shop",
        "## Pinned",
        "- #1 19:46 [C] Edited src/app.py",
        "## Recent",
        "### 2026-10-29",
    ]
    assert lines[5:-1] == ["- #3 19:46 [G] Staging deploys need the VPN"]
    assert _economics(result := call("session_start_context"))[0] == 2, result.text


def test_a_request_with_a_long_word_is_cut_at_200_characters_not_before_the_word(call, app, clock):
    episode = app.store.start_episode("shop", "claude-code", clock())
    app.store.add_request(episode, "open " + "/very/long/path" * 20, clock())

    line = body_lines(call("session_start_context"))[2]

    assert (
        line == "- 2026-10-29 19:46 (claude-code) " + ("open " + "/very/long/path" * 20)[:200] + "…"
    )


def test_an_everywhere_and_a_project_rule_with_the_same_words_are_one_line(call):
    # Before, "- When you are about to commit: Run the tests before you commit" came twice.
    commit = {"then": "Run the tests before you commit", "when": "you are about to commit"}
    first = rule_id_of(call("add_rule", **commit))
    call("add_rule", **commit, scopeTier="project")
    call("add_rule", **commit, scopeTier="situation", scopeName="release")

    context = call("session_start_context")
    lines = body_lines(context)

    assert lines[1:5] == [
        "## Rules",
        "- When you are about to commit: Run the tests before you commit",
        "- When you are about to commit: Run the tests before you commit  [situation: release]",
        lines[-1],
    ]
    assert _economics(context)[0] == 2
    assert _economics(context)[2] == "nothing cut"
    assert context.structured["rules"][0]["id"] == first
    assert len(context.structured["rules"]) == 2
    assert len(body_lines(call("list_rules"))) == 3  # one line per rule there


def test_a_rule_line_shown_once_is_counted_once_by_the_cut(call):
    # Ten long rules, each also given as a project rule: ten lines, of which the ones past
    # 6000 characters are cut; a copy is neither listed nor counted as cut.
    for number in range(10):
        then = f"Rule {number} " + "x" * 680
        call("add_rule", then=then)
        call("add_rule", then=then, scopeTier="project")

    context = call("session_start_context")
    listed, _, outcome = _economics(context)
    rule_lines = [line for line in body_lines(context) if line.startswith("- Always: Rule ")]

    assert len(rule_lines) == len(set(rule_lines)) == listed
    assert 0 < listed < 10
    cut = 10 - listed
    assert outcome == (
        f"{cut} item{'s' if cut != 1 else ''} cut to stay near 6000 characters"
        f" ({cut} rule{'s' if cut != 1 else ''}); list_rules lists the rules"
    )
