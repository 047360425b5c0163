"""What a tool handler gets: the store, the clock, who is calling and what they may see."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aletheia_mem.blank import is_blank
from aletheia_mem.clock import Clock
from aletheia_mem.errors import ForbiddenError
from aletheia_mem.escapes import escaped
from aletheia_mem.projects import ALL_PROJECTS as ALL_PROJECTS  # the doors import them here
from aletheia_mem.projects import ALL_PROJECTS_READERS, chosen_project_key
from aletheia_mem.projects import MAX_PROJECT_LENGTH as MAX_PROJECT_LENGTH

if TYPE_CHECKING:  # the semantic extra's types and the protocols stay off the start path
    from aletheia_mem.domain.file_paths import RepositoryRoot
    from aletheia_mem.search.semantic.model import SemanticSource
    from aletheia_mem.storage.contracts import Store


@dataclass(frozen=True)
class AppContext:
    """One caller's view of the store. ``allowed_projects`` None means every project."""

    store: Store
    clock: Clock
    default_project: str
    caller: str
    allowed_projects: tuple[str, ...] | None = None
    semantic: SemanticSource | None = None  # the optional semantic extra, once wired
    # A local server's working repository, or the folder it works in until a file search
    # needs the repository (found then, off the start path); a hub: None.
    repository: RepositoryRoot | Path | None = None
    # What a single-project call given project "*" is told takes it: the tools (and the JSON
    # API), or the CLI's commands, which open the store with their own names
    every_project_readers: str = ALL_PROJECTS_READERS


def _named_project(app: AppContext, value: str) -> str:
    project = chosen_project_key(value, readers=app.every_project_readers)
    if app.allowed_projects is not None and project not in app.allowed_projects:
        raise ForbiddenError(f'Project "{escaped(project)}" is not allowed for this token.')
    return project


def target_project(app: AppContext, value: str | None) -> str:
    """The one project a write or a single-project read goes to (a blank one, ``is_blank``,
    is none given)."""
    if value is None or is_blank(value):
        return app.allowed_projects[0] if app.allowed_projects else app.default_project
    return _named_project(app, value)


def neighbour_projects(
    app: AppContext, value: str | None, anchor_project: str
) -> tuple[str, ...] | None:
    """The projects a timeline's neighbours come from: the anchor's, or with ``*`` every
    project the caller reads (the project argument limits the lookup and the neighbours)."""
    if value is not None and value.strip() == ALL_PROJECTS:
        return app.allowed_projects
    return (anchor_project,)


def readable_projects(app: AppContext, value: str | None) -> tuple[str, ...] | None:
    """The projects a search covers: the working directory's, a named one, or ``*`` for all."""
    if value is not None and value.strip() == ALL_PROJECTS:
        return app.allowed_projects
    # Omitted: the project a write would go to, as the schema says (a project-limited token's
    # first one, as for session_start_context); "*" reaches the token's other projects.
    return (target_project(app, value),)
