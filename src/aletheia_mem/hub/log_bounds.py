"""The hub's log, bounded per record: whatever a client sends, one log line (a traceback
included) holds at most ``MAX_RECORD_CHARS`` characters, so no request can flood the log."""

from __future__ import annotations

import logging

MAX_RECORD_CHARS = 4000


class BoundedRecords(logging.Filter):
    """Renders each record's message and traceback once, cut to ``limit`` characters."""

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
            text = text[: self.limit] + f" ... [{len(text) - self.limit} characters cut]"
        record.msg, record.args = text, None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def bound_every_handler(limit: int = MAX_RECORD_CHARS) -> None:
    """Put the bound on the root logger's handlers (uvicorn's records reach them too)."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(BoundedRecords(limit))
