"""The semantic extra stays out of the start path, and search works without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aletheia_mem.config import semantic_enabled
from aletheia_mem.errors import InvalidInputError

HEAVY = ("numpy", "torch", "onnxruntime", "aletheia_mem.search.semantic.minilm")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(tmp_path), ALETHEIA_CWD=str(tmp_path / "shop"), **extra)
    (tmp_path / "shop").mkdir(exist_ok=True)
    return env


def test_opening_the_stdio_server_imports_no_numpy_or_model(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "import aletheia_mem.server.stdio\n"
        "from aletheia_mem.config import load_settings\n"
        "from aletheia_mem.server.wiring import open_app\n"
        "app = open_app(load_settings())\n"
        f"print([m for m in sys.modules if m.startswith({HEAVY!r})])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "[]"


def _requests() -> bytes:
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "save_memory", "arguments": {"text": "pnpm, not npm"}},
        },
    ]
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def test_stdio_start_save_and_list_never_import_the_model(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "aletheia_mem.server.stdio"],
        input=_requests(),
        env=_env(tmp_path, ALETHEIA_SEMANTIC="on"),
        capture_output=True,
        timeout=60,
        check=False,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert [r["id"] for r in replies] == [1, 2, 3]
    imported = [
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.decode().splitlines()
        if line.startswith("import time:")
    ]
    assert "aletheia_mem.server.stdio" in imported or "aletheia_mem.server.mcp" in imported
    assert not [name for name in imported if name.startswith(HEAVY)]


def test_without_the_extra_search_is_lexical_and_imports_nothing_of_it(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "sys.modules['numpy'] = None  # as if the extra were not installed\n"
        "from aletheia_mem.config import load_settings\n"
        "from aletheia_mem.server.wiring import open_app\n"
        "from aletheia_mem.tools.registry import TOOLS_BY_NAME, call_tool\n"
        "app = open_app(load_settings())\n"
        "assert app.semantic is None\n"
        "call_tool(app, TOOLS_BY_NAME['save_memory'], {'text': 'Use pnpm, not npm'})\n"
        "print(call_tool(app, TOOLS_BY_NAME['search'], {'query': 'pnpm'}).text)\n"
        f"print([m for m in sys.modules if m.startswith({HEAVY!r}) and sys.modules[m]])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "Use pnpm, not npm" in out.stdout
    assert out.stdout.strip().endswith("[]")


@pytest.mark.parametrize("setting", [None, "off", "no"])
def test_semantic_is_off_unless_asked_for(tmp_path: Path, setting: str | None) -> None:
    script = (
        "from aletheia_mem.config import load_settings\n"
        "from aletheia_mem.server.wiring import open_app\n"
        "print(open_app(load_settings()).semantic)\n"
    )
    extra = {} if setting is None else {"ALETHEIA_SEMANTIC": setting}
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "None"


@pytest.mark.parametrize(
    ("setting", "enabled"),
    [("on", True), ("TRUE", True), (" 1 ", True), ("yes", True), ("off", False), ("0", False)],
)
def test_semantic_reads_on_and_off_in_their_usual_spellings(setting: str, enabled: bool) -> None:
    assert semantic_enabled({"ALETHEIA_SEMANTIC": setting}) is enabled


@pytest.mark.parametrize("setting", ["maybe", "onn", "2"])
def test_a_semantic_value_that_is_neither_on_nor_off_is_an_error_not_silently_off(
    tmp_path: Path, setting: str
) -> None:
    with pytest.raises(InvalidInputError, match="ALETHEIA_SEMANTIC must be on or off"):
        semantic_enabled({"ALETHEIA_SEMANTIC": setting})
    result = subprocess.run(
        [sys.executable, "-m", "aletheia_mem", "save", "a note"],
        env=_env(tmp_path, ALETHEIA_SEMANTIC=setting),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("Error: ALETHEIA_SEMANTIC must be on or off")
