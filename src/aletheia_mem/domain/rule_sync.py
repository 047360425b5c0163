"""Writing the enabled rules into each coding tool's instruction file.

The rules go inside a marked block that the next sync replaces; text outside the block is
never touched (its line ends and byte-order mark included). A file without the block gets it
appended. The markers count only alone on their line, so a mention of them in the text is left
as it is. A rule's text is stored data from any agent or peer: each rule is one bullet line with
no invisible characters, no secret and nothing that opens an HTML comment.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from aletheia_mem.domain.formatting import applied_rule_text
from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.domain.rules import rules_for_project
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.contracts import RuleStore
from aletheia_mem.storage.entries import Rule
from aletheia_mem.storage.files import real_target_inside, replace_shared_file

BLOCK_START = "<!-- aletheia:rules:start -->"
BLOCK_END = "<!-- aletheia:rules:end -->"
MAX_INSTRUCTIONS_BYTES = 1_000_000
# The rule lines a block holds at most (about 8,000 tokens): each tool reads its file into every
# session, and a sync page may bring any number of rules (the reference caps a rule's length,
# not how many there are). The oldest come first; the newer ones past it are left out, and the
# block says how many.
MAX_BLOCK_RULE_CHARS = 32_000
# A marker counts alone on its line (white space after it allowed); the span replaced ends right
# after the end marker, so what follows it on its line (a "\r" too) stays.
_START_LINE = re.compile(f"^{re.escape(BLOCK_START)}(?=[ \t]*\r?$)", re.MULTILINE)
_END_LINE = re.compile(f"^{re.escape(BLOCK_END)}(?=[ \t]*\r?$)", re.MULTILINE)
_BOM = "\ufeff"
# What opens an HTML comment to a reader: "<" or a look-alike, then "!" or a look-alike.
_COMMENT_OPEN = re.compile(
    "[<\ufe64\uff1c\u02c2\u1438\u2039\u2329\u276c\u276e\u27e8\u3008](?=\\s*[!\uff01\ufe57\u01c3])"
)
# Default-ignorable code points outside the control and format categories: Hangul fillers, the
# Mongolian and other variation selectors, TAG characters and those reserved near them.
_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


@dataclass(frozen=True)
class Target:
    """One tool's instruction file, relative to the project root."""

    tool: str
    path: str
    preamble: str = ""  # written once, when the file is new
    max_chars: int | None = None  # what the tool reads of the file; the rest it drops


TARGETS: tuple[Target, ...] = (
    Target("claude-code", "CLAUDE.md"),
    Target("codex", "AGENTS.md"),  # also read by OpenCode, Command Code and others
    Target("gemini-cli", "GEMINI.md"),
    Target(
        "cursor",
        ".cursor/rules/aletheia.mdc",
        "---\ndescription: Standing rules from Aletheia\nalwaysApply: true\n---\n\n",
    ),
    # Windsurf reads the first 6,000 characters of a rule file (docs.windsurf.com, Memories).
    Target("windsurf", ".windsurf/rules/aletheia.md", "---\ntrigger: always_on\n---\n\n", 6000),
    Target("vscode", ".github/copilot-instructions.md"),
)
# The user-level instruction files: every repository's sessions read them, so only the rules that
# are not tied to one project go there.
USER_TARGETS: tuple[Target, ...] = (
    Target("claude-code", ".claude/CLAUDE.md"),
    Target("codex", ".codex/AGENTS.md"),
    Target("gemini-cli", ".gemini/GEMINI.md"),
)
TARGETS_BY_TOOL = {target.tool: target for target in TARGETS}
TOOL_ALIASES = {"opencode": "codex", "command-code": "codex"}
_DEFAULT_TOOLS = ("claude-code", "codex")  # written when no instruction file exists yet


@dataclass(frozen=True)
class SyncChange:
    path: Path
    old_text: str
    new_text: str
    link_to: Path | None = None  # the file written when ``path`` is a link (inside the repo)
    max_chars: int | None = None  # what the tool reads of it
    left_out: int = 0  # enabled rules past ``MAX_BLOCK_RULE_CHARS``, not written

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    @property
    def problem(self) -> str | None:
        """Why the new text must not be written: the tool would drop the end of it."""
        if self.max_chars is None or len(self.new_text) <= self.max_chars:
            return None
        return (
            f"{self.path} would be {len(self.new_text):,} characters, but its tool reads only"
            f" the first {self.max_chars:,}; disable some rules, or leave that tool out."
        )

    def diff(self) -> str:
        """The change as a unified diff (empty when nothing changes)."""
        lines = difflib.unified_diff(
            self.old_text.splitlines(keepends=True),
            self.new_text.splitlines(keepends=True),
            fromfile=f"{self.link_to or self.path} (now)",
            tofile=f"{self.link_to or self.path} (after)",
        )
        return "".join(lines).rstrip("\n")


