"""Settings: the only reader of ``ALETHEIA_*`` environment variables."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aletheia_mem.errors import ConfigError, InvalidInputError
from aletheia_mem.printable import MAX_CALLER, printable_line

DB_FILE_NAME = "aletheia.db"
HUB_DB_RELATIVE = Path("hub") / "hub.db"
DATA_DIR_VARIABLE = "ALETHEIA_DATA_DIR"
STORE_VARIABLE = "ALETHEIA_HUB_DB"  # a store used instead of the data folder's (DESIGN §3)
# A hub store named by one of these is a PostgreSQL database (storage.open opens it).
DATABASE_URL_PREFIXES = ("postgresql://", "postgres://")
# So is one named by a libpq key=value string (``host=db dbname=hub password=...``), which
# psycopg reads as it reads a URL: it starts with one of libpq's keywords and "=". Taken for a
# file path, it made a SQLite file named by it, its password shown in every error about it.
_CONNINFO_START = re.compile(
    r"\s*(?:host|hostaddr|port|dbname|user|password|passfile|service|sslmode|sslrootcert"
    r"|sslcert|sslkey|sslpassword|application_name|options|connect_timeout|target_session_attrs"
    r"|channel_binding|require_auth|gssencmode|client_encoding|load_balance_hosts)\s*="
)
DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8765  # claude-mem holds 37777


@dataclass(frozen=True)
class Settings:
    """What the process was configured with, read once at start.

    ``store`` is the store in use: the file or ``postgresql://`` URL ``ALETHEIA_HUB_DB`` names,
    else ``<data dir>/aletheia.db``; ``store_variable`` is the variable that chose it.
    """

    store: Path | str
    store_variable: str
    data_dir: Path
    tool: str | None
    cwd: Path
    api_key: str | None


def semantic_enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether search uses the semantic extra (``ALETHEIA_SEMANTIC=on``; off by default).

    Opt-in because catching up on a large store embeds every memory in a background thread
    that competes with the server for the CPU (and the GIL) until it is done.

    Raises:
        InvalidInputError: a value that is neither on nor off (a typo is not silently off).
    """
    env = os.environ if env is None else env
    value = env.get("ALETHEIA_SEMANTIC", "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise InvalidInputError(
        f"ALETHEIA_SEMANTIC must be on or off (also 1/0, true/false, yes/no), not {value[:40]!r}."
    )


