"""import_check: ids and sequences capped at 2^53 (what JSON keeps exactly), uids of the store's
shape only, and an audit row's names redacted like its detail."""

from __future__ import annotations

from typing import Any

import pytest

from aletheia_mem.domain.import_check import checked_record
from aletheia_mem.domain.worklists import list_key, list_title
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.id_cap import MAX_ID

NOW = 1_767_225_600_000  # 2026-01-01
SECRET = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"


def memory_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": 1, "uid": "01a2425ff6ef7382bb09249d805783e6", "project": "shop", "type": "note",
        "kind": "note", "title": "t", "text": "x", "facts": [], "files": [], "tool": "cli",
        "pinned": 0, "created_at": 1, "updated_at": 1,
    }  # fmt: skip
    data.update(changes)
    return data


def _episode(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": 1, "uid": "0" * 32, "project": "shop", "tool": "cli", "started_at": 1,
    }  # fmt: skip
    data.update(changes)
    return data


def test_ids_are_capped_at_two_to_the_53_the_largest_json_keeps_exactly() -> None:
    assert MAX_ID == 2**53
    assert checked_record("memory", memory_data(id=MAX_ID), 2, now=NOW)["id"] == MAX_ID
    for big in (MAX_ID + 1, 2**63 - 1):
        with pytest.raises(InvalidInputError) as raised:
            checked_record("memory", memory_data(id=big), 2, now=NOW)
        assert raised.value.message == (f'Line 2: memory field "id" must be from 1 to {MAX_ID}.')
    with pytest.raises(InvalidInputError, match='"superseded_by" must be from 1 to'):
        fact = {
            "id": 1, "uid": "1" * 32, "project": "shop", "subject": "s", "predicate": "p",
            "object": "o", "valid_from": 1, "recorded_at": 1, "superseded_by": 2**63 - 1,
            "source": "cli",
        }  # fmt: skip
        checked_record("fact", fact, 3, now=NOW)


@pytest.mark.parametrize(
    "uid",
    [
        "u1",
        "F" * 32,
        "f" * 31,
        "f" * 33,
        "f" * 31 + "g",
        SECRET,
        "password=hunter2Secret99" + "0" * 8,
    ],
)
def test_a_uid_not_shaped_as_a_store_makes_it_is_refused(uid: str) -> None:
    for kind, record in (("memory", memory_data(uid=uid)), ("episode", _episode(uid=uid))):
        with pytest.raises(InvalidInputError) as raised:
            checked_record(kind, record, 4, now=NOW)
        assert raised.value.message == (
            f'Line 4: {kind} field "uid" must be 32 lowercase hexadecimal digits.'
        )


def test_uids_a_store_makes_are_kept_exactly() -> None:
    for uid in ("01a2425ff6ef7382bb09249d805783e6", "f" * 32, "0123456789abcdef" * 2):
        assert checked_record("memory", memory_data(uid=uid), 1, now=NOW)["uid"] == uid
        assert checked_record("episode", _episode(uid=uid), 1, now=NOW)["uid"] == uid


def test_an_audit_rows_tool_and_result_are_redacted_like_its_detail() -> None:
    row = {
        "id": 1, "at": 1, "actor": "me", "tool": SECRET, "project": "shop",
        "result": "password=hunter2Secret99", "detail": "password=hunter2Secret99",
    }  # fmt: skip
    clean = checked_record("audit", row, 2, now=NOW)
    assert SECRET not in clean["tool"] and "[REDACTED]" in clean["tool"]
    assert clean["result"] == clean["detail"] == "password=[REDACTED]"
    kept = checked_record("audit", {**row, "tool": "save_memory", "result": "ok"}, 2, now=NOW)
    assert (kept["tool"], kept["result"]) == ("save_memory", "ok")


@pytest.mark.parametrize(
    "name", [SECRET, "db.example.com:5432:app:admin:S3cretPassw0rd", "deploy password=hunter2x9"]
)
def test_a_lists_title_and_key_are_those_work_state_write_makes_of_its_name(name: str) -> None:
    """Its name redacted alone, as the tool redacts it: a .pgpass line ends the name, not the
    title or the key, which redacted whole kept the password."""
    data = memory_data(
        kind="work_state", title=f"{name} list", text="[]", dedupe_key="list:" + name
    )
    checked = checked_record("memory", data, 2, now=NOW)
    assert (checked["title"], checked["dedupe_key"]) == (list_title(name), list_key(name))
    assert "[REDACTED]" in checked["dedupe_key"]
