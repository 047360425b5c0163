"""Number settings read from the environment: anything but ASCII digits in range is refused with
the setting's one-line message, never a ValueError from ``int``."""

from __future__ import annotations

import pytest

from aletheia_mem.config import hub_pool_size, parse_port, parse_workers
from aletheia_mem.errors import InvalidInputError

# "²" and "٣" are digits to str.isdigit that int() refuses or reads; 5,000 digits are past int's
# limit for text; the rest are plainly no whole number.
NOT_WHOLE = ["\u00b2", "\u0663", "9" * 5000, "1e3", "-1", "0x10", "", " ", " 8765 ", "8\n"]


@pytest.mark.parametrize("text", NOT_WHOLE)
def test_a_port_that_is_no_ascii_whole_number_is_refused(text: str) -> None:
    with pytest.raises(InvalidInputError, match="ALETHEIA_PORT must be a port number"):
        parse_port(text)


@pytest.mark.parametrize("text", NOT_WHOLE)
def test_workers_that_are_no_ascii_whole_number_are_refused(text: str) -> None:
    with pytest.raises(InvalidInputError, match="ALETHEIA_WORKERS must be a whole number"):
        parse_workers(text)


# A variable is read stripped of blanks: blank, or a number with blanks around, is another case.
@pytest.mark.parametrize("text", [value for value in NOT_WHOLE if value.strip() == value != ""])
def test_a_pool_size_that_is_no_ascii_whole_number_is_refused(text: str) -> None:
    with pytest.raises(InvalidInputError, match="ALETHEIA_HUB_POOL_SIZE must be a whole number"):
        hub_pool_size({"ALETHEIA_HUB_POOL_SIZE": text})


def test_whole_numbers_in_range_are_read() -> None:
    assert parse_port("8765") == 8765
    assert parse_port("0") == 0
    assert parse_workers("2") == 2
    assert hub_pool_size({"ALETHEIA_HUB_POOL_SIZE": "4"}) == 4
    assert hub_pool_size({"ALETHEIA_HUB_POOL_SIZE": "  "}) is None
    with pytest.raises(InvalidInputError):
        parse_port("65536")
    with pytest.raises(InvalidInputError):
        parse_port("9" * 19)


def test_leading_zeros_do_not_make_a_number_out_of_range() -> None:
    """``int`` reads them; only significant digits count against the 18-digit shortcut."""
    assert parse_port("0" * 20 + "8765") == 8765
    assert parse_workers("0" * 30 + "2") == 2
    assert parse_port("0" * 5000) == 0
