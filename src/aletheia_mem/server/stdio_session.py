"""The stdio server once the first line is answered: the store, the tools and the read loop.

``stdio.py`` imports this only after it has answered a client's ``initialize``, so that the
tools, the domain and the store load while the client reads that reply.
"""

from __future__ import annotations

import logging
import sys
from typing import IO, Any

from aletheia_mem.config import load_settings
from aletheia_mem.server.mcp import (
    PARSE_ERROR,
    McpSession,
    error_response,
    handle_payload,
    initialize,
)
from aletheia_mem.server.stdio import encode, parse_line
from aletheia_mem.server.wiring import close_app, note_working_repository, open_app
from aletheia_mem.storage.store_file import exits_on_store_problem


def serve(session: McpSession, reader: IO[bytes], writer: IO[bytes]) -> None:
    """Answer each line until end of input."""
    for line in reader:
        answer_line(session, line, writer)


def answer_line(session: McpSession, line: bytes, writer: IO[bytes]) -> None:
    """Answer one line (a blank one gets nothing)."""
    if not line.strip():
        return
    payload, ok = parse_line(line)
    reply = (
        handle_payload(session, payload)
        if ok
        else error_response(None, PARSE_ERROR, "Parse error: the line is not valid JSON.")
    )
    if reply is not None:
        writer.write(encode(reply))
        writer.flush()


def serve_store(
    reader: IO[bytes], writer: IO[bytes], greeted: dict[str, Any] | None, first: bytes
) -> None:
    """Open the store and serve the rest of the input.

    Args:
        reader: stdin.
        writer: stdout.
        greeted: the params of the ``initialize`` ``stdio`` already answered, if it did.
        first: the line read but not answered yet (empty when none).
    """
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="aletheia: %(message)s")
    settings = load_settings()
    with exits_on_store_problem("aletheia-mcp"):
        app = open_app(settings)
        note_working_repository(app, settings.cwd)  # reads config.json: a bad one is one line
    session = McpSession(app=app, fixed_caller=settings.tool)
    if greeted is not None:
        initialize(session, greeted)  # the session as that reply left it; the reply is sent
    try:
        answer_line(session, first, writer)
        serve(session, reader, writer)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        close_app(app)
