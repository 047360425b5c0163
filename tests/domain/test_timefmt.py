"""Times users type and read: always UTC, as the reference prints them."""

from __future__ import annotations

import pytest

from aletheia_mem.errors import InvalidInputError
from aletheia_mem.timefmt import (
    DAY_MS,
    format_clock,
    format_date,
    format_instant,
    format_minute,
    parse_instant,
)
from tests.conftest import REFERENCE_NOW

MIDNIGHT = 1_793_232_000_000  # 2026-10-29T00:00:00Z


def test_reference_instant_formats_as_the_reference_prints_it():
    assert format_date(REFERENCE_NOW) == "2026-10-29"
    assert format_minute(REFERENCE_NOW) == "2026-10-29T19:46"
    assert format_clock(REFERENCE_NOW) == "19:46"
    assert format_instant(REFERENCE_NOW) == "2026-10-29T19:46:45.563Z"


def test_milliseconds_are_zero_padded():
    assert format_instant(MIDNIGHT + 7) == "2026-10-29T00:00:00.007Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-10-29", MIDNIGHT),
        ("2026-10-29T19:46:45.563Z", REFERENCE_NOW),
        ("2026-10-29T19:46:45.563z", REFERENCE_NOW),
        ("2026-10-29T19:46:45.563", REFERENCE_NOW),
        ("2026-10-29T21:46:45.563+02:00", REFERENCE_NOW),
        ("2026-10-29 19:46:45.563Z", REFERENCE_NOW),
        (" 2026-10-29T19:46:45.563Z ", REFERENCE_NOW),
        (str(REFERENCE_NOW), REFERENCE_NOW),
        (REFERENCE_NOW, REFERENCE_NOW),
        (float(REFERENCE_NOW), REFERENCE_NOW),
        ("0", 0),
    ],
)
def test_parse_accepts_dates_date_times_and_epoch_milliseconds(text, expected):
    assert parse_instant(text, "since") == expected


def test_a_bare_date_as_an_end_bound_includes_that_whole_day():
    assert parse_instant("2026-10-29", "until", end_of_day=True) == MIDNIGHT + DAY_MS


def test_a_date_time_as_an_end_bound_is_that_instant():
    assert parse_instant("2026-10-29T19:46:45.563Z", "until", end_of_day=True) == REFERENCE_NOW
    assert parse_instant(str(REFERENCE_NOW), "until", end_of_day=True) == REFERENCE_NOW


@pytest.mark.parametrize(
    "value",
    ["", "  ", "yesterday", "2026-13-01", "29/10/2026", True, None, [2026], float("nan"), 1e300],
)
def test_unreadable_times_are_an_error_naming_the_argument(value):
    with pytest.raises(InvalidInputError) as raised:
        parse_instant(value, "as_of")

    assert raised.value.message == (
        "as_of must be an ISO 8601 date, date-time or epoch milliseconds."
    )
    assert raised.value.code == "invalid_input"
