"""The stdio server's start path stays free of the CLI's dependencies and the tool handlers."""

from __future__ import annotations

import os
import subprocess
import sys


def modules_loaded_by_the_stdio_server(names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` a fresh Python has imported once it imported the stdio server."""
    probe = (
        "import sys, aletheia_mem.server.stdio; "
        f"print('\\n'.join(sorted(m for m in {names!r} if m in sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    return result.stdout.split()


def test_aletheia_mcp_does_not_import_click_or_tomlkit() -> None:
    assert modules_loaded_by_the_stdio_server(("click", "tomlkit", "aletheia_mem.cli.main")) == []


def test_aletheia_mcp_loads_tool_handlers_only_when_a_tool_is_called() -> None:
    handlers = (
        "aletheia_mem.tools.memory_tools",
        "aletheia_mem.tools.knowledge_tools",
        "aletheia_mem.tools.session_tools",
        "aletheia_mem.domain.recall",
    )
    assert modules_loaded_by_the_stdio_server(handlers) == []


def test_a_store_file_in_aletheia_hub_db_keeps_psycopg_off_the_start_path(tmp_path) -> None:
    probe = (
        "import sys; from aletheia_mem.config import load_settings; "
        "from aletheia_mem.server.wiring import close_app, open_app; "
        "close_app(open_app(load_settings())); "
        "print(sorted(m for m in sys.modules"
        " if m.startswith(('psycopg', 'aletheia_mem.storage.postgres'))))"
    )
    env = {**os.environ, "ALETHEIA_HUB_DB": str(tmp_path / "hub.db"), "ALETHEIA_CWD": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert result.stdout.strip() == "[]"
    assert (tmp_path / "hub.db").is_file()
