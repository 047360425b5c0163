"""``aletheia-server`` and ``aletheia serve`` as processes: address, port, readiness, signals."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.http_server import (
    SERVER,
    initialize_message,
    running_server,
    server_env,
)

pytestmark = pytest.mark.e2e

CLI = Path(sys.executable).parent / "aletheia"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening_address(port: int) -> str | None:
    """The local address a LISTEN socket on ``port`` is bound to, from /proc/net/tcp."""
    for line in Path("/proc/net/tcp").read_text(encoding="utf-8").splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:
            return socket.inet_ntoa(bytes.fromhex(address)[::-1])
    return None


def test_port_0_prints_the_real_port_once_it_accepts_connections(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        assert server.port > 0
        assert server.lines[-1] == f"Aletheia listening on http://127.0.0.1:{server.port}"
        assert server.post_mcp(initialize_message()).status == 200


def test_binds_loopback_by_default(tmp_path: Path) -> None:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs Linux /proc/net/tcp to read the bound address")
    with running_server(tmp_path) as server:
        assert listening_address(server.port) == "127.0.0.1"


def test_aletheia_port_sets_the_port_and_the_flag_wins_over_it(tmp_path: Path) -> None:
    port = free_port()
    with running_server(tmp_path / "env", env={"ALETHEIA_PORT": str(port)}, args=()) as server:
        assert server.port == port
    with running_server(tmp_path / "flag", env={"ALETHEIA_PORT": "1"}) as server:
        assert server.port not in (0, 1)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--port", "http"], {}, "aletheia-server: --port must be a port number from 0 to 65535."),
        ([], {"ALETHEIA_PORT": "99999"}, "aletheia-server: ALETHEIA_PORT must be a port number"),
        (["--workers", "0"], {}, "aletheia-server: --workers must be a whole number from 1 to 32."),
        ([], {"ALETHEIA_WORKERS": "many"}, "aletheia-server: ALETHEIA_WORKERS must be a whole"),
    ],
)
def test_a_bad_port_or_worker_count_is_refused_with_exit_code_2(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    done = subprocess.run(
        [str(SERVER), *args],
        env=server_env(tmp_path / "data", tmp_path, env),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(message)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_port_in_use_is_one_line_and_exit_code_1(tmp_path: Path, workers: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = subprocess.run(
            [str(SERVER), "--port", port, "--workers", workers],
            env=server_env(tmp_path / "data", tmp_path, {}),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert done.returncode == 1
    assert (
        done.stderr
        == f"aletheia-server: Cannot listen on 127.0.0.1:{port}: Address already in use.\n"
    )


@pytest.mark.parametrize("command", ["aletheia-server", "aletheia-sync"])
def test_a_host_that_is_no_name_is_one_error_line(tmp_path: Path, command: str) -> None:
    # A --host of bytes that are not UTF-8 ended both servers in a traceback.
    done = subprocess.run(
        [str(SERVER.parent / command), "--host", os.fsdecode(b"\xff"), "--port", "0"],
        env={**server_env(tmp_path / "data", tmp_path, {}), "ALETHEIA_API_KEY": "k"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"{command}: Cannot listen on \\udcff:0: not a host name or address."
    )
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_server_cleanly(tmp_path: Path, sig: int) -> None:
    with running_server(tmp_path) as server:
        session = server.initialize()
        saved = server.call_tool(session, "save_memory", {"text": "written before the stop"})
        assert saved["isError"] is False
        assert server.stop(sig) == 0
    assert not (tmp_path / "data" / "aletheia.db-wal").exists()  # every connection was closed


def test_aletheia_serve_is_the_same_server(tmp_path: Path) -> None:
    with running_server(tmp_path, command=[str(CLI), "serve"]) as server:
        session = server.initialize()
        listed = server.post_mcp({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session)
        assert len(listed.json()["result"]["tools"]) == 13
        # no rule yet: no bound for the next pages
        assert server.api("GET", "/api/rules").json() == {"rules": [], "upto": None}
        assert server.stop() == 0


def test_allowed_hosts_extend_the_loopback_names(tmp_path: Path) -> None:
    args = ("--port", "0", "--allow-host", "memory.lan")
    env = {"ALETHEIA_ALLOWED_HOSTS": "other.lan"}
    with running_server(tmp_path, args=args, env=env) as server:
        for host in ("memory.lan:8765", "other.lan", "localhost"):
            reply = server.post_mcp(initialize_message(), headers={"Host": host})
            assert reply.status == 200, host
        assert server.post_mcp(initialize_message(), headers={"Host": "else.lan"}).status == 421


def test_allowed_origins_come_from_the_environment_too(tmp_path: Path) -> None:
    env = {"ALETHEIA_ALLOWED_ORIGINS": "https://a.example, https://b.example"}
    with running_server(tmp_path, env=env) as server:
        for origin, status in (("https://b.example", 200), ("https://c.example", 403)):
            reply = server.post_mcp(initialize_message(), headers={"Origin": origin})
            assert reply.status == status


@pytest.mark.parametrize("command", [[str(SERVER), "--help"], [str(CLI), "serve", "--help"]])
def test_help_names_the_default_port_and_the_settings(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True)
    assert "8765" in done.stdout
    assert "--allow-origin" in done.stdout
    if command[0] == str(SERVER):
        assert "ALETHEIA_API_KEY" in done.stdout and "ALETHEIA_PORT" in done.stdout


@pytest.mark.parametrize("command", [[str(SERVER)], [str(CLI), "serve"]])
def test_a_non_loopback_address_without_a_key_is_refused_with_one_line(
    tmp_path: Path, command: list[str]
) -> None:
    """The Host check stops browsers only: a script sends "Host: 127.0.0.1" from anywhere."""
    done = subprocess.run(
        [*command, "--host", "0.0.0.0", "--port", "0"],  # noqa: S104
        env=server_env(tmp_path / "data", tmp_path, {}),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    [line] = [line for line in done.stderr.splitlines() if "ALETHEIA_API_KEY" in line]
    assert "--host 0.0.0.0 is reachable from the network and ALETHEIA_API_KEY is not set" in line
    assert "set ALETHEIA_API_KEY (or pass --trusted-network" in line
    assert not (tmp_path / "data" / "aletheia.db").exists()  # refused before anything opened


def test_a_non_loopback_address_is_served_with_a_key_or_on_a_trusted_network(
    tmp_path: Path,
) -> None:
    wide = ("--host", "0.0.0.0", "--port", "0")  # noqa: S104
    with running_server(tmp_path / "keyed", args=wide, env={"ALETHEIA_API_KEY": "k"}) as server:
        assert server.post_mcp(initialize_message()).status == 401
        key = {"Authorization": "Bearer k"}
        assert server.post_mcp(initialize_message(), headers=key).status == 200
    with running_server(tmp_path / "trusted", args=(*wide, "--trusted-network")) as server:
        assert server.post_mcp(initialize_message()).status == 200
        assert any("without ALETHEIA_API_KEY (--trusted-network)" in line for line in server.lines)
    serve = [str(CLI), "serve"]
    with running_server(tmp_path / "cli", args=(*wide, "--trusted-network"), command=serve):
        pass


def test_the_stdio_server_starts_without_the_http_stack() -> None:
    code = (
        "import sys, aletheia_mem.server.stdio;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('starlette', 'uvicorn', 'httptools', 'anyio')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.strip() == "[]"


def test_a_port_in_use_is_reported_and_the_server_exits(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(SERVER), "--port", str(port)],
            env=server_env(tmp_path / "data", tmp_path),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert done.returncode != 0
    assert "Address already in use" in done.stderr
    assert "Aletheia listening" not in done.stderr
