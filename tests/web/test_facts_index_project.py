"""The Facts page's index of current facts reads the project typed in its form as the tools key
it: any case, and a decomposed ``é`` (as macOS spells a folder) as the composed one."""

from __future__ import annotations

from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, call_tool
from aletheia_mem.web.facts import subject_index


def test_the_index_reads_the_typed_project_as_its_key(app: AppContext) -> None:
    facts = [{"subject": "db", "predicate": "engine", "object": "PostgreSQL 16"}]
    arguments = {"text": "db engine", "facts": facts, "project": "caf\u00e9"}
    assert not call_tool(app, TOOLS_BY_NAME["save_memory"], arguments).is_error
    for typed in ("caf\u00e9", "CAFE\u0301", " Caf\u00e9 "):
        assert [fact["object"] for fact in subject_index(app, typed)] == ["PostgreSQL 16"]
