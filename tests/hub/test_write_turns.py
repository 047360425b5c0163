"""The hub's writing threads take turns on a SQLite store and none on PostgreSQL."""

from __future__ import annotations

import threading

import pytest

from aletheia_mem.hub.write_turns import write_turns

WAIT_S = 5.0


def second_writer_gets_in_while_the_first_writes(serial: bool) -> bool:
    turns = write_turns(serial)
    first_in, second_tried, second_in = threading.Event(), threading.Event(), threading.Event()

    def second() -> None:
        first_in.wait(WAIT_S)
        second_tried.set()
        with turns:
            second_in.set()

    thread = threading.Thread(target=second)
    thread.start()
    with turns:
        first_in.set()
        second_tried.wait(WAIT_S)
        got_in = second_in.wait(0.5)  # bounded: a writer that must wait does not get in
    thread.join(WAIT_S)
    assert second_in.is_set()  # and every writer gets its turn in the end
    return got_in


@pytest.mark.parametrize(("serial", "together"), [(True, False), (False, True)])
def test_writers_wait_for_each_other_only_when_the_store_needs_it(
    serial: bool, together: bool
) -> None:
    assert second_writer_gets_in_while_the_first_writes(serial) is together
