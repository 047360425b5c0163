"""Each tools/call through the hub's gate leaves one audit row with its outcome; a write call's
row is committed in the call's own write transaction (one commit, not two), on either store."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from aletheia_mem.hub.gate import make_gate
from aletheia_mem.hub.tokens import create_token
from aletheia_mem.hub.write_turns import write_turns
from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, ToolResult
from tests.conftest import FakeClock
from tests.stores import rows_at, target_of


def gate_call(app: AppContext, scope: str, tool: str, **arguments: Any) -> ToolResult:
    store: HubStore = app.store  # type: ignore[assignment]
    _, token = create_token(store, app.clock, scope=scope, projects=("shop",), name=None)
    gate = make_gate(app, token, write_turns(serial=True))
    return gate(TOOLS_BY_NAME[tool], arguments)


def audit_rows(store: HubStore) -> list[tuple[Any, ...]]:
    return rows_at(target_of(store), "SELECT tool, project, result FROM audit ORDER BY id")


def test_a_save_leaves_one_ok_row_committed_with_the_memory(
    app: AppContext, store: HubStore, store_kind: str
) -> None:
    result = gate_call(app, "sync", "save_memory", text="Decided: zstd for the ledger")
    assert not result.is_error, result.text
    assert audit_rows(store) == [("save_memory", "shop", "ok")]
    if store_kind == "postgresql":  # the same transaction wrote both rows
        [(memory_tx,)] = rows_at(target_of(store), "SELECT xmin::text FROM memories")
        [(audit_tx,)] = rows_at(target_of(store), "SELECT xmin::text FROM audit")
        assert memory_tx == audit_tx


def test_calls_that_commit_no_write_still_leave_their_row(
    app: AppContext, store: HubStore, clock: FakeClock
) -> None:
    assert gate_call(app, "read", "save_memory", text="a read token cannot").is_error
    assert gate_call(app, "sync", "save_memory", text="elsewhere", project="billing").is_error
    assert not gate_call(app, "sync", "search", query="zstd").is_error
    assert gate_call(app, "sync", "confirm_rule", id="no-such-rule").is_error
    assert audit_rows(store) == [
        ("save_memory", "shop", "refused"),
        ("save_memory", "billing", "refused"),
        ("search", "shop", "ok"),
        ("confirm_rule", None, "error"),
    ]


class _Died(BaseException):
    """The hub process ending at the point a test picks (a kill -9 between two commits)."""


def test_a_save_and_its_audit_row_commit_together_so_a_kill_never_splits_them(
    app: AppContext, store: HubStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen with hub processes on one SQLite file, one killed with SIGKILL mid-burst: 204
    # memories saved, 203 save_memory audit rows (the write committed, its row never did).
    _, token = create_token(store, app.clock, scope="sync", projects=("shop",), name=None)
    gate = make_gate(app, token, write_turns(serial=True))

    def die(entry: object) -> None:  # the process ends before a separate audit commit
        raise _Died

    monkeypatch.setattr(store, "add_audit", die)
    with contextlib.suppress(_Died):
        gate(TOOLS_BY_NAME["save_memory"], {"text": "Decided: zstd for the ledger"})
    [(saved,)] = rows_at(target_of(store), "SELECT count(*) FROM memories")
    assert saved == 1
    assert audit_rows(store) == [("save_memory", "shop", "ok")]
