"""Episodes, their requests and dismissals on PostgreSQL."""

from __future__ import annotations

import pytest

from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.entries import AuditEntry, NewFact, NewMemory, SessionRequest
from aletheia_mem.storage.postgres.store import PostgresStore

DISMISS = AuditEntry(at=9_000, actor="alice", tool="dismiss", project=None, result="ok")


def test_started_episodes_get_new_ids(pg_store: PostgresStore) -> None:
    first = pg_store.start_episode("web", "claude", at=1_000)
    second = pg_store.start_episode("web", "claude", at=1_000)
    assert second > first > 0


def test_open_episode_is_one_episode_per_uid_and_reopens_an_ended_one(
    pg_store: PostgresStore,
) -> None:
    episode = pg_store.open_episode("uid-1", "web", "claude", at=1_000)
    assert pg_store.open_episode("uid-1", "web", "claude", at=2_000) == episode
    assert pg_store.episode_id_by_uid("uid-1") == episode
    assert pg_store.episode_id_by_uid("uid-2") is None
    pg_store.add_request(episode, "fix the login", at=2_500)
    assert pg_store.end_episode(episode, at=3_000, summary=None) is True
    assert pg_store.open_episode("uid-1", "web", "claude", at=4_000) == episode
    pg_store.add_request(episode, "and the logout", at=4_500)
    assert [r.text for r in pg_store.recent_requests("web", 5)] == [
        "and the logout",
        "fix the login",
    ]


def test_end_episode_keeps_the_summary_it_had_when_given_none(pg_store: PostgresStore) -> None:
    episode = pg_store.start_episode("web", "claude", at=1_000)
    assert pg_store.end_episode(episode, at=2_000, summary="done") is True
    assert pg_store.end_episode(episode, at=3_000, summary=None) is True
    assert pg_store.end_episode(episode + 100, at=3_000, summary=None) is False


def test_recent_requests_are_the_projects_newest_first(pg_store: PostgresStore) -> None:
    web = pg_store.start_episode("web", "claude", at=1_000)
    api = pg_store.start_episode("api", "codex", at=1_000)
    pg_store.add_request(web, "one", at=1_100)
    pg_store.add_request(api, "elsewhere", at=1_150)
    pg_store.add_request(web, "two", at=1_200)
    pg_store.add_request(web, "two again", at=1_200)
    assert pg_store.recent_requests("web", 2) == [
        SessionRequest(web, 1_200, "two again", "claude"),
        SessionRequest(web, 1_200, "two", "claude"),
    ]
    assert pg_store.recent_requests("api", 5) == [SessionRequest(api, 1_150, "elsewhere", "codex")]


def test_recent_requests_reach_past_the_newest_of_other_projects(pg_store: PostgresStore) -> None:
    web = pg_store.start_episode("web", "claude", at=1_000)
    busy = pg_store.start_episode("busy", "claude", at=1_000)
    pg_store.add_request(web, "old one", at=1_000)
    for n in range(210):
        pg_store.add_request(busy, f"busy {n}", at=2_000 + n)
    assert [r.text for r in pg_store.recent_requests("web", 3)] == ["old one"]


def test_a_dismissed_episodes_requests_are_hidden_until_restored(
    pg_store: PostgresStore,
) -> None:
    episode = pg_store.start_episode("web", "claude", at=1_000)
    pg_store.add_request(episode, "secret", at=1_100)
    assert pg_store.set_dismissed("episodes", episode, 9_000, "noise", DISMISS) == "web"
    assert pg_store.recent_requests("web", 5) == []
    assert pg_store.list_audit(1) == [AuditEntry(9_000, "alice", "dismiss", "web", "ok")]
    assert pg_store.set_dismissed("episodes", episode, None, None, DISMISS) == "web"
    assert [r.text for r in pg_store.recent_requests("web", 5)] == ["secret"]


def test_dismissing_a_missing_item_changes_nothing_and_audits_nothing(
    pg_store: PostgresStore,
) -> None:
    assert pg_store.set_dismissed("episodes", 42, 9_000, None, DISMISS) is None
    assert pg_store.list_audit(5) == []


