"""The hub's log, bounded per record: whatever a client sends, one log line (a traceback
included) holds at most ``MAX_RECORD_CHARS`` characters, so no request can flood the log. A
record cut keeps its start (what failed) and its end (a traceback's last lines: the error)."""

from __future__ import annotations

import logging

MAX_RECORD_CHARS = 4000
# The share of the bound kept from a record's start; the rest is kept from its end.
_HEAD_SHARE = 0.25


class BoundedRecords(logging.Filter):
    """Renders each record's message and traceback once, cut to ``limit`` characters: its
    start and its end, the middle cut out."""

    def __init__(self, limit: int = MAX_RECORD_CHARS) -> None:
        super().__init__()
        self.limit = limit

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        elif record.exc_text:
            text += "\n" + record.exc_text
        if len(text) > self.limit:
            head = int(self.limit * _HEAD_SHARE)
            cut = f" ... [{len(text) - self.limit} characters cut] ... "
            text = text[:head] + cut + text[len(text) - (self.limit - head) :]
        record.msg, record.args = text, None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def bound_every_handler(limit: int = MAX_RECORD_CHARS) -> None:
    """Put the bound on the root logger's handlers (uvicorn's records reach them too)."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(BoundedRecords(limit))
