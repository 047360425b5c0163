"""A store on a full disk (a small real tmpfs): writes refused in one line that says the disk is
full and nothing was changed (exit code 1, an MCP tool error, HTTP 507), reads still answered,
never a traceback; also when the disk fills while a server runs, and when the store is made."""

from __future__ import annotations

import json
import os
import select
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.server.mcp import INTERNAL_ERROR
from tests.e2e.http_server import initialize_message, running_server
from tests.safety.entry_points import (
    BIN,
    WAIT_SECONDS,
    mcp_lines,
    mcp_results,
    run_command,
    user_env,
)

FULL = "is full (no space left); nothing was changed"
EXIT_BROKEN = 8


@contextmanager
def small_disk(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` (root only: skipped, saying so, elsewhere)."""
    where.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> None:
    """Take every byte left on ``disk``."""
    descriptor = os.open(disk / "fill", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (1 << 16, 1 << 12, 1 << 9):
            try:
                while os.write(descriptor, b"\0" * chunk):
                    pass
            except OSError:
                continue
    finally:
        os.close(descriptor)


@contextmanager
def full_disk_store(tmp_path: Path, home: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A store with one memory on a 3 MB disk, then filled: the disk and the environment."""
    with small_disk(tmp_path / "mnt", "3m") as disk:
        data = {"ALETHEIA_DATA_DIR": str(disk / "data")}
        assert run_command(home, "aletheia", "save", "first pnpm note", **data).returncode == 0
        fill(disk)
        yield disk, data


def stdio_server(home: Path, data: dict[str, str]) -> subprocess.Popen[bytes]:
    """``aletheia-mcp`` on the store of ``data``, its stdin and stdout piped."""
    return subprocess.Popen(
        [str(BIN / "aletheia-mcp")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=user_env(home, **data),
        cwd=home,
    )


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr


def test_commands_on_a_full_disk_refuse_writes_in_one_line_and_still_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with full_disk_store(tmp_path, home) as (_disk, data):
        for write in (
            ["save", "second note"],
            ["rules", "add", "Use pnpm"],
            ["facts", "add", "db", "is", "postgres"],
            ["lists", "write", "todo", "one"],
        ):
            result = run_command(home, "aletheia", *write, **data)
            assert result.returncode == 1, (write, result.stderr)
            assert FULL in _one_line(result), write
        for read in (["search", "pnpm"], ["show", "1"], ["export", "-o", "-"]):
            result = run_command(home, "aletheia", *read, **data)
            assert result.returncode == 0, (read, result.stderr)
            assert "first pnpm note" in result.stdout, read
        doctor = run_command(home, "aletheia", "doctor", **data)
        assert "Traceback" not in doctor.stderr, doctor.stderr
        assert doctor.returncode == 1
        assert "is full (no space left): it reads, but saving fails." in doctor.stdout

        save = {"name": "save_memory", "arguments": {"text": "third", "project": "p"}}
        search = {"name": "search", "arguments": {"query": "pnpm", "project": "*"}}
        mcp = run_command(home, "aletheia-mcp", stdin=mcp_lines(save, search), **data)
        assert "Traceback" not in mcp.stderr, mcp.stderr
        results = mcp_results(mcp.stdout)
        assert results[1]["isError"] is True
        assert FULL in results[1]["content"][0]["text"]
        assert "first pnpm note" in results[2]["content"][0]["text"]


def test_a_disk_that_fills_under_a_server_is_told_as_full(tmp_path: Path) -> None:
    with small_disk(tmp_path / "mnt", "3m") as disk, running_server(disk) as server:
        session = server.initialize()
        statuses = []
        for number in range(60):
            text = f"note {number} " + "abcdefgh " * 2200
            reply = server.api("POST", "/api/memories", {"text": text[:19990]})
            statuses.append(reply.status)
            if reply.status != 201:
                break
        assert statuses[-1] == 507, (statuses, reply.body)
        assert reply.json()["error"]["code"] == "store_full"
        assert reply.header("retry-after") == "5"
        assert FULL in reply.json()["error"]["message"]
        result = server.call_tool(session, "save_memory", {"text": "one more", "project": "p"})
        assert result["isError"] is True
        assert FULL in result["content"][0]["text"]
        found = server.call_tool(session, "search", {"query": "note", "project": "*"}, 2)
        assert found["isError"] is False
    logged = [server.stderr.get() for _ in range(server.stderr.qsize())]
    assert not any("Traceback" in line for line in logged), logged


def test_an_mcp_session_begun_on_a_full_disk_is_refused_as_full(tmp_path: Path) -> None:
    """Writing the session row fails outside any tool call: the transport still tells the
    store-full line (507, a JSON-RPC error with the request's id), not a generic 503."""
    home = tmp_path / "home"
    with full_disk_store(tmp_path, home) as (disk, _data), running_server(disk) as server:
        reply = server.post_mcp(initialize_message(request_id=7))
        assert reply.status == 507, reply.body
        assert reply.header("retry-after") == "5"
        assert reply.header("mcp-session-id") is None
        error = reply.json()
        assert error["id"] == 7
        assert error["error"]["code"] == INTERNAL_ERROR
        assert FULL in error["error"]["message"]
        assert len(error["error"]["message"].splitlines()) == 1
        (disk / "fill").unlink()
        assert server.initialize()  # room again: the same server begins sessions
    logged = [server.stderr.get() for _ in range(server.stderr.qsize())]
    assert not any("Traceback" in line for line in logged), logged


def test_a_reader_on_a_full_disk_reads_a_live_writers_wal_and_says_when_it_cannot(
    tmp_path: Path,
) -> None:
    """A WAL holding changes is read through SQLite's index of it (the -shm file): one a live
    writer holds is used, so reads see its saves; with none (a killed writer's store copied
    without it) there is no room to make one, and reads are refused, saying they need room."""
    home = tmp_path / "home"
    with full_disk_store(tmp_path, home) as (disk, data):
        (disk / "fill").unlink()
        save = {"name": "save_memory", "arguments": {"text": "second pnpm note", "project": "p"}}
        with stdio_server(home, data) as writer:
            assert writer.stdin is not None
            writer.stdin.write(mcp_lines(save).encode())
            writer.stdin.flush()
            assert _answer(writer, 1)["isError"] is False
            fill(disk)
            found = run_command(home, "aletheia", "search", "pnpm", "-p", "*", **data)
            assert found.returncode == 0, found.stderr
            assert "second pnpm note" in found.stdout
            writer.kill()
        store = disk / "data" / "aletheia.db"
        assert store.with_name("aletheia.db-wal").stat().st_size > 0
        store.with_name("aletheia.db-shm").unlink()
        fill(disk)
        for read in (["search", "pnpm", "-p", "*"], ["export", "-o", "-"]):
            result = run_command(home, "aletheia", *read, **data)
            assert result.returncode == 1, (read, result.stdout)
            assert "is full (no space left), and reading it needs room too while its" in (
                _one_line(result)
            ), read
        (disk / "fill").unlink()
        found = run_command(home, "aletheia", "search", "pnpm", "-p", "*", **data)
        assert "second pnpm note" in found.stdout, found.stderr


def test_an_io_error_on_a_nearly_full_disk_is_not_told_as_a_full_disk(tmp_path: Path) -> None:
    """Under 1 MiB left, only SQLite's failure to grow its -shm file reads as a full disk; any
    other I/O error (here: the -shm file is a FIFO, which cannot be truncated) is told as one."""
    home = tmp_path / "home"
    with full_disk_store(tmp_path, home) as (disk, data):
        store = disk / "data" / "aletheia.db"
        os.mkfifo(store.with_name("aletheia.db-shm"))
        for command in (["search", "pnpm"], ["save", "second note"]):
            result = run_command(home, "aletheia", *command, **data)
            assert result.returncode == EXIT_BROKEN, (command, result.stderr)
            told = _one_line(result)
            assert "is full" not in told, command
            assert f"The store {store} cannot be read or written: the system reported an I/O" in (
                told
            ), command
            assert "(SQLITE_IOERR_SHMOPEN)" in told


def test_a_store_made_on_a_nearly_full_disk_is_refused_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with small_disk(tmp_path / "mnt", "600k") as disk:
        result = run_command(home, "aletheia", "save", "hello", ALETHEIA_DATA_DIR=str(disk / "d"))
        assert result.returncode == 1
        assert FULL in _one_line(result)
        assert "rollback" not in result.stderr
        assert list((disk / "d").iterdir()) == []  # no half-made store, no temporary file


def test_a_server_started_on_a_full_disk_saves_again_once_there_is_room(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with full_disk_store(tmp_path, home) as (disk, data):
        saves = ({"name": "save_memory", "arguments": {"text": text}} for text in ("a1", "b2"))
        *opening, second = mcp_lines(*saves).splitlines(keepends=True)
        with stdio_server(home, data) as server:
            assert server.stdin is not None
            server.stdin.write("".join(opening).encode())
            server.stdin.flush()
            refused = _answer(server, 1)
            assert refused["isError"] is True and FULL in refused["content"][0]["text"]
            (disk / "fill").unlink()
            server.stdin.write(second.encode())
            server.stdin.close()
            saved = _answer(server, 2)
            assert server.wait(timeout=WAIT_SECONDS) == 0
        assert saved == {
            "content": [{"type": "text", "text": "Saved as #2 in default."}],
            "isError": False,
        }


def _answer(server: subprocess.Popen[bytes], number: int) -> Any:
    """The result of request ``number``, read within a bounded wait."""
    assert server.stdout is not None
    while True:
        ready, _, _ = select.select([server.stdout], [], [], WAIT_SECONDS)
        assert ready, "no answer"
        reply = json.loads(server.stdout.readline())
        if reply.get("id") == number:
            return reply["result"]
