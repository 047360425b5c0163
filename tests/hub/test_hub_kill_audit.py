"""A hub process killed with SIGKILL in the middle of a burst of saves leaves no saved memory
without its audit row, on either store: the row commits in the save's own transaction.

Seen before the fix with three processes on one SQLite file: 204 memories, 203 save_memory rows
(a save committed, then the process died before its row's separate commit). When the kill
lands in that gap is chance, so this test can pass on a broken hub; the deterministic check is
``test_a_save_and_its_audit_row_commit_together_so_a_kill_never_splits_them``.
"""

from __future__ import annotations

import http.client
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.hub.helpers import running_hub, stateless_post
from tests.stores import rows_at

pytestmark = pytest.mark.e2e
WRITERS = 8
WAIT_SECONDS = 5.0


def test_a_killed_process_leaves_no_save_without_its_audit_row(hub_db: Path | str) -> None:
    acknowledged: list[str] = []
    lock = threading.Lock()
    with (
        running_hub(hub_db, "--rate-limit", "0") as victim,
        running_hub(hub_db, "--rate-limit", "0"),
    ):
        token = victim.token("sync", ("shop",), "burst")

        def write(worker: int) -> None:
            for n in range(10_000):
                arguments = {
                    "text": f"kill note {worker}x{n}",
                    "project": "shop",
                    "facts": [{"subject": "ledger", "predicate": "codec", "object": f"z{n}"}],
                }
                try:
                    status, body = stateless_post(
                        victim, token, "tools/call", name="save_memory", arguments=arguments
                    )
                except (OSError, http.client.HTTPException, ValueError):
                    return  # the process is gone, or died mid-reply
                if status != 200 or "result" not in body or body["result"]["isError"]:
                    return
                with lock:
                    acknowledged.append(arguments["text"])

        writers = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
        for writer in writers:
            writer.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while len(acknowledged) < 60 and time.monotonic() < deadline:
            time.sleep(0.01)
        victim.process.send_signal(signal.SIGKILL)
        for writer in writers:
            writer.join(timeout=WAIT_SECONDS)
    [(saved,)] = rows_at(hub_db, "SELECT count(*) FROM memories")
    [(audited,)] = rows_at(
        hub_db, "SELECT count(*) FROM audit WHERE tool = 'save_memory' AND result = 'ok'"
    )
    assert len(acknowledged) >= 60
    assert saved >= len(acknowledged)  # nothing acknowledged was lost
    assert audited == saved  # and each save has its one row, the unacknowledged ones too
