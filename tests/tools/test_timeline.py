"""timeline: the arrow on the anchor, neighbours in time order, defaults and limits."""

from __future__ import annotations

import pytest

from tests.tools.helpers import body_lines, saved_id

MINUTE_MS = 60_000


def save(call, text, **arguments):
    return saved_id(call("save_memory", text=text, **arguments))


def _numbers(call, clock, count, **arguments):
    """Memories "note 1".."note N", one minute apart."""
    for number in range(1, count + 1):
        save(call, f"note {number}", **arguments)
        clock.advance(MINUTE_MS)


def test_timeline_marks_the_anchor_with_an_arrow_as_in_the_reference(call):
    save(call, "Use pnpm, not npm, in the shop repo", type="decision")
    save(call, "Staging deploys need the VPN", type="gotcha")

    lines = body_lines(call("timeline", anchor=1, before=1, after=1))

    assert lines == [
        "→ #1 2026-10-29T19:46 [decision] Use pnpm, not npm, in the shop repo",
        "  #2 2026-10-29T19:46 [gotcha] Staging deploys need the VPN",
    ]


def test_neighbours_are_indented_and_in_time_order(call, clock):
    _numbers(call, clock, 3)

    lines = body_lines(call("timeline", anchor=2))

    assert lines == [
        "  #1 2026-10-29T19:46 [note] note 1",
        "→ #2 2026-10-29T19:47 [note] note 2",
        "  #3 2026-10-29T19:48 [note] note 3",
    ]


def test_before_and_after_default_to_five(call, clock):
    _numbers(call, clock, 13)

    lines = body_lines(call("timeline", anchor=7))

    assert [line[:5].strip() for line in lines] == [
        "#2",
        "#3",
        "#4",
        "#5",
        "#6",
        "→ #7",
        "#8",
        "#9",
        "#10",
        "#11",
        "#12",
    ]


def test_before_and_after_choose_the_rows_on_each_side(call, clock):
    _numbers(call, clock, 6)

    lines = body_lines(call("timeline", anchor=3, before=2, after=0))

    assert lines == [
        "  #1 2026-10-29T19:46 [note] note 1",
        "  #2 2026-10-29T19:47 [note] note 2",
        "→ #3 2026-10-29T19:48 [note] note 3",
    ]


@pytest.mark.parametrize("side", ["before", "after"])
def test_more_than_50_rows_on_a_side_is_an_error(call, side):
    save(call, "note 1")

    result = call("timeline", anchor=1, **{side: 51})

    assert result.is_error
    assert result.text == f"{side} must be from 0 to 50."


def test_50_rows_on_each_side_are_allowed(call, clock):
    _numbers(call, clock, 3)

    assert len(body_lines(call("timeline", anchor=2, before=50, after=50))) == 3


def test_query_finds_the_anchor_when_no_anchor_is_given(call, clock):
    save(call, "Use pnpm, not npm, in the shop repo", type="decision")
    clock.advance(MINUTE_MS)
    save(call, "Staging deploys need the VPN", type="gotcha")

    lines = body_lines(call("timeline", query="staging VPN", before=1, after=1))

    assert lines == [
        "  #1 2026-10-29T19:46 [decision] Use pnpm, not npm, in the shop repo",
        "→ #2 2026-10-29T19:47 [gotcha] Staging deploys need the VPN",
    ]


def test_anchor_takes_priority_over_query(call, clock):
    _numbers(call, clock, 2)

    lines = body_lines(call("timeline", anchor=1, query="note 2", after=0))

    assert lines == ["→ #1 2026-10-29T19:46 [note] note 1"]


@pytest.mark.parametrize(
    "arguments",
    [{}, {"query": ""}, {"query": "   "}, {"before": 3, "after": 0}, {"project": "shop"}],
)
def test_without_anchor_or_query_there_is_nothing_to_anchor_on_and_no_error(call, arguments):
    save(call, "note 1")

    result = call("timeline", **arguments)

    assert not result.is_error
    assert result.text == "Nothing to anchor on."


@pytest.mark.parametrize(
    "arguments",
    [
        {"anchor": 99},
        {"anchor": 99, "query": "note"},
        {"query": "kubernetes"},
        {"query": "()"},
        {"query": "qx7k2m9"},
        {"anchor": 1, "project": "billing"},
    ],
)
def test_an_anchor_that_finds_nothing_returns_nothing_to_anchor_on(call, arguments):
    save(call, "note 1")

    result = call("timeline", **arguments)

    assert not result.is_error
    assert result.text == "Nothing to anchor on."


def test_neighbours_come_from_the_anchor_project_only(call, clock):
    save(call, "shop note 1")
    clock.advance(MINUTE_MS)
    save(call, "billing note", project="billing")
    clock.advance(MINUTE_MS)
    save(call, "shop note 2")

    lines = body_lines(call("timeline", anchor=1))

    assert lines == [
        "→ #1 2026-10-29T19:46 [note] shop note 1",
        "  #3 2026-10-29T19:48 [note] shop note 2",
    ]


def test_every_project_gives_neighbours_from_every_project_the_caller_reads(call, clock, as_caller):
    save(call, "shop note 1")
    clock.advance(MINUTE_MS)
    save(call, "billing note", project="billing")
    clock.advance(MINUTE_MS)
    save(call, "hr note", project="hr")
    clock.advance(MINUTE_MS)
    save(call, "shop note 2")
    limited = as_caller(allowed_projects=("shop", "billing"))

    everywhere = body_lines(call("timeline", anchor=1, project="*"))
    as_limited = body_lines(call("timeline", _app=limited, anchor=1, project="*"))

    assert everywhere == [
        "→ #1 2026-10-29T19:46 [note] shop note 1",
        "  #2 2026-10-29T19:47 [note] billing note",
        "  #3 2026-10-29T19:48 [note] hr note",
        "  #4 2026-10-29T19:49 [note] shop note 2",
    ]
    assert as_limited == [everywhere[0], everywhere[1], everywhere[3]]


def test_project_limits_the_anchor_lookup(call, clock):
    save(call, "shop note about pnpm")
    save(call, "billing note about pnpm", project="billing")

    assert call("timeline", anchor=1, project="billing").text == "Nothing to anchor on."
    by_query = body_lines(call("timeline", query="pnpm", project="billing"))
    assert by_query == ["→ #2 2026-10-29T19:46 [note] billing note about pnpm"]


def test_a_project_limited_caller_cannot_anchor_on_other_projects(call, as_caller):
    save(call, "billing note", project="billing")
    limited = as_caller(allowed_projects=("shop",))

    assert call("timeline", _app=limited, anchor=1).text == "Nothing to anchor on."
