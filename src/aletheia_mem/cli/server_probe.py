"""Run a configured stdio server for ``aletheia doctor``: send it a few messages, each once the
one before is answered (as a host does), close its input, collect what it prints, and end it
together with every process it started.

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
_EXIT_SETTLE_SECONDS = 1.0  # after the server exited, for its last output to be read

# One message to send, and how to know its answer (None: a notification, nothing to wait for).
Step = tuple[str, Callable[[str], bool] | None]


@dataclass(frozen=True)
class ServerRun:
    """What a server printed, and how it ended."""

    stdout: str
    stderr: str
    returncode: int | None  # None: still running when it was stopped


def run_server(
    argv: list[str],
    env: dict[str, str],
    steps: list[Step],
    *,
    timeout: float,
    exit_grace: float,
) -> ServerRun:
    """Start ``argv`` and send it ``steps`` in order, each after the previous one's answer;
    stop at the first one not answered within what is left of ``timeout`` (or once the server
    ended). Once all are answered, close its input and wait up to ``exit_grace`` for it to exit.

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
    output = _Output()
    errors: list[str] = []

    def wait_exit() -> None:
        process.wait()
        output.mark(exited=True)

    readers = [
        threading.Thread(target=output.read, args=(stdout,), daemon=True),
        threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True),
    ]
    for thread in [*readers, threading.Thread(target=wait_exit, daemon=True)]:
        thread.start()
    deadline = time.monotonic() + timeout
    try:
        answered = all(output.exchange(stdin, step, deadline) for step in steps)
        with contextlib.suppress(OSError):
            stdin.close()  # end of input, when a stdio server should exit
        # A server not answering may be exiting still (it refused our input at once): its exit
        # code, not a timeout, says why. wait() with a timeout sees a code another thread's
        # wait() set (poll() from here can miss it while that one waits).
        _wait(process, exit_grace if answered else _EXIT_SETTLE_SECONDS)
        returncode = process.returncode
    finally:
        stop_group(process)
    for reader, stream in zip(readers, (stdout, stderr), strict=True):
        reader.join(STOP_GRACE_SECONDS)  # a process that left the group may hold the pipe
        if not reader.is_alive():
            stream.close()
    return ServerRun(output.text(), "".join(errors), returncode)


class _Output:
    """The server's stdout lines as they come, and whether its output or the process ended."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._ended = False  # stdout closed
        self._exited = False
        self._changed = threading.Condition()

    def read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()
        self.mark(ended=True)

    def mark(self, *, ended: bool = False, exited: bool = False) -> None:
        with self._changed:
            self._ended |= ended
            self._exited |= exited
            self._changed.notify_all()

    def exited(self) -> bool:
        with self._changed:
            return self._exited

    def text(self) -> str:
        with self._changed:
            return "".join(self._lines)

    def exchange(self, stdin: IO[str], step: Step, deadline: float) -> bool:
        """Send one message and wait for its answer: until ``deadline``, the end of the
        output, or shortly after the server exited. Whether it was answered."""
        line, is_answer = step
        with self._changed:
            seen = len(self._lines)
        try:
            stdin.write(line)
            stdin.flush()
        except OSError:  # the server closed its input or exited: its output says why
            return False
        if is_answer is None:
            return True

        def found() -> bool:
            return any(is_answer(text) for text in self._lines[seen:])

        with self._changed:
            left = max(deadline - time.monotonic(), 0)
            self._changed.wait_for(lambda: found() or self._ended or self._exited, left)
            settle = min(_EXIT_SETTLE_SECONDS, max(deadline - time.monotonic(), 0))
            if not found() and self._exited:  # its last lines, if any
                self._changed.wait_for(lambda: found() or self._ended, settle)
            elif not found() and self._ended:  # its output closed: it is exiting, or has
                self._changed.wait_for(lambda: self._exited, settle)
            return found()


def _pipes(process: subprocess.Popen[str]) -> tuple[IO[str] | None, ...]:
    return process.stdin, process.stdout, process.stderr


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
