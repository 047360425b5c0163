"""How fast the commands start: ``python bench/startup_bench.py [--baseline BIN] [--runs N]``.

Prints a markdown table of the median and p95 wall time of bare Python (the floor),
``aletheia --version``, ``aletheia --help``, and the stdio server's cold start to its first
reply (``initialize``) as ``aletheia-mcp`` and as ``aletheia mcp``, each a fresh process on an
existing store. The
scripts are those next to this Python; ``--baseline`` names another installation's ``bin``
folder (e.g. an older checkout's ``.venv/bin``) measured in the same run, runs interleaved, so
that the ratio holds on a busy machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stdio_client import LineReader, initialize_line, server_env

VERSION_TARGET_MS = 100.0
# (name, argv after the bin folder, whether it is a server answering initialize, target)
CASES: list[tuple[str, list[str], bool, str]] = [
    ("python -c pass (the floor)", ["python", "-c", "pass"], False, "-"),
    ("aletheia --version", ["aletheia", "--version"], False, f"<= {VERSION_TARGET_MS:.0f} ms"),
    ("aletheia --help", ["aletheia", "--help"], False, "-"),
    ("aletheia-mcp to first reply", ["aletheia-mcp"], True, "no slower than before"),
    ("aletheia mcp to first reply", ["aletheia", "mcp"], True, "<= aletheia-mcp x 1.1"),
    ("aletheia-hook user-prompt (one call)", ["aletheia-hook", "user-prompt"], False, "~100 ms"),
]
# What a hook reads on stdin, as Claude Code sends it; other commands read nothing.
HOOK_INPUT = b'{"session_id": "bench", "prompt": "run the tests before you commit"}'


def run_to_exit(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    stdin = HOOK_INPUT if Path(argv[0]).name == "aletheia-hook" else b""
    subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, timeout=30, check=True)
    return time.perf_counter() - started


def run_to_first_reply(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env, cwd=cwd,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(initialize_line())
        process.stdin.flush()
        reply = LineReader(process.stdout).read_line()
        elapsed = time.perf_counter() - started
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    if b'"serverInfo"' not in reply:
        raise RuntimeError(f"unexpected first reply: {reply[:200]!r}")
    return elapsed


def measure(bin_dir: Path, argv: list[str], server: bool, work: Path) -> Callable[[], float] | None:
    """A function timing one run of ``argv`` from ``bin_dir``, or None where it does not exist."""
    command = [str(bin_dir / argv[0]), *argv[1:]]
    env = server_env(work / "data", work)
    if not Path(command[0]).exists():
        return None
    if len(argv) > 1 and argv[0] != "python":  # a subcommand an older aletheia may lack
        probe = subprocess.run([*command, "--help"], env=env, capture_output=True, timeout=30)
        if probe.returncode != 0:
            return None
    timer = run_to_first_reply if server else run_to_exit
    timer(command, env, work)  # a first run writes the .pyc files and creates the store
    return lambda: timer(command, env, work)


def _ms(samples: list[float], quantile: float) -> str:
    if not samples:
        return "n/a"
    ordered = sorted(samples)
    return f"{ordered[min(len(ordered) - 1, int(quantile * len(ordered)))] * 1000:.0f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--baseline", type=Path, help="another installation's bin folder")
    args = parser.parse_args(argv)
    here = Path(sys.executable).parent
    header = "| Command | Median ms | p95 ms |"
    if args.baseline:
        header += " Baseline median ms | Ratio |"
    header += " Target |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    with tempfile.TemporaryDirectory(prefix="aletheia-startup-") as folder:
        work = Path(folder)
        for name, case_argv, server, target in CASES:
            timers = [measure(here, case_argv, server, work)]
            if args.baseline:
                timers.append(measure(args.baseline, case_argv, server, work))
            samples: list[list[float]] = [[] for _ in timers]
            for _ in range(args.runs):  # interleaved, so that both see the same load
                for index, timer in enumerate(timers):
                    if timer is not None:
                        samples[index].append(timer())
            row = f"| {name} | {_ms(samples[0], 0.5)} | {_ms(samples[0], 0.95)} |"
            if args.baseline:
                ratio = (
                    f"{statistics.median(samples[0]) / statistics.median(samples[1]):.2f}"
                    if samples[0] and samples[1]
                    else "n/a"
                )
                row += f" {_ms(samples[1], 0.5)} | {ratio} |"
            print(row + f" {target} |", flush=True)


if __name__ == "__main__":
    main()
