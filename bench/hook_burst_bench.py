"""Hooks fired at once: ``python bench/hook_burst_bench.py [--sizes 10,20,40,80] [--hook BIN]``.

Starts N ``aletheia-hook post-tool-use`` processes together on one store, each for an edit of
another file of one session (as a host does for parallel tool calls and sessions), waits for all,
and prints a markdown table of how many observations were saved and the wall time of the burst.
Every hook of a burst should save: a hook stops after one second of its own work, not of the
clock, so a busy machine makes a burst slower but loses nothing. ``--hook`` names another
installation's ``aletheia-hook`` (e.g. an older checkout's) to compare in the same run; compile
that code first (``python -m compileall``), as an installed package is, or with
``PYTHONDONTWRITEBYTECODE`` set every one of its hooks compiles it again.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def burst(hook: str, size: int) -> tuple[int, float]:
    """Saved observations and wall seconds of ``size`` hooks started at once on a new store."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project = root / "shop"
        (project / ".git").mkdir(parents=True)
        env = dict(os.environ, ALETHEIA_DATA_DIR=str(root / "data"), ALETHEIA_TOOL="claude-code")
        start = {"session_id": "bench", "cwd": str(project)}
        subprocess.run(
            [hook, "session-start"], input=json.dumps(start), env=env, text=True,
            capture_output=True, check=True, timeout=30,
        )  # fmt: skip
        began = time.perf_counter()
        argv = [hook, "post-tool-use"]
        processes = [
            subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
            for _ in range(size)
        ]
        for number, process in enumerate(processes):
            path = str(project / f"f{number}.py")
            edit = {"file_path": path, "old_string": "a", "new_string": "b"}
            payload = {**start, "tool_name": "Edit", "tool_input": edit}
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps(payload).encode())
                process.stdin.close()
            except BrokenPipeError:  # the hook gave up before it read: its observation is lost
                pass
        for process in processes:
            process.wait(timeout=60)
        wall = time.perf_counter() - began
        with sqlite3.connect(root / "data" / "aletheia.db") as db:
            query = "SELECT count(*) FROM memories WHERE kind = 'observation'"
            saved = int(db.execute(query).fetchone()[0])
        return saved, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,20,40,80", help="burst sizes, comma-separated")
    parser.add_argument(
        "--hook", action="append", help="aletheia-hook to run (repeatable; default: this one's)"
    )
    args = parser.parse_args()
    hooks = args.hook or [str(Path(sys.executable).parent / "aletheia-hook")]
    print("| hook | hooks at once | observations saved | burst wall (s) |")
    print("|---|---:|---:|---:|")
    for size in (int(part) for part in args.sizes.split(",")):
        for hook in hooks:
            saved, wall = burst(hook, size)
            print(f"| {hook} | {size} | {saved} | {wall:.2f} |")


if __name__ == "__main__":
    main()
