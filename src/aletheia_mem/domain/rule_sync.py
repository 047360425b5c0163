"""Writing the enabled rules into each coding tool's instruction file.

The rules go inside a marked block that the next sync replaces; text outside the block is
never touched. A file without the block gets it appended.
"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aletheia_mem.domain.formatting import rule_text
from aletheia_mem.domain.rules import rules_for_project
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.contracts import RuleStore
from aletheia_mem.storage.entries import Rule
from aletheia_mem.storage.files import real_target_inside

BLOCK_START = "<!-- aletheia:rules:start -->"
BLOCK_END = "<!-- aletheia:rules:end -->"
MAX_INSTRUCTIONS_BYTES = 1_000_000


@dataclass(frozen=True)
class Target:
    """One tool's instruction file, relative to the project root."""

    tool: str
    path: str
    preamble: str = ""  # written once, when the file is new


TARGETS: tuple[Target, ...] = (
    Target("claude-code", "CLAUDE.md"),
    Target("codex", "AGENTS.md"),  # also read by OpenCode, Command Code and others
    Target("gemini-cli", "GEMINI.md"),
    Target(
        "cursor",
        ".cursor/rules/aletheia.mdc",
        "---\ndescription: Standing rules from Aletheia\nalwaysApply: true\n---\n\n",
    ),
    Target("windsurf", ".windsurf/rules/aletheia.md", "---\ntrigger: always_on\n---\n\n"),
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

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        """The change as a unified diff (empty when nothing changes)."""
        lines = difflib.unified_diff(
            self.old_text.splitlines(keepends=True),
            self.new_text.splitlines(keepends=True),
            fromfile=f"{self.link_to or self.path} (now)",
            tofile=f"{self.link_to or self.path} (after)",
        )
        return "".join(lines).rstrip("\n")


def render_block(rules: Sequence[Rule]) -> str:
    """The marked block: a heading, one line per rule, and the end marker."""
    lines = [
        BLOCK_START,
        "## Rules from Aletheia",
        "",
        "Standing rules kept in Aletheia. Change them with `aletheia rules` (this block is"
        " replaced on every `aletheia rules sync`).",
        "",
    ]
    # A rule's text cannot hold a marker: "<!--" is shown as "&lt;!--", so the next sync still
    # finds the block's own end and leaves nothing of it behind.
    lines += [f"- {rule_text(rule)}".replace("<!--", "&lt;!--") for rule in rules] or [
        "- (no enabled rules)"
    ]
    lines.append(BLOCK_END)
    return "\n".join(lines)


def replace_block(text: str, block: str, preamble: str = "") -> str:
    """``text`` with its marked block replaced by ``block`` (appended when absent).

    Raises:
        InvalidInputError: the start marker is there without an end marker after it.
    """
    start = text.find(BLOCK_START)
    if start < 0:
        if not text:
            return preamble + block + "\n"
        return _append(text, block)
    end = text.find(BLOCK_END, start)
    if end < 0:
        raise InvalidInputError(
            f"The file has {BLOCK_START} but no {BLOCK_END} after it; fix the block by hand."
        )
    return text[:start] + block + text[end + len(BLOCK_END) :]


def _append(text: str, block: str) -> str:
    if text.endswith("\n\n"):
        return text + block + "\n"
    if text.endswith("\n"):
        return text + "\n" + block + "\n"
    return text + "\n\n" + block + "\n"


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
    block = render_block(rules)
    changes = []
    for target in targets:
        path = root / target.path
        real = real_target_inside(path, root)  # refuses a link out of the repository
        old = _read_instructions(real)
        try:
            new = replace_block(old, block, target.preamble)
        except InvalidInputError as error:
            raise InvalidInputError(f"{path}: {error.message}") from None
        linked = real != root.resolve() / target.path
        changes.append(SyncChange(path, old, new, real if linked else None))
    return changes


def _read_instructions(path: Path) -> str:
    """An instruction file's text ("" when there is none yet).

    Raises:
        InvalidInputError: it is no regular file (a folder, a pipe that would never end), too
            large to be one, or not UTF-8.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return ""
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInputError(f"{path} is not a regular file; nothing is written to it.")
    if info.st_size > MAX_INSTRUCTIONS_BYTES:
        raise InvalidInputError(f"{path} is larger than {MAX_INSTRUCTIONS_BYTES:,} bytes.")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path} is not UTF-8 text; nothing is written to it.") from None


def apply_sync(changes: Sequence[SyncChange]) -> list[Path]:
    """Write the files that change (a link's target, never the link); returns their paths."""
    written = []
    for change in changes:
        if change.changed:
            target = change.link_to or change.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(change.new_text, encoding="utf-8")
            written.append(change.path)
    return written
