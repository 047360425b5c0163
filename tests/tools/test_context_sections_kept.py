"""session_start_context over its 6000 characters keeps every section (DESIGN §8: Pinned,
Recent, Requests, Facts, Rules): each one's first item goes in before any other's later lines,
then the rules, pinned memories, facts, requests and recent memories, in that order, as far as
they fit. The oldest recent memories are cut first; a block within the budget is as before."""

from __future__ import annotations

import re

from aletheia_mem.storage.entries import NewMemory
from tests.conftest import REFERENCE_NOW
from tests.tools.helpers import body_lines

ECONOMICS = re.compile(
    r"Context economics: (\d+) items? listed; ~\d+ tokens for this block \(estimate, chars/4\);"
    r" (.+)\."
)
SECTIONS = ["## Pinned", "## Recent", "## Requests", "## Facts", "## Rules"]
# Longer than any recent memory's line, so that no room the cut leaves would take it anyway.
ASKED = "fix the flaky checkout test " + "and its retries " * 10


def _economics(result):
    match = ECONOMICS.fullmatch(body_lines(result)[-1])
    assert match, result.text
    return int(match.group(1)), match.group(2)


def _section(lines, heading):
    """The item lines under ``heading`` (day headings skipped), up to the next section."""
    start = lines.index(heading) + 1
    end = next((i for i, line in enumerate(lines[start:], start) if line.startswith("## ")), -1)
    return [line for line in lines[start:end] if line.startswith("- ")]


def _long_recent_memories(call, clock, count):
    for number in range(1, count + 1):
        clock.advance(60_000)
        title = f"Recent memory {number:03d} " + "about the checkout flow and its edge cases " * 4
        call("save_memory", text=f"details {number}", title=title)


def test_the_newest_request_stays_when_older_recent_memories_fill_the_block(call, app, clock):
    _long_recent_memories(call, clock, 50)
    episode = app.store.start_episode("shop", "claude-code", clock())
    app.store.add_request(episode, ASKED, clock())

    result = call("session_start_context", limit=100)

    lines = body_lines(result)
    assert [line for line in lines if line.startswith("## ")] == ["## Recent", "## Requests"]
    assert _section(lines, "## Requests") == [f"- 2026-10-29 20:36 (claude-code) {ASKED.strip()}"]
    recent = _section(lines, "## Recent")
    numbers = [int(line.split()[6]) for line in recent]
    assert numbers == list(range(50, 50 - len(numbers), -1))  # the newest, the oldest cut
    assert len("\n".join(lines[:-1])) <= 6000
    listed, outcome = _economics(result)
    assert listed == len(recent) + 1
    assert (
        outcome == f"{50 - len(recent)} items cut to stay near 6000 characters; search finds them"
    )


def test_every_section_keeps_its_first_item_when_recent_memories_fill_the_block(call, app, clock):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", type="decision", pinned=True)
    call("add_rule", then="Run the tests before you commit", when="you are about to commit")
    call("save_memory", text="Databases", facts=[{"subject": "shop", "predicate": "db",
                                                  "object": "PG 16"}])  # fmt: skip
    _long_recent_memories(call, clock, 100)
    episode = app.store.start_episode("shop", "claude-code", clock())
    app.store.add_request(episode, ASKED, clock())

    result = call("session_start_context", limit=100)

    lines = body_lines(result)
    assert [line for line in lines if line.startswith("## ")] == SECTIONS
    assert _section(lines, "## Pinned") == ["- #1 19:46 [D] Use pnpm, not npm, in the shop repo"]
    assert len(_section(lines, "## Requests")) == 1
    assert len(_section(lines, "## Facts")) == 1
    assert _section(lines, "## Rules") == [
        "- When you are about to commit: Run the tests before you commit"
    ]
    recent = len(_section(lines, "## Recent"))
    assert 0 < recent < 100
    assert _economics(result) == (
        recent + 4,
        f"{100 - recent} items cut to stay near 6000 characters; search finds them",
    )


def test_a_pinned_section_past_the_budget_leaves_the_other_sections_their_first_item(
    call, app, clock
):
    for number in range(400):
        new = NewMemory("shop", "note", "note", f"pinned {number} " + "p" * 60, "x", "cli",
                        REFERENCE_NOW, f"pinned-{number}", pinned=True)  # fmt: skip
        app.store.add_memory(new)
    call("add_rule", then="Run the tests before you commit")
    call("save_memory", text="Databases", facts=[{"subject": "shop", "predicate": "db",
                                                  "object": "PG 16"}])  # fmt: skip
    call("save_memory", text="Staging deploys need the VPN", type="gotcha")
    episode = app.store.start_episode("shop", "claude-code", clock())
    app.store.add_request(episode, "fix the flaky checkout test", clock())

    result = call("session_start_context")

    lines = body_lines(result)
    assert [line for line in lines if line.startswith("## ")] == SECTIONS
    assert _section(lines, "## Recent") == ["- #402 19:46 [G] Staging deploys need the VPN"]
    assert len(_section(lines, "## Requests")) == len(_section(lines, "## Facts")) == 1
    assert _section(lines, "## Rules") == ["- Always: Run the tests before you commit"]
    pinned = len(_section(lines, "## Pinned"))
    assert 0 < pinned < 100
    assert len("\n".join(lines[:-1])) <= 6000
    assert _economics(result) == (
        pinned + 4,
        f"{400 - pinned + 1} items cut to stay near 6000 characters; search finds them",
    )


def test_a_block_within_the_budget_is_listed_whole_in_the_order_of_its_sections(call, app, clock):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", type="decision", pinned=True)
    call("save_memory", text="Databases", facts=[{"subject": "shop", "predicate": "db",
                                                  "object": "PG 16"}])  # fmt: skip
    clock.advance(86_400_000)
    call("save_memory", text="Staging deploys need the VPN", type="gotcha")
    call("add_rule", then="Run the tests before you commit", when="you are about to commit")
    episode = app.store.start_episode("shop", "claude-code", clock())
    app.store.add_request(episode, "fix the flaky checkout test", clock())

    result = call("session_start_context")

    assert body_lines(result) == [
        "# Memory for shop",
        "## Pinned",
        "- #1 19:46 [D] Use pnpm, not npm, in the shop repo",
        "## Recent",
        "### 2026-10-30",
        "- #3 19:46 [G] Staging deploys need the VPN",
        "### 2026-10-29",
        "- #2 19:46 [N] Databases",
        "## Requests",
        "- 2026-10-30 19:46 (claude-code) fix the flaky checkout test",
        "## Facts",
        "- fact #1 shop · db = PG 16  (shop, since 2026-10-29)",
        "## Rules",
        "- When you are about to commit: Run the tests before you commit",
        "Context economics: 6 items listed; ~174 tokens for this block (estimate, chars/4);"
        " nothing cut.",
    ]
