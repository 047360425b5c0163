"""Shared fixtures: a real store (SQLite, then PostgreSQL: tests/stores.py), a settable clock, a
tool caller."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, ToolResult, call_tool
from tests.stores import open_target, parametrize_store_kind, store_target

pytest_plugins = ["tests.pg"]  # pg_database, pg_url, pg_store_url: a real PostgreSQL

# The reference's examples ran at this instant.
REFERENCE_NOW = int(datetime(2026, 10, 29, 19, 46, 45, 563_000, tzinfo=UTC).timestamp() * 1000)


@dataclass
class FakeClock:
    """A clock that stands still until a test moves it."""

    now: int = REFERENCE_NOW

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_store_kind(metafunc)  # store_kind: "sqlite", "postgresql"


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    """The kind of store a test runs on (parametrised by ``pytest_generate_tests``)."""
    return str(request.param)


@pytest.fixture
def store(request: pytest.FixtureRequest, store_kind: str, tmp_path: Path) -> Iterator[HubStore]:
    """An empty store: a SQLite file, or a PostgreSQL schema (one test, once per kind)."""
    opened = open_target(store_target(request, store_kind, tmp_path))
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def app(store: HubStore, clock: FakeClock) -> AppContext:
    return AppContext(store=store, clock=clock, default_project="shop", caller="cli")


ToolCaller = Callable[..., ToolResult]


@pytest.fixture
def call(app: AppContext) -> ToolCaller:
    """Call a tool in process the way the MCP server does: ``call("search", query="x")``."""

    def run(name: str, _app: AppContext | None = None, **arguments: Any) -> ToolResult:
        return call_tool(_app or app, TOOLS_BY_NAME[name], arguments)

    return run


@pytest.fixture
def as_caller(app: AppContext) -> Callable[..., AppContext]:
    """The same store seen by another caller, project or token."""

    def make(**changes: Any) -> AppContext:
        return replace(app, **changes)

    return make