def render_block(rules: Sequence[Rule], newline: str = "\n") -> str:
    """The marked block: a heading, one line per rule (within ``MAX_BLOCK_RULE_CHARS``), and
    the end marker."""
    return _block_of(within_bound(rule_lines_of(rules))[0], newline)


def rule_lines_of(rules: Sequence[Rule]) -> list[str]:
    """One bullet line per rule, in order, each line once: an everywhere and a project rule
    with the same words are one line (the same text applies either way)."""
    return list(dict.fromkeys(rule_line(rule) for rule in rules))


def within_bound(rule_lines: Sequence[str]) -> tuple[list[str], int]:
    """The first rule lines that fit in ``MAX_BLOCK_RULE_CHARS`` (their line ends counted),
    then, when some do not, a line saying how many were left out; and how many were."""
    kept, size = [], 0
    for line in rule_lines:
        size += len(line) + 1
        if size > MAX_BLOCK_RULE_CHARS:
            break
        kept.append(line)
    left = len(rule_lines) - len(kept)
    if left:
        kept.append(
            f"- ({left:,} newer enabled {'rule is' if left == 1 else 'rules are'} left out:"
            f" this block holds at most {MAX_BLOCK_RULE_CHARS:,} characters of rules;"
            " aletheia rules list shows them all.)"
        )
    return kept, left


def _block_of(rule_lines: Sequence[str], newline: str) -> str:
    lines = [
        BLOCK_START,
        "## Rules from Aletheia",
        "",
        "Standing rules kept in Aletheia. Change them with `aletheia rules` (this block is"
        " replaced on every `aletheia rules sync`).",
        "",
    ]
    lines += rule_lines or ["- (no enabled rules)"]
    lines.append(BLOCK_END)
    return newline.join(lines)


def rule_line(rule: Rule) -> str:
    """A rule as one bullet line that shows all it says and nothing more.

    No invisible character (bidi overrides, zero-width and TAG characters, variation selectors:
    text a reader of the file sees but the owner does not); then no secret (one split by an
    invisible character is whole again here); and no "<!" that would hide what follows in an
    HTML comment or read as one of the block's markers: it is shown as "&lt;!".
    """
    fields = (rule.then, rule.when, rule.scope_name)
    if not all(field.isascii() and field.isprintable() for field in fields):  # most rules
        # Taken out before the text is made (where they would show as escapes), white space
        # kept: it separates words.
        rule = replace(
            rule,
            then=_seen(rule.then),
            when=_seen(rule.when),
            scope_name=_seen(rule.scope_name),
        )
    text = applied_rule_text(rule)
    return "- " + _COMMENT_OPEN.sub("&lt;", redact_secrets(" ".join(text.split())))


def _seen(text: str) -> str:
    return "".join(char for char in text if char.isspace() or not _invisible(char))


def _invisible(char: str) -> bool:
    if char.isascii():
        return not char.isprintable()
    if unicodedata.category(char) in {"Cc", "Cf", "Cs", "Zl", "Zp"}:
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in _IGNORABLE)


def replace_block(text: str, block: str, preamble: str = "") -> str:
    """``text`` with its marked block replaced by ``block`` (appended when absent).

    Raises:
        InvalidInputError: the start marker is there twice, or without an end marker after it.
    """
    bom = _BOM if text.startswith(_BOM) else ""
    text = text[len(bom) :]
    starts = list(_START_LINE.finditer(text))
    if not starts:
        if not text:
            return bom + preamble + block + "\n"
        return bom + _append(text, block)
    if len(starts) > 1:
        raise InvalidInputError(
            f"The file has {len(starts)} {BLOCK_START} lines; keep one block and sync again."
        )
    start = starts[0]
    end = _END_LINE.search(text, start.end())
    if end is None:
        raise InvalidInputError(
            f"The file has {BLOCK_START} but no {BLOCK_END} after it; fix the block by hand."
        )
    return bom + text[: start.start()] + block + text[end.end() :]


