"""``aletheia-mcp`` and ``aletheia mcp``: MCP over stdio, newline-delimited JSON-RPC 2.0."""

from __future__ import annotations

import json
import logging
import sys
from typing import IO, Any

from aletheia_mem.config import load_settings
from aletheia_mem.server.mcp import PARSE_ERROR, McpSession, error_response, handle_payload
from aletheia_mem.server.wiring import close_app, note_working_repository, open_app
from aletheia_mem.storage.store_file import exits_on_store_problem

logger = logging.getLogger("aletheia")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Built once: ``json.loads`` and ``json.dumps`` with a keyword build a new decoder or encoder
# on every call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def parse_line(line: bytes) -> tuple[Any, bool]:
    """The JSON value of one line and whether it parsed (as ``json.loads`` reads bytes)."""
    try:
        return _DECODER.decode(line.decode(json.detect_encoding(line), "surrogatepass")), True
    except (ValueError, RecursionError):
        return None, False


def encode(message: Any) -> bytes:
    """One compact JSON line; JSON escapes keep newlines out of it.

    A lone surrogate (``"\\ud800"`` in a client's id or method) can only sit inside a JSON
    string, so it goes out as the same ``\\uXXXX`` escape instead of failing UTF-8.
    """
    text = _ENCODER.encode(message)
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


USAGE = """Usage: aletheia-mcp   (also: aletheia mcp)

  Serve MCP over stdio (newline-delimited JSON-RPC 2.0) for the coding tool that starts it.
  It takes no arguments; the environment configures it:

  ALETHEIA_DATA_DIR  the store's folder (default ~/.aletheia)
  ALETHEIA_TOOL      the caller's name recorded with what it writes
  ALETHEIA_CWD       the folder whose project is the default (default: the working folder)
  ALETHEIA_SEMANTIC  on: semantic recall too (needs the semantic extra)

Options:
  --version   Show the version and exit.
  -h, --help  Show this message and exit.
"""


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``aletheia-mcp``: ``--help``, ``--version``, else the server."""
    args = sys.argv[1:] if argv is None else argv
    if args in (["--help"], ["-h"]):
        sys.stdout.write(USAGE)
        return
    if args == ["--version"]:
        from aletheia_mem import __version__

        sys.stdout.write(f"aletheia-mcp, version {__version__}\n")
        return
    if args:
        sys.stderr.write(
            "aletheia-mcp takes no arguments; configure it with ALETHEIA_* variables"
            " (aletheia-mcp --help lists them).\n"
        )
        sys.exit(2)
    run()


def run() -> None:
    """Serve stdin and stdout until end of input (``aletheia-mcp`` and ``aletheia mcp``)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="aletheia: %(message)s")
    settings = load_settings()
    with exits_on_store_problem("aletheia-mcp"):
        app = open_app(settings)
    note_working_repository(app, settings.cwd)
    session = McpSession(app=app, fixed_caller=settings.tool)
    try:
        serve(session, sys.stdin.buffer, sys.stdout.buffer)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        close_app(app)


if __name__ == "__main__":
    main()
