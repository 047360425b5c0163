"""Stored text in a tool's output cannot drive a terminal or reorder a line: its control and bidi
control characters (ESC, BEL, a lone CR, C1, U+202E and the other overrides and isolates) show
as escapes in every line and body, while text's own format characters (ZWJ in emoji, ZWNJ in
Persian words) are kept."""

from __future__ import annotations

import json
import re

from tests.tools.helpers import body_lines, unwrap

EVIL = "evil \x1b[2J\x1b[31mRED\x07 \u202eoverride \u2066iso\u2069 \x9b31m"
SHOWN = "evil \\x1b[2J\\x1b[31mRED\\x07 \\u202eoverride \\u2066iso\\u2069 \\x9b31m"
# Text whose format characters are its own: a family emoji (ZWJ) and a Persian word (ZWNJ).
KEPT = "\U0001f468\u200d\U0001f469\u200d\U0001f467 \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
DANGEROUS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _clean(text: str) -> None:
    assert not DANGEROUS.search(text), repr(text)


def test_search_timeline_and_get_observations_show_a_titles_controls_as_escapes(call):
    call(
        "save_memory",
        text=f"ctrl body {EVIL}\nline two\r\nline three\rover",
        title=f"{EVIL} {KEPT}",
        facts=[EVIL, {"subject": f"s {EVIL}", "predicate": "p", "object": f"o {EVIL}"}],
        files=["src/\u202eyp.evil.txt"],
    )
    call("dismiss_memory", id=1, reason=f"why {EVIL}")
    call("restore_memory", id=1)

    search = body_lines(call("search", query="evil"))
    timeline = body_lines(call("timeline", anchor=1))
    observed = unwrap(call("get_observations", ids=[1]))
    facts = body_lines(call("fact_history", subject=f"s {EVIL}"))

    assert search[-1] == f"#1 2026-10-29 [note] {SHOWN} {KEPT}  (shop, cli)"
    assert search[0] == f"fact #1 s {SHOWN} · p = o {SHOWN}  (shop, since 2026-10-29)"
    assert timeline == [f"→ #1 2026-10-29T19:46 [note] {SHOWN} {KEPT}"]
    assert facts == [
        f'Current facts about "s {SHOWN}":',
        f"- fact #1 s {SHOWN} · p = o {SHOWN}  (shop, since 2026-10-29)",
    ]
    assert observed.split("\n") == [
        f"#1 [note] {SHOWN} {KEPT}",
        "shop · 2026-10-29T19:46:45.563Z · source: cli",
        f"ctrl body {SHOWN}",
        "line two\r",  # a Windows line end is kept: it moves nothing
        "line three\\rover",
        "Facts:",
        f"- {SHOWN}",
        f"- s {SHOWN} p o {SHOWN}",
        "Files:",
        "- src/\\u202eyp.evil.txt",
    ]
    for text in (*search, *timeline, observed, *facts):
        _clean(text.replace("\r\n", "\n"))


def test_list_rules_and_session_context_show_a_rules_controls_as_escapes(call):
    call("add_rule", then=f"ctrl {EVIL} rule {KEPT}", when=f"you {EVIL}")
    call("save_memory", text="body", title=f"ctrl {EVIL}")

    rules = body_lines(call("list_rules"))
    context = unwrap(call("session_start_context"))

    assert rules[0].startswith(f"- When you {SHOWN}: ctrl {SHOWN} rule {KEPT}  [everywhere]  (id ")
    assert f"- #1 19:46 [N] ctrl {SHOWN}" in context.split("\n")
    assert f"- When you {SHOWN}: ctrl {SHOWN} rule {KEPT}" in context.split("\n")
    for text in (*rules, context):
        _clean(text)


def test_work_state_read_shows_the_items_controls_as_json_escapes(call):
    items = [f"a {EVIL}", {f"k\x85 {KEPT}": f"v {EVIL}"}]
    call("work_state_write", list="todo", items=items)

    read = unwrap(call("work_state_read", list="todo"))

    _clean(read)
    assert KEPT in read
    assert json.loads(read) == items
