"""The MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, on Node 22 from npm)
against an unauthenticated ``aletheia-server``: the scenarios a tools-only server can pass."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.http_server import RunningServer, running_server
from tests.e2e.node_tools import CONFORMANCE, NODE22, require_node_modules

pytestmark = pytest.mark.e2e

SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    require_node_modules()
    with running_server(tmp_path_factory.mktemp("conformance")) as running:
        yield running


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(server: RunningServer, scenario: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(NODE22), str(CONFORMANCE), "server", "--url", server.mcp_url, "--scenario", scenario],
        cwd=tmp_path,  # the suite writes results/ here
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0, output
    summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert summary is not None, output
    passed, total, failed = map(int, summary.groups())
    assert (passed, failed) == (total, 0) and total >= 1, output
