"""Run a configured stdio server for ``aletheia doctor``: send it a few lines, close its input,
collect what it prints, and end it together with every process it started.

The server runs in a session (process group) of its own, so that a launcher that forks (``sh -c
'... & exec server'``, npx, uvx) leaves nothing behind: the whole group is sent SIGTERM, then
SIGKILL after a short grace, whether the server timed out or was done.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, cast

STOP_GRACE_SECONDS = 1.0  # from SIGTERM to SIGKILL
_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class ServerRun:
    """What a server printed, and how it ended."""

    stdout: str
    stderr: str
    returncode: int | None  # None: still running when it was stopped


def run_server(
    argv: list[str],
    env: dict[str, str],
    payload: str,
    is_answer: Callable[[str], bool],
    *,
    timeout: float,
    exit_grace: float,
) -> ServerRun:
    """Start ``argv``, write ``payload`` and close its input; wait up to ``timeout`` for a line
    ``is_answer`` accepts (or for the server to end), then up to ``exit_grace`` for it to exit.

    Raises:
        OSError: the program cannot be started (missing, not executable, not a program).
    """
    process = subprocess.Popen(  # noqa: S603 - the command is the user's own config entry
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",
        errors="replace",
        env=env,
        start_new_session=True,  # its own process group, ended whole (POSIX)
    )
    # all three are piped: never None
    stdin, stdout, stderr = (cast(IO[str], pipe) for pipe in _pipes(process))
    lines: list[str] = []
    errors: list[str] = []
    answered, settled = threading.Event(), threading.Event()  # settled: answered or ended

    def read_stdout() -> None:
        for line in stdout:
            lines.append(line)
            if is_answer(line):
                answered.set()
                settled.set()

    def wait_exit() -> None:
        process.wait()
        settled.set()

    readers = [
        threading.Thread(target=read_stdout, daemon=True),
        threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True),
    ]
    for thread in [*readers, threading.Thread(target=wait_exit, daemon=True)]:
        thread.start()
    try:
        _send(stdin, payload)
        settled.wait(timeout)
        if answered.is_set():
            _wait(process, exit_grace)
        returncode = process.returncode
    finally:
        stop_group(process)
    for reader, stream in zip(readers, (stdout, stderr), strict=True):
        reader.join(STOP_GRACE_SECONDS)  # a process that left the group may hold the pipe
        if not reader.is_alive():
            stream.close()
    return ServerRun("".join(lines), "".join(errors), returncode)


def _pipes(process: subprocess.Popen[str]) -> tuple[IO[str] | None, ...]:
    return process.stdin, process.stdout, process.stderr


def _send(stream: IO[str], payload: str) -> None:
    """Write the lines, then close: end of input, when a stdio server should exit. A server
    that has exited already (or closed its input) is let be: its output says why."""
    with contextlib.suppress(OSError):
        stream.write(payload)
    with contextlib.suppress(OSError):
        stream.close()


def _wait(process: subprocess.Popen[str], seconds: float) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(seconds)


def stop_group(process: subprocess.Popen[str]) -> None:
    """End the process and every process of its group: SIGTERM, then SIGKILL after
    ``STOP_GRACE_SECONDS`` for whatever is left (the group outlives a leader that exited)."""
    if sys.platform == "win32":  # no process groups to signal: the server alone
        if process.poll() is None:
            process.kill()
        process.wait()
        return
    group = process.pid
    if _signal_group(group, signal.SIGTERM):
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        while time.monotonic() < deadline:
            process.poll()  # a leader that exited is reaped, so that it no longer counts
            if not _signal_group(group, 0):
                break
            time.sleep(_POLL_SECONDS)
        _signal_group(group, signal.SIGKILL)
    process.wait()


def _signal_group(group: int, signum: int) -> bool:
    """Send ``signum`` to the group; False when no process of it is left."""
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member that changed its user (setuid): not ours to stop
        return True
    return True
