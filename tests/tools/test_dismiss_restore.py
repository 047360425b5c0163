"""dismiss_memory and restore_memory for the four item types, and their audit rows."""

from __future__ import annotations

import pytest

from aletheia_mem.domain import memories
from tests.tools.helpers import body_lines, db_rows, unwrap


def _dismissed(item_type, item_id):
    return (
        f"Dismissed {item_type} #{item_id}. It is hidden from search and context;"
        " restore_memory undoes this."
    )


def _already(item_type, item_id):
    return f"Nothing to dismiss: {item_type} #{item_id} is already dismissed."


def _context(call):
    return unwrap(call("session_start_context"))


def test_dismiss_and_restore_answer_as_in_the_reference(call):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", type="decision")
    call("save_memory", text="Staging deploys need the VPN", type="gotcha")

    dismissed = call("dismiss_memory", id=2, type="memory", reason="duplicate")
    restored = call("restore_memory", id=2, type="memory")

    assert not dismissed.is_error
    assert dismissed.text == _dismissed("memory", 2)
    assert not restored.is_error
    assert restored.text == "Restored memory #2."


def test_type_defaults_to_memory(call):
    call("save_memory", text="Staging deploys need the VPN")

    assert call("dismiss_memory", id=1).text == _dismissed("memory", 1)
    assert call("restore_memory", id=1).text == "Restored memory #1."


def test_dismissed_memory_is_hidden_from_search_timeline_and_context(call):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", pinned=True)
    call("save_memory", text="Staging deploys need the VPN with pnpm")

    call("dismiss_memory", id=2, reason="duplicate")

    assert [line.split()[0] for line in body_lines(call("search", query="pnpm"))] == ["#1"]
    assert call("timeline", anchor=2).text == "Nothing to anchor on."
    assert body_lines(call("timeline", anchor=1)) == [
        "→ #1 2026-10-29T19:46 [note] Use pnpm, not npm, in the shop repo"
    ]
    assert "Staging deploys" not in _context(call)


def test_restored_memory_is_back_in_search_timeline_and_context(call):
    call("save_memory", text="Use pnpm, not npm, in the shop repo")
    call("dismiss_memory", id=1)

    call("restore_memory", id=1)

    assert body_lines(call("search", query="pnpm"))[0].startswith("#1 ")
    assert body_lines(call("timeline", anchor=1))[0].startswith("→ #1 ")
    assert "- #1 19:46 [N] Use pnpm, not npm, in the shop repo" in _context(call)


def test_dismissed_pinned_memory_leaves_the_pinned_section(call):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", pinned=True)

    call("dismiss_memory", id=1)

    assert "## Pinned" not in _context(call)


def test_get_observations_still_shows_a_dismissed_memory_marked_as_such(call):
    call("save_memory", text="Staging deploys need the VPN")

    call("dismiss_memory", id=1, reason="no longer true")

    assert unwrap(call("get_observations", ids=[1])).split("\n")[2] == (
        "(dismissed 2026-10-29T19:46:45.563Z: no longer true)"
    )


def test_observation_type_dismisses_and_restores_a_hook_observation(call, app):
    observation = memories.MemoryInput(
        text="ran pnpm install", project="shop", tool="claude-code", kind="observation"
    )
    memories.save_memory(app.store, app.clock, observation)

    dismissed = call("dismiss_memory", id=1, type="observation")
    hidden = call("search", query="pnpm", kind="observation")
    restored = call("restore_memory", id=1, type="observation")

    assert dismissed.text == _dismissed("observation", 1)
    assert hidden.text.startswith("No matches. ")
    assert restored.text == "Restored observation #1."
    assert body_lines(call("search", query="pnpm", kind="observation"))[0].startswith("#1 ")


def _one_fact(call):
    call(
        "save_memory",
        text="Payments run on PostgreSQL 16",
        facts=[{"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 16"}],
    )


FACT_LINE = "fact #1 payments-api · database = PostgreSQL 16  (shop, since 2026-10-29)"


def test_dismissed_fact_is_hidden_from_search_context_and_fact_history(call):
    _one_fact(call)

    result = call("dismiss_memory", id=1, type="fact")

    assert result.text == _dismissed("fact", 1)
    assert FACT_LINE not in body_lines(call("search", query="postgresql"))
    assert "## Facts" not in _context(call)
    assert call("fact_history", subject="payments-api").text == (
        'No facts found for subject "payments-api".'
    )


