"""Parsing and formatting of the times users type and read (always UTC)."""

from __future__ import annotations

import re
from datetime import MAXYEAR, UTC, date, datetime, timedelta
from functools import lru_cache

from aletheia_mem.errors import InvalidInputError

DAY_MS = 86_400_000
# A bare calendar period of ISO 8601: a year, a year-month, or a date (extended or basic). Each
# pattern reads ASCII digits only, as ``datetime.fromisoformat`` does (``\d`` alone would read a
# full-width or an Arabic-Indic year, and ``int`` its digits).
_PERIOD = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?|(\d{2})(\d{2}))?$", re.ASCII)
_EPOCH_MS = re.compile(r"^-?\d{1,15}$", re.ASCII)
# ISO 8601's other dates: a year's day (2026-339) and a week's day (2026-W49-6, 2026W496)
_ORDINAL = re.compile(r"^(\d{4})-(\d{3})(?=[Tt]|$)", re.ASCII)
_WEEK_DAY = re.compile(r"^(\d{4})-?W(\d{2})-?([1-7])(?=[Tt]|$)", re.ASCII)
FIRST_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z
LAST_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


def to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def format_date(ms: int) -> str:
    """``2026-10-29``."""
    return to_datetime(ms).date().isoformat()


def format_minute(ms: int) -> str:
    """``2026-10-29T19:46``."""
    return to_datetime(ms).replace(tzinfo=None).isoformat(timespec="minutes")


def format_clock(ms: int) -> str:
    """``19:46``."""
    return to_datetime(ms).strftime("%H:%M")


@lru_cache(maxsize=4096)
def day_date(day: int) -> str:
    """``format_date`` of a UTC day (``ms // DAY_MS``): a page of results repeats few dates."""
    return format_date(day * DAY_MS)


# Zero-padded digits by lookup: a format spec (``:02d``) costs more than the rest of an instant.
_TWO_DIGITS = tuple(f"{n:02d}" for n in range(100))
_THREE_DIGITS = tuple(f"{n:03d}" for n in range(1000))


@lru_cache(maxsize=4096)
def format_instant(ms: int) -> str:
    """``2026-10-29T19:46:45.563Z``.

    The time of day by integer arithmetic: datetime's ``replace`` and ``isoformat`` with
    keywords cost a search 5 % of its instructions (a page of results shows 20 instants).
    Kept for the instants shown last (a memory found again shows the same instant): a kept
    one costs a tenth of one made.
    """
    day, millis = divmod(ms, DAY_MS)
    seconds, millis = divmod(millis, 1000)
    hour, seconds = divmod(seconds, 3600)
    minute, second = divmod(seconds, 60)
    two = _TWO_DIGITS
    return f"{day_date(day)}T{two[hour]}:{two[minute]}:{two[second]}.{_THREE_DIGITS[millis]}Z"


def parse_instant(value: object, name: str, *, end_of_day: bool = False) -> int:
    """Read an ISO 8601 date, date-time or epoch milliseconds into epoch milliseconds.

    Args:
        value: what the caller sent (string or number).
        name: the argument's name, for the error message.
        end_of_day: read it as an exclusive end bound that includes what it names: a bare
            date, month or year gives the next one's start, an instant the millisecond after it
            ("up to" includes the instant itself, as ``since`` does).

    Raises:
        InvalidInputError: the value is none of the accepted forms.
    """
    problem = f"{name} must be an ISO 8601 date, date-time or epoch milliseconds."
    if isinstance(value, str):
        value = _calendar_date(value.strip(), problem)
    period = _calendar_period(value, problem)
    if period is not None:
        return period[1] if end_of_day else period[0]
    start = _start_instant(value, problem)
    return start + 1 if end_of_day else start


def _calendar_date(text: str, problem: str) -> str:
    """``text`` with an ordinal date (``2026-339``, the year's 339th day) or a week date
    (``2026-W49-6``) at its start written as the calendar date it names (``2026-12-05``),
    which the other forms read (a bare one is that day, as ``2026-12-05`` is); else as is.

    Raises:
        InvalidInputError: a day the year or week does not have (``2026-366``, ``2026-W54-1``).
    """
    try:
        if match := _ORDINAL.match(text):
            year, day = int(match.group(1)), int(match.group(2))
            found = date(year, 1, 1) + timedelta(days=day - 1)
            if day < 1 or found.year != year:
                raise ValueError(text)
        elif match := _WEEK_DAY.match(text):
            found = date.fromisocalendar(*(int(part) for part in match.groups()))
        else:
            return text
    except (ValueError, OverflowError):
        raise InvalidInputError(problem) from None
    return found.isoformat() + text[match.end() :]


def _calendar_period(value: object, problem: str) -> tuple[int, int] | None:
    """The year (``2026``), month (``2026-12``) or day (``2026-12-05``, ``20261205``) a bare
    date names, as its first millisecond and the next period's; None for any other form.

    Four digits are a year and eight that make a valid date a day, never milliseconds after
    1970-01-01 00:00 (no one means 2 s past the epoch by ``2026``); eight that make no date stay
    milliseconds, as every other run of digits does.

    Raises:
        InvalidInputError: a year or year-month that names no period (``2026-13``, ``0000``).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # a number sent for the text: read as its digits are
    if not isinstance(value, str):
        return None
    match = _PERIOD.match(value.strip())
    if match is None:
        return None
    year, month, day, basic_month, basic_day = match.groups()
    try:
        if basic_month is not None:
            start = date(int(year), int(basic_month), int(basic_day))
        else:
            start = date(int(year), int(month or 1), int(day or 1))
    except ValueError:
        if basic_month is not None:
            return None  # eight digits that are no date: milliseconds
        raise InvalidInputError(problem) from None
    unit = "day" if day is not None or basic_day is not None else "month" if month else "year"
    return _date_ms(start), _period_end(start, unit)


def _period_end(start: date, unit: str) -> int:
    """The first millisecond after the day, month or year that begins at ``start``; past
    9999, the bound just after the last instant shown (so 9999 is a period too)."""
    if unit == "day":
        return LAST_MS + 1 if start == date.max else _date_ms(start + timedelta(days=1))
    if unit == "year" or start.month == 12:
        year, month = start.year + 1, 1
    else:
        year, month = start.year, start.month + 1
    return LAST_MS + 1 if year > MAXYEAR else _date_ms(date(year, month, 1))


def _date_ms(day: date) -> int:
    return (day - _EPOCH.date()).days * DAY_MS


def _start_instant(value: object, problem: str) -> int:
    """``parse_instant`` of a date-time or epoch milliseconds (a bare date is a period)."""
    if isinstance(value, bool):
        raise InvalidInputError(problem)
    if isinstance(value, int | float):
        return _checked_ms(value, problem)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(problem)
    text = value.strip()
    if _EPOCH_MS.match(text):
        return _checked_ms(int(text), problem)
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise InvalidInputError(problem) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:  # whole milliseconds exactly: a float of seconds times 1000 can land 1 ms off
        return _checked_ms((parsed - _EPOCH) // _ONE_MS, problem)
    except OverflowError:  # past the years datetime can hold
        raise InvalidInputError(problem) from None


def _checked_ms(value: float, problem: str) -> int:
    # NaN, or outside years 1 to 9999 (such instants could not be shown)
    if value != value or not FIRST_MS <= value <= LAST_MS:
        raise InvalidInputError(problem)
    return int(value)
