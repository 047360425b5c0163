"""A damaged, empty, foreign or read-only store: one clear line and exit code 8 (broken) or 9
(read-only) from every entry point, never a traceback, and never silently reused."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories
from aletheia_mem.storage.sqlite import SqliteStore
from tests.e2e.http_server import running_server
from tests.safety.entry_points import mcp_lines, mcp_results, run_command

EXIT_BROKEN = 8
EXIT_READ_ONLY = 9


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of 40 notes, saved once through the domain as the tools do."""
    path = tmp_path_factory.mktemp("template") / "aletheia.db"
    store = SqliteStore(path)
    try:
        for number in range(40):
            text = f"note {number} about the pnpm build"
            item = memories.MemoryInput(text=text, project="home", tool="test")
            memories.save_memory(store, system_clock, item)
    finally:
        store.close()
    return path


def _store_in(home: Path, template: Path) -> Path:
    store = home / ".aletheia" / "aletheia.db"
    store.parent.mkdir(parents=True)
    shutil.copyfile(template, store)
    return store


def _empty(store: Path) -> None:
    store.write_bytes(b"")


def _garbage(store: Path) -> None:
    store.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 40)


def _cut_short(store: Path) -> None:
    with store.open("r+b") as handle:
        handle.truncate(store.stat().st_size // 3)


def _foreign(store: Path) -> None:
    store.unlink()
    conn = sqlite3.connect(store)
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.org')")
    conn.commit()
    conn.close()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "empty": _empty,
    "garbage": _garbage,
    "cut short": _cut_short,
    "foreign": _foreign,
}
EXPECTED = {
    "empty": "is an empty file (0 bytes)",
    "garbage": "is not a SQLite database",
    "cut short": "is cut short",
    "foreign": "is another program's SQLite database",
}


@pytest.fixture(params=list(DAMAGE))
def damaged(
    request: pytest.FixtureRequest, tmp_path: Path, template: Path
) -> tuple[Path, Path, str]:
    home = tmp_path / "home"
    store = _store_in(home, template)
    DAMAGE[request.param](store)
    return home, store, request.param


def _one_line_error(result: subprocess.CompletedProcess[str], store: Path, kind: str) -> None:
    assert result.returncode == EXIT_BROKEN, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert str(store) in result.stderr
    assert EXPECTED[kind] in result.stderr


def test_the_cli_names_a_broken_store_in_one_line_and_exits_8(
    damaged: tuple[Path, Path, str],
) -> None:
    home, store, kind = damaged
    before = store.read_bytes()
    for args in (("search", "pnpm"), ("save", "a new note")):
        _one_line_error(run_command(home, "aletheia", *args), store, kind)
    assert store.read_bytes() == before  # an empty or foreign file is never made a store


def test_aletheia_mcp_refuses_a_broken_store_in_one_line_and_exits_8(
    damaged: tuple[Path, Path, str],
) -> None:
    home, store, kind = damaged
    result = run_command(home, "aletheia-mcp", stdin=mcp_lines())
    assert result.stderr.startswith("aletheia-mcp: The store ")
    _one_line_error(result, store, kind)


@pytest.mark.parametrize("config", ["{nope", "[1, 2]", '{"exclude_projects": 5}'])
def test_aletheia_mcp_names_a_bad_config_file_in_one_line_and_exits_1(
    tmp_path: Path, config: str
) -> None:
    home = tmp_path / "home"
    (home / ".aletheia").mkdir(parents=True)
    (home / ".aletheia" / "config.json").write_text(config, encoding="utf-8")
    result = run_command(home, "aletheia-mcp", stdin=mcp_lines())
    assert result.returncode == 1
    assert result.stderr.startswith("aletheia-mcp: ") and result.stderr.count("\n") == 1
    assert "config.json" in result.stderr and "Traceback" not in result.stderr


def test_aletheia_server_refuses_a_broken_store_in_one_line_and_exits_8(
    damaged: tuple[Path, Path, str],
) -> None:
    home, store, kind = damaged
    for workers in ("1", "2"):
        result = run_command(home, "aletheia-server", "--port", "0", "--workers", workers)
        assert result.stderr.startswith("aletheia-server: The store ")
        _one_line_error(result, store, kind)


def test_aletheia_sync_refuses_a_broken_hub_store_in_one_line_and_exits_8(
    damaged: tuple[Path, Path, str],
) -> None:
    home, store, kind = damaged
    result = run_command(home, "aletheia-sync", "--hub-db", str(store), "--port", "0")
    assert result.stderr.startswith("aletheia-sync: The store ")
    _one_line_error(result, store, kind)