def newline_of(text: str) -> str:
    """The line end a file uses: Windows' when its first line ends so, else "\n"."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _append(text: str, block: str) -> str:
    newline = newline_of(text)
    if text.endswith(newline * 2):
        return text + block + newline
    if text.endswith(newline):
        return text + newline + block + newline
    return text + newline * 2 + block + newline


def resolve_targets(tools: Sequence[str], root: Path, everything: bool) -> list[Target]:
    """The chosen tools' files; by default those that exist, else AGENTS.md and CLAUDE.md."""
    if everything:
        return list(TARGETS)
    if tools:
        chosen: dict[str, Target] = {}
        for tool in tools:
            name = TOOL_ALIASES.get(tool, tool)
            if name not in TARGETS_BY_TOOL:
                known = ", ".join(sorted([*TARGETS_BY_TOOL, *TOOL_ALIASES]))
                raise InvalidInputError(f'Unknown tool "{tool}". Known: {known}.')
            chosen[name] = TARGETS_BY_TOOL[name]
        return list(chosen.values())
    existing = [target for target in TARGETS if (root / target.path).exists()]
    # In TARGETS' order, as the files are listed once they exist: every run lists them alike.
    return existing or [target for target in TARGETS if target.tool in _DEFAULT_TOOLS]


def plan_sync(
    store: RuleStore, project: str, root: Path, targets: Sequence[Target]
) -> list[SyncChange]:
    """The new text of each target file with the project's enabled rules."""
    return plan_files(rules_for_project(store.list_rules(), project), root, targets)


def plan_user_sync(store: RuleStore, home: Path) -> list[SyncChange]:
    """The user-level files with the enabled rules that belong to no one project."""
    rules = [rule for rule in store.list_rules() if rule.scope_tier != "project"]
    return plan_files(rules, home, USER_TARGETS)


def plan_files(rules: Sequence[Rule], root: Path, targets: Sequence[Target]) -> list[SyncChange]:
    """The new text of each target file below ``root`` with the marked block of ``rules``."""
    changes = []
    # Once for all files: there may be thousands (the newest past the bound left out).
    rule_lines, left_out = within_bound(rule_lines_of(rules))
    for target in targets:
        path = root / target.path
        real = real_target_inside(path, root)  # refuses a link out of the repository
        old = _read_instructions(real)
        try:
            new = replace_block(old, _block_of(rule_lines, newline_of(old)), target.preamble)
        except InvalidInputError as error:
            raise InvalidInputError(f"{path}: {error.message}") from None
        if not rules and not _START_LINE.search(old.removeprefix(_BOM)):
            new = old  # no rules: a block there is emptied, but none is added, no file made
        linked = real != root.resolve() / target.path
        link_to = real if linked else None
        changes.append(SyncChange(path, old, new, link_to, target.max_chars, left_out))
    return changes


def _read_instructions(path: Path) -> str:
    """An instruction file's text as it is, line ends too ("" when there is none yet).

    Raises:
        InvalidInputError: it is no regular file (a folder, a pipe that would never end), too
            large to be one, not UTF-8, or cannot be read.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return ""
    except OSError as error:  # a file where a folder on its way should be, no permission
        raise _file_error(path, "read", error) from None
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInputError(f"{path} is not a regular file; nothing is written to it.")
    if info.st_size > MAX_INSTRUCTIONS_BYTES:
        raise InvalidInputError(f"{path} is larger than {MAX_INSTRUCTIONS_BYTES:,} bytes.")
    try:
        with path.open(encoding="utf-8", newline="") as file:
            return file.read()
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path} is not UTF-8 text; nothing is written to it.") from None
    except OSError as error:
        raise _file_error(path, "read", error) from None


def _file_error(path: Path, doing: str, error: OSError) -> InvalidInputError:
    reason = error.strerror or type(error).__name__
    return InvalidInputError(f"{path} could not be {doing}: {reason}. Nothing was written to it.")


def apply_sync(changes: Sequence[SyncChange]) -> list[Path]:
    """Write the files that change (a link's target, never the link); returns their paths.

    Raises:
        InvalidInputError: a file's tool would drop part of its text (nothing is written), or a
            file could not be written (those before it were).
    """
    check_lengths(changes)
    written = []
    for change in changes:
        if change.changed:
            target = change.link_to or change.path
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                _replace_file(target, change.new_text)
            except OSError as error:
                raise _file_error(target, "written", error) from None
            written.append(change.path)
    return written


def check_lengths(changes: Sequence[SyncChange]) -> None:
    """Refuse a change whose tool would drop the end of the file (see ``SyncChange.problem``).

    Raises:
        InvalidInputError: one would be too long for its tool.
    """
    for change in changes:
        if change.changed and change.problem:
            raise InvalidInputError(change.problem)


def _replace_file(target: Path, text: str) -> None:
    """``target`` replaced by ``text`` at once (``replace_shared_file``); a read-only file is
    refused, as an editor refuses it."""
    try:
        old: os.stat_result | None = target.stat()
    except FileNotFoundError:
        old = None
    if old is not None and not os.access(target, os.W_OK):
        raise PermissionError(13, "it is read-only")
    replace_shared_file(target, text, old)
