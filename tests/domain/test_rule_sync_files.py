"""Write to tools reads only regular UTF-8 instruction files of a sane size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aletheia_mem.domain import rule_sync
from aletheia_mem.errors import InvalidInputError

CLAUDE = [rule_sync.TARGETS_BY_TOOL["claude-code"]]


def test_an_existing_instruction_file_keeps_its_text_around_the_block(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# Notes\n", encoding="utf-8")
    [change] = rule_sync.plan_files([], tmp_path, CLAUDE)
    assert change.old_text == "# Notes\n"
    assert change.new_text.startswith("# Notes\n")


@pytest.mark.parametrize("kind", ["pipe", "folder", "binary", "huge"])
def test_an_instruction_file_that_is_no_text_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "CLAUDE.md"
    if kind == "pipe":
        os.mkfifo(path)  # reading it would wait for a writer forever
    elif kind == "folder":
        path.mkdir()
    elif kind == "binary":
        path.write_bytes(b"\xff\xfe\x00not utf-8")
    else:
        path.write_bytes(b"x" * (rule_sync.MAX_INSTRUCTIONS_BYTES + 1))
    with pytest.raises(InvalidInputError):
        rule_sync.plan_files([], tmp_path, CLAUDE)


def test_the_default_files_are_listed_in_the_same_order_before_and_after_they_exist(
    tmp_path: Path,
) -> None:
    """The first run listed AGENTS.md then CLAUDE.md, every later run the other way round."""
    first = [target.path for target in rule_sync.resolve_targets([], tmp_path, False)]
    for name in first:
        (tmp_path / name).write_text("# notes\n", encoding="utf-8")
    later = [target.path for target in rule_sync.resolve_targets([], tmp_path, False)]
    assert first == later == ["CLAUDE.md", "AGENTS.md"]
