"""``aletheia-mcp`` and ``aletheia mcp``: MCP over stdio, newline-delimited JSON-RPC 2.0.

A coding tool starts the server and waits for its answer to ``initialize`` before anything else,
so that answer goes out first: this module imports only ``json`` and ``server.handshake``, and
the tools and the store (``server.stdio_session``) load once it is written. Its first reply is
the same either way (``mcp.handle_message`` answers the same message with the same text).
"""

from __future__ import annotations

import json
import sys

from aletheia_mem.json_objects import RepeatedKeyError, once, repeated_names
from aletheia_mem.server.handshake import first_greeting

TYPE_CHECKING = False  # ``typing`` itself costs the start a millisecond
if TYPE_CHECKING:
    import signal as _signal
    from typing import IO, Any
else:
    import _signal  # loaded with the interpreter; ``signal`` would import ``enum`` (8 ms)


class NotJsonNumber(ValueError):
    """A ``NaN``, ``Infinity`` or ``-Infinity`` in the text: Python reads them, JSON has none."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is not JSON")
        self.name = name


def reject_constant(name: str) -> Any:
    """A JSON decoder's ``parse_constant``: refuses the constant it is given."""
    raise NotJsonNumber(name)


_BOM = b"\xef\xbb\xbf"
# Built once (as the decoders below): ``json.loads`` and ``json.dumps`` with a keyword build a
# new decoder or encoder on every call. Replies are trees the server builds, never cyclic: no
# bookkeeping of each dict and list against cycles (``check_circular``), the same text.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


def utf8_text(raw: bytes) -> str:
    """``raw`` as UTF-8, every message's encoding (a UTF-16 or UTF-32 one is no message, where
    ``json.loads`` would guess it), a byte order mark before it ignored (RFC 8259 lets a
    reader); an encoded surrogate is kept, for the arguments' check to name.

    Raises:
        UnicodeDecodeError: ``raw`` is not UTF-8, or is UTF-16 or UTF-32 without a byte order
            mark (of ASCII it decodes as UTF-8, with the NUL bytes no JSON text begins with).
    """
    # An object's "{" then a byte other than NUL: UTF-8 to ``detect_encoding`` too (no BOM, not
    # UTF-16 or 32), told without its Python checks, a fifth of reading a save's line.
    if raw[:1] == b"{" and raw[1:2] != b"\x00":
        return raw.decode("utf-8", "surrogatepass")
    if not json.detect_encoding(raw).startswith("utf-8"):
        raise UnicodeDecodeError("utf-8", raw, 0, 1, "UTF-16 or UTF-32, not UTF-8")
    return raw.removeprefix(_BOM).decode("utf-8", "surrogatepass")


_ONCE_DECODER = json.JSONDecoder(object_pairs_hook=once, parse_constant=reject_constant)


def json_value_once(text: str) -> Any:
    """The JSON value of ``text``, each object giving each key once (a hook on every object
    read: about 0.3 us each).

    Raises:
        RepeatedKeyError: naming the keys of the first object that gives one twice.
        NotJsonNumber: it holds NaN, Infinity or -Infinity.
        ValueError: it is not JSON.
        RecursionError: it nests deeper than the parser goes.
    """
    return _ONCE_DECODER.decode(text)


class RepeatedKeyMessage(dict):  # type: ignore[type-arg]
    """A JSON-RPC message holding an object that gives a key twice, read as Python reads it
    (the last value) for ``mcp.handle_message`` to refuse. ``names``: that object's repeated
    keys; ``in_params``: it is below the envelope (in ``params``), not the envelope itself."""

    names: list[str]
    in_params: bool


class _Marked(dict):  # type: ignore[type-arg]
    """An object read by ``_marking`` that gives a key twice."""

    names: list[str]


