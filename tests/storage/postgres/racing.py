"""Run one piece of work in several threads at once, for the tests of racing writers."""

from __future__ import annotations

import threading
from collections.abc import Callable


def race(work: Callable[[int], None], threads: int) -> list[BaseException]:
    """Start ``work(n)`` for n in range(threads) together; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def run(n: int) -> None:
        start.wait(timeout=5)
        try:
            work(n)
        except BaseException as error:
            errors.append(error)

    started = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join(timeout=60)
    return errors
