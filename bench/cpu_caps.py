"""CPU caps for bench processes: each process in a cgroup of its own, held to a share of a core.

A hub process on a machine of its own is held back by its own cores, not by the database and the
clients beside it. On one 2-core machine that runs them all, ``hub_scale_bench.py --hub-cores``
puts each hub process in a cgroup whose CFS quota is that many cores, so that a process's own CPU
is the limit, as it would be on a machine of its own, while the database and the clients keep the
rest. It needs root and the ``cpu`` controller (cgroup v1 ``/sys/fs/cgroup/cpu`` or v2).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

V1_CPU = Path("/sys/fs/cgroup/cpu")
V2_ROOT = Path("/sys/fs/cgroup")
# The kernel's default CFS period; 20 ms gave the same figures in a trial run.
PERIOD_US = 100_000


class CpuCapUnavailable(RuntimeError):
    """This machine does not let the bench make cgroups with a CPU quota."""


def _cpu_root() -> tuple[Path, bool]:
    """The folder new cgroups go in, and whether it is cgroup v2."""
    if (V1_CPU / "cpu.cfs_quota_us").exists():
        return V1_CPU, False
    controllers = V2_ROOT / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return V2_ROOT, True
    raise CpuCapUnavailable("no cgroup cpu controller (v1 /sys/fs/cgroup/cpu or v2 with cpu)")


class CpuCap:
    """One cgroup holding its processes to ``cores`` cores; ``remove`` once they have exited."""

    def __init__(self, name: str, cores: float) -> None:
        if not 0.01 <= cores <= (os.cpu_count() or 1):
            raise ValueError(f"cores must be between 0.01 and the machine's {os.cpu_count()}")
        root, v2 = _cpu_root()
        self.path = root / name
        try:
            self.path.mkdir()
        except OSError as error:
            raise CpuCapUnavailable(f"cannot make cgroup {self.path}: {error}") from error
        quota = int(cores * PERIOD_US)
        if v2:
            (self.path / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
        else:
            (self.path / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (self.path / "cpu.cfs_quota_us").write_text(f"{quota}\n")

    def joiner(self) -> Callable[[], None]:
        """A ``preexec_fn`` moving the new process into the cgroup before it runs anything, so
        every thread it starts is capped with it."""
        procs = str(self.path / "cgroup.procs")

        def join() -> None:
            with open(procs, "w", encoding="ascii") as file:
                file.write(f"{os.getpid()}\n")

        return join

    def remove(self) -> None:
        # A process still in it keeps it: the kernel drops it once the last one leaves.
        with contextlib.suppress(OSError):
            self.path.rmdir()
