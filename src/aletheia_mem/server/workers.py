"""Several worker processes serving one port, and the parent that accepts and minds them.

One Python process runs one search at a time under the GIL, so ``aletheia-server`` forks workers
that share the store's file (sessions included, see ``sessions.py``). The parent accepts each
connection and hands it to the workers in turn, over a Unix socket per worker: left to the
kernel, a burst of connections all goes to whichever worker wakes first, and the others idle.
The parent also prints the ready line once every worker serves, starts a new worker when one
dies, and on SIGINT or SIGTERM stops them all. Workers stop by themselves if the parent is killed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from types import FrameType

logger = logging.getLogger("aletheia")

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
RESTART_DELAY_S = 1.0
BACKLOG = 2048  # uvicorn's
_POLL_S = 0.1

# A worker: serves the connections handed over its channel (a Unix socket, one connection's file
# descriptor per byte) until told to stop, calling ready() once it takes connections.
Worker = Callable[[socket.socket, Callable[[], None]], None]


class WorkerPool:
    """The parent's view of its workers: fork, wait for readiness, supervise, stop."""

    def __init__(self, sock: socket.socket, worker: Worker, count: int) -> None:
        self.sock = sock
        self.worker = worker
        self.count = count
        self.live: set[int] = set()
        self.channels: dict[int, socket.socket] = {}  # the parent's end, by worker pid
        self.turn = 0
        self.held: socket.socket | None = None  # accepted, but every worker's channel was full
        self.stopping = False
        self.pid = os.getpid()

    def run(self, on_ready: Callable[[], None]) -> int:
        """Serve until SIGINT or SIGTERM; returns the exit code (1 if a worker failed to start)."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in _STOP_SIGNALS}
        self.sock.listen(BACKLOG)
        self.sock.setblocking(False)
        read_end, write_end = os.pipe()
        try:
            for _ in range(self.count):
                self._fork(write_end)
            started = self._wait_ready(read_end)
            os.close(write_end)
            os.close(read_end)
            if started and not self.stopping:
                on_ready()
                self._supervise()
            self.stop()
            self._reap_all(deadline=time.monotonic() + STOP_TIMEOUT_S)
        finally:
            if self.held is not None:
                self.held.close()
            for channel in self.channels.values():
                channel.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0 if started else 1

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.stopping = True
        for pid in self.live:
            _kill(pid, sig)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self.pid:
            os._exit(1)  # a worker signalled before it set its own handlers: just stop
        self.stop()

    def _fork(self, ready_fd: int | None) -> None:
        parent = os.getpid()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            for inherited in (self.sock, ours, *self.channels.values()):
                inherited.close()
            os._exit(_run_child(self.worker, theirs, parent, ready_fd))
        theirs.close()
        ours.setblocking(False)
        self.channels[pid] = ours
        self.live.add(pid)

    def _accept_waiting(self) -> None:
        """Hand every connection waiting on the port to the next worker in turn. One that no
        worker can take now (every channel full: a burst) is held, and nothing more is
        accepted until it is handed over: the others wait in the port's backlog."""
        while self.held is None:
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:  # out of file descriptors, say: let the clients wait
                logger.warning("could not accept a connection: %s", error)
                time.sleep(_POLL_S)
                return
            if self._hand_over(conn):
                conn.close()
            else:
                self.held = conn

    def _hand_over_held(self) -> None:
        """Hand the held connection over once a channel has room, then accept again."""
        channels = list(self.channels.values())
        if not channels:  # every worker gone: a new one starts after RESTART_DELAY_S
            time.sleep(_POLL_S)
            return
        _, writable, _ = select.select([], channels, [], _POLL_S)
        held = self.held
        if not writable or held is None:
            return
        if self._hand_over(held):
            held.close()
            self.held = None
            self._accept_waiting()
        else:  # writable, yet the send failed (a worker just gone): no busy loop meanwhile
            time.sleep(_POLL_S / 10)

    def _hand_over(self, conn: socket.socket) -> bool:
        """Send ``conn`` to a worker, skipping one that is gone or whose channel is full;
        whether one took it."""
        pids = sorted(self.channels)
        for _ in pids:
            pid = pids[self.turn % len(pids)]
            self.turn += 1
            try:
                socket.send_fds(self.channels[pid], [b"c"], [conn.fileno()])
                return True
            except OSError:
                continue
        return False

    def _wait_ready(self, read_end: int) -> bool:
        """Whether every worker said it is ready before one died or the time ran out."""
        ready, deadline = 0, time.monotonic() + START_TIMEOUT_S
        while ready < self.count and not self.stopping:
            if time.monotonic() > deadline:
                logger.error("the worker processes did not start within %.0f s", START_TIMEOUT_S)
                return False
            readable, _, _ = select.select([read_end], [], [], _POLL_S)
            if readable:
                ready += len(os.read(read_end, self.count))
            exited = self._reap_one()
            if exited is not None:
                logger.error("a worker process failed to start (%s)", exited)
                return False
        return ready == self.count or self.stopping  # a stop while starting is not a failure

    def _supervise(self) -> None:
        """Accept and hand over connections; replace the workers that die, after a pause."""
        restarts: list[float] = []  # when to start each replacement
        while not self.stopping:
            if self.held is not None:
                self._hand_over_held()
            elif select.select([self.sock], [], [], _POLL_S)[0]:
                self._accept_waiting()
            exited = self._reap_one()
            if exited is not None and not self.stopping:
                logger.warning("a worker process ended (%s); starting another", exited)
                restarts.append(time.monotonic() + RESTART_DELAY_S)
            while restarts and restarts[0] <= time.monotonic() and not self.stopping:
                restarts.pop(0)
                self._fork(None)

    def _reap_one(self) -> str | None:
        """How one ended worker ended, or None when all are still running."""
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return None
        self.live.discard(pid)
        channel = self.channels.pop(pid, None)
        if channel is not None:
            channel.close()
        return _exit_text(status)

    def _reap_all(self, deadline: float) -> None:
        while self.live:
            if time.monotonic() > deadline:
                self.stop(signal.SIGKILL)
                deadline = float("inf")
            if self._reap_one() is None:
                time.sleep(_POLL_S / 2)


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _exit_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def _run_child(worker: Worker, channel: socket.socket, parent: int, ready_fd: int | None) -> int:
    """The body of a forked worker; returns its exit code (it never returns to the caller)."""
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    _exit_with_parent(parent)

    def ready() -> None:
        if ready_fd is not None:
            os.write(ready_fd, b"r")

    code = 0
    try:
        worker(channel, ready)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _exit_with_parent(parent: int) -> None:
    """Stop this worker cleanly once its parent is gone (killed with SIGKILL, say)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="aletheia-parent-watch", daemon=True).start()
