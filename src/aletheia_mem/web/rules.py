"""The Rules page: every rule with its scope, evidence and re-check flag; Add, Confirm, Disable;
and Write to tools, which previews each instruction file's change before writing its block."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aletheia_mem.domain import rule_sync
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.projects import project_for_directory
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.calls import call

MAX_EVIDENCE_TEXT = 2000


@dataclass(frozen=True)
class FilePlan:
    """One instruction file: its key in the form, its change, and whether to write it."""

    key: str
    level: str
    tool: str
    change: rule_sync.SyncChange
    suggested: bool


def all_rules(app: AppContext) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = call(app, "listRules", query={"include_disabled": True})["rules"]
    return rules


def _ids(text: str, name: str) -> list[int]:
    if len(text) > MAX_EVIDENCE_TEXT:
        raise InvalidInputError(f"{name} is too long.")
    parts = [part.strip().lstrip("#") for part in text.replace(",", " ").split()]
    if not all(part.isdigit() and len(part) < 16 for part in parts):
        raise InvalidInputError(f"{name} must be ids like 12, 15.")
    return [int(part) for part in parts]


def add_rule(app: AppContext, form: dict[str, str]) -> dict[str, Any]:
    """The add_rule tool's checks and store write, through the API's operation."""
    body: dict[str, Any] = {
        "then": form.get("then", ""),
        "when": form.get("when", "").strip() or "always",
        "scopeTier": form.get("scopeTier", "everywhere"),
        "scopeName": form.get("scopeName", ""),
        "evidence_memory_ids": _ids(form.get("evidence_memory_ids", ""), "Evidence memories"),
        "evidence_fact_ids": _ids(form.get("evidence_fact_ids", ""), "Evidence facts"),
    }
    saved: dict[str, Any] = call(app, "addRule", body=body)
    return saved


def set_rule(app: AppContext, rule_id: str, action: str) -> None:
    operation = {"confirm": "confirmRule", "disable": "disableRule"}[action]
    call(app, operation, path={"rule_id": rule_id})


def plan_files(app: AppContext, root: Path, home: Path) -> list[FilePlan]:
    """Every instruction file `rules sync` knows, in the repository and at user level."""
    store = app.store
    suggested = {t.path for t in rule_sync.resolve_targets((), root, everything=False)}
    project = project_for_directory(root)
    repo = rule_sync.plan_sync(store, project, root, rule_sync.TARGETS)
    user = rule_sync.plan_user_sync(store, home)
    plans = [
        FilePlan(f"repo:{t.tool}", "repository", t.tool, change, t.path in suggested)
        for t, change in zip(rule_sync.TARGETS, repo, strict=True)
    ]
    plans += [
        FilePlan(f"user:{t.tool}", "user", t.tool, change, change.path.exists())
        for t, change in zip(rule_sync.USER_TARGETS, user, strict=True)
    ]
    return plans


def write_files(app: AppContext, root: Path, home: Path, chosen: set[str]) -> list[Path]:
    """Plan again (the files may have changed since the preview) and write the chosen ones."""
    changes = [plan.change for plan in plan_files(app, root, home) if plan.key in chosen]
    return rule_sync.apply_sync(changes)