def test_a_hook_stays_silent_and_fails_open_on_a_broken_store(
    damaged: tuple[Path, Path, str],
) -> None:
    home, store, _ = damaged
    before = store.read_bytes()
    payload = json.dumps({"session_id": "s1", "cwd": str(home), "prompt": "hello"})
    for event in ("session-start", "user-prompt"):
        result = run_command(home, "aletheia-hook", event, stdin=payload)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert store.read_bytes() == before


def test_doctor_runs_the_integrity_check_and_reports_a_damaged_page(
    tmp_path: Path, template: Path
) -> None:
    home = tmp_path / "home"
    _scribble_over(_store_in(home, template), "memories_created")
    _store_in(tmp_path / "other", template)
    healthy = run_command(tmp_path / "other", "aletheia", "doctor", "--json")
    assert '"integrity_check": "ok"' in healthy.stdout
    report = run_command(home, "aletheia", "doctor")
    assert report.returncode == 1
    assert "PROBLEM" in report.stdout
    assert "integrity check: On tree page" in report.stdout
    assert "aletheia import" in report.stdout


def _scribble_over(store: Path, name: str) -> None:
    """The root page of one table or index overwritten; the file's header stays whole."""
    conn = sqlite3.connect(store)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with store.open("r+b") as handle:
        handle.seek((root - 1) * page_size + 8)
        handle.write(b"\xff" * (page_size - 8))


def test_a_page_found_damaged_while_reading_is_one_line_and_exit_8(
    tmp_path: Path, template: Path
) -> None:
    home = tmp_path / "home"
    store = _store_in(home, template)
    _scribble_over(store, "memories")
    reading = run_command(home, "aletheia", "show", "3")
    assert reading.returncode == EXIT_BROKEN
    assert reading.stderr == (
        f"Error: The store {store} is damaged (database disk image is malformed). Move it away"
        " and restore your last export with `aletheia import FILE` (`aletheia doctor` checks"
        " a store).\n"
    )
    call = {"name": "get_observations", "arguments": {"ids": [3]}}
    served = run_command(home, "aletheia-mcp", stdin=mcp_lines(call))
    result = mcp_results(served.stdout)[1]
    assert result["isError"] is True
    assert f"The store {store} is damaged" in result["content"][0]["text"]
    assert "Traceback" not in served.stderr


def test_a_full_text_table_missing_its_own_table_is_damage_in_one_line_and_exit_8(
    tmp_path: Path, template: Path
) -> None:
    home = tmp_path / "home"
    store = _store_in(home, template)
    conn = sqlite3.connect(store)
    try:
        conn.execute("DROP TABLE fact_fts_config")  # SQLite: vtable constructor failed
        conn.commit()
    finally:
        conn.close()
    reading = run_command(home, "aletheia", "search", "pnpm")
    assert reading.returncode == EXIT_BROKEN
    assert reading.stderr == (
        f"Error: The store {store} is damaged (vtable constructor failed: fact_fts). Move it"
        " away and restore your last export with `aletheia import FILE` (`aletheia doctor`"
        " checks a store).\n"
    )
    call = {"name": "search", "arguments": {"query": "pnpm"}}
    served = run_command(home, "aletheia-mcp", stdin=mcp_lines(call))
    result = mcp_results(served.stdout)[1]
    assert result["isError"] is True
    assert f"The store {store} is damaged" in result["content"][0]["text"]
    assert "Traceback" not in served.stderr


