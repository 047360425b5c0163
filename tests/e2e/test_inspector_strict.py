"""The MCP Inspector CLI (2.12.0) lints the 13 tool schemas in strict mode: 0 errors, 0 warnings,
in the handshake era and in 2026-07-28, over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.node_tools import MODULES, NODE22, require_node_modules

pytestmark = pytest.mark.e2e

SERVER = Path(sys.executable).parent / "aletheia-mcp"
INSPECTOR = MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build"


def inspect(tmp_path: Path, *options: str) -> tuple[int, Any, str]:
    require_node_modules()
    home = tmp_path / "home"  # the Inspector writes ~/.mcp-inspector
    home.mkdir(exist_ok=True)
    done = subprocess.run(
        [
            str(NODE22),
            str(INSPECTOR / "index.js"),
            "--cli",
            "-e",
            f"ALETHEIA_DATA_DIR={tmp_path / 'data'}",
            *options,
            "--format",
            "json",
            str(SERVER),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"HOME": str(home), "PATH": str(NODE22.parent)},
    )
    output = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, output, done.stderr


@pytest.mark.parametrize("era", ["legacy", "auto", "modern"])
def test_strict_mode_finds_no_schema_problem_in_any_era(tmp_path: Path, era: str) -> None:
    code, out, err = inspect(tmp_path, "--strict", "--protocol-era", era, "--method", "tools/list")
    assert code == 0, err
    assert "Warning" not in err and "Error" not in err, err
    assert "schemaFindings" not in out
    tools = out["result"]["tools"]
    assert len(tools) == 13
    assert sum("outputSchema" in tool for tool in tools) == 7


def test_a_modern_call_returns_structured_content_the_inspector_accepts(tmp_path: Path) -> None:
    code, out, err = inspect(
        tmp_path, "--protocol-era", "modern", "--method", "tools/call", "--tool-name", "list_rules"
    )
    assert code == 0, err
    assert out["result"]["structuredContent"]["rules"] == []
