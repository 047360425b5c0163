"""The import rules of docs/architecture.md, read from the source: layers one way, and SQLite
named only by storage, its composition root and a few listed local-only features."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import aletheia_mem

SRC = Path(aletheia_mem.__file__).parent

# Modules only storage itself may import: a dialect, its driver, its private helpers.
DIALECT_ONLY = (
    "sqlite3",
    "psycopg",
    "psycopg_pool",
    "aletheia_mem.storage.sqlite",
    "aletheia_mem.storage.postgres",
    "aletheia_mem.storage.connections",
    "aletheia_mem.storage.mcp_sessions",
    "aletheia_mem.storage.migrate",
    "aletheia_mem.storage.full_text",
    "aletheia_mem.storage.sync_apply",
    "aletheia_mem.storage.sync_apply_context",
    "aletheia_mem.storage.sync_apply_episodes",
    "aletheia_mem.storage.sync_apply_facts",
    "aletheia_mem.storage.sync_apply_memories",
    "aletheia_mem.storage.sync_apply_pending",
    "aletheia_mem.storage.sync_apply_rules",
    "aletheia_mem.storage.sync_authors",
    "aletheia_mem.storage.sync_export",
)
# Each exception, with the reason it is one.
DIALECT_EXCEPTIONS = {
    # sqlite_store(): `aletheia export` and `import` copy a local SQLite store's rows.
    ("server/wiring.py", "aletheia_mem.storage.sqlite"),
    ("domain/transfer.py", "aletheia_mem.storage.sqlite"),
    # A local store damaged while the CLI streams an export; doctor runs SQLite's own checks.
    ("cli/common.py", "sqlite3"),
    ("cli/doctor.py", "sqlite3"),
}
# Who may import each layer's packages (anything may import storage and search).
UPPER = {
    "aletheia_mem.cli": ("cli/", "__main__.py"),
    "aletheia_mem.server": ("cli/", "server/", "hub/", "web/"),
    "aletheia_mem.hub": ("cli/", "hub/", "web/"),
    "aletheia_mem.web": ("cli/", "server/", "hub/", "web/"),
    "aletheia_mem.tools": ("cli/", "server/", "hub/", "web/", "tools/", "hooks/"),
    "aletheia_mem.storage.open": ("cli/", "server/", "hub/", "hooks/", "storage/"),
}


def _imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def _modules() -> Iterator[tuple[str, str]]:
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        for name in _imports(path):
            yield relative, name


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_only_storage_and_the_listed_local_features_name_a_dialect() -> None:
    found = {
        (module, package)
        for module, name in _modules()
        if not module.startswith("storage/")
        for package in DIALECT_ONLY
        if _within(name, package)
    }
    assert found == DIALECT_EXCEPTIONS


def test_layers_import_one_way() -> None:
    wrong = [
        (module, name)
        for module, name in _modules()
        for package, allowed in UPPER.items()
        if _within(name, package) and not module.startswith(allowed)
    ]
    assert wrong == []


def test_storage_imports_the_domain_only_for_the_audit_redaction_step() -> None:
    """Storage sits below the domain; ``audit_tools.py`` needs its redactor, once."""
    found = {
        module
        for module, name in _modules()
        if module.startswith("storage/") and _within(name, "aletheia_mem.domain")
    }
    assert found == {"storage/audit_tools.py"}
