"""What the SQLite store indexes when it writes a memory, and the ids it gives rows."""

from __future__ import annotations

import uuid

from aletheia_mem.storage.sqlite.rows import new_uid


def test_new_uids_are_distinct_random_version_4_uuids() -> None:
    uids = {new_uid() for _ in range(1000)}
    assert len(uids) == 1000
    for uid in uids:
        parsed = uuid.UUID(hex=uid)
        assert (parsed.hex, parsed.version, parsed.variant) == (uid, 4, uuid.RFC_4122)
