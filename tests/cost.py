"""How a function's cost grows with its input: for tests that an input cannot make it quadratic."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

# 8 times the input: linear costs 8 times, quadratic 64. The bound leaves a linear function three
# times its ratio for a busy machine's noise (4 times the text with a bound of 2 failed at a load
# average of 9) and still fails a quadratic one by more than twice.
GROWTH = 8
LINEAR_BOUND = 24


def cpu_ratio(work: Callable[[str], object], large: str, small: str, runs: int = 9) -> float:
    """The best CPU time of ``work(large)`` over the best of ``work(small)``, taken in turns: CPU
    time, not wall time, so that other processes on a busy machine do not count, and with the
    garbage collector off, whose passes land on one run or another."""
    best = {large: float("inf"), small: float("inf")}
    gc.disable()
    try:
        for _ in range(runs):
            for text in (small, large):
                started = time.process_time()
                work(text)
                best[text] = min(best[text], time.process_time() - started)
    finally:
        gc.enable()
    return best[large] / best[small]