_ON = frozenset({"on", "1", "true", "yes"})
_OFF = frozenset({"", "off", "0", "false", "no"})


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read settings from the environment (``os.environ`` by default).

    The one place the store is chosen: ``ALETHEIA_HUB_DB`` (a file, or a ``postgresql://``
    URL) wins over ``ALETHEIA_DATA_DIR``'s ``aletheia.db``, for the servers, the CLI and the
    hooks alike.
    """
    env = os.environ if env is None else env
    cwd = env.get("ALETHEIA_CWD", "").strip()
    named = env.get(STORE_VARIABLE, "").strip()
    folder = data_dir(env)
    return Settings(
        store=hub_target(named) if named else folder / DB_FILE_NAME,
        store_variable=STORE_VARIABLE if named else DATA_DIR_VARIABLE,
        data_dir=folder,
        tool=caller_name(env.get("ALETHEIA_TOOL", "")),
        cwd=Path(cwd).expanduser() if cwd else Path.cwd(),
        api_key=env.get("ALETHEIA_API_KEY") or None,
    )


@dataclass(frozen=True)
class HttpSettings:
    """How ``aletheia-server`` listens and whom it lets in."""

    host: str
    port: int
    api_key: str | None
    allowed_origins: tuple[str, ...]
    allowed_hosts: tuple[str, ...]
    workers: int = 1


MAX_WORKERS = 32
MAX_POOL_SIZE = 200  # PostgreSQL connections of one hub process
MAX_SEARCH_CACHE_MB = 65_536  # postings one PostgreSQL hub process holds for search


def default_workers() -> int:
    """Two worker processes where the system has two cores and can fork, else one.

    Measured (bench/http_bench.py, 2 cores): one process serves about 800 searches/s, two about
    1,250/s; more processes than cores only add memory.
    """
    return min(2, os.cpu_count() or 1) if hasattr(os, "fork") else 1


def parse_workers(text: str, name: str = "ALETHEIA_WORKERS") -> int:
    """A number of worker processes, 1 to ``MAX_WORKERS``.

    Raises:
        InvalidInputError: the text is not a whole number in that range.
    """
    value = _whole(text)
    if value is None or not 1 <= value <= MAX_WORKERS:
        raise InvalidInputError(f"{name} must be a whole number from 1 to {MAX_WORKERS}.")
    if value > 1 and not hasattr(os, "fork"):
        raise InvalidInputError(f"{name} above 1 needs a system that can fork processes.")
    return value


def _whole(text: str) -> int | None:
    """The whole number ``text`` spells in ASCII digits and nothing else (an option's value,
    ``--port " 8765 "`` too, is exact; a variable's is stripped of blanks first), None if none:
    "²" is a digit to ``str.isdigit`` that ``int`` refuses, and ``int`` refuses more than 4,300
    digits; past 18 significant ones no setting is in range anyway."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else 10**18


def _word_list(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.replace(",", " ").split() if part)


def parse_port(text: str, name: str = "ALETHEIA_PORT") -> int:
    """A TCP port number; 0 asks the system for a free one.

    Raises:
        InvalidInputError: the text is not a whole number from 0 to 65535.
    """
    value = _whole(text)
    if value is None or value > 65535:
        raise InvalidInputError(f"{name} must be a port number from 0 to 65535.")
    return value


def load_http_settings(env: Mapping[str, str] | None = None) -> HttpSettings:
    """Read ``ALETHEIA_PORT``, ``ALETHEIA_API_KEY``, ``ALETHEIA_ALLOWED_ORIGINS``,
    ``ALETHEIA_ALLOWED_HOSTS`` (comma or space separated lists) and ``ALETHEIA_WORKERS``."""
    env = os.environ if env is None else env
    port = env.get("ALETHEIA_PORT", "").strip()
    workers = env.get("ALETHEIA_WORKERS", "").strip()
    return HttpSettings(
        host=DEFAULT_HTTP_HOST,
        port=parse_port(port) if port else DEFAULT_HTTP_PORT,
        api_key=env.get("ALETHEIA_API_KEY") or None,
        allowed_origins=_word_list(env.get("ALETHEIA_ALLOWED_ORIGINS", "")),
        allowed_hosts=_word_list(env.get("ALETHEIA_ALLOWED_HOSTS", "")),
        workers=parse_workers(workers) if workers else default_workers(),
    )


CONFIG_FILE_NAME = "config.json"
# The keys config.json may hold: every one any release read (none ever wrote the file).
CONFIG_KEYS = ("exclude_projects",)
_SHOWN_KEY_LENGTH = 60


def caller_name(value: str) -> str | None:
    """``ALETHEIA_TOOL`` as a caller's name is stored: one line, at most 100 characters, of
    printable characters only (as a client's self-reported name is: a control or format
    character would make the store's export unreadable to import and sync), None when blank;
    bytes that are not UTF-8 written as ``\\xff`` (see :func:`escape_undecodable`); any secret
    in it redacted, as in a client's self-reported name."""
    escaped = escape_undecodable(value)
    line = printable_line(escaped, len(escaped))
    if line is None:
        return None
    # Here, not at the top: most commands never name a caller, and redaction is a big import.
    from aletheia_mem.domain.redaction import redact_secrets

    return printable_line(redact_secrets(line), MAX_CALLER)


def escape_undecodable(text: str) -> str:
    """Text the system gave (an environment variable, a file name) with the bytes that are not
    UTF-8 written as ``\\xff`` escapes, as the CLI shows them in its errors.

    Python reads such bytes as lone surrogates, which no store can hold: a name made of them
    would fail every write. Escaped, the name stays readable and one of a kind (``a\\xfe`` and
    ``a\\xff`` remain two folders), and the same bytes give the same name every time.
    """
    if text.isascii():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate no byte gave (a Windows name): escaped as is
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The data folder (``ALETHEIA_DATA_DIR``, default ``~/.aletheia``)."""
    env = os.environ if env is None else env
    return Path(env.get(DATA_DIR_VARIABLE, "").strip() or "~/.aletheia").expanduser()


def store_chosen_by(env: Mapping[str, str] | None = None) -> str:
    """What chose the store ``load_settings`` opens: ``ALETHEIA_HUB_DB``, ``ALETHEIA_DATA_DIR``
    (set and not blank), or ``default`` (``~/.aletheia``, neither set)."""
    env = os.environ if env is None else env
    for variable in (STORE_VARIABLE, DATA_DIR_VARIABLE):
        if env.get(variable, "").strip():
            return variable
    return "default"


def is_database_url(target: str) -> bool:
    """Whether a store names a PostgreSQL database rather than a SQLite file: a
    ``postgresql://`` URL, or a libpq key=value connection string."""
    return target.startswith(DATABASE_URL_PREFIXES) or _CONNINFO_START.match(target) is not None


def hub_target(value: str) -> Path | str:
    """A ``--hub-db`` or ``ALETHEIA_HUB_DB`` value: a database URL (or key=value string) stays
    as given (a Path would fold its ``//``), anything else is a file path with ``~`` expanded."""
    value = value.strip()
    return value if is_database_url(value) else Path(value).expanduser()


def hub_db_path(env: Mapping[str, str] | None = None) -> Path | str:
    """The team hub's store: ``ALETHEIA_HUB_DB``, default ``<data dir>/hub/hub.db``; a
    ``postgresql://`` URL is returned as a string (see :func:`hub_target`).

    Read by ``aletheia-sync`` (``aletheia hub``), ``aletheia mcp-link`` and ``aletheia audit``;
    the other entry points take ``ALETHEIA_HUB_DB`` from :func:`load_settings`.
    """
    env = os.environ if env is None else env
    named = env.get(STORE_VARIABLE, "").strip()
    return hub_target(named) if named else data_dir(env) / HUB_DB_RELATIVE


def hub_db_chosen_by(option: str | None, env: Mapping[str, str] | None = None) -> str:
    """What named the hub's store (``--hub-db``, else as :func:`hub_db_path` reads it): the
    option or variable an error about its path tells the user to fix."""
    if option is not None:
        return "--hub-db"
    env = os.environ if env is None else env
    return STORE_VARIABLE if env.get(STORE_VARIABLE, "").strip() else DATA_DIR_VARIABLE


def hub_search_cache_mb(env: Mapping[str, str] | None = None) -> int | None:
    """``ALETHEIA_HUB_SEARCH_CACHE_MB``: the postings a PostgreSQL hub process holds for
    relevance search, in MB, or None.

    Raises:
        InvalidInputError: not a whole number from 1 to ``MAX_SEARCH_CACHE_MB``.
    """
    return _whole_number(env, "ALETHEIA_HUB_SEARCH_CACHE_MB", MAX_SEARCH_CACHE_MB)


def hub_pool_size(env: Mapping[str, str] | None = None) -> int | None:
    """``ALETHEIA_HUB_POOL_SIZE``: a PostgreSQL hub process's connections at most, or None.

    Raises:
        InvalidInputError: not a whole number from 1 to ``MAX_POOL_SIZE``.
    """
    return _whole_number(env, "ALETHEIA_HUB_POOL_SIZE", MAX_POOL_SIZE)


def _whole_number(env: Mapping[str, str] | None, name: str, top: int) -> int | None:
    """Variable ``name``, a whole number from 1 to ``top``, or None when unset or blank."""
    env = os.environ if env is None else env
    text = env.get(name, "").strip()
    if not text:
        return None
    value = _whole(text)
    if value is None or not 1 <= value <= top:
        raise InvalidInputError(f"{name} must be a whole number from 1 to {top}.")
    return value


def _misspelt_key(key: str) -> bool:
    """Whether a key no release reads looks like ``exclude_projects`` written another way."""
    import difflib  # only for a file holding a key of its own: off the start path

    folded = key.casefold()
    return (
        "exclu" in folded
        or difflib.SequenceMatcher(None, folded, "exclude_projects").ratio() >= 0.6
    )


def load_excluded_projects(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Projects that hooks never capture from: project keys or folders.

    Read from ``exclude_projects`` (a list) in ``<data dir>/config.json`` and from
    ``ALETHEIA_EXCLUDE`` (comma-separated).

    Raises:
        ConfigError: the config file exists but cannot be read or is not valid (a key that
            reads like a misspelt ``exclude_projects`` too: it would turn the exclusion off).
    """
    env = os.environ if env is None else env
    entries = [part.strip() for part in env.get("ALETHEIA_EXCLUDE", "").split(",")]
    path = data_dir(env) / CONFIG_FILE_NAME
    raw = _read_config(path)
    if raw.strip():
        try:
            loaded = json.loads(raw)
        except ValueError as error:  # JSONDecodeError: says where
            raise ConfigError(f"{path} is not valid JSON: {error}.") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path} is not a JSON object.")
        # A misspelt exclude_projects would turn the exclusion off unseen: a key that reads
        # like it is refused. Any other (a "_comment", a note), which an earlier release
        # ignored too, is ignored.
        unknown = [key for key in loaded if key not in CONFIG_KEYS and _misspelt_key(key)]
        if unknown:
            raise ConfigError(
                f"{path} has an unknown key {_shown_key(unknown[0])}"
                f"{f' (and {len(unknown) - 1} more)' if len(unknown) > 1 else ''}: the only"
                f" key it takes is {_shown_key(CONFIG_KEYS[0])}."
            )
        listed = loaded.get("exclude_projects", [])
        if not isinstance(listed, list) or not all(isinstance(e, str) for e in listed):
            raise ConfigError(f"exclude_projects in {path} must be a list of strings.")
        entries += listed
    return tuple(entry for entry in entries if entry.strip())


def _shown_key(key: str) -> str:
    """A key as an error shows it: quoted, escaped to ASCII (no control character reaches the
    terminal) and cut to a readable length."""
    shown = json.dumps(key)
    return shown if len(shown) <= _SHOWN_KEY_LENGTH else shown[: _SHOWN_KEY_LENGTH - 4] + '..."'


def _read_config(path: Path) -> str:
    """The config file's text, "" when there is none.

    Raises:
        ConfigError: a folder or special file there (a FIFO would block), unreadable, or
            not UTF-8.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ConfigError(
                f"{path} is not a regular file (a folder or a special file); move it away."
            )
        return path.read_text(encoding="utf-8-sig")  # a BOM (older Notepad) is let be
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte 0x{error.object[error.start]:02x} at position"
            f" {error.start}); save it as UTF-8."
        ) from None
    except OSError as error:
        raise ConfigError(f"{path} cannot be read: {error.strerror or error}.") from None
