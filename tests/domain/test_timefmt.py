"""Times users type and read: always UTC, as the reference prints them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
_FIRST_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z
_LAST_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


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


def test_the_last_day_shown_is_a_valid_end_bound_that_includes_its_last_instant():
    end = parse_instant("9999-12-31", "until", end_of_day=True)
    assert end == _LAST_MS + 1
    assert parse_instant("9999-12-31", "since") == end - DAY_MS


def test_a_date_time_as_an_end_bound_includes_that_instant():
    after = REFERENCE_NOW + 1  # the exclusive bound just past it
    assert parse_instant("2026-10-29T19:46:45.563Z", "until", end_of_day=True) == after
    assert parse_instant(str(REFERENCE_NOW), "until", end_of_day=True) == after
    assert parse_instant(REFERENCE_NOW, "until", end_of_day=True) == after


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


def _instant_by_datetime(ms: int) -> str:
    """``format_instant`` by datetime from float seconds, exact to the microsecond while
    seconds stay under 2**32 (1833 to 2106); past that, floats lose the milliseconds."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="milliseconds") + "Z"


_FLOAT_EXACT_MS = 4_000_000_000_000


@settings(max_examples=500)
@given(st.integers(min_value=-_FLOAT_EXACT_MS, max_value=_FLOAT_EXACT_MS))
def test_an_instant_formats_as_datetime_prints_it(ms: int) -> None:
    assert format_instant(ms) == _instant_by_datetime(ms)


@pytest.mark.parametrize("ms", [0, -1, 999, 1000, -DAY_MS, DAY_MS - 1, MIDNIGHT - 1])
def test_instants_at_the_edges_of_days(ms: int) -> None:
    assert format_instant(ms) == _instant_by_datetime(ms)


def test_the_first_and_last_instants_of_the_calendar_keep_their_milliseconds() -> None:
    assert format_instant(_FIRST_MS) == "0001-01-01T00:00:00.000Z"
    assert format_instant(_LAST_MS) == "9999-12-31T23:59:59.999Z"


def test_every_clock_digit_formats_as_datetime_prints_it() -> None:
    """Each hour, minute, second and millisecond value, zero-padded as datetime pads it."""
    for n in range(1000):
        ms = MIDNIGHT + (n % 24) * 3_600_000 + (n % 60) * 60_000 + ((n * 7) % 60) * 1000 + n
        assert format_instant(ms) == _instant_by_datetime(ms)


@settings(max_examples=300)
@given(st.lists(st.integers(min_value=-_FLOAT_EXACT_MS, max_value=_FLOAT_EXACT_MS), max_size=6))
def test_an_instant_formatted_again_is_the_same(instants: list[int]) -> None:
    for ms in instants + instants:  # the second time from the kept ones
        assert format_instant(ms) == _instant_by_datetime(ms)


def _ms(*parts: int) -> int:
    return int(datetime(*parts, tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("2026", _ms(2026, 1, 1), _ms(2027, 1, 1)),
        ("2026-12", _ms(2026, 12, 1), _ms(2027, 1, 1)),
        ("2026-02", _ms(2026, 2, 1), _ms(2026, 3, 1)),
        ("20261205", _ms(2026, 12, 5), _ms(2026, 12, 6)),
        ("2026-12-05", _ms(2026, 12, 5), _ms(2026, 12, 6)),
        (" 2026 ", _ms(2026, 1, 1), _ms(2027, 1, 1)),
        (2026, _ms(2026, 1, 1), _ms(2027, 1, 1)),  # a number sent where text was asked for
        (20261205, _ms(2026, 12, 5), _ms(2026, 12, 6)),
        ("9999", _ms(9999, 1, 1), _LAST_MS + 1),
        ("9999-12", _ms(9999, 12, 1), _LAST_MS + 1),
    ],
)
def test_a_bare_year_month_or_basic_date_names_that_whole_period(text, start, end):
    # "2026" and "20261205" were read as milliseconds after 1970-01-01 00:00: never meant.
    assert parse_instant(text, "since") == start
    assert parse_instant(text, "until", end_of_day=True) == end


def test_a_basic_date_time_is_that_instant():
    assert parse_instant("20261029T194645.563Z", "since") == REFERENCE_NOW
    assert parse_instant("20261029T194645.563Z", "until", end_of_day=True) == REFERENCE_NOW + 1


@pytest.mark.parametrize(
    "text", ["1793232000000", "0", "86400000", "-1000", "20261345", "999", "202612"]
)
def test_digits_that_are_no_year_or_date_stay_epoch_milliseconds(text):
    # A real timestamp has 13 digits; 8 digits that are no valid date are no YYYYMMDD, and
    # ISO 8601 has no six-digit year-month.
    assert parse_instant(text, "since") == int(text)
    assert parse_instant(text, "until", end_of_day=True) == int(text) + 1


@pytest.mark.parametrize("text", ["2026-13", "2026-00", "0000", "2026-1"])
def test_a_month_or_year_that_does_not_exist_is_an_error(text):
    with pytest.raises(InvalidInputError):
        parse_instant(text, "since")


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("2026-339", _ms(2026, 12, 5), _ms(2026, 12, 6)),  # the year's 339th day
        ("2026-001", _ms(2026, 1, 1), _ms(2026, 1, 2)),
        ("2024-366", _ms(2024, 12, 31), _ms(2025, 1, 1)),  # a leap year's last day
        ("2026-W49-6", _ms(2026, 12, 5), _ms(2026, 12, 6)),  # week 49's Saturday
        ("2026W496", _ms(2026, 12, 5), _ms(2026, 12, 6)),
        ("2026-W01-1", _ms(2025, 12, 29), _ms(2025, 12, 30)),  # week 1 begins in 2025
    ],
)
def test_an_ordinal_or_week_date_names_its_whole_day(text, start, end):
    # "2026-339" was refused while "2026-W49-6" was read as the day's first instant only.
    assert parse_instant(text, "since") == start
    assert parse_instant(text, "until", end_of_day=True) == end


@pytest.mark.parametrize(
    ("text", "expected"), [("2026-339T10:00:00Z", _ms(2026, 12, 5) + 10 * 3_600_000),
                           ("2026-W49-6T10:00Z", _ms(2026, 12, 5) + 10 * 3_600_000)]
)  # fmt: skip
def test_an_ordinal_or_week_date_time_is_that_instant(text, expected):
    assert parse_instant(text, "as_of") == expected


@pytest.mark.parametrize("text", ["2026-000", "2026-366", "0000-001", "2026-W54-1", "2026-W00-1"])
def test_an_ordinal_or_week_day_that_does_not_exist_is_an_error(text):
    with pytest.raises(InvalidInputError, match="as_of must be an ISO 8601 date"):
        parse_instant(text, "as_of")