def test_restored_fact_is_back(call):
    _one_fact(call)
    call("dismiss_memory", id=1, type="fact")

    result = call("restore_memory", id=1, type="fact")

    assert result.text == "Restored fact #1."
    assert body_lines(call("search", query="postgresql"))[0] == FACT_LINE
    assert f"## Facts\n- {FACT_LINE}" in _context(call)
    assert body_lines(call("fact_history", subject="payments-api"))[1] == f"- {FACT_LINE}"


def test_dismissing_a_fact_leaves_its_memory_alone(call):
    _one_fact(call)

    call("dismiss_memory", id=1, type="fact")

    assert body_lines(call("search", query="postgresql")) == [
        "#1 2026-10-29 [note] Payments run on PostgreSQL 16  (shop, cli)"
    ]


def test_dismissed_episode_drops_its_requests_from_context(call, app):
    episode = app.store.start_episode("shop", "claude-code", app.clock())
    app.store.add_request(episode, "fix the flaky checkout test", app.clock())
    request_line = "- 2026-10-29 19:46 (claude-code) fix the flaky checkout test"
    assert request_line in _context(call)

    dismissed = call("dismiss_memory", id=episode, type="episode")
    hidden = _context(call)
    restored = call("restore_memory", id=episode, type="episode")

    assert dismissed.text == _dismissed("episode", episode)
    assert "## Requests" not in hidden
    assert restored.text == f"Restored episode #{episode}."
    assert f"## Requests\n{request_line}" in _context(call)


@pytest.mark.parametrize(
    ("item_type", "message"),
    [
        ("memory", "No memory #99."),
        ("observation", "No observation #99."),
        ("fact", "No fact #99."),
        ("episode", "No episode #99."),
    ],
)
def test_unknown_item_is_an_error(call, item_type, message):
    dismissed = call("dismiss_memory", id=99, type=item_type)
    restored = call("restore_memory", id=99, type=item_type)

    assert dismissed.is_error
    assert dismissed.text == message
    assert restored.is_error
    assert restored.text == message


def test_restoring_an_item_that_is_not_dismissed_says_so(call, app):
    _one_fact(call)
    episode = app.store.start_episode("shop", "claude-code", app.clock())
    call("dismiss_memory", id=1)
    call("restore_memory", id=1)

    answers = [
        call("restore_memory", id=1),  # restored before
        call("restore_memory", id=1, type="observation"),
        call("restore_memory", id=1, type="fact"),  # never dismissed
        call("restore_memory", id=episode, type="episode"),
    ]

    assert [answer.is_error for answer in answers] == [False] * 4
    assert [answer.text for answer in answers] == [
        "Nothing to restore: memory #1 is not dismissed.",
        "Nothing to restore: observation #1 is not dismissed.",
        "Nothing to restore: fact #1 is not dismissed.",
        f"Nothing to restore: episode #{episode} is not dismissed.",
    ]
    assert "Payments run on PostgreSQL 16" in _context(call)


def test_unknown_item_type_is_an_error(call):
    result = call("dismiss_memory", id=1, type="rule")

    assert result.is_error
    assert result.text == "type must be one of: memory, observation, fact, episode."


def test_id_is_required(call):
    result = call("dismiss_memory", type="memory")

    assert result.is_error
    assert result.text == "id is required."


def test_dismiss_and_restore_write_audit_rows_with_the_reason_cut_to_300(call, app):
    call("save_memory", text="Staging deploys need the VPN")
    reason = "duplicate of #1 " + "x" * 400

    call("dismiss_memory", id=1, reason=reason)
    call("restore_memory", id=1)

    assert db_rows(app, "SELECT at, actor, tool, project, result, detail FROM audit") == [
        (app.clock(), "cli", "dismiss_memory", "shop", "ok", reason[:300]),
        (app.clock(), "cli", "restore_memory", "shop", "ok", None),
    ]
    assert db_rows(app, "SELECT dismiss_reason FROM memories") == [(None,)]
    call("dismiss_memory", id=1, reason=reason)
    assert db_rows(app, "SELECT dismiss_reason FROM memories") == [(reason[:300],)]
    call("dismiss_memory", id=1)  # again, no reason given: the item keeps its own
    assert db_rows(app, "SELECT detail FROM audit ORDER BY id")[-1] == (
        "nothing changed: it was already dismissed",
    )
    assert db_rows(app, "SELECT dismiss_reason FROM memories") == [(reason[:300],)]


