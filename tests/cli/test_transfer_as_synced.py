"""What an import keeps of the fields a synced item carries, as sync keeps them: a list's key, a
rule's scope name, a note's files, a rule's evidence. Real SQLite stores, the real CLI."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from aletheia_mem.domain.memories import dedupe_key
from aletheia_mem.domain.rules import rule_id
from tests.cli.conftest import Invoke, Workspace
from tests.cli.test_transfer_hostile import _import, _memory, _refused, _rule


def _remove_store(workspace: Workspace) -> None:
    for path in workspace.data_dir.glob("aletheia.db*"):
        path.unlink()


def test_a_list_keyed_as_a_note_is_keyed_by_its_name_so_it_cannot_answer_that_notes_save(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    """A list whose key is a note's hash would answer the save of that note "Already saved"
    with the list (the store finds a memory by project and key). An earlier build took one
    from a sync: the import keys it as work_state_write keys its name, and says so, rather
    than refusing the whole file."""
    squat = dedupe_key("Deploy", "Use blue-green")
    for key in (squat, None):
        _remove_store(workspace)
        record = _memory(kind="work_state", title="todo list", text='["a"]', dedupe_key=key)
        result = _import(run, tmp_path, [record])
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[0] == (
            "Line 2: a list's dedupe key did not start with list: (an earlier build took it);"
            ' imported as "list:todo", the key work_state_write gives its name.'
        )
        with closing(sqlite3.connect(workspace.data_dir / "aletheia.db")) as conn:
            assert conn.execute("SELECT dedupe_key FROM memories").fetchall() == [("list:todo",)]
    _remove_store(workspace)
    record = _memory(kind="work_state", title=" ", text='["a"]', dedupe_key=squat)
    message = _refused(run, tmp_path, workspace, [record])  # no name: no key to make
    assert message.startswith('Error: Line 2: memory field "title" of a list must not be blank.')


def test_a_rule_scope_name_with_control_characters_is_kept_without_them_under_its_new_id(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    """As sync keeps it (a hub refused it, so the store could never push the rule); an
    earlier release let them in."""
    record = _rule(scope_tier="situation", scope_name="on\x1b[31m call\u202e")
    assert _import(run, tmp_path, [record]).exit_code == 0
    (rule,) = json.loads(run("rules", "list", "--json").stdout)
    assert rule["scope_name"] == "on[31m call"
    assert rule["id"] == rule_id("Run the tests", "you commit", "situation", "on[31m call")


def test_a_notes_files_and_a_rules_evidence_are_kept_each_once_as_a_save_keeps_them(
    run: Invoke, tmp_path: Path
) -> None:
    files = ["src/a.py", "", "  ", "src/a.py", "src/b.py"]
    note = _memory(files=files, facts=["db is pg", " ", "db is pg"])
    rule = _rule(evidence_memory_ids=[1, 1])
    assert _import(run, tmp_path, [note, rule]).exit_code == 0
    (shown,) = json.loads(run("show", "1", "--json").stdout)
    assert shown["files"] == ["src/a.py", "src/b.py"]
    assert shown["facts"] == ["db is pg", "db is pg"]  # a save keeps a statement given twice
    (held,) = json.loads(run("rules", "list", "--json").stdout)
    assert held["evidence_memory_ids"] == [1]