def test_doctor_reports_an_empty_store_file_instead_of_calling_it_ok(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = home / ".aletheia" / "aletheia.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"")
    report = run_command(home, "aletheia", "doctor")
    assert report.returncode == 1
    assert "is an empty file (0 bytes)" in report.stdout
    assert store.stat().st_size == 0


def test_doctor_tells_a_broken_store_without_sending_the_reader_to_doctor(
    tmp_path: Path, template: Path
) -> None:
    """Other commands end the line with "(`aletheia doctor` checks a store)"; doctor itself
    says what to do, and so does the line of a tool whose server stops on that store."""
    home = tmp_path / "home"
    store = home / ".aletheia" / "aletheia.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"")
    assert run_command(home, "aletheia", "install", "cursor", "--write").returncode == 0
    restore = "Move it away and restore your last export with `aletheia import FILE`."
    report = run_command(home, "aletheia", "doctor")
    assert report.returncode == 1
    assert f"is an empty file (0 bytes), not an Aletheia store. {restore}\n" in report.stdout
    data = json.loads(run_command(home, "aletheia", "doctor", "--json").stdout)
    assert data["store"]["detail"].endswith(f"not an Aletheia store. {restore}")
    (cursor,) = [host for host in data["hosts"] if host["host"] == "cursor"]
    assert "is an empty file (0 bytes)" in cursor["detail"]
    hub = run_command(home, "aletheia", "doctor", "--hub-db", str(store))
    assert hub.stdout.rstrip().endswith(restore)
    _scribble_over(_store_in(tmp_path / "damaged", template), "memories_created")
    damaged = run_command(tmp_path / "damaged", "aletheia", "doctor")
    assert "integrity check: On tree page" in damaged.stdout and restore in damaged.stdout
    for said in (report.stdout, json.dumps(data), hub.stdout, damaged.stdout):
        assert "aletheia doctor" not in said
    elsewhere = run_command(home, "aletheia", "show", "1")  # other commands point at doctor
    assert elsewhere.stderr.endswith(f"{restore[:-1]} (`aletheia doctor` checks a store).\n")


@contextmanager
def _read_only(store: Path) -> Iterator[None]:
    """A file or folder made unwritable: immutable as root (root ignores modes), else by mode."""
    chattr = shutil.which("chattr")
    if (
        chattr is not None
        and subprocess.run([chattr, "+i", str(store)], check=False).returncode == 0
    ):
        try:
            yield
        finally:
            subprocess.run([chattr, "-i", str(store)], check=True)
        return
    folder = store.is_dir()
    store.chmod(0o555 if folder else 0o444)
    try:
        yield
    finally:
        store.chmod(0o700 if folder else 0o600)


def test_a_read_only_store_still_reads_and_says_so_in_one_line_on_save(
    tmp_path: Path, template: Path
) -> None:
    home = tmp_path / "home"
    store = _store_in(home, template)
    with _read_only(store):
        found = run_command(home, "aletheia", "search", "pnpm", "-p", "*")
        assert found.returncode == 0
        assert "note 39 about the pnpm build" in found.stdout
        saved = run_command(home, "aletheia", "save", "one more note")
        assert saved.returncode == EXIT_READ_ONLY
        assert saved.stderr == (
            f"Error: The store {store} is read-only for this user; nothing was saved. Make the"
            " file and its folder writable (or point ALETHEIA_DATA_DIR elsewhere).\n"
        )
        call = {"name": "save_memory", "arguments": {"text": "from an agent"}}
        served = run_command(home, "aletheia-mcp", stdin=mcp_lines(call))
        result = mcp_results(served.stdout)[1]
        assert result["isError"] is True
        assert "is read-only for this user; nothing was saved" in result["content"][0]["text"]
        assert "Traceback" not in served.stderr


READS = [
    ["search", "pnpm", "-p", "*"],
    ["show", "1"],
    ["timeline", "1"],
    ["context", "-p", "home"],
    ["facts", "history", "a"],
    ["rules", "list"],
    ["export"],
    ["audit", "--local"],
]


def test_a_store_in_a_read_only_folder_still_reads_and_refuses_a_save_with_9(
    tmp_path: Path, template: Path
) -> None:
    # SQLite can make no -wal or -shm file in such a folder: a WAL store is read as it stands.
    home = tmp_path / "home"
    store = _store_in(home, template)
    with _read_only(store.parent):
        for command in READS:
            result = run_command(home, "aletheia", *command)
            assert (result.returncode, result.stderr) == (0, ""), command
        found = run_command(home, "aletheia", "search", "pnpm", "-p", "*")
        assert "note 39 about the pnpm build" in found.stdout
        saved = run_command(home, "aletheia", "save", "one more note")
        assert saved.returncode == EXIT_READ_ONLY
        assert saved.stderr.startswith(f"Error: The store {store} is read-only for this user;")
        assert sorted(path.name for path in store.parent.iterdir()) == ["aletheia.db"]


def test_a_store_that_cannot_be_created_says_so_in_one_line_and_exits_9(tmp_path: Path) -> None:
    home = tmp_path / "home"
    locked = home / "locked"
    locked.mkdir(parents=True)
    with _read_only(locked):
        result = run_command(home, "aletheia", "save", "a note", ALETHEIA_DATA_DIR=str(locked))
    assert result.returncode == EXIT_READ_ONLY
    assert result.stderr.startswith(f"Error: The store {locked / 'aletheia.db'} cannot be created")
    assert result.stderr.count("\n") == 1
    assert list(locked.iterdir()) == []


def test_the_json_api_answers_503_with_the_one_line_on_a_read_only_store(
    tmp_path: Path, template: Path
) -> None:
    store = tmp_path / "data" / "aletheia.db"
    store.parent.mkdir(parents=True)
    shutil.copyfile(template, store)
    with _read_only(store), running_server(tmp_path, args=("--port", "0", "--workers", "1")) as s:
        assert s.api("GET", "/api/memories?query=pnpm&project=*").status == 200
        refused = s.api("POST", "/api/memories", {"text": "from a script"})
        assert refused.status == 503
        error = refused.json()["error"]
        assert error["code"] == "store_read_only"
        assert "is read-only for this user; nothing was saved" in error["message"]
