"""A ``config.json`` that cannot be read as text (not UTF-8, a folder, a FIFO) is told as an
invalid one is, by every entry point: one line and the same exit code, never a traceback nor a
wait on a FIFO."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from aletheia_mem.config import load_excluded_projects
from tests.e2e.http_server import running_server
from tests.safety.entry_points import mcp_lines, run_command

LATIN_1 = b'{"exclude_projects": ["caf\xe9"]}'


def _invalid_json(config: Path) -> None:
    config.write_bytes(b"{nope")


def _not_utf8(config: Path) -> None:
    config.write_bytes(LATIN_1)


def _folder(config: Path) -> None:
    config.mkdir()


def _fifo(config: Path) -> None:
    os.mkfifo(config)  # a read would wait for a writer that never comes


BAD_CONFIGS: dict[str, Callable[[Path], None]] = {
    "invalid-json": _invalid_json,
    "not-utf8": _not_utf8,
    "a-folder": _folder,
    "a-fifo": _fifo,
}
SAID = {
    "invalid-json": "is not valid JSON: ",
    "not-utf8": f"is not UTF-8 text (byte 0xe9 at position {LATIN_1.index(0xE9)}); save it as"
    " UTF-8.",
    "a-folder": "is not a regular file (a folder or a special file); move it away.",
    "a-fifo": "is not a regular file (a folder or a special file); move it away.",
}


def _home_with(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    home = tmp_path / "home"
    config = home / ".aletheia" / "config.json"
    config.parent.mkdir(parents=True)
    BAD_CONFIGS[kind](config)
    return home, config


@pytest.mark.parametrize("kind", list(BAD_CONFIGS))
def test_the_cli_names_a_config_it_cannot_read_in_one_line_and_exits_1(
    tmp_path: Path, kind: str
) -> None:
    home, config = _home_with(tmp_path, kind)
    for args in (("search", "pnpm"), ("save", "a note")):
        result = run_command(home, "aletheia", *args)
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith(f"Error: {config}") and result.stderr.count("\n") == 1
        assert SAID[kind] in result.stderr
    assert not (config.parent / "aletheia.db").exists()  # nothing was saved


@pytest.mark.parametrize("kind", list(BAD_CONFIGS))
def test_aletheia_mcp_names_a_config_it_cannot_read_in_one_line_and_exits_1(
    tmp_path: Path, kind: str
) -> None:
    home, config = _home_with(tmp_path, kind)
    result = run_command(home, "aletheia-mcp", stdin=mcp_lines())
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"aletheia-mcp: {config}") and result.stderr.count("\n") == 1
    assert SAID[kind] in result.stderr


@pytest.mark.parametrize("kind", ["invalid-json", "not-utf8", "a-fifo"])
def test_aletheia_server_reads_no_config_and_serves_whatever_it_holds(
    tmp_path: Path, kind: str
) -> None:
    # exclude_projects is for what hooks and a local stdio server capture; the HTTP server
    # captures nothing of the kind, so it starts alike with an invalid or unreadable file.
    config = tmp_path / "data" / "config.json"
    config.parent.mkdir(parents=True)
    BAD_CONFIGS[kind](config)
    with running_server(tmp_path, args=("--port", "0", "--workers", "1")) as server:
        assert server.api("GET", "/api/memories?query=pnpm&project=*").status == 200
        assert server.stop() == 0
    assert not any("Traceback" in line for line in server.lines)


def test_doctor_names_a_config_that_is_not_utf8_as_the_commands_do(tmp_path: Path) -> None:
    home, config = _home_with(tmp_path, "not-utf8")
    result = run_command(home, "aletheia", "doctor", "--json")
    assert result.returncode in (1, 7)  # 7: no store yet, which doctor tells first
    assert json.loads(result.stdout)["config"] == {
        "path": str(config),
        "ok": False,
        "detail": f"{config} {SAID['not-utf8']}",
    }


def test_a_config_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    # Editors on Windows may save UTF-8 with a BOM; the hosts' config files are read so too.
    home = tmp_path / "home"
    config = home / ".aletheia" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_bytes(b"\xef\xbb\xbf" + json.dumps({"exclude_projects": ["billing"]}).encode())
    env = {"HOME": str(home), "ALETHEIA_DATA_DIR": str(config.parent)}
    assert load_excluded_projects(env) == ("billing",)
