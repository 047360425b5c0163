"""Redaction of the longest adversarial texts: ``python bench/redaction_adversarial.py
[--baseline-src DIR] [--runs 3]``.

Prints a markdown table: for each input of 200,000 characters (the longest text a save or a
sync push accepts), the time ``redact_secrets`` takes in this checkout and, with
``--baseline-src`` (another checkout's ``src`` folder, as in ``stdio_instructions.py``), in that
one, and how many times the plain note's time each is (the same length). Each variant runs in a
fresh Python with its ``src`` first on ``PYTHONPATH``; the variants take turns, and each figure
is the least of its runs, so that noise from other processes weighs less. The last row is one
600-character note, in microseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from redaction_bench import NOTE

LENGTH = 200_000
# Repeated to LENGTH: the shapes each rule starts from (a name and its separator, a vendor's
# prefix, a flag, a header's scheme), and runs of one character.
UNITS = {
    "plain note": NOTE,
    "key=": "key=",
    "key=a": "key=a",
    "password: ": "password: ",
    "key: ": "key: ",
    'token="': 'token="',
    " -p": " -p",
    " -pabc": " -pabc",
    "--password ": "--password ",
    "secret ": "secret ",
    "Bearer ": "Bearer ",
    "ghp_": "ghp_",
    "AKIA": "AKIA",
    "eyJ": "eyJ",
    "sk-": "sk-",
    "://a:b@": "://a:b@",
    "a": "a",
    "-": "-",
    "=": "=",
    '"': '"',
    "base64": "QWxhZGRpbjpvcGVuIHNlc2FtZQ",
}
NOTE_600 = (NOTE * 2)[:600]

WORKER = """
import json, sys, time
from aletheia_mem.domain.redaction import redact_secrets
texts, note, runs = json.loads(sys.stdin.read())
def least(text, repeat):
    redact_secrets(text)
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        for _ in range(repeat):
            redact_secrets(text)
        best = min(best, (time.perf_counter() - started) / repeat)
    return best
times = {name: least(text, 1) * 1e3 for name, text in texts.items()}
times["600-char note (µs)"] = least(note, 200) * 1e6
print(json.dumps(times))
"""


def sized(unit: str) -> str:
    return (unit * (LENGTH // len(unit) + 1))[:LENGTH]


def texts() -> dict[str, str]:
    made = {name: sized(unit) for name, unit in UNITS.items()}
    made["x...x="] = "x" * (LENGTH - 1) + "="
    return made


def run_variant(src: Path, runs: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    payload = json.dumps([texts(), NOTE_600, runs])
    done = subprocess.run(
        [sys.executable, "-c", WORKER], input=payload, env=env, capture_output=True,
        text=True, check=True, encoding="utf-8",
    )  # fmt: skip
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    parser.add_argument("--runs", type=int, default=3, help="runs per input and turn")
    parser.add_argument("--turns", type=int, default=2, help="turns each variant takes")
    args = parser.parse_args(argv)
    variants = {"after": Path(__file__).resolve().parent.parent / "src"}
    if args.baseline_src is not None:
        variants = {"before": args.baseline_src.resolve(), **variants}
    best: dict[str, dict[str, float]] = {name: {} for name in variants}
    for _ in range(args.turns):
        for name, src in variants.items():
            for key, value in run_variant(src, args.runs).items():
                best[name][key] = min(value, best[name].get(key, float("inf")))
    header = " | ".join(f"{name} ms | {name} / plain" for name in variants)
    print(f"| input ({LENGTH:,} chars) | {header} |")
    print("|---|" + "---:|---:|" * len(variants))
    for key in best["after"]:
        cells = []
        for name in variants:
            value, plain = best[name][key], best[name]["plain note"]
            ratio = "" if key.startswith("600") else f"{value / plain:.1f} x"
            cells.append(f"{value:,.1f} | {ratio}")
        print(f"| `{key}` | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