def test_project_of_names_the_items_project(pg_store: PostgresStore) -> None:
    episode = pg_store.start_episode("web", "claude", at=1_000)
    assert pg_store.project_of("episodes", episode) == "web"
    assert pg_store.project_of("episodes", episode + 1) is None
    assert pg_store.project_of("memories", 1) is None
    assert pg_store.project_of("facts", 1) is None


def test_a_table_outside_the_dismissable_ones_is_refused(pg_store: PostgresStore) -> None:
    with pytest.raises(ValueError, match="not a table"):
        pg_store.project_of("hub_tokens", 1)  # type: ignore[arg-type]


def test_a_request_of_a_missing_episode_is_an_input_error(pg_store: PostgresStore) -> None:
    with pytest.raises(InvalidInputError, match="The store refused a value"):
        pg_store.add_request(404, "lost", at=1)


def test_an_id_past_bigint_finds_nothing(pg_store: PostgresStore) -> None:
    assert pg_store.end_episode(2**70, at=1, summary=None) is False
    assert pg_store.project_of("episodes", 2**70) is None


def test_a_time_past_bigint_is_an_input_error_not_a_traceback(pg_store: PostgresStore) -> None:
    with pytest.raises(InvalidInputError, match="out of range"):
        pg_store.start_episode("web", "claude", at=2**70)


def test_a_nul_character_is_an_input_error(pg_store: PostgresStore) -> None:
    with pytest.raises(InvalidInputError, match="NUL"):
        pg_store.start_episode("we\x00b", "claude", at=1)


def _memory_with_a_fact(store: PostgresStore) -> tuple[int, int]:
    memory, _ = store.add_memory(
        NewMemory("web", "decision", "memory", "Tabs", "We use tabs", "claude", 1_000, None),
        [NewFact("web", "indent", "is", "tabs", 1_000, 1_000, "claude")],
    )
    [fact] = store.facts_about("indent", "web", None)
    return memory.id, fact.id


def test_a_dismissed_memory_is_hidden_and_restored_with_its_audit_rows(
    pg_store: PostgresStore,
) -> None:
    memory_id, _ = _memory_with_a_fact(pg_store)
    assert pg_store.set_dismissed("memories", memory_id, 9_000, "wrong", DISMISS) == "web"
    dismissed = pg_store.get_memory(memory_id)
    assert dismissed is not None and (dismissed.dismissed_at, dismissed.dismiss_reason) == (
        9_000,
        "wrong",
    )
    assert pg_store.dismissed_memory_ids([memory_id]) == {memory_id}
    assert pg_store.set_dismissed("memories", memory_id, None, None, DISMISS) == "web"
    assert pg_store.dismissed_memory_ids([memory_id]) == set()
    assert [entry.project for entry in pg_store.list_audit(5)] == ["web", "web"]


def test_a_dismissed_fact_leaves_its_memory_stale(pg_store: PostgresStore) -> None:
    memory_id, fact_id = _memory_with_a_fact(pg_store)
    assert pg_store.project_of("facts", fact_id) == "web"
    assert pg_store.set_dismissed("facts", fact_id, 9_000, None, DISMISS) == "web"
    assert pg_store.dismissed_fact_ids([fact_id]) == {fact_id}
    assert pg_store.superseded_fact_ids([fact_id], now=9_000) == set()
    assert pg_store.stale_memory_ids([memory_id], 9_000) == {memory_id}


def test_a_dismissal_whose_audit_row_fails_is_undone(pg_store: PostgresStore) -> None:
    memory_id, _ = _memory_with_a_fact(pg_store)
    bad_audit = AuditEntry(9_000, "al\x00ice", "dismiss", None, "ok")
    with pytest.raises(InvalidInputError):
        pg_store.set_dismissed("memories", memory_id, 9_000, None, bad_audit)
    assert pg_store.dismissed_memory_ids([memory_id]) == set()
    assert pg_store.list_audit(5) == []
