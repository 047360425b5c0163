"""The Rules page: every rule with its scope, evidence and re-check flag; Add, Confirm, Disable;
and Write to tools, which previews each instruction file's change before writing its block."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aletheia_mem.domain import rule_sync
from aletheia_mem.domain.repositories import known_repositories, repository_log
from aletheia_mem.errors import AletheiaError, ForbiddenError, InvalidInputError
from aletheia_mem.projects import project_for_directory
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.base import whole_number
from aletheia_mem.web.calls import call

MAX_EVIDENCE_TEXT = 2000
# Bounds of the pages (a memory author can add thousands of rules): rules per page of the Rules
# page, and how much of each file's change the Write to tools preview shows until asked.
RULES_PER_PAGE = 50
PREVIEW_LINES = 60
PREVIEW_CHARS = 6000


@dataclass(frozen=True)
class FilePlan:
    """One instruction file: its key in the form, its change, and whether to write it."""

    key: str
    level: str
    tool: str
    change: rule_sync.SyncChange
    suggested: bool

    @property
    def digest(self) -> str:
        """The file's planned text, digested: the preview sends it with the form, so Write
        writes only what was previewed."""
        planned = self.change.new_text.encode("utf-8", "surrogatepass")
        return hashlib.sha256(planned).hexdigest()[:32]

    def preview(self, whole: bool) -> tuple[str, int]:
        """The change's diff, cut to its first ``PREVIEW_LINES`` lines and ``PREVIEW_CHARS``
        characters unless ``whole``, and how many lines were left out."""
        lines = self.change.diff().split("\n")
        if whole:
            return "\n".join(lines), 0
        shown: list[str] = []
        size = 0
        for line in lines[:PREVIEW_LINES]:
            size += len(line) + 1
            if shown and size > PREVIEW_CHARS:
                break
            shown.append(line[:PREVIEW_CHARS])
        return "\n".join(shown), len(lines) - len(shown)


@dataclass(frozen=True)
class Place:
    """A folder of instruction files: a repository (with its project's rules) or the home folder
    (user level); ``problem`` says why a repository's files are not offered."""

    folder: str
    level: str
    project: str | None
    files: list[FilePlan]
    problem: str | None = None


def all_rules(app: AppContext) -> list[dict[str, Any]]:
    return bounded_rules(app, None)[0]


def bounded_rules(app: AppContext, upto: int | None) -> tuple[list[dict[str, Any]], int | None]:
    """Every rule the store held at ``upto`` (None: now), oldest first, and that bound: the
    Rules page's later pages carry it, so a rule a sync brings in meanwhile (however old it
    is) moves none of the rules seen onto another page."""
    query: dict[str, Any] = {"include_disabled": True}
    if upto is not None:
        query["upto"] = upto
    found = call(app, "listRules", query=query)
    rules: list[dict[str, Any]] = found["rules"]
    return rules, found["upto"]


def _ids(text: str, name: str) -> list[int]:
    if len(text) > MAX_EVIDENCE_TEXT:
        raise InvalidInputError(f"{name} is too long.")
    ids = [whole_number(part.lstrip("#"), 15) for part in text.replace(",", " ").split()]
    found = [n for n in ids if n is not None]
    if len(found) < len(ids):
        raise InvalidInputError(f"{name} must be ids like 12, 15.")
    return found


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


def _places(app: AppContext, root: Path) -> list[tuple[Path, str]]:
    """The server's own folder (where it is one: ``ALETHEIA_CWD`` may name none, and writing
    there would make it), then each repository the store knows, each once."""
    places = [(root, project_for_directory(root))] if root.is_dir() else []
    seen = {os.path.realpath(root)}
    log = repository_log(app.store)
    for repository, folder in known_repositories(log) if log is not None else []:
        if str(folder) not in seen:
            seen.add(str(folder))
            places.append((folder, repository.project))
    return places


def _repository_place(app: AppContext, folder: Path, project: str) -> Place:
    key = "repo:" + hashlib.sha256(str(folder).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    try:
        changes = rule_sync.plan_sync(app.store, project, folder, rule_sync.TARGETS)
    except (InvalidInputError, ForbiddenError, OSError) as error:  # a link out, a bad file
        return Place(str(folder), "repository", project, [], _problem(error))
    suggested = {t.path for t in rule_sync.resolve_targets((), folder, everything=False)}
    files = [
        FilePlan(f"{key}:{t.tool}", "repository", t.tool, change, t.path in suggested)
        for t, change in zip(rule_sync.TARGETS, changes, strict=True)
    ]
    return Place(str(folder), "repository", project, files)


def plan_places(app: AppContext, root: Path, home: Path) -> list[Place]:
    """Every instruction file `rules sync` knows: in the server's folder and in each repository
    the store knows (their project's rules), and at user level (the rules of no one project)."""
    places = [_repository_place(app, folder, project) for folder, project in _places(app, root)]
    return [*places, _user_place(app, home)]


def _user_place(app: AppContext, home: Path) -> Place:
    try:
        user = rule_sync.plan_user_sync(app.store, home)
    except (InvalidInputError, ForbiddenError, OSError) as error:
        return Place(str(home), "user", None, [], _problem(error))
    files = [
        FilePlan(f"user:{t.tool}", "user", t.tool, change, change.path.exists())
        for t, change in zip(rule_sync.USER_TARGETS, user, strict=True)
    ]
    return Place(str(home), "user", None, files)


def _problem(error: AletheiaError | OSError) -> str:
    return error.message if isinstance(error, AletheiaError) else f"{error.strerror}."


def write_files(
    app: AppContext, root: Path, home: Path, chosen: dict[str, str]
) -> list[str] | None:
    """Plan again and write the chosen files (``chosen``: each one's key, never its path, and
    the digest of the text its preview planned); returns the keys of the files written, or
    None, writing nothing, when a chosen file's planned text changed since its preview (a rule
    added, changed or disabled meanwhile, or the file edited)."""
    plans = [
        plan for place in plan_places(app, root, home) for plan in place.files if plan.key in chosen
    ]
    if any(plan.digest != chosen[plan.key] for plan in plans):
        return None
    written = set(rule_sync.apply_sync([plan.change for plan in plans]))
    return [plan.key for plan in plans if plan.change.path in written]


def paths_of(places: list[Place], keys: list[str]) -> list[str]:
    """The paths of the files with these keys, in the places' order."""
    wanted = set(keys)
    return [str(plan.change.path) for place in places for plan in place.files if plan.key in wanted]
