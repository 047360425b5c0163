"""read_lines: an export's lines, each read with a bounded readline, so an endless line
(/dev/zero) is refused by number instead of filling memory; bytes that are not UTF-8 too."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from aletheia_mem.domain.transfer import MAX_LINE, read_lines
from aletheia_mem.errors import InvalidInputError


class _Endless(io.RawIOBase):
    """NUL bytes without end, as /dev/zero gives them; counts what was read."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        buffer[:] = bytes(len(buffer))
        self.read_bytes += len(buffer)
        return len(buffer)


def _decoded(data: bytes) -> io.TextIOWrapper:
    """The stream as ``aletheia import`` opens it."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="surrogateescape")


def _all(lines: Iterator[str]) -> list[str]:
    return list(lines)


def test_an_endless_line_is_refused_after_a_bounded_read() -> None:
    source = _Endless()
    stream = io.TextIOWrapper(io.BufferedReader(source), encoding="utf-8-sig")
    with pytest.raises(InvalidInputError) as raised:
        _all(read_lines(stream))
    assert raised.value.message == "Line 1 is longer than 8,000,000 characters."
    assert source.read_bytes < 2 * MAX_LINE


def test_a_line_of_max_line_characters_is_read_and_one_more_is_refused() -> None:
    longest = "x" * MAX_LINE
    assert _all(read_lines(io.StringIO(f"a\n{longest}\n{longest}"))) == [
        "a\n",
        longest + "\n",
        longest,
    ]
    with pytest.raises(InvalidInputError, match=r"^Line 3 is longer than 8,000,000 characters"):
        _all(read_lines(io.StringIO(f"a\nb\n{longest}x\n")))


def test_a_byte_order_mark_is_skipped_and_bytes_that_are_not_utf8_are_refused_by_line() -> None:
    assert _all(read_lines(_decoded("\ufeff{}\nÜ\n".encode()))) == ["{}\n", "Ü\n"]
    with pytest.raises(InvalidInputError) as raised:
        _all(read_lines(_decoded(b"{}\n" * 5000 + b'{"x": "\xff"}\n')))
    assert raised.value.message == "Line 5001 is not UTF-8 text."