def test_a_restore_or_dismissal_that_changes_nothing_is_audited_as_such(call, app):
    """The row of a call that changed nothing says so, and the tool answers as before."""
    call("save_memory", text="Staging deploys need the VPN")

    assert call("restore_memory", id=1).text == "Nothing to restore: memory #1 is not dismissed."
    call("dismiss_memory", id=1, reason="stale")
    assert call("dismiss_memory", id=1, reason="stale").text == _already("memory", 1)
    call("restore_memory", id=1)

    assert db_rows(app, "SELECT tool, result, detail FROM audit ORDER BY id") == [
        ("restore_memory", "ok", "nothing changed: it was not dismissed"),
        ("dismiss_memory", "ok", "stale"),
        ("dismiss_memory", "ok", "stale (nothing changed: it was already dismissed)"),
        ("restore_memory", "ok", None),
    ]


def test_dismiss_reason_is_redacted_before_storage(call, app):
    call("save_memory", text="Staging deploys need the VPN")

    call("dismiss_memory", id=1, reason="leaked DB_PASSWORD=hunter2hunter2 here")

    assert db_rows(app, "SELECT detail FROM audit") == [("leaked DB_PASSWORD=[REDACTED] here",)]
    assert db_rows(app, "SELECT dismiss_reason FROM memories") == [
        ("leaked DB_PASSWORD=[REDACTED] here",)
    ]


def test_a_project_limited_caller_cannot_dismiss_other_projects_items_or_learn_they_exist(
    call, app, as_caller
):
    call("save_memory", text="billing memory", project="billing")
    call("dismiss_memory", id=1)
    limited = as_caller(allowed_projects=("shop",))

    other = call("restore_memory", _app=limited, id=1)
    missing = call("restore_memory", _app=limited, id=7)
    dismissed = call("dismiss_memory", _app=limited, id=1, type="memory")

    assert other.is_error and missing.is_error and dismissed.is_error
    assert (other.text, missing.text) == ("No memory #1.", "No memory #7.")
    assert dismissed.text == "No memory #1."
    assert db_rows(app, "SELECT dismissed_at IS NOT NULL FROM memories") == [(1,)]
    assert db_rows(app, "SELECT count(*) FROM audit") == [(1,)]  # the owner's dismissal only


def _item_of(item_type, call, app):
    """One item of ``item_type``, id 1, and its table."""
    if item_type == "observation":
        observation = memories.MemoryInput(
            text="ran pnpm install", project="shop", tool="claude-code", kind="observation"
        )
        memories.save_memory(app.store, app.clock, observation)
        return 1, "memories"
    if item_type == "episode":
        return app.store.start_episode("shop", "claude-code", app.clock()), "episodes"
    _one_fact(call)
    return 1, {"memory": "memories", "fact": "facts"}[item_type]


@pytest.mark.parametrize("item_type", ["memory", "observation", "fact", "episode"])
def test_dismissing_again_changes_nothing_and_keeps_the_first_time_and_reason(
    call, app, clock, item_type
):
    """docs/cli.md: a dismissal of an item already dismissed changes nothing, and says so."""
    item_id, table = _item_of(item_type, call, app)
    call("dismiss_memory", id=item_id, type=item_type, reason="duplicate of #7")
    first = clock.now
    sync_stamp = f"SELECT changed_at FROM sync_log WHERE kind = '{item_type}'"
    stamped = db_rows(app, sync_stamp)
    dismissal = f"SELECT dismissed_at, dismiss_reason FROM {table}"

    clock.advance(60_000)
    again = call("dismiss_memory", id=item_id, type=item_type)
    clock.advance(60_000)
    third = call("dismiss_memory", id=item_id, type=item_type, reason="third")

    assert (again.is_error, again.text) == (False, _already(item_type, item_id))
    assert third.text == _already(item_type, item_id)
    assert db_rows(app, dismissal) == [(first, "duplicate of #7")]
    assert db_rows(app, sync_stamp) == stamped  # nothing changed, so nothing to sync
    assert db_rows(app, "SELECT detail FROM audit ORDER BY id")[-2:] == [
        ("nothing changed: it was already dismissed",),
        ("third (nothing changed: it was already dismissed)",),
    ]

    call("restore_memory", id=item_id, type=item_type)
    clock.advance(60_000)
    call("dismiss_memory", id=item_id, type=item_type)
    assert db_rows(app, dismissal) == [(clock.now, None)]  # a new dismissal after a restore
