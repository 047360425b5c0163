"""Round 4b audit: what the README says of MCP on the wire, checked against the real servers.

README, "MCP protocol versions": what one stdio connection answers when it mixes the stateless
era (2026-07-28) with the handshake. The sentence must say what ``aletheia-mcp`` does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.test_stateless_stdio import META, stateless
from tests.e2e.test_stdio import running_server, server_env

pytestmark = pytest.mark.e2e
README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_text() -> str:
    return " ".join(README.read_text(encoding="utf-8").split())


def test_the_readme_tells_what_initialize_after_stateless_calls_gets_on_stdio(
    tmp_path: Path,
) -> None:
    said = re.search(r"`initialize` after stateless calls (?:is )?`(-\d+)`", _readme_text())
    assert said is not None, "the README no longer names the code"
    with running_server(server_env(tmp_path), tmp_path) as server:
        assert server.ask(stateless(1, "tools/list", META))["result"]["resultType"] == "complete"
        init = server.initialize()
        assert server.close() == 0
    assert int(said.group(1)) == init["error"]["code"]


def test_the_readme_tells_what_a_stateless_request_after_initialize_gets_on_stdio(
    tmp_path: Path,
) -> None:
    text = _readme_text()
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.initialize()
        served = server.ask(stateless(1, "tools/call", META, name="list_rules", arguments={}))
        assert server.close() == 0
    # Served as a call of the session: the envelope is ignored, no stateless result fields.
    assert "error" not in served and "resultType" not in served["result"]
    assert "stateless request after `initialize` is `-32600`" not in text
    assert "after `initialize` a request's `_meta` envelope is ignored" in text
