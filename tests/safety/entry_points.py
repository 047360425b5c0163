"""The installed commands run as a user would: a fresh HOME, the store in it, bounded waits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

WAIT_SECONDS = 20
BIN = Path(sys.executable).parent


def user_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(HOME=str(home), ALETHEIA_DATA_DIR=str(home / ".aletheia"), NO_COLOR="1")
    env.update(extra)
    return env


def run_command(
    home: Path, command: str, *args: str, stdin: str = "", umask: int | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """``command`` (aletheia, aletheia-mcp, aletheia-hook...) from this environment's bin."""
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [str(BIN / command), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=user_env(home, **env),
        cwd=home,
        timeout=WAIT_SECONDS,
        check=False,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )


def mcp_lines(*calls: dict[str, Any]) -> str:
    """An initialize handshake followed by ``tools/call`` requests, as stdin for aletheia-mcp."""
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "attacker", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for number, call in enumerate(calls, start=1):
        messages.append({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": call})
    return "".join(json.dumps(message) + "\n" for message in messages)


def mcp_results(stdout: str) -> dict[int, Any]:
    replies = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return {reply["id"]: reply.get("result") for reply in replies if "id" in reply}