def _marking(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    marked = _Marked(value)
    marked.names = repeated_names(name for name, _ in pairs)
    return marked


_MARKING_DECODER = json.JSONDecoder(object_pairs_hook=_marking, parse_constant=reject_constant)


def _first_marked(value: Any) -> _Marked | None:
    """The first object of ``value`` (itself included) that gives a key twice."""
    if isinstance(value, _Marked):
        return value
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in inner:
        found = _first_marked(item)
        if found is not None:
            return found
    return None


def _flagged(message: Any) -> Any:
    """``message`` as a ``RepeatedKeyMessage`` if it holds an object giving a key twice: the
    envelope's own keys first, then ``params``' objects, then the rest (``id``, ``result``)."""
    if not isinstance(message, dict):
        return message
    in_params = False
    found = message if isinstance(message, _Marked) else None
    if found is None:
        found = _first_marked(message.get("params"))
        in_params = found is not None
    if found is None:
        found = _first_marked(message)
    if found is None:
        return message
    flagged = RepeatedKeyMessage(message)
    flagged.names, flagged.in_params = found.names, in_params
    return flagged


def gives_twice(value: Any, name: str) -> bool:
    """Whether ``value``, an object of a message ``parse_line`` flagged, gives ``name`` twice
    (so its value is the last to this server, maybe the first to a proxy or a log)."""
    return isinstance(value, _Marked | RepeatedKeyMessage) and name in value.names


def parse_line(line: bytes) -> tuple[Any, bool]:
    """The JSON value of one UTF-8 line and whether it parsed; a message (of a batch, or the
    only one) holding an object that gives a key twice comes as a ``RepeatedKeyMessage``."""
    try:
        text = utf8_text(line)
        return json_value_once(text), True
    except RepeatedKeyError:
        return _flagged_value(text)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None, False


def _flagged_value(text: str) -> tuple[Any, bool]:
    """``parse_line`` of a text holding an object that gives a key twice (rare): read again,
    each message flagged or not."""
    try:
        value = _MARKING_DECODER.decode(text)
        return (
            [_flagged(item) for item in value] if isinstance(value, list) else _flagged(value)
        ), True
    except (ValueError, RecursionError):  # NaN or a nest past the parser after the key
        return None, False


def encode(message: Any) -> bytes:
    """One compact JSON line; JSON escapes keep newlines out of it.

    A lone surrogate (``"\\ud800"`` in a client's id or method) can only sit inside a JSON
    string, so it goes out as the same ``\\uXXXX`` escape instead of failing UTF-8.
    """
    text = _ENCODER.encode(message)
    return text.encode("utf-8", "backslashreplace") + b"\n"


USAGE = """Usage: aletheia-mcp   (also: aletheia mcp)

  Serve MCP over stdio (newline-delimited JSON-RPC 2.0) for the coding tool that starts it.
  It takes no arguments; the environment configures it:

  ALETHEIA_DATA_DIR  the store's folder (default ~/.aletheia)
  ALETHEIA_HUB_DB    a store file or postgresql:// URL used instead
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
    """Serve stdin and stdout until end of input, SIGINT or SIGTERM (``aletheia-mcp`` and
    ``aletheia mcp``)."""
    reader, writer = sys.stdin.buffer, sys.stdout.buffer
    try:
        first, greeted = greet(reader, writer)
        for sig in (_signal.SIGINT, _signal.SIGTERM):
            _signal.signal(sig, _interrupt_once)
        from aletheia_mem.server.stdio_session import serve_store

        serve_store(reader, writer, greeted, first)
    except (KeyboardInterrupt, BrokenPipeError):
        return  # before the store was open; serve_store closes it once it is


def _interrupt_once(signum: int, frame: object) -> None:
    """The first SIGINT or SIGTERM stops the read loop (the store then closes); later ones are
    ignored, so they cannot break that close with a traceback."""
    for sig in (_signal.SIGINT, _signal.SIGTERM):
        _signal.signal(sig, _signal.SIG_IGN)
    raise KeyboardInterrupt


def greet(reader: IO[bytes], writer: IO[bytes]) -> tuple[bytes, dict[str, Any] | None]:
    """Read up to the first line that is not blank and answer it if it is a lone, well-formed
    ``initialize``. Returns the line still to answer (empty when none) and, when it was
    answered, the initialize's params."""
    for line in reader:
        if not line.strip():
            continue
        message, ok = parse_line(line)
        # One that gives a key twice is refused by ``mcp``, which then answers the line.
        reply = first_greeting(message) if ok and type(message) is dict else None
        if reply is None:
            return line, None
        writer.write(encode(reply))
        writer.flush()
        params = message.get("params")
        return b"", params if isinstance(params, dict) else {}
    return b"", None


if __name__ == "__main__":
    main()
