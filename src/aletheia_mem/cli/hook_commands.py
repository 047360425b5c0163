"""Which hook commands are Aletheia's: decided by the program a command runs, read as the shell
reads a plain list of words (as ``install`` writes it, each word quoted by ``shlex.quote``),
never by a mark found anywhere in its text. A command with shell syntax (operators,
redirections, substitutions, expansions, globs, comments) is never Aletheia's: the program it
runs is not what its first word says."""

from __future__ import annotations

import re
import shlex

from aletheia_mem.cli.launcher import PACKAGE

# What may stand unquoted in a word: the characters shlex.quote leaves unquoted.
_PLAIN = re.compile(r"[\w@%+=:,./-]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OUR_VARIABLES = "ALETHEIA_"  # the only ``NAME=value`` words install writes before a hook
_HOOK_PROGRAMS = {"aletheia-hook", "aletheia-hook.exe"}
_CLI_NAMES = {"aletheia", "aletheia.exe", "aletheia-mem", "aletheia-mem.exe"}
_HOOK_MODULES = ("aletheia_mem.hooks", "aletheia.hooks")  # the latter: before the rename


def command_words(command: str) -> list[str] | None:
    """The words of a shell command that is only words (plain or quoted, ``NAME=value`` ones
    first), or None when it holds anything else or its quotes do not close."""
    quote, escaped = "", False
    for char in command:
        if escaped:
            escaped = False
        elif quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            escaped = True
        elif quote == '"':
            if char in "$`":  # expanded inside double quotes
                return None
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char not in " \t" and not _PLAIN.match(char):
            return None
    if quote or escaped:
        return None
    return shlex.split(command)


def program_argv(command: str) -> list[str] | None:
    """The program and its arguments a plain command runs (its ``ALETHEIA_*=value`` words left
    out), or None when it is not a plain list of words or sets any other variable."""
    words = command_words(command)
    if words is None:
        return None
    while words and _ASSIGNMENT.match(words[0]):
        if not words[0].startswith(_OUR_VARIABLES):  # LD_PRELOAD=, PYTHONPATH=: not as written
            return None
        words = words[1:]
    return words


def _relative(program: str) -> bool:
    """A path that is not absolute: resolved against the folder the host starts it in (a bare
    name is looked up on PATH, as install writes ``uvx`` or ``pipx``)."""
    return ("/" in program or "\\" in program) and not (
        program.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", program)
    )


def _base(word: str) -> str:
    return re.split(r"[\\/]", word)[-1].lower()


def runs_aletheia_hook(argv: list[str]) -> bool:
    """Whether ``argv`` runs Aletheia's hook: ``aletheia-hook`` (in any folder), ``aletheia
    hook``, ``uvx aletheia-mem hook``, ``pipx run --spec aletheia-mem aletheia-mem hook`` or
    ``python -m aletheia_mem.hooks``, as ``install`` writes it."""
    if not argv or _relative(argv[0]):  # ./tools/aletheia-hook: a repository's file
        return False
    name, rest = _base(argv[0]), argv[1:]
    if name in _HOOK_PROGRAMS:
        return True
    if name in _CLI_NAMES:
        return rest[:1] == ["hook"]
    if name in ("uvx", "uvx.exe"):
        return rest[:2] == [PACKAGE, "hook"]
    if name in ("pipx", "pipx.exe"):
        return rest[:5] == ["run", "--spec", PACKAGE, PACKAGE, "hook"]
    if name.startswith("python"):
        return len(rest) >= 2 and rest[0] == "-m" and rest[1] in _HOOK_MODULES
    return False


def is_our_hook_command(command: object) -> bool:
    """Whether a hook's shell command is one ``install`` writes: a plain list of words whose
    program is Aletheia's hook."""
    if not isinstance(command, str):
        return False
    argv = program_argv(command)
    return argv is not None and runs_aletheia_hook(argv)
