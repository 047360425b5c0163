"""``aletheia-mcp``: MCP over stdio, newline-delimited JSON-RPC 2.0. No flags."""

from __future__ import annotations

import json
import logging
import sys
from typing import IO, Any

from aletheia_mem.config import load_settings
from aletheia_mem.server.mcp import PARSE_ERROR, McpSession, error_response, handle_payload
from aletheia_mem.server.wiring import open_app

logger = logging.getLogger("aletheia")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(line: bytes) -> tuple[Any, bool]:
    """The JSON value of one line and whether it parsed."""
    try:
        return json.loads(line, parse_constant=_reject_constant), True
    except (ValueError, RecursionError):
        return None, False


def encode(message: Any) -> bytes:
    """One compact JSON line; JSON escapes keep newlines out of it.

    A lone surrogate (``"\\ud800"`` in a client's id or method) can only sit inside a JSON
    string, so it goes out as the same ``\\uXXXX`` escape instead of failing UTF-8.
    """
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace") + b"\n"


def serve(session: McpSession, reader: IO[bytes], writer: IO[bytes]) -> None:
    """Answer each line until end of input."""
    for line in reader:
        if not line.strip():
            continue
        payload, ok = parse_line(line)
        reply = (
            handle_payload(session, payload)
            if ok
            else error_response(None, PARSE_ERROR, "Parse error: the line is not valid JSON.")
        )
        if reply is not None:
            writer.write(encode(reply))
            writer.flush()


def main() -> None:
    """Entry point of ``aletheia-mcp``."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="aletheia: %(message)s")
    if len(sys.argv) > 1:
        print(
            "aletheia-mcp takes no flags; configure it with ALETHEIA_* variables.", file=sys.stderr
        )
        sys.exit(2)
    settings = load_settings()
    app = open_app(settings)
    session = McpSession(app=app, fixed_caller=settings.tool)
    try:
        serve(session, sys.stdin.buffer, sys.stdout.buffer)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        app.store.close()


if __name__ == "__main__":
    main()
