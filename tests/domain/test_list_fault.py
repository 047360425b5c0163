"""A list's title and key are checked by one function (``worklists.list_fault``) for sync and
for import, each wording the fault its own way: the same records are refused by both, for the
same field."""

from __future__ import annotations

from typing import Any

import pytest

from aletheia_mem.domain.import_check import checked_record
from aletheia_mem.domain.memories import dedupe_key
from aletheia_mem.domain.worklists import list_fault
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.sync.validate import validate_record
from tests.domain.test_import_check import NOW, memory_data

UID = "01a2425ff6ef7382bb09249d805783e6"
_OTHER_NAME = "must be list: and the name its title holds"
_TOKEN = "ghp_" + "a1B2" * 9
# (title, key) -> (field, problem); None: a list as work_state_write makes it
CASES: list[tuple[str, str | None, tuple[str, str] | None]] = [
    ("todo list", "list:todo", None),
    ("", "list:todo", ("title", "must not be blank")),
    (" \t", None, ("title", "must not be blank")),
    ("todo list", None, ("dedupe_key", "must start with list:")),
    ("todo list", dedupe_key("Deploy", "blue"), ("dedupe_key", "must start with list:")),
    # a key and a title made of two names: a second list of the title's name
    ("todo list", "list:../../x", ("dedupe_key", _OTHER_NAME)),
    ("todo list", "list:todo ", ("dedupe_key", _OTHER_NAME)),
    ("todo", "list:todo list", ("dedupe_key", _OTHER_NAME)),
    (f"deploy {_TOKEN} list", f"list:deploy {_TOKEN}", None),  # each redacted alike
]


def _list(title: str, key: str | None) -> dict[str, Any]:
    return {"kind": "work_state", "title": title, "text": '["a"]', "dedupe_key": key}


def _sync_record(title: str, key: str | None) -> dict[str, Any]:
    data = {k: v for k, v in memory_data(**_list(title, key)).items() if k not in ("id", "uid")}
    data.update(narrative=None, pinned=False, dismissed_at=None, dismiss_reason=None)
    return {"kind": "memory", "key": UID, "v": [NOW, "a" * 32], "data": data}


@pytest.mark.parametrize(("title", "key", "fault"), CASES)
def test_sync_and_import_refuse_the_same_lists_each_in_its_words(
    title: str, key: str | None, fault: tuple[str, str] | None
) -> None:
    assert list_fault(title, key) == fault
    if fault is None:
        validate_record(_sync_record(title, key), 0, NOW)
        checked_record("memory", memory_data(**_list(title, key)), 2, now=NOW)
        return
    field, problem = fault
    with pytest.raises(InvalidInputError) as synced:
        validate_record(_sync_record(title, key), 0, NOW)
    assert synced.value.message == f"record 0 (memory {UID}): {field} of a list {problem}."
    with pytest.raises(InvalidInputError) as imported:
        checked_record("memory", memory_data(**_list(title, key)), 2, now=NOW)
    assert imported.value.message == f'Line 2: memory field "{field}" of a list {problem}.'
